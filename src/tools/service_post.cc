// POSTs from the sandbox with nc: HTTP/1.1 with Connection: close, so nc's stream ends with the reply.
#include "tools/service_post.h"

#include <algorithm>

#include "core/json.h"
#include "core/strings.h"

namespace forge::tools {

Result<std::string> post_json(Sandbox& sb, const ServiceEndpoint& to, const std::string& token, const std::string& path,
                              const std::string& body, Deadline deadline) {
  std::string auth = token.empty() ? "" : "Authorization: Bearer " + token + "\r\n";
  std::string req = "POST " + path + " HTTP/1.1\r\nHost: " + to.host + "\r\nConnection: close\r\n" + auth +
                    "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                    body;
  RunRequest run;
  long secs = std::max<long>(1, static_cast<long>(deadline.remaining().count() / 1000));
  run.argv = {"nc", "-w", std::to_string(secs), to.host, std::to_string(to.port)};
  run.stdin_data = req;
  run.timeout = deadline.remaining();
  auto r = sb.run(run);
  if (!r) return r.fail();
  if (r->timed_out) return fail(Errc::kTimeout, "the " + to.noun + " did not answer in time");
  auto end = r->out.find("\r\n\r\n");
  if (end == std::string::npos || !starts_with(r->out, "HTTP/"))
    return fail(Errc::kUnavailable, "no answer from the " + to.noun + " at " + to.host + ":" + std::to_string(to.port));
  std::string status = r->out.substr(9, 3);
  std::string payload = r->out.substr(end + 4);
  if (status[0] != '2') {
    auto doc = json::parse(payload, to.noun + " error");
    std::string msg = doc ? json::get_string(*doc, "message", payload) : payload;
    return fail(Errc::kInvalid, to.noun + ": " + msg);
  }
  return payload;
}

}  // namespace forge::tools
