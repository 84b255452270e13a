// Every size, count and depth limit of the built-in services, in one place (docs/services.md).
// Kept local to src/services on purpose: the shared limits (src/core/limits.h) are being added on
// another branch; when they land, these move there and this header goes.
#pragma once

#include <cstddef>

#include "core/limits.h"

namespace forge::services {

// HTTP, both services.
inline constexpr std::size_t kMaxBodyBytes = limits::kMaxServiceRequestBytes;  // 413; read at most this much of a body
inline constexpr std::size_t kMaxDrainBytes = 64u << 20;   // a refused body is read and dropped up to this
inline constexpr std::size_t kMaxTargetBytes = 8u << 10;   // 414: the request-target (path and query)
inline constexpr std::size_t kMaxHeaderCount = 64;         // 431
inline constexpr std::size_t kMaxHeaderBytes = 16u << 10;  // 431: all header names and values together
inline constexpr int kMaxJsonDepth = 128;                  // 400: bodies, and json-db's state after an update

// json-db.
inline constexpr std::size_t kMaxTrials = 1024;                // 507 beyond, until trials are deleted
inline constexpr std::size_t kMaxSnapshots = 256;              // per trial; 409 beyond
inline constexpr std::size_t kMaxTrialStateBytes = 16u << 20;  // 507: a trial's tables, as compact JSON
// 507: a trial's tables, its initial tables and its snapshots together. Four full states fit, so the
// host can always take the two snapshots grading needs, however much an agent wrote.
inline constexpr std::size_t kMaxTrialTotalBytes = 4 * kMaxTrialStateBytes;

// mock-web.
inline constexpr std::size_t kMaxFileBytes = 64u << 20;  // 413: a served file
// /<name>.html looks through at most this many categories, and task directories in each, of the
// tasks root (a trial copies one task there; the rest would be someone's mistake).
inline constexpr std::size_t kMaxTaskDirs = 64;

}  // namespace forge::services
