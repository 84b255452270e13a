// The client mode of `forgectl serve` (to 127.0.0.1) and mock-web's json-db portal: Poco's HTTP
// client, bounded in size and time.
#include "services/local_client.h"

#include <Poco/Exception.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/NetException.h>

#include <array>
#include <cctype>
#include <istream>
#include <ostream>

#include "services/limits.h"

namespace forge::services {

namespace {

bool known_method(std::string_view m) {
  for (std::string_view k : {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
    if (m == k) return true;
  return false;
}

bool sends_body(std::string_view method, const std::string& body) {
  return !body.empty() || !(method == "GET" || method == "HEAD" || method == "DELETE");
}

}  // namespace

Status check_local_request(const LocalRequest& r) {
  if (!known_method(r.method))
    return fail(Errc::kInvalid, "method '" + r.method.substr(0, 16) + "' is not GET, HEAD, POST, PUT, PATCH or DELETE");
  if (r.target.empty() || r.target.front() != '/' || r.target.size() > kMaxTargetBytes)
    return fail(Errc::kInvalid, "the path must start with '/' and have at most " + std::to_string(kMaxTargetBytes) +
                                    " bytes");
  for (char c : r.target)
    if (c <= ' ' || c > '~') return fail(Errc::kInvalid, "the path must be printable ASCII without spaces");
  if (r.host.empty() || r.host.size() > 253)
    return fail(Errc::kInvalid, "the host must have 1 to 253 characters");
  for (char c : r.host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      return fail(Errc::kInvalid, "the host may hold only letters, digits, '.', '-' and '_'");
  for (char c : r.bearer)
    if (c <= ' ' || c > '~') return fail(Errc::kInvalid, "the token must be printable ASCII without spaces");
  if (r.body.size() > kMaxBodyBytes)
    return fail(Errc::kInvalid, "the body has more than " + std::to_string(kMaxBodyBytes) + " bytes");
  return {};
}

Status read_local_input(std::string_view in, LocalRequest& into) {
  auto nl = in.find('\n');
  if (nl == std::string_view::npos)
    return fail(Errc::kInvalid, "stdin must start with a line holding the token (an empty line for none)");
  std::string_view token = in.substr(0, nl);
  if (!token.empty() && token.back() == '\r') token.remove_suffix(1);
  if (in.size() - nl - 1 > kMaxBodyBytes)
    return fail(Errc::kInvalid, "the body has more than " + std::to_string(kMaxBodyBytes) + " bytes");
  into.bearer = std::string(token);
  into.body = std::string(in.substr(nl + 1));
  return {};
}

Result<LocalReply> local_request(const LocalRequest& r) {
  if (auto st = check_local_request(r); !st) return st.fail();
  const std::string what = r.method + " " + r.target + " on " + r.host + ":" + std::to_string(r.port);
  try {
    Poco::Net::HTTPClientSession session(r.host, r.port);
    session.setTimeout(Poco::Timespan(static_cast<long>(r.timeout.count() / 1000), static_cast<long>(r.timeout.count() % 1000) * 1000));
    Poco::Net::HTTPRequest req(r.method, r.target, Poco::Net::HTTPMessage::HTTP_1_1);
    req.setHost(r.host, r.port);
    if (!r.bearer.empty()) req.set("Authorization", "Bearer " + r.bearer);
    if (sends_body(r.method, r.body)) {
      req.setContentType("application/json");
      req.setContentLength64(static_cast<Poco::Int64>(r.body.size()));
    }
    std::ostream& out = session.sendRequest(req);
    out << r.body;
    out.flush();
    Poco::Net::HTTPResponse resp;
    std::istream& in = session.receiveResponse(resp);
    LocalReply reply;
    reply.status = static_cast<int>(resp.getStatus());
    std::array<char, 65536> buf{};
    while (in) {
      in.read(buf.data(), buf.size());
      auto n = static_cast<std::size_t>(in.gcount());
      if (reply.body.size() + n > kMaxLocalReplyBytes)
        return fail(Errc::kProtocol, what + ": the reply has more than " + std::to_string(kMaxLocalReplyBytes) + " bytes");
      reply.body.append(buf.data(), n);
    }
    return reply;
  } catch (const Poco::TimeoutException& e) {
    return fail(Errc::kTimeout, what + ": " + e.displayText());
  } catch (const Poco::Net::ConnectionRefusedException& e) {
    return fail(Errc::kUnavailable, what + ": " + e.displayText());
  } catch (const Poco::Exception& e) {
    return fail(Errc::kUnavailable, what + ": " + e.displayText());
  }
}

std::string format_local_reply(const LocalReply& reply) { return std::to_string(reply.status) + "\n" + reply.body; }

}  // namespace forge::services
