// The golden state once per run: the expected state of a task's golden replay depends on the task
// alone (its files, solution, server code and image), never on the agent, so it is computed once
// per content key and shared by every trial of every agent; the run directory keeps it for
// --resume (DIR/golden/<key>.json, under an HMAC whose key never leaves the host's state dir, so a
// file changed in the run directory is detected and computed again, never trusted). The first computation replays
// twice: two replays that differ mean the golden state is not deterministic, and then every trial
// replays its own, as without the cache (docs/grading.md, "The golden state once").
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/log.h"
#include "core/result.h"

namespace forge::trial {

// One golden action's outcome: applied (refusal empty), or the tool's refusal as grading reports it.
struct GoldenStep {
  std::string tool;
  std::string refusal;
};

// One golden replay, as grading sees it.
struct GoldenReplay {
  std::vector<GoldenStep> steps;
  std::string state_json;  // the stable state: unstable fields dropped, canonical
  std::string hash;        // SHA-256 of state_json
};

struct GoldenEntry {
  std::string task_id, key;
  bool deterministic = true;
  std::string differing;  // when not deterministic: what differed between the two replays
  GoldenReplay replay;    // the first replay's
};

enum class GoldenSource { kComputed, kReused, kOwn };
const char* to_string(GoldenSource s);  // computed | reused | replayed

class GoldenCache {
 public:
  // `dir`: where entries are kept (DIR/golden), made on the first write. `secret`: the HMAC key of
  // their files (golden_cache_secret); empty: files are written but never read back. `log` gets
  // the warnings: a golden state that is not deterministic (once per key), a file not trusted.
  GoldenCache(std::string dir, std::string secret, Logger* log)
      : dir_(std::move(dir)), secret_(std::move(secret)), log_(log) {}

  struct Got {
    std::shared_ptr<const GoldenEntry> entry;
    GoldenSource source = GoldenSource::kReused;
    int replays = 0;  // golden replays this call ran (2 when it computed)
  };
  using Replay = std::function<Result<GoldenReplay>()>;

  // The entry of `key`: from memory, else from DIR/golden/<key>.json when it checks out (its HMAC,
  // its key, its hash, the golden actions `tools` in order), else computed now by two calls
  // of `replay` and written there. Concurrent callers of one key wait for one computation. An
  // error of `replay` is returned and nothing is kept: the next caller computes again.
  Result<Got> get(const std::string& task_id, const std::string& key, const std::vector<std::string>& tools,
                  const Replay& replay);

  std::string path_of(const std::string& key) const;

 private:
  struct Slot {
    std::mutex mu;
    std::shared_ptr<const GoldenEntry> entry;
  };
  std::shared_ptr<const GoldenEntry> load(const std::string& task_id, const std::string& key,
                                          const std::vector<std::string>& tools);
  Result<std::shared_ptr<const GoldenEntry>> compute(const std::string& task_id, const std::string& key,
                                                     const Replay& replay);
  void warn(const std::string& msg);

  std::string dir_;
  std::string secret_;
  Logger* log_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;
};

// The file text of an entry: {"format": 1, "hmac": HMAC-SHA256 of "entry" under `secret`, "entry":
// the entry's JSON as a string}. Exposed for tests.
std::string golden_file_text(const GoldenEntry& e, const std::string& secret);
// The entry in `text`, refused (kInvalid, saying why) unless its HMAC under `secret` (never empty),
// key, hash and actions check out against `key` and `tools`.
Result<GoldenEntry> parse_golden_file(std::string_view text, const std::string& key,
                                      const std::vector<std::string>& tools, const std::string& secret);

// The host's key for golden cache files: <state_dir>/golden-cache.key (64 hex digits, 0600, made
// once). It stays on the host, outside every run directory: whoever can write a run directory
// cannot forge an entry. An error when it cannot be read or made (the cache then keeps no files).
Result<std::string> golden_cache_secret(const std::string& state_dir);

}  // namespace forge::trial
