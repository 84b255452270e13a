// Demultiplexes Docker's stdcopy framing.
#include "engine/stdcopy.h"

#include <algorithm>

namespace forge::engine {

Status StdcopyDemuxer::feed(std::string_view bytes, const Sink& sink) {
  while (!bytes.empty()) {
    if (remaining_ == 0) {
      std::size_t take = std::min<std::size_t>(8 - header_len_, bytes.size());
      std::copy_n(bytes.data(), take, header_ + header_len_);
      header_len_ += take;
      bytes.remove_prefix(take);
      if (header_len_ < 8) return {};
      header_len_ = 0;
      if (header_[0] > 3 || header_[1] || header_[2] || header_[3])
        return fail(Errc::kProtocol, "malformed exec stream: bad frame header (is the exec a TTY?)");
      current_ = static_cast<StdStream>(header_[0]);
      remaining_ = std::uint32_t(header_[4]) << 24 | std::uint32_t(header_[5]) << 16 | std::uint32_t(header_[6]) << 8 |
                   std::uint32_t(header_[7]);
      continue;
    }
    std::size_t take = std::min<std::size_t>(remaining_, bytes.size());
    sink(current_, bytes.substr(0, take));
    remaining_ -= static_cast<std::uint32_t>(take);
    bytes.remove_prefix(take);
  }
  return {};
}

std::string stdcopy_frame(StdStream s, std::string_view payload) {
  std::string out(8, '\0');
  out[0] = static_cast<char>(s);
  auto n = static_cast<std::uint32_t>(payload.size());
  out[4] = static_cast<char>(n >> 24);
  out[5] = static_cast<char>(n >> 16);
  out[6] = static_cast<char>(n >> 8);
  out[7] = static_cast<char>(n);
  out.append(payload);
  return out;
}

}  // namespace forge::engine
