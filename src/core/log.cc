// A small leveled logger.
#include "core/log.h"

#include <ostream>

namespace forge {

LogLevel Logger::parse_level(std::string_view name, LogLevel def) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warn") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  if (name == "quiet") return LogLevel::kQuiet;
  return def;
}

void Logger::write(LogLevel level, std::string_view msg) {
  if (level < level_) return;
  static constexpr const char* kPrefix[] = {"debug: ", "", "warning: ", "error: ", ""};
  std::lock_guard lock(mu_);
  *out_ << "forgectl: " << kPrefix[static_cast<int>(level)] << msg << '\n';
  out_->flush();
}

}  // namespace forge
