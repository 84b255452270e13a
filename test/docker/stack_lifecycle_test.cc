// The forgectl binary's stack lifecycle: up, ps, down, interruption, orphans, leases, and exit codes.
#include <doctest/doctest.h>

#include <signal.h>
#include <stdlib.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/strings.h"
#include "core/subprocess.h"
#include "policy/subnets.h"
#include "stack/host_firewall.h"
#include "stack/labels.h"
#include "stack/teardown.h"
#include "support/containers.h"
#include "support/process.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;

namespace {

namespace fs = std::filesystem;

// Two services: `web` serves its health page only after `delay_s` seconds; `worker` waits for it
// to be healthy. So `up` spends about delay_s seconds waiting on health.
std::string compose_yaml(int delay_s) {
  return R"(services:
  web:
    image: forgectl/runner:local
    command: ["sh", "-c", "sleep )" +
         std::to_string(delay_s) +
         R"(; mkdir -p /tmp/srv && echo ok > /tmp/srv/health && exec httpd -f -p 8000 -h /tmp/srv"]
    read_only: true
    tmpfs: [/tmp]
    expose: ["8000"]
    healthcheck:
      test: ["CMD-SHELL", "printf 'GET /health HTTP/1.0\\r\\n\\r\\n' | nc 127.0.0.1 8000 | grep -q ok"]
      interval: 1s
      timeout: 2s
      retries: 120
  worker:
    image: forgectl/runner:local
    command: ["sleep", "3600"]
    depends_on:
      web:
        condition: service_healthy
)";
}

// A standalone manifest `<stem>.yaml` using the compose file above; returns its path.
std::string compose_manifest(const TempDir& dir, const std::string& stem, int delay_s) {
  dir.write("compose.yaml", compose_yaml(delay_s));
  return dir.write(stem + ".yaml", "network_policy: no_internet\ncompose_file: compose.yaml\n");
}

struct Objects {
  std::vector<engine::ContainerSummary> containers;
  std::vector<engine::NetworkInfo> networks;
  std::size_t total() const { return containers.size() + networks.size(); }
};
Objects objects(const std::string& key, const std::string& value) {
  auto& c = *docker_env().client;
  auto cs = engine::list_containers(c, by_label(key, value));
  auto ns = engine::list_networks(c, by_label(key, value));
  return {std::move(must(cs)), std::move(must(ns))};
}

// At scope exit, removes every stack with an object labelled key=value (pass or fail).
struct StackCleanup {
  std::string key, value;
  ~StackCleanup() {
    auto& c = *docker_env().client;
    std::set<std::string> names;
    if (auto cs = engine::list_containers(c, by_label(key, value)))
      for (const auto& x : *cs) names.insert(x.labels.count(stack::kLabelStack) ? x.labels.at(stack::kLabelStack) : "");
    if (auto ns = engine::list_networks(c, by_label(key, value)))
      for (const auto& n : *ns) names.insert(n.labels.count(stack::kLabelStack) ? n.labels.at(stack::kLabelStack) : "");
    for (const auto& n : names)
      if (!n.empty()) (void)stack::remove_stack(c, n);
  }
};

std::unique_ptr<Process> start_forgectl(const std::vector<std::string>& args) {
  auto p = spawn_forgectl(args);
  return std::move(must(p));
}

