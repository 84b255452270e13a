// json-db from the host, with the stack's control token: the initial fixtures, the final state for
// grading and golden replay's own namespace. Nothing on this path passes through the agent's
// sandbox. On a local engine the host reaches json-db's address on the task network directly (it
// owns the bridge); on a remote engine that address is not routable from here, so each request is
// an exec of `forgectl serve http-request` in json-db's own container, which talks to 127.0.0.1
// there (docs/services.md, "The host's channel"). The runner is never on the path: whatever runs
// there is the agent's, down to `nc`.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "core/result.h"
#include "engine/client.h"

namespace forge::trial {

// A reply larger than this is refused (kProtocol): json-db's largest, a full 16 MiB state, fits.
inline constexpr std::size_t kMaxDbReplyBytes = 64u << 20;

// One request from the host. `bearer` (the control token) is sent as the Authorization header; it
// is never put into an error message, a log line or a command line.
struct DbRequest {
  std::string method, path, body;
  std::string bearer;
};

struct DbReply {
  long status = 0;
  std::string body;
};

// One HTTP exchange with json-db; any status is a reply, only a failed exchange is an error.
using DbTransport = std::function<Result<DbReply>(const DbRequest&)>;

// Over libcurl to "http://ip:port" (a local engine). `service` names it in messages (the same
// channel reaches rag).
DbTransport direct_db_transport(std::string base_url, std::string service = "json-db");
// By exec of /usr/local/bin/forgectl `serve http-request` in `json_db` (the services image), token
// and body on its stdin (a remote engine; tests force it on a local one).
DbTransport exec_db_transport(engine::Client& c, std::string json_db, int port, std::string service = "json-db");

// The Errc of a json-db status answering a host request, so that trial's classify rule does the
// right thing: 400 kBadRequest, 404 kNotFound, 409 kConflict, 413/414/431 kInvalid (the same
// request is too large every time); 401 kProtocol (json-db does not accept forgectl's control
// token: forgectl misconfigured), 403 and 405 kProtocol (the control token is never refused a
// route: a bug); 507 kServer (json-db's storage used up on a host init or read: infra); other 5xx
// kServer; anything else kProtocol.
Errc db_status_code(long status);

class DbClient {
 public:
  DbClient(DbTransport transport, std::string control_token, std::string ns)
      : transport_(std::move(transport)), token_(std::move(control_token)), ns_(std::move(ns)) {}
  const std::string& ns() const { return ns_; }
  // The same channel and token, on namespace `ns`.
  DbClient in_namespace(std::string ns) const { return DbClient(transport_, token_, std::move(ns)); }

  // POST /trials/{ns}/init with {tables, unstable_fields}.
  Status init(const std::string& init_body_json);
  // DELETE /trials/{ns}.
  Status drop();
  // The `data` of GET /trials/{ns}/state: every field, unstable ones included.
  Result<std::string> state_json();
  // GET /trials/{ns}/state/stable: the data with the unstable fields dropped, and its stable hash,
  // from one reply.
  struct Stable {
    std::string data_json, hash;
  };
  Result<Stable> stable_state();
  // One request with the control token; any status is a reply, only a failed exchange an error.
  Result<DbReply> exchange(const char* method, const std::string& path, const std::string& body);
  // The error for a non-2xx `reply` to `method path`, with db_status_code's code and the service's message.
  static Error reply_error(const char* method, const std::string& path, const DbReply& reply,
                           const std::string& service = "json-db");

 private:
  Result<std::string> call(const char* method, const std::string& path, const std::string& body);
  DbTransport transport_;
  std::string token_;
  std::string ns_;
};

// "/trials/" + the namespace, percent-encoded as one path segment.
std::string trial_path(const std::string& ns);

}  // namespace forge::trial
