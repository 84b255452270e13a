// A small leveled logger writing to a stream (stderr in main); passed down, never global.
#pragma once

#include <iosfwd>
#include <mutex>
#include <string_view>

namespace forge {

enum class LogLevel { kDebug, kInfo, kWarn, kError, kQuiet };

class Logger {
 public:
  Logger(std::ostream& out, LogLevel level) : out_(&out), level_(level) {}
  void debug(std::string_view msg) { write(LogLevel::kDebug, msg); }
  void info(std::string_view msg) { write(LogLevel::kInfo, msg); }
  void warn(std::string_view msg) { write(LogLevel::kWarn, msg); }
  void error(std::string_view msg) { write(LogLevel::kError, msg); }
  LogLevel level() const { return level_; }

  // "debug" | "info" | "warn" | "error" | "quiet"; anything else keeps `def`.
  static LogLevel parse_level(std::string_view name, LogLevel def);

 private:
  void write(LogLevel level, std::string_view msg);
  std::ostream* out_;
  LogLevel level_;
  std::mutex mu_;
};

}  // namespace forge
