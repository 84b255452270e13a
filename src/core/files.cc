// Whole-file reads and durable writes.
#include "core/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <system_error>

#include "core/strings.h"

namespace forge {

namespace fs = std::filesystem;

Result<std::string> read_text(const fs::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return fail(Errc::kNotFound, "'" + path.string() + "' does not exist");
  if (fs::is_directory(status)) return fail(Errc::kInvalid, "'" + path.string() + "' is a directory");
  auto too_big = [&](std::uintmax_t size) {
    return fail(Errc::kInvalid, "'" + path.string() + "' is larger than the " + human_bytes(max_bytes) +
                                    " limit for one file (" + std::to_string(size) + " bytes or more)");
  };
  if (fs::is_regular_file(status)) {
    auto size = fs::file_size(path, ec);
    if (!ec && size > max_bytes) return too_big(size);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(Errc::kIo, "cannot open '" + path.string() + "'");
  std::string out;
  char chunk[64 * 1024];
  while (in) {
    in.read(chunk, sizeof chunk);
    out.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (out.size() > max_bytes) return too_big(out.size());
  }
  if (in.bad()) return fail(Errc::kIo, "cannot read '" + path.string() + "'");
  return out;
}

namespace {

Status write_all(int fd, std::string_view text, const std::string& what) {
  std::size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(Errc::kIo, "writing " + what + ": " + std::strerror(errno));
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return fail(Errc::kIo, "syncing " + what + ": " + std::strerror(errno));
  return {};
}

}  // namespace

Status write_file_atomic(const std::string& path, std::string_view text) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail(Errc::kIo, "cannot write " + tmp + ": " + std::strerror(errno));
  Status st = write_all(fd, text, tmp);
  ::close(fd);
  if (!st) return st;
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail(Errc::kIo, "cannot rename " + tmp + ": " + std::strerror(errno));
  return {};
}

Status append_durably(const std::string& path, std::string_view line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return fail(Errc::kIo, "cannot open " + path + ": " + std::strerror(errno));
  Status st = write_all(fd, line, path);
  ::close(fd);
  return st;
}

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string iso_now_ms() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms));
  return buf;
}

}  // namespace forge
