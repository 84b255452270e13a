// The tool channel into a container: one long-lived exec of `forgectl-exec --serve`, spoken to
// with framed JSON (docs/helper-protocol.md), restarted when the agent kills it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/json.h"
#include "core/result.h"
#include "engine/client.h"
#include "engine/exec.h"

namespace forge::tools {

struct HelperChannelSpec {
  std::string container;  // id or name; must be running
  std::string workspace;  // absolute path in the container: the helper's --root
  std::string user;       // numeric "uid:gid" for the helper and its commands; empty: the container's
  std::string helper = engine::kExecHelperPath;
};

// Maps a helper error code ("not_found", "forbidden", …) to ours; unknown codes are kProtocol.
Errc errc_from_helper_code(std::string_view code);

class HelperChannel {
 public:
  // How long past a call's deadline a response is still awaited: the helper enforces run
  // timeouts itself and needs a moment to kill and drain.
  static constexpr Millis kGrace{2000};

  HelperChannel(engine::Client& client, HelperChannelSpec spec);
  ~HelperChannel();  // closes the helper's stdin: it exits
  HelperChannel(const HelperChannel&) = delete;
  HelperChannel& operator=(const HelperChannel&) = delete;

  // Sends one request, a JSON object without "id" (`{"op":"ping"}`), and returns the response.
  // The helper is started on first use, and again after it was lost. A response with ok:false
  // is an error with the helper's code mapped (errc_from_helper_code). If the helper dies or the
  // stream breaks during the call, the call fails with kUnavailable; the channel's first helper
  // dying before it answered its ping fails with kBroken (the sandbox cannot run tools, before
  // the agent could touch it); with no response by
  // `deadline` + kGrace, the helper is killed and the call fails with kTimeout. Either way the
  // next call starts a new helper. One call at a time; safe from any thread.
  Result<json::Document> call(std::string_view request_json_without_id, Deadline deadline);

  int starts() const;               // helpers started so far (1 + restarts, once used)
  std::string diagnostics() const;  // the tail of what helpers wrote to stderr
  const HelperChannelSpec& spec() const { return spec_; }

 private:
  struct Session;

  Status start_locked(Deadline deadline);
  Result<json::Document> exchange_locked(std::uint64_t id, std::string_view body, Deadline deadline);
  bool still_alive_locked();
  void pump_locked(std::string_view bytes);
  void kill_locked();
  std::string what() const;

  engine::Client& client_;
  const HelperChannelSpec spec_;
  mutable std::mutex mu_;
  std::unique_ptr<Session> session_;
  std::uint64_t next_id_ = 1;
  int starts_ = 0;
  std::string diagnostics_;
};

}  // namespace forge::tools
