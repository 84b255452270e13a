// Serve mode of forgectl-exec: length-prefixed JSON requests on one fd, responses on another
// (docs/helper-protocol.md). One long-lived helper answers a trial's tool calls.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "helper/ops.h"

namespace forge::helper {

inline constexpr std::uint32_t kMaxFrame = 64u << 20;
inline constexpr int kProtocolVersion = 1;
inline constexpr int kExitMalformed = 2;

// Answers one request (a JSON object). Returns false, with no response, when the request's id
// cannot be read: the stream can no longer be trusted.
bool handle_request(const Root& root, std::string_view request, std::string* response);

// kReap: the process is the helper itself (a subreaper) and reaps orphans between requests;
// kLeave: an embedding process (a test) whose other children must not be reaped.
enum class Orphans { kLeave, kReap };

// Serves requests from `in_fd` until EOF (returns 0); kExitMalformed on a frame that cannot be
// answered or when the output breaks.
int serve(const Root& root, int in_fd, int out_fd, Orphans orphans);

}  // namespace forge::helper
