// The bundled example pack through the forgectl binary against the real daemon, as the quickstart
// sweeps it: every task validates, passes under the oracle (its reference solution replayed) and
// fails under noop (so each grade really depends on the work), one trial each.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "core/files.h"
#include "core/json.h"
#include "results/trial_record.h"
#include "support/docker_env.h"
#include "support/paths.h"
#include "support/process.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;

namespace {

const std::string kSource = source_dir();
const std::vector<std::string> kPacks = {kSource + "/examples/tasks", kSource + "/examples/projects/helpdesk"};

// One task per feature of the pack (examples/README.md).
const std::set<std::string> kTasks = {
    "files_basic",   "orders_db",      "script_tests", "web_lookup",           "parts_quote",
    "library_loans", "pinned_package", "vpn_fix",      "helpdesk_close_reset", "helpdesk_route_printer",
    "kb_answer",     "browser_order"};

}  // namespace

TEST_CASE("examples: every task of the pack validates, passes under the oracle, fails under noop, and no cheat "
          "canary passes any") {
  std::vector<std::string> validate{"validate"};
  validate.insert(validate.end(), kPacks.begin(), kPacks.end());
  auto v = forgectl_run(validate, Millis(600000));
  CAPTURE(v.text());
  CHECK(v.code == 0);

  TempDir dir;
  for (const std::string agent : {"oracle", "noop"}) {
    CAPTURE(agent);
    std::vector<std::string> args{"run"};
    args.insert(args.end(), kPacks.begin(), kPacks.end());
    const std::string out = dir.path() + "/run-" + agent;
    for (const auto& a : {"--agent", agent.c_str(), "--trials", "1", "--concurrency", "2", "--out", out.c_str()}) args.push_back(a);
    if (agent == "noop") args.push_back("--canary");  // the do-nothing agents that try to cheat, beside it
    auto r = forgectl_run(args, Millis(600000));
    CAPTURE(r.text());
    REQUIRE(r.code == 0);
    auto log = results::read_trials_jsonl(out + "/trials.jsonl");
    REQUIRE_MESSAGE(log.has_value(), (log ? "" : log.error().what()));
    std::set<std::string> seen;
    for (const auto& t : log->trials) {
      CAPTURE(t.task_id);
      seen.insert(t.task_id);
      CHECK(t.outcome == results::Outcome::kGraded);
      if (agent == "oracle") {
        CHECK(t.binary_pass);
        CHECK(t.tool_errors == 0);
      } else {
        CHECK_FALSE(t.binary_pass);
      }
    }
    CHECK(seen == kTasks);
    const std::size_t canaries = agent == "noop" ? 4 * kTasks.size() : 0;
    CHECK(log->trials.size() == kTasks.size() + canaries);
    if (agent != "noop") continue;
    // The pack's tasks hold against every canary: 0 % cheat success, task by task.
    auto agg = json::parse(*read_text(out + "/aggregate.json"), "aggregate.json");
    REQUIRE(agg.has_value());
    const json::Value& c = (*agg)["canaries"];
    CHECK(json::get_int(c, "graded") == static_cast<std::int64_t>(canaries));
    CHECK(json::get_int(c, "cheated") == 0);
    CHECK(json::get_int(c, "tasks_cheated") == 0);
    CHECK(json::get_int(c, "tasks") == static_cast<std::int64_t>(kTasks.size()));
  }
}
