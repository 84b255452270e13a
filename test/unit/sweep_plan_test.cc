// Trial keys (what --resume trusts), the plan's image preflight, the progress display and admission slots.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "results/outcome.h"
#include "trial/agent_choice.h"
#include "core/slots.h"
#include "core/strings.h"
#include "manifest/task_config.h"
#include "manifest/run_config.h"
#include "sweep/progress.h"
#include "sweep/run_plan.h"
#include "sweep/trial_key.h"

using namespace forge;
using namespace forge::sweep;
using namespace forge::results;
using namespace forge::trial;
namespace fs = std::filesystem;

namespace {

struct TaskDir {
  fs::path path = fs::temp_directory_path() / ("forgectl-key-" + random_hex(6));
  TaskDir() {
    fs::create_directories(path / "fixtures");
    write("task.yaml", "task_id: t\n");
    write("fixtures/a.txt", "alpha\n");
  }
  ~TaskDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void write(const std::string& rel, const std::string& text) const { std::ofstream(path / rel) << text; }
  std::string hash() const {
    auto h = task_content_hash(path.string());
    REQUIRE_MESSAGE(h.has_value(), (h ? "" : h.error().what()));
    return *h;
  }
};

}  // namespace

TEST_CASE("trial key: the task's content, images, agent and index decide it; nothing else") {
  TaskDir d;
  std::string h0 = d.hash();
  CHECK(d.hash() == h0);  // stable
  d.write("fixtures/a.txt", "alpha!\n");
  std::string h1 = d.hash();
  CHECK(h1 != h0);  // an edited file
  d.write("fixtures/b.txt", "");
  std::string h2 = d.hash();
  CHECK(h2 != h1);  // an added (even empty) file
  fs::rename(d.path / "fixtures/b.txt", d.path / "fixtures/c.txt");
  CHECK(d.hash() != h2);  // a renamed file

  manifest::RunConfig run;
  manifest::TaskConfig task;
  run.models["agent"] = {"openai", "gpt-4o"};
  AgentChoice oracle{AgentChoice::Kind::kOracle};
  AgentChoice llm{AgentChoice::Kind::kLlm, "agent", "", "openai/gpt-4o"};
  std::string fo = agent_fingerprint(oracle, run, task), fl = agent_fingerprint(llm, run, task);
  CHECK(fo != fl);
  std::string k = trial_key(h0, {"sha256:a"}, fl, 0);
  CHECK(k.size() == 32);
  CHECK(trial_key(h0, {"sha256:a"}, fl, 0) == k);
  CHECK(trial_key(h0, {"sha256:a"}, fl, 1) != k);
  CHECK(trial_key(h0, {"sha256:b"}, fl, 0) != k);  // a rebuilt image
  CHECK(trial_key(h1, {"sha256:a"}, fl, 0) != k);
  run.models["agent"].temperature = 0.7;  // a different sampling setting is a different experiment
  CHECK(trial_key(h0, {"sha256:a"}, agent_fingerprint(llm, run, task), 0) != k);
  run.models["agent"].temperature = 0;
  run.max_turns = 7;
  CHECK(trial_key(h0, {"sha256:a"}, agent_fingerprint(llm, run, task), 0) != k);
}

TEST_CASE("progress: plain output is one line per event plus a status every tenth; a terminal gets one redrawn line") {
  std::ostringstream plain;
  Progress p(plain, false, 20);
  for (int i = 0; i < 20; ++i) {
    p.event("trial " + std::to_string(i));
    p.finished(i == 3, i % 2 == 0, 0.01);
  }
  p.close();
  std::string out = plain.str();
  CHECK(out.find('\r') == std::string::npos);
  CHECK(out.find("trial 19\n") != std::string::npos);
  CHECK(out.find("[20/20] pass 52.6% (10/19) · infra 1 · $0.2000 · ETA 0s") != std::string::npos);
  std::size_t statuses = 0;
  for (std::size_t at = out.find("ETA"); at != std::string::npos; at = out.find("ETA", at + 1)) ++statuses;
  CHECK(statuses == 10);  // every 2 of 20

  std::ostringstream tty;
  Progress t(tty, true, 4, 1, [] { return TermSize{80, 24}; });  // one finished before (resume)
  t.event("trial a");
  t.finished(false, true, 0);
  CHECK(tty.str().find("trial a\n[1/4]") != std::string::npos);
  CHECK(tty.str().find("\r\033[J[2/4]") != std::string::npos);  // the block redrawn in place
  CHECK(t.status().rfind("[2/4] pass 100.0% (1/1)", 0) == 0);
  t.close();
  CHECK(human_duration(59) == "59s");
  CHECK(human_duration(190) == "3m10s");
  CHECK(human_duration(7500) == "2h05m");
}