std::string last_line(const std::string& out) {
  std::string t = trim(out);
  auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// The INPUT chain's rules, as `iptables -S INPUT` prints them.
std::string input_rules() {
  auto r = run_process({"iptables", "-w", "5", "-S", "INPUT"});
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  REQUIRE_MESSAGE(r->exit_code == 0, r->err);
  return r->out;
}
bool firewall_enforced() { return docker_env().host.host_firewall; }

// Waits until `up` (still running) has a running container from `source`; returns its stack.
std::string wait_first_running(Process& up, const std::string& source, Millis timeout = Millis(60000)) {
  auto deadline = Deadline::in(timeout);
  for (;;) {
    for (const auto& ctr : objects(stack::kLabelSource, source).containers)
      if (ctr.state == "running") return ctr.labels.at(stack::kLabelStack);
    if (!up.running()) FAIL("up ended before a container ran:\n" << up.out() << up.err());
    if (deadline.expired()) FAIL("no container of " << source << " ran in time:\n" << up.err());
    std::this_thread::sleep_for(Millis(50));
  }
}

// Sends `signals` (20 ms apart) to an `up` waiting on health; it must exit 130 having removed
// everything it created, without a `down`.
void interrupt_up(const std::vector<int>& signals) {
  TempDir dir;
  std::string manifest = compose_manifest(dir, "interrupted", 30);
  StackCleanup cleanup{stack::kLabelSource, manifest};
  auto up = start_forgectl({"up", manifest, "--health-timeout", "90s"});
  std::string name = wait_first_running(*up, manifest);
  for (int sig : signals) {
    REQUIRE(up->kill(sig));
    std::this_thread::sleep_for(Millis(20));
  }
  auto code = up->wait_for(Millis(60000));
  REQUIRE_MESSAGE(code.has_value(), "up did not stop within 60 s of the signal:\n" << up->err());
  CHECK_MESSAGE(*code == 130, "stderr:\n" << up->err());
  CHECK(up->err().find("interrupted") != std::string::npos);
  CHECK(trim(up->out()).empty());  // no stack name: nothing is left to use
  auto left = objects(stack::kLabelSource, manifest);
  CHECK_MESSAGE(left.total() == 0, left.containers.size()
                                       << " containers, " << left.networks.size() << " networks left");
  if (firewall_enforced()) CHECK(input_rules().find(name) == std::string::npos);
}

}  // namespace

TEST_CASE("stack lifecycle: up waits for health, ps lists the stack, down removes it and its firewall rule") {
  TempDir dir;
  std::string manifest = compose_manifest(dir, "lifecycle", 2);
  StackCleanup cleanup{stack::kLabelSource, manifest};

  auto up = forgectl_run({"up", manifest, "--health-timeout", "60s"});
  REQUIRE_MESSAGE(up.code == 0, up.text());
  std::string name = last_line(up.out);
  CHECK(starts_with(name, "fg-lifecycle-"));
  CHECK(up.err.find("service web healthy") != std::string::npos);

  auto objs = objects(stack::kLabelStack, name);
  CHECK(objs.containers.size() == 4);  // web, worker, runner, the resolver
  CHECK(objs.networks.size() == 1);
  for (const auto& ctr : objs.containers) CHECK_MESSAGE(ctr.state == "running", ctr.names[0] << " is " << ctr.state);
  if (firewall_enforced()) CHECK(input_rules().find("forgectl:" + name) != std::string::npos);

  auto ps = forgectl_run({"ps"}, Millis(30000));
  CHECK_MESSAGE(ps.code == 0, ps.text());
  CHECK_MESSAGE(ps.out.find("\n" + name + "\t") != std::string::npos, ps.out);

  auto down = forgectl_run({"down", name});
  CHECK_MESSAGE(down.code == 0, down.text());
  CHECK(down.out.find("removed " + name + ": 4 containers, 1 networks") != std::string::npos);
  auto left = objects(stack::kLabelStack, name);
  CHECK(left.containers.empty());
  CHECK(left.networks.empty());
  CHECK(input_rules().find(name) == std::string::npos);
}

TEST_CASE("stack lifecycle: an up killed with SIGKILL mid-way is reaped by down --orphans") {
  TempDir dir;
  std::string manifest = compose_manifest(dir, "killed", 30);
  StackCleanup cleanup{stack::kLabelSource, manifest};
  auto up = start_forgectl({"up", manifest, "--health-timeout", "90s"});
  std::string name = wait_first_running(*up, manifest);
  REQUIRE(up->kill(SIGKILL));
  auto code = up->wait_for(Millis(10000));
  REQUIRE(code.has_value());
  CHECK(*code == 128 + SIGKILL);
  REQUIRE(objects(stack::kLabelSource, manifest).total() > 0);  // the kill left a half-built stack
  if (firewall_enforced()) CHECK(input_rules().find("forgectl:" + name) != std::string::npos);

  auto down = forgectl_run({"down", "--orphans"});
  CHECK_MESSAGE(down.code == 0, down.text());
  CHECK_MESSAGE(down.out.find("removed " + name) != std::string::npos, down.out);
  auto left = objects(stack::kLabelSource, manifest);
  CHECK_MESSAGE(left.total() == 0, left.containers.size()
                                       << " containers, " << left.networks.size() << " networks left");
  CHECK(input_rules().find("forgectl:" + name) == std::string::npos);
}

