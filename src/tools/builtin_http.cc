// http_request: plain HTTP to the trial's services (or, under limited_internet, through the egress
// proxy), sent from inside the sandbox with nc so it leaves from where the agent is.
#include <algorithm>

#include "core/strings.h"
#include "tools/builtin_tools.h"
#include "tools/schema.h"

namespace forge::tools {

namespace {

struct Url {
  std::string host, target;
  int port = 80;
};

// The request is written by hand: a CR or LF (or any control byte, or a space) in the url would
// end its request line and start a second request of the model's making.
std::size_t first_unsafe(std::string_view s, bool allow_tab) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && !(allow_tab && c == '\t')) || c == 0x7F) return i;
  }
  return std::string_view::npos;
}

// Through the egress proxy: busybox nc shuts down its sending side at the end of stdin, and squid
// takes a half-closed client for one that left, aborting the request unanswered (its
// half_closed_clients option crashes squid 5). With -e, nc's program writes the request and reads
// the answer on the socket, which stays open both ways until squid closes it. An nc without -e
// (openbsd's) does not half-close unless asked, so it is run as it is.
constexpr const char* kProxiedNc =
    "if nc --help 2>&1 | grep -q -- '-e PROG'; then exec 3>&1 4<&0; "
    "exec nc -w \"$1\" \"$2\" \"$3\" -e sh -c 'cat <&4; exec cat >&3'; fi; exec nc -w \"$1\" \"$2\" \"$3\"";

bool header_name_ok(std::string_view k) {
  if (k.empty()) return false;
  for (char ch : k) {
    auto c = static_cast<unsigned char>(ch);
    if (!(std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos)) return false;
  }
  return true;
}

Result<Url> parse_url(const std::string& url) {
  if (auto bad = first_unsafe(url, false); bad != std::string::npos || url.find(' ') != std::string::npos)
    return fail(Errc::kInvalid, "url contains a control character or a space (at offset " +
                                    std::to_string(bad != std::string::npos ? bad : url.find(' ')) +
                                    "); percent-encode it (%0D, %0A, %20)");
  if (starts_with(url, "https://"))
    return fail(Errc::kUnsupported, "https is not supported by http_request; use bash with a client from the image");
  if (!starts_with(url, "http://")) return fail(Errc::kInvalid, "url must start with http://");
  std::string rest = url.substr(7);
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  Url u;
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  auto colon = authority.rfind(':');
  u.host = authority.substr(0, colon);
  if (colon != std::string::npos) {
    try {
      u.port = std::stoi(authority.substr(colon + 1));
    } catch (const std::exception&) {
      return fail(Errc::kInvalid, "bad port in url '" + url + "'");
    }
  }
  bool ok = !u.host.empty() && u.port > 0 && u.port < 65536;
  for (char c : u.host) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_');
  if (!ok) return fail(Errc::kInvalid, "bad host in url '" + url + "'");
  return u;
}

// Decodes a chunked body; returns the input unchanged if it is not well-formed chunking.
std::string dechunk(const std::string& body) {
  std::string out;
  std::size_t pos = 0;
  while (pos < body.size()) {
    auto nl = body.find("\r\n", pos);
    if (nl == std::string::npos) return body;
    std::size_t n = std::strtoul(body.c_str() + pos, nullptr, 16);
    if (n == 0) return out;
    pos = nl + 2;
    if (pos + n > body.size()) return body;
    out.append(body, pos, n);
    pos += n + 2;
  }
  return out;
}

}  // namespace

std::shared_ptr<Tool> http_tool(const BuiltinOptions& o) {
  auto sb = o.sandbox;
  auto route = o.http;
  return std::make_shared<FunctionTool>(
      ToolSpec{"http_request",
               "Send an HTTP request to a service on the task's network (http:// only). Returns 'Status: N' and the body.",
               R"({"type":"object","properties":{"method":{"type":"string","enum":["GET","POST","PUT","DELETE","HEAD","PATCH"]},)"
               R"("url":{"type":"string","description":"http://host[:port]/path"},)"
               R"("headers":{"type":"object","additionalProperties":{"type":"string"}},)"
               R"("json":{"description":"a JSON body, sent with Content-Type: application/json"},)"
               R"("data":{"type":"string","description":"a raw body"}},)"
               R"("required":["method","url"],"additionalProperties":false})"},
      [sb, route](const json::Value& a, const CallContext& ctx) -> Result<std::string> {
        auto url = parse_url(json::get_string(a, "url"));
        if (!url) return url.fail();
        std::string method = json::get_string(a, "method");
        std::string body = json::get_string(a, "data");
        std::string headers;
        if (auto* h = json::get_object(a, "headers"))
          for (const auto& m : h->GetObject()) {
            std::string k = m.name.GetString(), v = m.value.GetString();
            if (!header_name_ok(k))
              return fail(Errc::kInvalid,
                          "header name '" + printable(k) + "' is not a token (letters, digits, !#$%&'*+-.^_`|~)");
            if (first_unsafe(v, true) != std::string::npos)
              return fail(Errc::kInvalid, "header '" + k + "' has a control character (a line break?) in its value");
            headers += k + ": " + v + "\r\n";
          }
        if (auto it = a.FindMember("json"); it != a.MemberEnd()) {
          body = json::to_string(it->value);
          headers += "Content-Type: application/json\r\n";
        }
        bool direct = route.proxy_host.empty() ||
                      std::find(route.no_proxy.begin(), route.no_proxy.end(), url->host) != route.no_proxy.end();
        std::string target = direct ? url->target : "http://" + url->host + ":" + std::to_string(url->port) + url->target;
        std::string req = method + " " + target + " HTTP/1.1\r\nHost: " + url->host + "\r\nConnection: close\r\n"
                          "User-Agent: forgectl-http-request\r\n" + headers;
        if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
          req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
        req += "\r\n" + body;
        long secs = std::max<long>(1, static_cast<long>(ctx.deadline.remaining().count() / 1000));
        RunRequest run;
        if (direct)
          run.argv = {"nc", "-w", std::to_string(secs), url->host, std::to_string(url->port)};
        else
          run.argv = {"sh", "-c", kProxiedNc, "sh", std::to_string(secs), route.proxy_host, std::to_string(route.proxy_port)};
        run.stdin_data = req;
        run.timeout = ctx.deadline.remaining();
        auto r = sb->run(run);
        if (!r) return r.fail();
        if (r->timed_out) return fail(Errc::kTimeout, "no response before the deadline");
        auto end = r->out.find("\r\n\r\n");
        if (r->out.empty() || end == std::string::npos || !starts_with(r->out, "HTTP/"))
          return fail(Errc::kUnavailable, "no HTTP response from " + url->host + ":" + std::to_string(url->port) +
                                              (trim(r->err).empty() ? "" : " (" + trim(r->err) + ")"));
        std::string head = r->out.substr(0, end), rest = r->out.substr(end + 4);
        std::string status = head.substr(9, 3);
        if (to_lower(head).find("transfer-encoding: chunked") != std::string::npos) rest = dechunk(rest);
        return "Status: " + status + "\n" + rest;
      });
}

}  // namespace forge::tools
