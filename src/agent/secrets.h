// API keys read on the host, from the environment or a .env file; never written, never logged.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "core/result.h"

namespace forge::agent {

inline constexpr std::string_view kSecretMask = "[REDACTED]";

enum class DotenvMissing { kIgnore, kError };

// Looks up a secret by name: the process environment first, then the .env file. The environment
// is only read, never modified (Tolokaforge's key rotation rewrote os.environ), and nothing here
// ever reaches a container: the LLM layer runs on the host.
// Thread-safe: one instance is shared by all trials of a process.
class Secrets {
 public:
  using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

  // `env` is injectable for tests; empty means the process environment (getenv).
  explicit Secrets(std::map<std::string, std::string> dotenv = {}, EnvLookup env = {});
  Secrets(Secrets&& other) noexcept;
  Secrets& operator=(Secrets&&) = delete;

  // Reads `dotenv` (KEY=VALUE lines, `export KEY=VALUE`, "double" quotes with \n \" \\ escapes,
  // 'single' quotes taken literally, # comments and blank lines). A malformed line is kInvalid
  // naming path:line but never the value. A missing file is fine with kIgnore.
  static Result<Secrets> load(const std::filesystem::path& dotenv, DotenvMissing missing = DotenvMissing::kIgnore,
                              EnvLookup env = {});
  // The parser alone; `what` names the source in errors.
  static Result<std::map<std::string, std::string>> parse_dotenv(std::string_view text, std::string_view what);

  // The value of `name`, or nullopt when neither source has a non-empty one. Every value handed
  // out is remembered, so that redact() masks it afterwards.
  std::optional<std::string> get(const std::string& name) const;

  // `text` with every secret handed out so far replaced by "[REDACTED]": applied to anything that
  // may reach a log, an error or a file. Values shorter than kMinMasked characters are not masked
  // (masking "1" everywhere would destroy the text and protect nothing).
  std::string redact(std::string_view text) const;
  static constexpr std::size_t kMinMasked = 4;

 private:
  std::map<std::string, std::string> dotenv_;
  EnvLookup env_;
  mutable std::mutex mu_;
  // Longest first, so that a secret containing another is masked whole.
  struct LongestFirst {
    bool operator()(const std::string& a, const std::string& b) const {
      return a.size() != b.size() ? a.size() > b.size() : a < b;
    }
  };
  mutable std::set<std::string, LongestFirst> handed_out_;
};

}  // namespace forge::agent
