// Whole-file reads and durable writes on the host, without throwing.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/limits.h"
#include "core/result.h"

namespace forge {

// The whole file; kNotFound when it does not exist, kIo when it cannot be read, kInvalid when it
// is larger than `max_bytes` ("'tasks/t1/db.json' is larger than the 64.0 MiB limit for one file (…)").
// The cap holds for files that grow while read and for devices too: at most max_bytes + 1 are read.
Result<std::string> read_text(const std::filesystem::path& path, std::uintmax_t max_bytes = limits::kMaxTaskFileBytes);

// Writes `text` to `path` atomically (temp file, fsync, rename): readers see the old file or the
// new one, never a part.
Status write_file_atomic(const std::string& path, std::string_view text);

// Appends `line` (with its newline) in one write and fsyncs: after a crash the file ends with
// whole lines, or with one torn last line that readers skip.
Status append_durably(const std::string& path, std::string_view line);

// "2026-11-30T06:45:12Z"
std::string iso_now();
// "2026-11-30T06:45:12.345Z": for logs whose entries come many to the second.
std::string iso_now_ms();

}  // namespace forge
