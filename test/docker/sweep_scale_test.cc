// No more sandbox than a trial needs, and sandboxes prepared ahead, against the real daemon: a
// network-free trial's runner has NetworkMode none (no network, no bridge, no host rule) and its
// tools work over exec; a task that uses no json-db starts none; a sweep with the warm pool gives
// the results of one without; a run at a concurrency above 4 leaves nothing; a prepared sandbox of a SIGKILLed run is
// an orphan that `forgectl down --orphans` removes.
#include <doctest/doctest.h>

#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/json.h"
#include "core/subprocess.h"
#include "engine/containers.h"
#include "engine/networks.h"
#include "engine/system.h"
#include "results/run_json.h"
#include "results/trial_record.h"
#include "stack/labels.h"
#include "support/containers.h"
#include "support/fake_llm_server.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"
#include "sweep/task_set.h"
#include "tools/stack_tools.h"
#include "trial/json_db_use.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {}  // namespace

TEST_CASE(
    "scale: a no_internet stack without services gets no network: NetworkMode none, tools over exec, no host rule") {
  TempDir dir;
  auto opts = test_up_options();
  opts.omit_unused_network = true;
  TestStack s(dir.write("env.yaml", "network_policy: no_internet\nstack: none\n"), opts);
  auto& c = *docker_env().client;
  CHECK(s.result.networks.empty());
  CHECK(s.result.plan.networks.empty());
  auto nets = engine::list_networks(c, by_label(stack::kLabelStack, s.result.name));
  REQUIRE(nets.has_value());
  CHECK(nets->empty());
  auto info = engine::inspect_container(c, s.id("runner"));
  REQUIRE(info.has_value());
  CHECK(info->host.network_mode == "none");
  CHECK(info->networks.size() <= 1);  // the daemon lists "none" itself, with no address
  for (const auto& [name, ep] : info->networks) CHECK(ep.ip_address.empty());
  // No bridge, so no host rule names this stack.
  auto rules = run_process({"iptables", "-w", "5", "-S", "INPUT"});
  REQUIRE(rules.has_value());
  CHECK(rules->out.find("forgectl:" + s.result.name) == std::string::npos);
  // The tools go over exec: write, read back, and the network really is absent.
  auto t = tools::open_stack_tools(c, s.result.name, {});
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  auto w = t->executor->call(tools::Actor::kAgent, "write_file", R"({"path":"a.txt","content":"over exec"})");
  CHECK(w.kind == tools::ToolOutcome::Kind::kOk);
  auto r = t->executor->call(tools::Actor::kAgent, "read_file", R"({"path":"a.txt"})");
  CHECK(r.content.find("over exec") != std::string::npos);
  auto ifs = t->executor->call(tools::Actor::kAgent, "bash", R"({"command":"ls /sys/class/net"})");
  CHECK(ifs.content == "lo\n");
  // `forgectl up` keeps the task network (a user may attach containers to it).
  TestStack kept(dir.write("up.yaml", "network_policy: no_internet\nstack: none\n"));
  CHECK(kept.result.networks.size() == 1);
}

TEST_CASE("scale: a task that uses no json-db loses it from the built-in stack; one that does keeps it") {
  trial::PreflightInput in;
  auto set = sweep::load_task_set({example_task("files-basic"), example_task("orders-db")}, "**/task.yaml", in);
  REQUIRE_MESSAGE(set.ok(), set.report());
  REQUIRE(set.tasks.size() == 2);
  for (const auto& t : set.tasks) {
    CAPTURE(t.task_id);
    bool db = trial::uses_json_db(t);
    CHECK(db == (t.task_id != "files_basic"));
    CHECK(t.environment.compose.services.size() == (db ? 1u : 0u));
  }
}

TEST_CASE(
    "scale: a sweep with the warm pool and background teardown gives the results of one without; nothing is left") {
  TempDir dir;
  std::string with = dir.path() + "/with", without = dir.path() + "/without";
  std::vector<std::string> base{"run",
                                example_task("files-basic"),
                                example_task("orders-db"),
                                "--agent",
                                "oracle",
                                "--trials",
                                "3",
                                "--concurrency",
                                "2"};
  auto a = base;
  a.insert(a.end(), {"--out", with});
  auto b = base;
  b.insert(b.end(), {"--out", without, "--warm-pool", "0", "--max-ups", "4", "--max-downs", "4"});
  auto ra = forgectl_run(a);
  REQUIRE_MESSAGE(ra.code == 0, ra.text());
  auto rb = forgectl_run(b);
  REQUIRE_MESSAGE(rb.code == 0, rb.text());
  CHECK(ra.err.find("warm pool: ") != std::string::npos);
  CHECK(rb.err.find("warm pool: ") == std::string::npos);
  CHECK(outcome_view(with) == outcome_view(without));
  CHECK(ra.out.find("leak audit: nothing of run") != std::string::npos);
  auto log = results::read_trials_jsonl(with + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 6);
  int prepared = 0;
  for (const auto& t : log->trials) {
    CHECK(t.binary_pass);
    prepared += t.phases_s.count("reserve") == 0;  // a prepared sandbox's trial never waited for a slot
    CHECK(t.phases_s.count("claim_to_ready") == 1);
  }
  CHECK(prepared > 0);
  auto run = results::RunJson::read(with + "/run.json");
  REQUIRE(run.has_value());
  auto& c = *docker_env().client;
  auto left = engine::list_containers(c, by_label(stack::kLabelRun, run->run_id));
  REQUIRE(left.has_value());
  CHECK(left->empty());
}

