// --resume keeps --no-fork, --keep-snapshots and --max-up-rate: written into run.json's invocation
// and restored from it for each flag the resuming command line leaves out.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "cli/run_resume_flags.h"
#include "results/run_json.h"

using namespace forge;
using namespace forge::cli;

namespace {

// The invocation as a resume reads it back from run.json's text.
results::RunInvocation through_run_json(const ForkPaceFlags& f) {
  results::RunJson r;
  r.run_id = "abc";
  r.status = "running";
  r.invocation.task_paths = {"/tasks/a"};
  record_fork_pace(f, r.invocation);
  auto back = results::RunJson::parse(r.to_json(), "run.json");
  REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().what()));
  return back->invocation;
}

}  // namespace

TEST_CASE("resume: --no-fork, --keep-snapshots and --max-up-rate of the first start are used again") {
  auto inv = through_run_json({true, true, "0.5"});
  ForkPaceFlags resumed;  // `forgectl run --resume --out DIR` with none of them
  resume_fork_pace(inv, [](const char*) { return false; }, resumed);
  CHECK(resumed.no_fork);
  CHECK(resumed.keep_snapshots);
  CHECK(resumed.max_up_rate == "0.5");
}

TEST_CASE("resume: a flag given again wins over the recorded one; the others are kept") {
  auto inv = through_run_json({true, false, "2"});
  ForkPaceFlags resumed{false, true, "7"};  // --keep-snapshots --max-up-rate 7 given on the resume
  const std::set<std::string> given{"--keep-snapshots", "--max-up-rate"};
  resume_fork_pace(inv, [&](const char* flag) { return given.count(flag) > 0; }, resumed);
  CHECK(resumed.no_fork);  // recorded, not given: kept
  CHECK(resumed.keep_snapshots);
  CHECK(resumed.max_up_rate == "7");
}

TEST_CASE("resume: a run started without them (or an older run.json) resumes forked, kept nothing, unpaced") {
  auto inv = through_run_json({});
  CHECK_FALSE(inv.no_fork);
  CHECK(inv.max_up_rate.empty());
  auto old = results::RunJson::parse(R"({"run_id":"x","status":"running","invocation":{"task_paths":["/t"]}})", "old.json");
  REQUIRE(old.has_value());
  ForkPaceFlags resumed;
  resume_fork_pace(old->invocation, [](const char*) { return false; }, resumed);
  CHECK_FALSE(resumed.no_fork);
  CHECK_FALSE(resumed.keep_snapshots);
  CHECK(resumed.max_up_rate.empty());
}
