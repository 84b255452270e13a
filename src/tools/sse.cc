// The event-stream format, as browsers read it: lines end in CRLF, LF or CR; a blank line
// dispatches; `:` starts a comment; one space after a field's colon is dropped.
#include "tools/sse.h"

namespace forge::tools {

Status SseParser::feed(std::string_view bytes, const std::function<void(SseEvent&&)>& on_event) {
  if (broken_) return fail(Errc::kProtocol, "the event stream was refused earlier");
  if (!started_ && !bytes.empty()) {
    started_ = true;
    if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  }
  for (char c : bytes) {
    if (c == '\n' && after_cr_) {
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\r' || c == '\n') {
      take_line(on_event);
      continue;
    }
    line_ += c;
    if (++size_ > max_) {
      broken_ = true;
      return fail(Errc::kProtocol, "an event of the stream has more than " + std::to_string(max_) + " bytes");
    }
  }
  return {};
}

void SseParser::take_line(const std::function<void(SseEvent&&)>& on_event) {
  std::string line;
  line.swap(line_);
  if (line.empty()) {
    if (has_data_) on_event(std::move(event_));
    event_ = SseEvent{};
    has_data_ = false;
    size_ = 0;
    return;
  }
  if (line.compare(0, 1, ":") == 0) return;  // a comment (servers send them as keep-alives)
  const std::size_t colon = line.find(':');
  std::string_view field = std::string_view(line).substr(0, colon);
  std::string_view value = colon == std::string::npos ? std::string_view() : std::string_view(line).substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "event") {
    event_.event = value.empty() ? "message" : std::string(value);
  } else if (field == "data") {
    if (has_data_) event_.data += '\n';
    event_.data += value;
    has_data_ = true;
  } else if (field == "id") {
    event_.id = std::string(value);
  }  // `retry` and unknown fields: nothing a client that does not reconnect needs
}

}  // namespace forge::tools
