// Writing DIR/tolokaforge/…: Tolokaforge's four run-level files per agent.
#include "results/tolokaforge_files.h"

#include <cctype>
#include <filesystem>
#include <map>
#include <memory>

#include "core/files.h"
#include "results/failure_attribution.h"
#include "results/html_text.h"
#include "results/tolokaforge_metrics.h"

namespace forge::results {

namespace fs = std::filesystem;

std::string tolokaforge_agent_dir(const std::string& agent) {
  std::string s;
  for (char c : agent) s += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ? c : '-';
  if (s.empty() || s == "." || s == "..") s = "agent";
  return s;
}

namespace {

constexpr const char* kFiles[] = {"aggregate.json", "per_task_metrics.json", "metadata_slices.json",
                                  "failure_attribution.json"};

// trial.json of each failed trial that has one, read once (only failures need it).
class Details {
 public:
  explicit Details(std::string dir) : dir_(std::move(dir)) {}
  Result<const TrialDetail*> of(const TrialRecord& t) {
    if (!safe_trial_dir(t.trial_dir)) return nullptr;
    auto [it, fresh] = cache_.try_emplace(t.trial_dir);
    if (!fresh) return it->second.get();
    auto d = TrialDetail::read((fs::path(dir_) / t.trial_dir / "trial.json").string());
    // None (a merge without the trial's directory), or one that cannot be read (its page says
    // why): the trial is attributed without its evidence, and the other trials' files are written.
    if (!d) return nullptr;
    it->second = std::make_unique<TrialDetail>(std::move(*d));
    return it->second.get();
  }

 private:
  std::string dir_;
  std::map<std::string, std::unique_ptr<TrialDetail>> cache_;
};

Status write_agent(const fs::path& out, const std::vector<const TrialRecord*>& trials, Details& details) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return fail(Errc::kIo, out.string() + ": " + ec.message());
  auto rows = tolokaforge::task_metrics(trials);
  auto per_task = tolokaforge::per_task_metrics_json(rows);
  auto agg = tolokaforge::aggregate_json(rows);
  auto slices = tolokaforge::metadata_slices_json(rows);
  auto failures = tolokaforge::failure_attribution_json(
      trials, [&](const TrialRecord& t) -> const TrialDetail* { return *details.of(t); });
  for (auto* r : {&per_task, &agg, &slices, &failures})
    if (!*r) return r->fail_with("writing " + out.string());
  for (const auto& [name, text] :
       std::initializer_list<std::pair<const char*, const std::string*>>{{"aggregate.json", &*agg},
                                                                         {"per_task_metrics.json", &*per_task},
                                                                         {"metadata_slices.json", &*slices},
                                                                         {"failure_attribution.json", &*failures}})
    if (auto st = write_file_atomic((out / name).string(), *text); !st) return st;
  return {};
}

}  // namespace

Status write_tolokaforge_files(const std::string& dir, const std::vector<TrialRecord>& trials) {
  std::map<std::string, std::vector<const TrialRecord*>> by_agent;
  for (const auto& t : trials) by_agent[t.agent].push_back(&t);
  const fs::path base = fs::path(dir) / kTolokaforgeDir;
  Details details(dir);
  if (by_agent.size() <= 1) {
    std::vector<const TrialRecord*> all;
    for (const auto& t : trials) all.push_back(&t);
    return write_agent(base, all, details);
  }
  for (const auto& [agent, sel] : by_agent)
    if (auto st = write_agent(base / tolokaforge_agent_dir(agent), sel, details); !st) return st;
  // A directory that once held one agent's run (a merge into it): its files would read as this run's.
  for (const char* name : kFiles) {
    std::error_code ec;
    fs::remove(base / name, ec);
  }
  return {};
}

}  // namespace forge::results
