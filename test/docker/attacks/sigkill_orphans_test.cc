// A sweep killed with SIGKILL (no handler runs, nothing is torn down) at each point where it holds
// something: setup, the agent phase with the warm pool filled, golden replay, a test grader. Every
// container and volume it made names it as owner, `ps` shows its stacks as orphans of a dead
// owner, and `down --orphans` leaves no container, volume, network, host firewall rule or subnet
// reservation of it — for network-less trials too. Before every object carried the owner labels,
// a golden-replay or grader container listed first hid the stack's owner and the stack leaked.
#include <doctest/doctest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <thread>

#include "core/json.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "engine/containers.h"
#include "engine/images.h"
#include "engine/networks.h"
#include "engine/volumes.h"
#include "stack/labels.h"
#include "stack/teardown.h"
#include "support/containers.h"
#include "support/fake_llm_server.h"
#include "support/fork_task.h"
#include "support/paths.h"
#include "support/process.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// A task the oracle solves by writing answer.txt; `environment` and `extra` are task.yaml lines.
void write_file_task(const fs::path& dir, const std::string& id, const std::string& environment,
                     const std::string& extra = "") {
  fs::create_directories(dir);
  std::ofstream(dir / "task.yaml")
      << "task_id: " << id
      << "\nname: probe\ncategory: test\ndescription: \"Write 42.\"\n"
         "initial_user_message: \"Write answer.txt containing 42.\"\n"
         "tools:\n  agent: {enabled: [write_file, read_file]}\n  user: {enabled: []}\n"
         "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
         "grading: grading.yaml\n"
         "solution:\n  tool_calls:\n    - {name: write_file, arguments: {path: answer.txt, content: \"42\"}}\n"
      << environment << extra;
  std::ofstream(dir / "grading.yaml")
      << "combine: {method: weighted, pass_threshold: 0.5}\n"
         "state_checks:\n  jsonpaths:\n"
         "    - {path_glob: \"/env/fs/agent-visible/answer.txt\", contains_ci: \"42\"}\n";
}

// Setup: one stack waiting on a service's health (its network, host rule and service exist), one
// building a compose image (its subnets reserved, no network yet). Both builds and waits outlast the test.
std::string setup_tasks(const TempDir& dir) {
  fs::path tasks = fs::path(dir.path()) / "setup";
  write_file_task(tasks / "slow-health", "slow_health",
                  "environment:\n  network_policy: no_internet\n  compose_file: compose.yaml\n");
  std::ofstream(tasks / "slow-health" / "compose.yaml")
      << "services:\n  web:\n    image: forgectl/runner:local\n"
         "    command: [\"sh\", \"-c\", \"sleep 600\"]\n"
         "    healthcheck:\n      test: [\"CMD-SHELL\", \"test -e /tmp/never\"]\n"
         "      interval: 1s\n      timeout: 2s\n      retries: 600\n";
  write_file_task(tasks / "slow-build", "slow_build",
                  "environment:\n  network_policy: no_internet\n  compose_file: compose.yaml\n");
  fs::create_directories(tasks / "slow-build" / "img");
  std::ofstream(tasks / "slow-build" / "compose.yaml") << "services:\n  made:\n    build: ./img\n";
  // A new context every run: forgectl never finds the image built already.
  std::ofstream(tasks / "slow-build" / "img" / "Dockerfile")
      << "FROM forgectl/runner:local\n# " << random_hex(8) << "\nRUN sleep 600\n";
  return tasks.string();
}

// An example task copied to `dir`/`under`/`name`, for the test to change.
fs::path copy_example(const TempDir& dir, const std::string& under, const std::string& name) {
  fs::path task = fs::path(dir.path()) / under / name;
  fs::create_directories(task.parent_path());
  fs::copy(fs::path(source_dir()) / "examples" / "tasks" / name, task, fs::copy_options::recursive);
  return task;
}

// The agent phase: a json-db task (a network, a host rule) answered by a model that never answers.
std::string agent_task(const TempDir& dir) { return copy_example(dir, "agent", "orders-db").string(); }

