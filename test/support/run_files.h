// What the docker suite reads back from disk: a file or a whole tree as text, a JSON file, a run
// directory's trials and the parts of its aggregate.json that do not depend on how it ran; and
// the bundled example tasks (examples/tasks of this checkout), copied where a test may change them.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/json.h"
#include "results/trial_record.h"
#include "support/paths.h"

namespace forge::test {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every regular file under `dir`, concatenated (to look for what must be in none of them).
inline std::string all_files(const std::string& dir) {
  std::string out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out += slurp(e.path());
  return out;
}

inline json::Document json_file(const std::string& path) {
  auto d = json::parse(slurp(path), path);
  REQUIRE_MESSAGE(d.has_value(), (d ? "" : d.error().what()));
  return std::move(*d);
}

inline std::vector<results::TrialRecord> trials_of(const std::string& run_dir) {
  auto log = results::read_trials_jsonl(run_dir + "/trials.jsonl");
  REQUIRE_MESSAGE(log.has_value(), (log ? "" : log.error().what()));
  return log->trials;
}

// The parts of aggregate.json that must not depend on how the run was split or interrupted.
inline std::string outcome_view(const std::string& run_dir) {
  auto d = json_file(run_dir + "/aggregate.json");
  const auto& o = d["overall"];
  json::Writer w;
  w.begin_object();
  for (const char* k : {"trials", "graded", "passed", "infra_errors"})
    if (o.HasMember(k)) w.key(k).i64(o[k].GetInt64());
  for (const char* k : {"pass_at_k", "pass_hat_k", "mean_score"})
    if (o.HasMember(k)) w.key(k).raw_value(json::to_string(o[k]));
  return w.end_object().take();
}

// examples/tasks/NAME of this source tree.
inline std::string example_task(const std::string& name) {
  return (std::filesystem::path(source_dir()) / "examples" / "tasks" / name).string();
}

// A copy of examples/tasks/NAME at `to` (created, or merged into); returns `to`.
inline std::string copy_example_task(const std::string& name, const std::string& to) {
  std::filesystem::create_directories(to);
  std::filesystem::copy(example_task(name), to,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  return to;
}

}  // namespace forge::test