TEST_CASE("stack lifecycle: SIGINT during up exits 130 and leaves nothing behind") { interrupt_up({SIGINT}); }
TEST_CASE("stack lifecycle: SIGTERM during up exits 130 and leaves nothing behind") { interrupt_up({SIGTERM}); }
TEST_CASE("stack lifecycle: two signals in a row during up still leave nothing behind") {
  interrupt_up({SIGINT, SIGINT});
}

TEST_CASE("stack lifecycle: two concurrent ups of one task get distinct stacks on non-overlapping subnets") {
  TempDir dir;
  dir.write("compose.yaml", compose_yaml(2));
  dir.write("task.yaml",
            "task_id: concurrent-task\nenvironment:\n  network_policy: no_internet\n  compose_file: compose.yaml\n");
  std::string task_yaml = (fs::path(dir.path()) / "task.yaml").string();
  StackCleanup cleanup{stack::kLabelSource, task_yaml};

  auto a = start_forgectl({"up", dir.path(), "--health-timeout", "60s"});
  auto b = start_forgectl({"up", dir.path(), "--health-timeout", "60s"});
  auto code_a = a->wait_for(Millis(180000)), code_b = b->wait_for(Millis(180000));
  REQUIRE(code_a.has_value());
  REQUIRE(code_b.has_value());
  CHECK_MESSAGE(*code_a == 0, a->err());
  CHECK_MESSAGE(*code_b == 0, b->err());
  std::string name_a = last_line(a->out()), name_b = last_line(b->out());
  CHECK(starts_with(name_a, "fg-concurrent-task-"));
  CHECK(starts_with(name_b, "fg-concurrent-task-"));
  CHECK(name_a != name_b);

  std::vector<std::pair<std::string, policy::Ipv4Net>> subnets;  // network name, subnet
  for (const auto& name : {name_a, name_b}) {
    auto objs = objects(stack::kLabelStack, name);
    CHECK(objs.containers.size() == 4);  // with the resolver
    REQUIRE(objs.networks.size() == 1);
    for (const auto& n : objs.networks) {
      auto info = engine::inspect_network(*docker_env().client, n.id);
      REQUIRE(must(info).ipam.size() == 1);
      auto net = policy::parse_cidr(info->ipam[0].subnet);
      subnets.emplace_back(info->name, must(net));
    }
  }
  for (std::size_t i = 0; i < subnets.size(); ++i)
    for (std::size_t j = i + 1; j < subnets.size(); ++j)
      CHECK_MESSAGE(!subnets[i].second.overlaps(subnets[j].second), subnets[i].first << " " << subnets[i].second.str()
                                                                                     << " overlaps " << subnets[j].first
                                                                                     << " " << subnets[j].second.str());
  for (const auto& name : {name_a, name_b}) CHECK(forgectl_run({"down", name}).code == 0);
}

