// The golden state once per run, through the forgectl binary against the real daemon: 8 trials of
// a hash-graded Python tool server task replay the golden solution exactly twice (the first
// computation's determinism check), counted from trials.jsonl, and grade exactly as with
// --no-golden-cache; a server that stamps the time into its state is found not deterministic,
// warned about once, and each trial replays its own golden state, so the oracle still passes.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "results/trial_record.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

using GradeKey = std::tuple<std::string, std::string, int>;  // task, agent, index

struct GradeView {
  bool pass = false;
  double score = 0;
  std::map<std::string, double> components;
  bool operator==(const GradeView&) const = default;
};

std::map<GradeKey, GradeView> grades(const std::vector<results::TrialRecord>& rs) {
  std::map<GradeKey, GradeView> out;
  for (const auto& r : rs) out[{r.task_id, r.agent, r.trial_index}] = {r.binary_pass, r.score, r.components};
  return out;
}

int replays(const std::vector<results::TrialRecord>& rs) {
  int n = 0;
  for (const auto& r : rs) n += static_cast<int>(r.golden_replays);
  return n;
}

int count_source(const std::vector<results::TrialRecord>& rs, const std::string& source) {
  int n = 0;
  for (const auto& r : rs) n += r.golden_source == source;
  return n;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// A Python tool server that stamps the time it started into its state ("opened": outside
// unstable_fields), graded by the golden-replay hash alone. The agent's server and a golden server
// seeded with the agent's initial state agree; two fresh golden servers never do.
std::string write_clock_task(const TempDir& dir) {
  fs::path t = fs::path(dir.path()) / "tasks" / "clock-items";
  fs::create_directories(t);
  auto put = [&](const char* name, const std::string& text) { std::ofstream(t / name) << text; };
  put("server.py",
      "import time\n"
      "from typing import Annotated\n"
      "from pydantic import Field\n"
      "from tolokaforge.core.tools_interface import ToolError, create_server\n"
      "mcp, registry, TOOLS = create_server(__file__, \"clock\")\n"
      "mcp.on_start(lambda: registry._state().update({\"opened\": [{\"id\": \"clock\", \"at_ns\": time.time_ns()}]}))\n"
      "@registry.tool(\"Mark an item done.\")\n"
      "def mark_done(data: dict, item_id: Annotated[str, Field(description=\"Item id\")]) -> dict:\n"
      "    for it in data[\"items\"]:\n"
      "        if it[\"id\"] == item_id:\n"
      "            it[\"done\"] = True\n"
      "            return it\n"
      "    raise ToolError(\"no such item\")\n"
      "if __name__ == \"__main__\":\n"
      "    mcp.run(transport=\"stdio\")\n");
  put("initial_state.json", R"({"items": [{"id": "I-1", "done": false}]})");
  put("task.yaml",
      "task_id: clock_items\nname: clock\ncategory: test\ndescription: \"Mark I-1 done.\"\n"
      "initial_user_message: \"Please mark I-1 done.\"\nmax_turns: 5\nenvironment:\n  stack: none\n"
      "tools:\n  agent:\n    enabled: [mark_done]\n    mcp_server: server.py\n  user:\n    enabled: []\n"
      "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
      "grading: grading.yaml\n"
      "solution:\n  tool_calls:\n    - {name: mark_done, arguments: {item_id: I-1}}\n  final_message: \"Done.\"\n");
  put("grading.yaml",
      "combine: {method: weighted, pass_threshold: 0.99}\n"
      "state_checks:\n  hash:\n    enabled: true\n    golden_actions:\n      - {name: mark_done, kwargs: {item_id: I-1}}\n");
  return t.string();
}

}  // namespace

TEST_CASE("golden cache: 8 trials of a Python-server task replay the golden solution twice, graded as without the cache") {
  TempDir dir;
  std::string task = copy_example_task("library-loans", dir.path() + "/tasks/library-loans");
  std::string on = dir.path() + "/on", off = dir.path() + "/off";
  const std::vector<std::string> common = {"run", task, "--agent", "oracle", "--agent", "noop", "--trials", "4",
                                           "--concurrency", "2"};
  auto with = common, without = common;
  with.insert(with.end(), {"--out", on});
  without.insert(without.end(), {"--out", off, "--no-golden-cache"});

  auto a = forgectl_run(with);
  REQUIRE_MESSAGE(a.code == 0, a.text());
  auto b = forgectl_run(without);
  REQUIRE_MESSAGE(b.code == 0, b.text());
  auto cached = trials_of(on), own = trials_of(off);
  REQUIRE(cached.size() == 8);
  REQUIRE(own.size() == 8);

  CHECK(replays(cached) == 2);  // the one computation, replayed twice to check determinism
  CHECK(count_source(cached, "computed") == 1);
  CHECK(count_source(cached, "reused") == 7);
  std::set<std::string> keys;
  for (const auto& r : cached) keys.insert(r.golden_key);
  CHECK(keys.size() == 1);
  CHECK(keys.begin()->size() == 64);
  CHECK(fs::exists(on + "/golden/" + *keys.begin() + ".json"));

  CHECK(replays(own) == 8);  // every trial its own
  CHECK(count_source(own, "replayed") == 8);
  CHECK_FALSE(fs::exists(off + "/golden"));

  CHECK(grades(cached) == grades(own));
  for (const auto& r : cached) CHECK_MESSAGE(r.binary_pass == (r.agent == "oracle"), r.agent);
}

TEST_CASE("golden cache: a server that stamps the time into its state is found not deterministic; each trial replays its own") {
  TempDir dir;
  std::string task = write_clock_task(dir);
  std::string out = dir.path() + "/run";
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--agent", "noop", "--trials", "2", "--concurrency", "2",
                         "--out", out, "--progress", "plain"});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  // Warned once, naming the task and the field that differed.
  CHECK_MESSAGE(occurrences(r.err + r.out, "golden replay of task 'clock_items' is not deterministic") == 1, r.text());
  CHECK_MESSAGE((r.err + r.out).find("opened.at_ns") != std::string::npos, r.text());

  auto trials = trials_of(out);
  REQUIRE(trials.size() == 4);
  CHECK(count_source(trials, "replayed") == 4);
  CHECK(replays(trials) == 2 + 4);  // the check's two, then one per trial
  for (const auto& t : trials) CHECK_MESSAGE(t.binary_pass == (t.agent == "oracle"), t.agent, " ", t.score);
}
