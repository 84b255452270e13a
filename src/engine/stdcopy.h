// Demultiplexes Docker's stdcopy framing (exec and logs streams of non-TTY containers).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace forge::engine {

enum class StdStream : std::uint8_t { kStdin = 0, kStdout = 1, kStderr = 2, kSystem = 3 };

// Frames are [stream u8][0 0 0][length u32 big-endian][payload]; they may be split anywhere
// across reads, so the demuxer keeps partial headers and payloads between feeds.
class StdcopyDemuxer {
 public:
  using Sink = std::function<void(StdStream, std::string_view)>;
  // Feeds bytes; complete payload pieces go to `sink` as soon as they arrive.
  Status feed(std::string_view bytes, const Sink& sink);
  // True when the stream stopped in the middle of a frame.
  bool mid_frame() const { return header_len_ != 0 || remaining_ != 0; }

 private:
  unsigned char header_[8] = {};
  std::size_t header_len_ = 0;
  std::uint32_t remaining_ = 0;  // payload bytes left in the current frame
  StdStream current_ = StdStream::kStdout;
};

// Encodes one frame; for tests and fakes.
std::string stdcopy_frame(StdStream s, std::string_view payload);

}  // namespace forge::engine