TEST_CASE("slots: at most n holders at once; 0 means no limit") {
  Slots two(2);
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 8; ++i)
    ts.emplace_back([&] {
      Slots::Hold h(&two);
      int now = ++inside;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      --inside;
    });
  for (auto& t : ts) t.join();
  CHECK(most.load() <= 2);
  CHECK(most.load() >= 1);
  Slots none(0);
  Slots::Hold a(&none), b(&none), c(&none);  // never blocks
  Slots::Hold null(nullptr);
}

TEST_CASE("plan: a task whose checks.py needs the Python image is refused before any trial when the image is missing") {
  TaskDir dir;
  dir.write("task.yaml",
            "task_id: needs_py\nname: n\ncategory: test\ndescription: d\ninitial_user_message: hi\n"
            "environment: {stack: none}\ngrading: grading.yaml\n"
            "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"###STOP###\"}\n");
  dir.write("grading.yaml", "combine: {method: weighted}\ncustom_checks: {file: checks.py, interface_version: \"1.0\"}\n");
  dir.write("checks.py", "from tolokaforge.core.grading.checks_interface import check\n");
  manifest::RunConfig run;
  PlanInput in;
  in.task_paths = {dir.path.string()};
  in.agents = {AgentChoice{AgentChoice::Kind::kNoop}};
  in.run = &run;
  std::vector<std::string> asked;
  auto only_runner = [&](const std::string& ref) -> Result<std::string> {
    asked.push_back(ref);
    if (ref == "forgectl/runner:local") return std::string("sha256:runner");
    return fail(Errc::kNotFound, "no such image: " + ref);
  };
  auto plan = make_plan(in, only_runner);
  REQUIRE_FALSE(plan.has_value());
  CHECK(plan.error().message.find("task needs_py: checks.py image forgectl/python:local is not on the engine") !=
        std::string::npos);
  // With the image there, the same task plans; the image's id is part of the trial's key.
  auto both = [&](const std::string& ref) -> Result<std::string> { return std::string("sha256:") + ref; };
  auto ok = make_plan(in, both);
  REQUIRE_MESSAGE(ok.has_value(), (ok ? "" : ok.error().what()));
  CHECK((*ok)->facts.images.count("forgectl/python:local") == 1);
}

TEST_CASE("plan: under auto the daemon's default runtime is in the trial key unless it is runc; a forced one is not asked") {
  TaskDir dir;
  dir.write("task.yaml",
            "task_id: rt\nname: n\ncategory: test\ndescription: d\ninitial_user_message: hi\n"
            "grading: grading.yaml\nuser_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"###STOP###\"}\n");
  dir.write("grading.yaml", "combine: {method: weighted}\ntranscript_rules: {must_contain: [done]}\n");
  manifest::RunConfig run;
  PlanInput in;
  in.task_paths = {dir.path.string()};
  in.agents = {AgentChoice{AgentChoice::Kind::kNoop}};
  in.run = &run;
  auto images = [](const std::string& ref) -> Result<std::string> { return std::string("sha256:") + ref; };
  int asked = 0;
  auto key_under = [&](std::string default_rt) {
    in.default_runtime = [&asked, default_rt]() -> Result<std::string> {
      ++asked;
      return default_rt;
    };
    auto plan = make_plan(in, images);
    REQUIRE_MESSAGE(plan.has_value(), (plan ? "" : plan.error().what()));
    REQUIRE((*plan)->jobs.size() == 1);
    return (*plan)->jobs[0].key;
  };
  std::string runc = key_under("runc");
  CHECK(asked == 1);
  in.default_runtime = nullptr;
  auto unasked = make_plan(in, images);
  REQUIRE(unasked.has_value());
  CHECK((*unasked)->jobs[0].key == runc);  // keys made before runtimes were chosen stay valid
  std::string runsc = key_under("runsc");
  CHECK(runsc != runc);  // a runsc result is not a runc result
  run.runtime = "runsc";
  asked = 0;
  std::string forced = key_under("runc");
  CHECK(asked == 0);
  CHECK(forced != runc);
  // The daemon cannot be asked: the plan fails rather than keying the trial as runc.
  run.runtime.clear();
  in.default_runtime = []() -> Result<std::string> { return fail(Errc::kUnavailable, "daemon down"); };
  auto down = make_plan(in, images);
  REQUIRE_FALSE(down.has_value());
  CHECK(down.error().message.find("daemon down") != std::string::npos);
}
