// The Chrome DevTools protocol over Chromium's --remote-debugging-pipe, carried by one Docker exec:
// the exec's stdin is Chromium's fd 3 (commands), its stdout Chromium's fd 4 (replies and events).
// Nothing listens on a port, so nothing in the trial's network can reach the browser's control.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/json.h"
#include "core/result.h"
#include "engine/client.h"
#include "engine/stdcopy.h"
#include "engine/transport.h"

namespace forge::tools {

// Pipe framing: each message is one JSON text followed by a NUL byte.
std::string cdp_command(std::uint64_t id, std::string_view method, std::string_view params_json,
                        std::string_view session_id);

// Splits the pipe's bytes into messages; keeps a partial message between feeds.
class CdpSplitter {
 public:
  static constexpr std::size_t kMaxMessage = 64u << 20;  // a screenshot is a few MiB
  // The complete messages in `bytes` (with what was kept); kProtocol past kMaxMessage.
  Result<std::vector<std::string>> feed(std::string_view bytes);

 private:
  std::string partial_;
};

// A CDP event as received: its method, the session it came from, and the whole message.
struct CdpEvent {
  std::string method, session;
  std::string json;
};

class CdpPipe {
 public:
  static constexpr std::size_t kMaxQueuedEvents = 512;  // older events are dropped

  // Runs `cmd` (which must wire stdin to fd 3 and fd 4 to stdout) in `container` as `user`.
  static Result<std::unique_ptr<CdpPipe>> start(engine::Client& c, const std::string& container,
                                                std::vector<std::string> cmd, const std::string& user);
  ~CdpPipe();  // closes the browser's fd 3: Chromium exits
  CdpPipe(const CdpPipe&) = delete;
  CdpPipe& operator=(const CdpPipe&) = delete;

  // Sends one command and waits for its reply; the reply's "result" object as a document. A CDP
  // error reply is kInvalid with its message; a closed pipe kUnavailable; no reply kTimeout.
  Result<json::Document> call(std::string_view method, std::string_view params_json, std::string_view session,
                              Deadline deadline);
  // Waits for the next queued or arriving event `method` of `session`; false at the deadline.
  Result<bool> wait_event(std::string_view method, std::string_view session, Deadline deadline);
  // Forgets queued events (before an action whose consequences are to be waited for).
  void clear_events() { events_.clear(); }
  bool closed() const { return closed_; }
  std::string diagnostics() const { return stderr_tail_; }  // Chromium's last stderr lines

 private:
  CdpPipe(engine::Client& c, std::string exec_id, std::unique_ptr<engine::Stream> s)
      : client_(c), exec_id_(std::move(exec_id)), stream_(std::move(s)) {}
  // Reads what is there (waiting until `deadline` for something), files replies and events.
  Status pump(Deadline deadline, bool want_write);
  Status take(std::string_view bytes);

  engine::Client& client_;
  std::string exec_id_;
  std::unique_ptr<engine::Stream> stream_;
  engine::StdcopyDemuxer demux_;
  CdpSplitter splitter_;
  std::uint64_t next_id_ = 1;
  std::deque<std::pair<std::uint64_t, std::string>> replies_;
  std::deque<CdpEvent> events_;
  std::string stderr_tail_;
  bool closed_ = false;
};

}  // namespace forge::tools