// Golden replay on a fresh Python server (no network at all): its first golden action waits.
std::string golden_task(const TempDir& dir) {
  fs::path task = copy_example(dir, "golden", "library-loans");
  std::string server;
  {
    std::ifstream in(task / "server.py");
    server.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string main = "\nif __name__ == \"__main__\":";
  auto at = server.find(main);
  REQUIRE(at != std::string::npos);
  server.insert(at,
                "\n\n@registry.tool(\"Wait for the clerk.\")\ndef wait_for_clerk(data: dict) -> dict:\n"
                "    import time\n    time.sleep(600)\n    return {}\n");
  std::ofstream(task / "server.py") << server;
  std::string grading;
  {
    std::ifstream in(task / "grading.yaml");
    grading.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string actions = "    golden_actions:\n";
  at = grading.find(actions);
  REQUIRE(at != std::string::npos);
  grading.insert(at + actions.size(), "      - {name: wait_for_clerk, kwargs: {}}\n");
  std::ofstream(task / "grading.yaml") << grading;
  return task.string();
}

// A test grader whose tests take their time (no network: the grader has none).
std::string grader_task(const TempDir& dir) {
  fs::path task = copy_example(dir, "grader", "script-tests");
  std::ofstream(task / "tests" / "test.sh") << "#!/bin/sh\nsleep 600\n";
  return task.string();
}

// What the daemon holds with this run's label.
struct RunObjects {
  std::vector<engine::ContainerSummary> containers;
  std::vector<engine::NetworkInfo> networks;
  std::vector<engine::VolumeInfo> volumes;
  std::size_t total() const { return containers.size() + networks.size() + volumes.size(); }
  std::string text() const {
    std::string t;
    for (const auto& c : containers) t += " container " + (c.names.empty() ? c.id : c.names[0]) + " (" + c.state + ")";
    for (const auto& n : networks) t += " network " + n.name;
    for (const auto& v : volumes) t += " volume " + v.name;
    return t;
  }
};
RunObjects run_objects(const std::string& run_id) {
  auto& c = *docker_env().client;
  engine::Filters f{{"label", {std::string(stack::kLabelRun) + "=" + run_id}}};
  auto cs = engine::list_containers(c, f);
  auto ns = engine::list_networks(c, f);
  auto vs = engine::list_volumes(c, f);
  return {std::move(must(cs)), std::move(must(ns)), std::move(must(vs))};
}

// The INPUT chain's rules, as `iptables -S INPUT` prints them.
std::string input_rules() {
  auto r = run_process({"iptables", "-w", "5", "-S", "INPUT"});
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return r->out;
}

std::string reservations() {
  std::ifstream in(docker_env().host.state_dir + "/subnets.reserved");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One `forgectl run` to be killed: its process, run id and the stacks it made so far.
class KilledSweep {
 public:
  KilledSweep(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
    auto p = spawn_forgectl(args, env);
    proc_ = std::move(must(p));
    owner_mark_ = ":" + std::to_string(proc_->pid()) + ":";
    wait_for("its run id", [&] {
      std::smatch m;
      std::string err = proc_->err();
      if (!std::regex_search(err, m, std::regex("forgectl run ([0-9a-z]+):"))) return false;
      run_id_ = m[1];
      return true;
    });
  }
  // Pass or fail, nothing of the run stays (no REQUIRE here: this may run while a failure unwinds).
  ~KilledSweep() {
    proc_.reset();  // SIGKILLed and reaped if still running
    if (run_id_.empty()) return;
    auto& c = *docker_env().client;
    engine::Filters f{{"label", {std::string(stack::kLabelRun) + "=" + run_id_}}};
    RunObjects left;
    if (auto cs = engine::list_containers(c, f)) left.containers = std::move(*cs);
    if (auto ns = engine::list_networks(c, f)) left.networks = std::move(*ns);
    if (auto vs = engine::list_volumes(c, f)) left.volumes = std::move(*vs);
    for (const auto& s : stack_names(left)) (void)stack::remove_stack(c, s);
  }

  // Polls (20 ms) until `ready`; fails when the run ends first or after 4 minutes.
  void wait_for(const std::string& what, const std::function<bool()>& ready) {
    auto deadline = Deadline::in(Millis(240000));
    while (!ready()) {
      if (!proc_->running()) FAIL("the run ended before " << what << ":\n" << proc_->out() << proc_->err());
      if (deadline.expired()) FAIL("no " << what << " in time:\n" << proc_->err());
      std::this_thread::sleep_for(Millis(20));
    }
  }
  // Until a container of this run has `role` (and, when given, `state`).
  void wait_for_role(const std::string& role, const std::string& state = "") {
    wait_for("a " + role + " container", [&] { return has_role(role, state); });
  }
  bool has_role(const std::string& role, const std::string& state = "") {
    for (const auto& c : run_objects(run_id_).containers) {
      auto r = c.labels.find(stack::kLabelRole);
      if (r != c.labels.end() && r->second == role && (state.empty() || c.state == state)) return true;
    }
    return false;
  }

  // Every container and volume made so far names this process as its owner, attached; then SIGKILL.
  void kill() {
    auto before = run_objects(run_id_);
    REQUIRE_MESSAGE(before.containers.size() > 0, "nothing of run " << run_id_ << " to leave behind");
    for (const auto& c : before.containers) check_owned(c.names.empty() ? c.id : c.names[0], c.labels);
    for (const auto& v : before.volumes) check_owned("volume " + v.name, v.labels);
    stacks_ = stack_names(before);
    REQUIRE(proc_->kill(SIGKILL));
    auto code = proc_->wait_for(Millis(10000));
    REQUIRE(code.has_value());
    CHECK(*code == 128 + SIGKILL);
  }

  // ps lists the run's stacks with their dead owner and the reason; down --orphans removes every
  // trace of the run. (Another forgectl on this daemon may reap them first: what ps no longer
  // lists is not checked there, but must be gone at the end all the same.)
  void down_orphans_leaves_nothing() {
    auto ps = run_forgectl({"ps", "--json"}, Millis(60000));
    REQUIRE_MESSAGE(ps->code == 0, ps->text());
    auto doc = json::parse(ps->out, "ps --json");
    REQUIRE_MESSAGE(doc.has_value(), ps->out);
    std::size_t listed = 0;
    for (const auto& s : doc->GetArray()) {
      if (json::get_string(s, "run") != run_id_) continue;
      ++listed;
      CAPTURE(json::get_string(s, "name"));
      CHECK(json::get_string(s, "owner").find(owner_mark_) != std::string::npos);
      CHECK(json::get_string(s, "orphan") == "owner process gone");
      CHECK(json::get_string(s, "policy") != "");
      CHECK(json::get_string(s, "mode") == "attached");
    }
    if (listed < stacks_.size()) MESSAGE((stacks_.size() - listed) << " stack(s) of the run were reaped before ps");

    auto down = run_forgectl({"down", "--orphans"}, Millis(180000));
    CHECK_MESSAGE(down->code == 0, down->text());
    auto left = run_objects(run_id_);
    CHECK_MESSAGE(left.total() == 0, "left after down --orphans:" << left.text() << "\n" << down->text());
    if (docker_env().host.host_firewall) {
      // Another forgectl of the suite reaping the same stacks may be between a network and its
      // rule: a rule may outlive down by that moment, never longer.
      std::string rules = input_rules();
      auto ours_left = [&] {
        for (const auto& s : stacks_)
          if (rules.find("forgectl:" + s) != std::string::npos) return true;
        return false;
      };
      for (auto until = Deadline::in(Millis(5000)); ours_left() && !until.expired(); rules = input_rules())
        std::this_thread::sleep_for(Millis(50));
      for (const auto& s : stacks_)
        CHECK_MESSAGE(rules.find("forgectl:" + s) == std::string::npos, s << ":\n" << rules);
    }
    CHECK_MESSAGE(reservations().find(owner_mark_) == std::string::npos, reservations());
  }

  const std::string& owner_mark() const { return owner_mark_; }
  const std::string& run_id() const { return run_id_; }

 private:
  void check_owned(const std::string& what, const std::map<std::string, std::string>& labels) {
    CAPTURE(what);
    auto owner = labels.find(stack::kLabelOwner);
    REQUIRE(owner != labels.end());
    CHECK(owner->second.find(owner_mark_) != std::string::npos);
    CHECK(labels.count(stack::kLabelLease) == 1);
    CHECK(labels.count(stack::kLabelStack) == 1);
    auto mode = labels.find(stack::kLabelMode);
    REQUIRE(mode != labels.end());
    CHECK(mode->second == "attached");
  }
  static std::set<std::string> stack_names(const RunObjects& o) {
    std::set<std::string> out;
    for (const auto& c : o.containers)
      out.insert(c.labels.count(stack::kLabelStack) ? c.labels.at(stack::kLabelStack) : "");
    for (const auto& n : o.networks)
      out.insert(n.labels.count(stack::kLabelStack) ? n.labels.at(stack::kLabelStack) : "");
    for (const auto& v : o.volumes)
      out.insert(v.labels.count(stack::kLabelStack) ? v.labels.at(stack::kLabelStack) : "");
    out.erase("");
    return out;
  }

  std::unique_ptr<Process> proc_;
  std::string owner_mark_, run_id_;
  std::set<std::string> stacks_;
};

// The oracle's sweep over `task`, killed once a container of its run has `role` (in `state`).
void kill_oracle_sweep_at(const TempDir& dir, const std::string& task, const std::string& role,
                          const std::string& state) {
  KilledSweep run({"run", task, "--agent", "oracle", "--out", dir.path() + "/run"});
  run.wait_for_role(role, state);
  run.kill();
  run.down_orphans_leaves_nothing();
}

}  // namespace

TEST_CASE("sigkill orphans: a sweep killed during setup leaves no stack, host rule or subnet reservation") {
  TempDir dir;
  std::string tasks = setup_tasks(dir);
  KilledSweep run(
      {"run", tasks, "--agent", "oracle", "--concurrency", "2", "--max-ups", "0", "--out", dir.path() + "/run"});
  // One stack half up (its service started, its health never comes) while the other holds its
  // subnet reservation through a build.
  run.wait_for("a started service and a held subnet reservation", [&] {
    return run.has_role("service", "running") && reservations().find(run.owner_mark()) != std::string::npos;
  });
  run.kill();
  CHECK(reservations().find(run.owner_mark()) != std::string::npos);  // the dead process still holds it
  run.down_orphans_leaves_nothing();
}

TEST_CASE("sigkill orphans: a sweep killed during the agent phase with the warm pool filled leaves nothing") {
  TempDir dir;
  std::string task = agent_task(dir);
  FakeLlmServer model;
  ScriptedResponse never;
  never.body = fake_llm::openai_text("Done.");
  never.held = true;  // released only when the server goes: the turn is in flight when the run dies
  model.push(never, 4);
  std::string cfg =
      dir.write("run.yaml", "models:\n  agent: {provider: openai, name: gpt-4o, base_url: \"" + model.base_url() +
                                "\", api_key_env: FORGECTL_TEST_KEY}\n"
                                "orchestrator:\n  timeouts: {turn_s: 600, episode_s: 900}\n");
  KilledSweep run({"run", task, "--config", cfg, "--agent", "llm", "--trials", "2", "--concurrency", "1", "--warm-pool",
                   "1", "--out", dir.path() + "/run"},
                  {{"FORGECTL_TEST_KEY", "sk-test"}});
  // The first trial waits on its model; the second trial's sandbox is ready and frozen for its turn.
  run.wait_for("a model turn and a frozen warm sandbox", [&] {
    return !model.requests().empty() && run.has_role("runner", "paused") && run.has_role("runner", "running");
  });
  run.kill();
  run.down_orphans_leaves_nothing();
}

TEST_CASE("sigkill orphans: a sweep killed during golden replay on a network-less trial leaves nothing") {
  TempDir dir;
  kill_oracle_sweep_at(dir, golden_task(dir), "golden", "");
}

TEST_CASE("sigkill orphans: a sweep killed while a test grader runs leaves neither grader nor its volume") {
  TempDir dir;
  kill_oracle_sweep_at(dir, grader_task(dir), "grader", "running");
}

// A forked run (docs/sweeps.md "Forks") killed while its first trial's agent runs: the set-up
// snapshot image exists, owned by the dead process; down --orphans removes it with the stacks.
TEST_CASE("sigkill orphans: a sweep killed after its set-up snapshot was taken leaves no snapshot image") {
  TempDir dir;
  const std::string task = write_fork_task(fs::path(dir.path()) / "forked", 1, "", false, "; sleep 120");
  KilledSweep run({"run", task, "--agent", "oracle", "--trials", "3", "--concurrency", "1", "--out", dir.path() + "/run"});
  auto& c = *docker_env().client;
  auto snapshots = [&] {
    auto is = engine::list_images(c, {{"label", {std::string(stack::kLabelSnapshot) + "=" + run.run_id()}}});
    REQUIRE(is.has_value());
    return *is;
  };
  run.wait_for("the run's snapshot image", [&] { return !snapshots().empty(); });
  for (const auto& i : snapshots()) CHECK(i.labels.at(stack::kLabelOwner).find(run.owner_mark()) != std::string::npos);
  run.wait_for_role("runner", "running");
  run.kill();
  run.down_orphans_leaves_nothing();
  CHECK(snapshots().empty());
  auto left = engine::list_containers(c, {{"label", {stack::kLabelSnapshot}}});
  REQUIRE(left.has_value());
  for (const auto& ct : *left)
    CHECK_MESSAGE(ct.labels.at(stack::kLabelOwner).find(run.owner_mark()) == std::string::npos, ct.id);
}