TEST_CASE("stack lifecycle: down --orphans spares a live owner's and a leased stack, and reaps an expired lease") {
  TempDir dir;
  std::string manifest = compose_manifest(dir, "owned", 8);
  std::string leased = dir.write("leased.yaml", "network_policy: no_internet\nstack: none\n");
  StackCleanup cleanup{stack::kLabelSource, manifest};
  StackCleanup cleanup_leased{stack::kLabelSource, leased};

  // Mid-up: the owner is alive, so its half-built stack is not an orphan.
  auto up = start_forgectl({"up", manifest, "--health-timeout", "90s"});
  std::string name = wait_first_running(*up, manifest);
  auto sweep = forgectl_run({"down", "--orphans"});
  CHECK_MESSAGE(sweep.code == 0, sweep.text());
  CHECK(sweep.out.find(name) == std::string::npos);
  auto mid = objects(stack::kLabelStack, name);
  CHECK(mid.containers.size() >= 1);
  CHECK(mid.networks.size() == 1);
  REQUIRE_MESSAGE(up->running(), "up finished before the sweep could race it; its health wait is too short");
  auto code = up->wait_for(Millis(120000));
  REQUIRE(code.has_value());
  CHECK_MESSAGE(*code == 0, up->err());
  CHECK(last_line(up->out()) == name);
  auto full = objects(stack::kLabelStack, name);
  CHECK(full.containers.size() == 4);  // with the resolver
  for (const auto& ctr : full.containers) CHECK_MESSAGE(ctr.state == "running", ctr.names[0] << " is " << ctr.state);

  // Finished and detached, within its lease: still not an orphan after its owner exited.
  sweep = forgectl_run({"down", "--orphans"});
  CHECK_MESSAGE(sweep.code == 0, sweep.text());
  CHECK(objects(stack::kLabelStack, name).containers.size() == 4);

  // A one-second lease: reaped once it has expired.
  auto short_up = forgectl_run({"up", leased, "--lease", "1s"});
  REQUIRE_MESSAGE(short_up.code == 0, short_up.text());
  std::string short_name = last_line(short_up.out);
  auto short_objs = objects(stack::kLabelStack, short_name);
  REQUIRE(short_objs.containers.size() == 2);  // the runner and the resolver
  std::time_t lease = std::strtoll(short_objs.containers[0].labels.at(stack::kLabelLease).c_str(), nullptr, 10);
  CHECK(lease > 0);
  auto lease_deadline = Deadline::in(Millis(10000));
  while (std::time(nullptr) <= lease + 1 && !lease_deadline.expired()) std::this_thread::sleep_for(Millis(100));
  sweep = forgectl_run({"down", "--orphans"});
  CHECK_MESSAGE(sweep.code == 0, sweep.text());
  CHECK(objects(stack::kLabelStack, short_name).total() == 0);
  CHECK(objects(stack::kLabelStack, name).containers.size() == 4);  // the long lease is still spared

  auto down = forgectl_run({"down", name});
  CHECK_MESSAGE(down.code == 0, down.text());
  CHECK(objects(stack::kLabelStack, name).total() == 0);
}

TEST_CASE("stack lifecycle: down without a target is a usage error, and an unknown stack is named") {
  auto none = forgectl_run({"down"}, Millis(30000));
  CHECK(none.code == 2);
  CHECK_MESSAGE(none.err.find("stack names, or --all, or --orphans") != std::string::npos, none.err);

  std::string missing = "no-such-stack-" + random_hex(3);
  auto unknown = forgectl_run({"down", missing}, Millis(30000));
  CHECK(unknown.code == 1);
  CHECK_MESSAGE(unknown.err.find("'" + missing + "'") != std::string::npos, unknown.err);
}

TEST_CASE("stack lifecycle: validate reports an unsupported key and a dependency cycle at their compose.yaml lines") {
  TempDir dir;
  dir.write("compose.yaml", R"(services:
  a:
    image: forgectl/runner:local
    ports: ["8080:80"]
    depends_on: [b]
  b:
    image: forgectl/runner:local
    depends_on: [a]
)");
  std::string manifest = dir.write("bad.yaml", "network_policy: no_internet\ncompose_file: compose.yaml\n");
  auto r = forgectl_run({"validate", manifest}, Millis(30000));
  CHECK(r.code == 2);  // invalid input (docs/errors.md)
  std::string all = r.out + r.err;
  CHECK_MESSAGE(all.find("compose.yaml:4:") != std::string::npos, all);  // ports
  CHECK_MESSAGE(all.find("compose.yaml:2:") != std::string::npos, all);  // the cycle, at service a
  CHECK(all.find("ports") != std::string::npos);
  CHECK(all.find("cycle") != std::string::npos);
}