TEST_CASE("scale: a run at concurrency 6 with adaptive admission finishes clean: no container or network left") {
  TempDir dir;
  std::string out = dir.path() + "/run";
  // 16 trials, networked (json-db) and network-free, more at once than the old fixed limit of 4.
  auto r = forgectl_run({"run", example_task("files-basic"), example_task("orders-db"), "--agent", "oracle", "--trials",
                         "8", "--concurrency", "6", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  CHECK(r.out.find("leak audit: nothing of run") != std::string::npos);
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 16);
  for (const auto& t : log->trials) {
    CAPTURE(t.task_id);
    CHECK(t.binary_pass);
  }
  auto run = results::RunJson::read(out + "/run.json");
  REQUIRE(run.has_value());
  auto& c = *docker_env().client;
  // Right after the command returns: the background removals ended before it did.
  auto left = engine::list_containers(c, by_label(stack::kLabelRun, run->run_id));
  REQUIRE(left.has_value());
  CHECK(left->empty());
  auto nets = engine::list_networks(c, by_label(stack::kLabelRun, run->run_id));
  REQUIRE(nets.has_value());
  CHECK(nets->empty());
}

TEST_CASE("scale: sandboxes of a SIGKILLed run — in use and prepared ahead — are orphans that down --orphans removes") {
  TempDir dir;
  FakeLlmServer server;
  ScriptedResponse hang;
  hang.held = true;  // the first trial waits on its model while the pool prepares the next
  server.push(hang, 20);
  std::string cfg = dir.path() + "/run.yaml";
  std::ofstream(cfg)
      << "models:\n  agent: {provider: openai, name: gpt-4o, base_url: \"" << server.base_url()
      << "\", api_key_env: FORGECTL_TEST_KEY}\norchestrator:\n  timeouts: {turn_s: 120, episode_s: 300}\n";
  std::string out = dir.path() + "/run";
  auto p = spawn_forgectl({"run", example_task("files-basic"), "--config", cfg, "--agent", "llm", "--trials", "3",
                           "--concurrency", "1", "--out", out},
                          {{"FORGECTL_TEST_KEY", "sk-test"}});
  REQUIRE(p.has_value());
  auto& c = *docker_env().client;
  std::string run_id;
  std::size_t runners = 0;
  auto until = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < until && runners < 2) {
    std::this_thread::sleep_for(Millis(200));
    if (run_id.empty())
      if (auto rj = results::RunJson::read(out + "/run.json")) run_id = rj->run_id;
    if (run_id.empty()) continue;
    auto f = by_label(stack::kLabelRun, run_id);
    f["label"].push_back(std::string(stack::kLabelRole) + "=runner");
    f["status"] = {"running", "paused"};
    if (auto l = engine::list_containers(c, f)) runners = l->size();
  }
  REQUIRE_MESSAGE(runners == 2, "stdout:\n"
                                    << (*p)->out() << "\nstderr:\n"
                                    << (*p)->err());  // one in use, one prepared
  {
    // The prepared one waits frozen (paused: no CPU) while the first trial waits on its model.
    std::size_t paused = 0;
    auto f = by_label(stack::kLabelRun, run_id);
    f["label"].push_back(std::string(stack::kLabelRole) + "=runner");
    f["status"] = {"paused"};
    for (auto until_paused = Clock::now() + std::chrono::seconds(60); Clock::now() < until_paused && paused == 0;) {
      if (auto l = engine::list_containers(c, f)) paused = l->size();
      if (paused == 0) std::this_thread::sleep_for(Millis(200));
    }
    CHECK(paused == 1);
  }
  {
    // files-basic uses no json-db and no network: in a sweep its runners have NetworkMode none and
    // the run starts no service container at all.
    auto f = by_label(stack::kLabelRun, run_id);
    f["label"].push_back(std::string(stack::kLabelRole) + "=runner");
    auto rs = engine::list_containers(c, f);
    REQUIRE(rs.has_value());
    for (const auto& rc : *rs) {
      auto info = engine::inspect_container(c, rc.id);
      REQUIRE(info.has_value());
      CHECK(info->host.network_mode == "none");
    }
    auto svc = by_label(stack::kLabelRun, run_id);
    svc["label"].push_back(std::string(stack::kLabelRole) + "=service");
    auto ss = engine::list_containers(c, svc);
    REQUIRE(ss.has_value());
    CHECK(ss->empty());
  }
  (*p)->kill(SIGKILL);
  (void)(*p)->wait_for(Millis(30000));
  server.release();
  check_orphans_then_down_removes_all(c, run_id);  // nothing removed them: the owner died
}

