// `forgectl serve http-request`: one HTTP request to a built-in service on 127.0.0.1 of its own
// container. The host runs it by exec in json-db's container when json-db's address is not
// routable from the host (a remote engine), so that nothing in the agent's sandbox is on the path
// of forgectl's own requests. The token and the body come on stdin, never in argv (which the
// engine records with the exec).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/result.h"

namespace forge::services {

// A reply larger than this is refused (kProtocol): json-db's largest, a full 16 MiB state, fits.
inline constexpr std::size_t kMaxLocalReplyBytes = 64u << 20;

struct LocalRequest {
  std::string method;  // GET, HEAD, POST, PUT, PATCH or DELETE
  std::string target;  // "/trials/x/state": starts with '/', printable ASCII without spaces
  std::string bearer;  // sent as "Authorization: Bearer <bearer>"; empty: no Authorization header
  std::string body;    // sent with Content-Type: application/json unless empty on GET/HEAD/DELETE
  std::uint16_t port = 8000;
  // Where: 127.0.0.1 for `serve http-request`; mock-web's json-db portal names json-db's service.
  std::string host = "127.0.0.1";
  Millis timeout{30000};  // for connecting, and for each send and receive
};

struct LocalReply {
  int status = 0;
  std::string body;
};

// kInvalid for a method, target or host that is not one of the above, or a body past kMaxBodyBytes.
Status check_local_request(const LocalRequest& r);

// The stdin of `forgectl serve http-request`: the first line is the token (may be empty), the
// rest, to the end, is the body. kInvalid when there is no newline or the body is too large.
Status read_local_input(std::string_view stdin_text, LocalRequest& into);

// Sends `r` to r.host:r.port and reads the whole reply. kUnavailable when nothing answers,
// kTimeout when it stops answering, kProtocol for a reply past kMaxLocalReplyBytes.
Result<LocalReply> local_request(const LocalRequest& r);

// What `forgectl serve http-request` prints: the status in decimal, a newline, the body verbatim.
std::string format_local_reply(const LocalReply& reply);

}  // namespace forge::services
