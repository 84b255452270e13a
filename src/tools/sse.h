// Server-sent events (the WHATWG text/event-stream format) read in pieces as they arrive: MCP's
// SSE transport and the stream replies of streamable HTTP.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace forge::tools {

struct SseEvent {
  std::string event = "message";  // the `event:` field; "message" when the event gives none
  std::string data;               // the `data:` lines joined by '\n'
  std::string id;
};

class SseParser {
 public:
  // An event whose fields (or a line of it) pass `max_event_bytes` is refused.
  explicit SseParser(std::size_t max_event_bytes) : max_(max_event_bytes) {}

  // Takes the next bytes of the stream; each event completed by them goes to `on_event`, in order.
  // kProtocol when an event is too large; the parser is then unusable.
  Status feed(std::string_view bytes, const std::function<void(SseEvent&&)>& on_event);

 private:
  void take_line(const std::function<void(SseEvent&&)>& on_event);

  std::size_t max_;
  std::string line_;
  SseEvent event_;
  bool has_data_ = false;
  bool after_cr_ = false;  // a '\n' right after '\r' ends no second line
  bool started_ = false;   // a leading byte-order mark is dropped
  std::size_t size_ = 0;   // the event's bytes so far, for the limit
  bool broken_ = false;
};

}  // namespace forge::tools