TEST_CASE("scale: a sandbox prepared ahead waits frozen and its trial, thawed, passes like any other") {
  TempDir dir;
  FakeLlmServer server;
  // Two trials one after the other; each first answer takes a while, so the second trial's
  // sandbox is ready (and nobody waits for it) while the first trial waits on its model.
  using namespace forge::test::fake_llm;
  for (int trial = 0; trial < 2; ++trial) {
    ScriptedResponse read{200, {}, openai_tool_call("c1", "read_file", R"({"path":"problem.txt"})")};
    read.delay = Millis(4000);
    server.push(read);
    server.push(200,
                openai_tool_call("c2", "write_file",
                                 R"({"path":"submissions/answer.md","content":"# Answer\n\nThe value is 42.\n"})"));
    server.push(200, openai_text("The answer is 42. analysis complete"));
  }
  std::string cfg = dir.path() + "/run.yaml";
  std::ofstream(cfg)
      << "models:\n  agent: {provider: openai, name: gpt-4o, base_url: \"" << server.base_url()
      << "\", api_key_env: FORGECTL_TEST_KEY}\norchestrator:\n  timeouts: {turn_s: 120, episode_s: 300}\n";
  std::string out = dir.path() + "/run";
  auto r = forgectl_run({"run", example_task("files-basic"), "--config", cfg, "--agent", "llm", "--trials", "2",
                         "--concurrency", "1", "--out", out},
                        {{"FORGECTL_TEST_KEY", "sk-test"}});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  CHECK(r.err.find("1 frozen while they waited") != std::string::npos);
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 2);
  int thawed = 0;
  for (const auto& t : log->trials) {
    CHECK_MESSAGE(t.binary_pass, t.error);
    CHECK(t.phases_s.count("claim_to_first_tool") == 1);
    thawed += t.phases_s.count("thaw") == 1;
  }
  CHECK(thawed == 1);
  CHECK(r.out.find("leak audit: nothing of run") != std::string::npos);
}

TEST_CASE("scale: the end-of-agent --kill-all exec runs after a shell call, and not after file tools alone") {
  TempDir dir;
  auto& c = *docker_env().client;
  auto since = static_cast<std::int64_t>(std::time(nullptr)) - 1;
  std::string out = dir.path() + "/run";
  auto r = forgectl_run(
      {"run", example_task("files-basic"), example_task("script-tests"), "--agent", "oracle", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto run = results::RunJson::read(out + "/run.json");
  REQUIRE(run.has_value());
  // The daemon's exec events of this run's runners: which stacks got a --kill-all.
  std::set<std::string> killed;
  engine::EventQuery q;
  q.filters = {{"type", {"container"}}, {"label", {std::string(stack::kLabelRun) + "=" + run->run_id}}};
  q.since = since;
  q.until = static_cast<std::int64_t>(std::time(nullptr)) + 1;
  q.timeout = Millis(20000);
  auto st = engine::events(c, q, [&](const engine::Event& e) {
    if (e.action.rfind("exec_create:", 0) == 0 && e.action.find("--kill-all") != std::string::npos)
      killed.insert(e.attributes.count(stack::kLabelStack) ? e.attributes.at(stack::kLabelStack) : e.id);
    return true;
  });
  REQUIRE_MESSAGE(st, (st ? "" : st.error().what()));
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 2);
  for (const auto& t : log->trials) CHECK(t.binary_pass);
  // Stack names begin with the task's id (stack/up.cc): script-tests' oracle runs solve.sh through
  // bash, so its processes are killed before grading; files-basic's read and write start none.
  int files = 0, script = 0;
  for (const auto& s : killed) {
    files += s.rfind("fg-files-basic-", 0) == 0;
    script += s.rfind("fg-script-tests-", 0) == 0;
  }
  CHECK(files == 0);
  CHECK(script == 1);
}
