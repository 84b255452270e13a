// Per-phase network policy against the real daemon: a task whose setup has the (fake) internet
// and whose agent and test-script grader have none (docs/environment.md "Per-phase policy").
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>
#include <tuple>

#include "engine/exec.h"
#include "manifest/task_parse.h"
#include "support/containers.h"
#include "support/harbor_rig.h"
#include "support/manifest_helpers.h"
#include "support/package_index.h"
#include "support/scripted_trial.h"
#include "trial/preflight.h"

using namespace forge;
using namespace forge::test;

namespace {

// setup_script: waits for /tmp/go (the fake internet's address, written by the test once the
// fake internet is on the stack's outward network), fetches its page into the workspace.
const char* kSetup =
    "i=0; while [ ! -f /tmp/go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n"
    "cp /tmp/go inet.txt\n"

    "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 3 \"$(cat /tmp/go)\" 80 > fetched.txt "
    "|| echo setup-failed > fetched.txt\n"
    "if [ -f /tmp/name ]; then nslookup \"$(cat /tmp/name)\" > resolved.txt 2>&1; fi\n";

// The grader passes only when setup had the page and the grader itself cannot fetch it.
const char* kTest =
    "command -v nc >/dev/null || exit 2\n"
    "grep -q hello-internet fetched.txt || exit 3\n"
    "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 2 \"$(cat inet.txt)\" 80 | grep -q hello-internet && exit 4\n"
    "exit 0\n";

manifest::TaskConfig write_task(const TempDir& d) {
  std::filesystem::create_directories(d.path() + "/tests");
  d.write("task.yaml",
          "task_id: phases\nname: phases\ncategory: test\ndescription: \"Fetch at setup.\"\n"
          "initial_user_message: \"Go.\"\n"
          "tools:\n  agent: {enabled: [bash]}\n  user: {enabled: []}\n"
          "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
          "grading: grading.yaml\n"
          "environment:\n"
          "  network_policy: {setup: full_internet, agent: no_internet, grade: no_internet}\n"
          "  setup_script: setup.sh\n"
          "  stack: none\n");
  d.write("setup.sh", kSetup);
  d.write("grading.yaml", "custom_checks:\n  command: \"sh /tests/test.sh\"\n");
  d.write("tests/test.sh", kTest);
  auto t = manifest::load_task(d.path() + "/task.yaml");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

// The run's outward network ("…-net") and its running runner, once both are there.
std::pair<std::string, std::string> wait_for_stack(const std::string& run_id) {
  std::string net, runner;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((net.empty() || runner.empty()) && std::chrono::steady_clock::now() < until) {
    auto nets = engine::list_networks(*docker_env().client, run_filter(run_id));
    if (nets)
      for (const auto& n : *nets)
        if (n.name.ends_with("-net")) net = n.name;
    auto cs = engine::list_containers(*docker_env().client,
                                      {{"label", {"io.forgectl.run=" + run_id, "io.forgectl.role=runner"}}});
    if (cs)
      for (const auto& c : *cs)
        if (c.state == "running") runner = c.id;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return {net, runner};
}

// The fake internet on the run's outward network once it is there; its address in the runner's
// /tmp/go (what the task's scripts wait for). Empty optional when the stack never came.
// The fake internet's name: known only on a network of the test's own that the trial's resolver
// joins, so the runner can resolve it only by asking that resolver.
constexpr const char* kFakeName = "pkgs.fake.test";

std::string resolver_of(const std::string& run_id) {
  auto cs = engine::list_containers(*docker_env().client,
                                    {{"label", {"io.forgectl.run=" + run_id, "io.forgectl.service=egress-dns"}}});
  return cs && !cs->empty() ? cs->front().id : std::string();
}

// With `named`: the fake internet also answers to kFakeName on `dns_net`, which the resolver
// joins; /tmp/name in the runner says which name to look up. Returns its address there.
std::string name_fake_internet(const std::string& run_id, const std::string& runner, const std::string& box,
                               std::optional<TestNetwork>& dns_net) {
  dns_net.emplace(engine::NetworkSpec{"forgectl-test-dns-" + random_hex(4)});
  auto* c = docker_env().client;
  REQUIRE(engine::connect_network(*c, dns_net->id, box, {kFakeName}));
  const std::string resolver = resolver_of(run_id);
  REQUIRE_FALSE(resolver.empty());
  REQUIRE(engine::connect_network(*c, dns_net->id, resolver, {}));
  auto info = engine::inspect_container(*c, box);
  REQUIRE(info.has_value());
  std::string ip;
  for (const auto& [name, ep] : info->networks)
    if (ep.network_id == dns_net->id) ip = ep.ip_address;
  engine::ExecOptions name{{"sh", "-c", std::string("echo ") + kFakeName + " > /tmp/name"}};
  name.timeout = Millis(20000);
  CHECK(engine::exec_run(*c, runner, name).has_value());
  return ip;
}

void fake_internet_for(const std::string& run_id, std::string& net, std::optional<TestContainer>& inet,
                       std::optional<TestNetwork>* dns_net = nullptr, std::string* named_ip = nullptr) {
  std::string runner;
  std::tie(net, runner) = wait_for_stack(run_id);
  if (net.empty() || runner.empty()) return;
  engine::ContainerSpec s;
  s.network = net;
  s.cmd = std::vector<std::string>{"sh", "-c", "mkdir -p /tmp/w && echo hello-internet > /tmp/w/index.html && "
                                               "exec httpd -f -p 80 -h /tmp/w"};
  inet.emplace(s);
  auto info = engine::inspect_container(*docker_env().client, inet->id);
  REQUIRE(info.has_value());
  const std::string ip = info->networks.begin()->second.ip_address;
  // Serving before anyone is told where: a refused connection would read as "blocked".
  engine::ExecOptions up{{"sh", "-c", "for i in $(seq 50); do printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | "
                                      "nc -w 1 127.0.0.1 80 | grep -q hello-internet && exit 0; sleep 0.1; done; exit 1"}};
  up.timeout = Millis(20000);
  auto served = engine::exec_run(*docker_env().client, inet->id, up);
  REQUIRE(served.has_value());
  REQUIRE(served->exit_code == 0);
  if (dns_net) *named_ip = name_fake_internet(run_id, runner, inet->id, *dns_net);
  engine::ExecOptions go{{"sh", "-c", "echo " + ip + " > /tmp/go"}};
  go.timeout = Millis(20000);
  CHECK(engine::exec_run(*docker_env().client, runner, go).has_value());
}

}  // namespace

TEST_CASE("per-phase policy: setup fetches from the fake internet; the agent and the test-script grader cannot") {
  Rig rig;
  TempDir d;
  auto task = write_task(d);
  REQUIRE(manifest::runner_changes_network(task.environment.manifest));
  const std::string trajectory = write_trajectory(
      d, {{"", {{"bash", bash("cat fetched.txt; printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 2 \"$(cat inet.txt)\" 80 "
                              "| grep -q hello-internet && echo AGENT-REACHED || echo AGENT-BLOCKED; "
                              "cat /proc/net/route; echo SETUP-LOOKUP; cat resolved.txt; echo AGENT-LOOKUP; "
                              "nslookup " + std::string(kFakeName) + " 2>&1")}}},
          {"done", {}}});

  trial::TrialResult r;
  std::thread t([&] { r = rig.run(task, replay(trajectory)); });
  std::string net, named_ip;
  std::optional<TestContainer> inet;
  std::optional<TestNetwork> dns_net;
  fake_internet_for(rig.env.run_id, net, inet, &dns_net, &named_ip);
  t.join();
  REQUIRE_FALSE(net.empty());
  REQUIRE_FALSE(named_ip.empty());
  CAPTURE(reasons_of(r));
  REQUIRE(r.outcome == results::Outcome::kGraded);
  REQUIRE(r.tool_log.size() == 1);
  const std::string& out = r.tool_log[0].record.content;
  CAPTURE(out);
  CHECK(out.find("hello-internet") != std::string::npos);  // setup's fetch, left in the workspace
  CHECK(out.find("AGENT-BLOCKED") != std::string::npos);
  CHECK(out.find("AGENT-REACHED") == std::string::npos);
  // Names: setup's lookup went to the trial's resolver, open in that phase, which answered it; the
  // agent's same lookup, after the switch, was refused at once.
  const auto setup_lookup = out.substr(out.find("SETUP-LOOKUP"), out.find("AGENT-LOOKUP") - out.find("SETUP-LOOKUP"));
  const auto agent_lookup = out.substr(out.find("AGENT-LOOKUP"));
  CHECK(setup_lookup.find(named_ip) != std::string::npos);
  CHECK(agent_lookup.find("REFUSED") != std::string::npos);
  CHECK(agent_lookup.find(named_ip) == std::string::npos);
  REQUIRE(r.egress.has_value());
  int answered_in_setup = 0, refused_in_agent = 0;
  for (const auto& e : r.egress->entries) {
    if (e.host != kFakeName) continue;
    answered_in_setup += e.phase == "setup" && e.outcome == "answered";
    refused_in_agent += e.phase == "agent" && e.outcome == "refused";
  }
  CHECK(answered_in_setup >= 1);
  CHECK(refused_in_agent >= 1);
  // The grader's test passed: setup had the page, and the grader could not fetch it itself.
  CHECK(r.grade.binary_pass);
  CHECK(r.networks == std::map<std::string, std::string>{{"setup", "full_internet"}, {"agent", "no_internet"},
                                                         {"grade", "none"}});
  inet.reset();
  CHECK(rig.left_nothing());
  dns_net.reset();
}

namespace {

// A Harbor task's oracle trial, with the fake internet on the run's outward network once it is there.
trial::TrialResult run_oracle_with_internet(HarborRig& rig, const manifest::TaskConfig& task) {
  trial::TrialResult r;
  std::thread t([&] { r = rig.run(task, trial::AgentChoice::Kind::kOracle); });
  std::string net;
  std::optional<TestContainer> inet;
  fake_internet_for(rig.env.run_id, net, inet);
  t.join();
  REQUIRE_FALSE(net.empty());
  return r;
}

// A step's oracle: waits for the fake internet's address, fetches its page into `file`.
std::string fetch_into(const std::string& file) {
  return "i=0; while [ ! -f /tmp/go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n"
         "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 2 \"$(cat /tmp/go)\" 80 > " + file + "\n"
         "grep -q hello-internet " + file + " || echo blocked >> " + file + "\n";
}

}  // namespace

TEST_CASE("per-phase policy: a Harbor step's own agent network is applied before the step, and verified") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-stepnet-");
  d.write("t/task.toml", "schema_version = \"1.4\"\n[task]\nname = \"forgectl-test/stepnet\"\n"
                         "[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
                         "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n"
                         "[[steps]]\nname = \"one\"\n[[steps]]\nname = \"two\"\n[steps.agent]\nnetwork_mode = \"public\"\n");
  write_harbor_dockerfile(d, "t", rig.base);
  d.write("t/tests/test.sh", "echo 0 > /logs/verifier/reward.txt\n");
  for (const char* s : {"one", "two"}) d.write(std::string("t/steps/") + s + "/instruction.md", "Fetch.\n");
  d.write("t/steps/one/solution/solve.sh", fetch_into("got1.txt"));
  d.write("t/steps/two/solution/solve.sh", fetch_into("got2.txt"));
  // Step one (no-network) must not have had the page; step two (public) must have.
  d.write("t/steps/one/tests/test.sh",
          "if grep -q blocked got1.txt && ! grep -q hello-internet got1.txt; then echo 1; else echo 0; fi "
          "> /logs/verifier/reward.txt\n");
  d.write("t/steps/two/tests/test.sh",
          "if grep -q hello-internet got2.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  auto task = rig.load(d.dir() + "/t");
  REQUIRE(trial::check_task(task, trial::PreflightInput{}).empty());

  auto r = run_oracle_with_internet(rig, task);
  CAPTURE(reasons_of(r));
  CAPTURE(r.verifier_output);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.components.at("step.one") == 1.0);  // closed: blocked
  CHECK(r.grade.components.at("step.two") == 1.0);  // public: fetched
  CHECK(r.networks.at("step.one") == "no_internet");
  CHECK(r.networks.at("step.two") == "full_internet");
  CHECK(rig.left_nothing());
}

namespace {

// A task of ours with a limited_internet phase: its "internet" is the task's own upstream
// (pkgs.example.test, reached through the proxy alone), `policies` the network_policy map.
manifest::TaskConfig write_limited_task(const TempDir& d, const std::string& policies, const std::string& setup) {
  d.write("task.yaml",
          "task_id: limited_phases\nname: limited phases\ncategory: test\ndescription: \"Fetch at setup.\"\n"
          "initial_user_message: \"Go.\"\n"
          "tools:\n  agent: {enabled: [bash]}\n  user: {enabled: []}\n"
          "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
          "grading: grading.yaml\n"
          "environment:\n"
          "  network_policy: " + policies + "\n"
          "  limited_internet_allowlist: [pkgs.example.test]\n"
          "  limited_internet_allow_http: true\n"
          "  setup_script: setup.sh\n"
          "  compose_file: compose.yaml\n");
  d.write("setup.sh", setup);
  d.write("grading.yaml", "egress:\n  forbid_paths: [\"/solution/*\"]\n");
  d.write("compose.yaml", package_index_compose());
  auto t = manifest::load_task(d.path() + "/task.yaml");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

const char* kIndex = "http://pkgs.example.test/simple/index.html";

// `get URL [PROXY]`: a plain-HTTP GET through PROXY (default $http_proxy, as curl would) or, when
// that is empty, straight to the URL's host (busybox's wget crashes in the runner image; nc works).
// The request's side stays open a while: squid drops a client that half-closes before its answer.
const char* kGet =
    "get() { px=${2-$http_proxy}; px=${px#http://}; px=${px%/}; h=${1#http://}; h=${h%%/*}; "
    "if [ -n \"$px\" ]; then { printf 'GET %s HTTP/1.0\\r\\n\\r\\n' \"$1\"; sleep 2; } | nc -w 3 \"${px%%:*}\" \"${px##*:}\"; "
    "else printf 'GET /%s HTTP/1.0\\r\\nHost: %s\\r\\n\\r\\n' \"${1#http://*/}\" \"$h\" | nc -w 3 \"$h\" 80; fi; }\n";

int count_entries(const EgressLedger& l, const std::string& host, const std::string& phase, const std::string& outcome) {
  return static_cast<int>(std::count_if(l.entries.begin(), l.entries.end(), [&](const EgressEntry& e) {
    return e.host == host && e.phase == phase && e.outcome == outcome;
  }));
}

}  // namespace

TEST_CASE("per-phase policy: a limited_internet setup fetches through the proxy; the no_internet agent reaches neither "
          "the proxy nor the name") {
  (void)docker_env().services_image;
  Rig rig;
  TempDir d;
  auto task = write_limited_task(d, "{setup: limited_internet, agent: no_internet}",
                                 std::string(kGet) + "echo \"[$http_proxy]\" > setup-proxy.txt\n"
                                             "get " + kIndex + " > fetched.txt || echo setup-failed > fetched.txt\n");
  const std::string trajectory = write_trajectory(
      d, {{"", {{"bash", bash(std::string(kGet) + "cat fetched.txt setup-proxy.txt; echo \"agent-proxy=[$http_proxy]\"; get " +
                              kIndex + " | grep -q acme-cli && echo DIRECT-REACHED || echo DIRECT-BLOCKED; get " + kIndex +
                              " http://egress-proxy:3128 | grep -q acme-cli && echo PROXY-REACHED || echo PROXY-BLOCKED; "
                              "nslookup egress-proxy 2>&1 | tail -3")}}},
          {"done", {}}});
  auto r = rig.run(task, replay(trajectory));
  CAPTURE(reasons_of(r));
  REQUIRE(r.outcome == results::Outcome::kGraded);
  REQUIRE(r.tool_log.size() == 1);
  const std::string& out = r.tool_log[0].record.content;
  CAPTURE(out);
  CHECK(out.find("acme-cli") != std::string::npos);                       // setup fetched through the proxy
  CHECK(out.find("[http://egress-proxy:3128]") != std::string::npos);     // with setup's proxy variables
  CHECK(out.find("agent-proxy=[]") != std::string::npos);                 // the agent never has them
  CHECK(out.find("DIRECT-BLOCKED") != std::string::npos);
  CHECK(out.find("PROXY-BLOCKED") != std::string::npos);                  // the proxy left the task network
  CHECK(out.find("REACHED") == std::string::npos);
  REQUIRE(r.egress.has_value());
  CAPTURE(egress_jsonl(*r.egress));
  CHECK(count_entries(*r.egress, "pkgs.example.test", "setup", "allowed") == 1);
  CHECK(count_entries(*r.egress, "pkgs.example.test", "agent", "allowed") == 0);
  CHECK(count_entries(*r.egress, "pkgs.example.test", "agent", "refused") >= 1);  // the agent's lookup, mode none
  CHECK(r.networks == std::map<std::string, std::string>{{"setup", "limited_internet"}, {"agent", "no_internet"},
                                                         {"grade", "none"}});
  CHECK(rig.left_nothing());
}

TEST_CASE("per-phase policy: a full_internet setup goes direct, without the proxy; the limited_internet agent reaches "
          "the allowlist through it and nothing else") {
  (void)docker_env().services_image;
  Rig rig;
  TempDir d;
  auto task = write_limited_task(
      d, "{setup: full_internet, agent: limited_internet}",
      std::string(kGet) + "i=0; while [ ! -f /tmp/go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n"
      "cp /tmp/go inet.txt; echo \"[$http_proxy]\" > setup-proxy.txt\n"
      "get \"http://$(cat /tmp/go)/index.html\" | grep hello-internet > fetched.txt || echo setup-failed > fetched.txt\n");
  const std::string trajectory = write_trajectory(
      d, {{"", {{"bash", bash(std::string(kGet) + "cat fetched.txt setup-proxy.txt; get " + kIndex +
                              " | grep -q acme-cli && echo INDEX-REACHED; get \"http://$(cat inet.txt)/index.html\" | grep -q "
                              "hello-internet && echo INET-REACHED || echo INET-BLOCKED; get \"http://$(cat inet.txt)/index.html\" '' "
                              "| grep -q hello-internet && echo DIRECT-REACHED || echo DIRECT-BLOCKED")}}},
          {"done", {}}});
  trial::TrialResult r;
  std::thread t([&] { r = rig.run(task, replay(trajectory)); });
  std::string net;
  std::optional<TestContainer> inet;
  fake_internet_for(rig.env.run_id, net, inet);
  t.join();
  REQUIRE_FALSE(net.empty());
  CAPTURE(reasons_of(r));
  REQUIRE(r.outcome == results::Outcome::kGraded);
  REQUIRE(r.tool_log.size() == 1);
  const std::string& out = r.tool_log[0].record.content;
  CAPTURE(out);
  CHECK(out.find("hello-internet") != std::string::npos);  // setup's direct fetch
  CHECK(out.find("hello-internet\n[]\n") != std::string::npos);  // setup ran with the proxy variables emptied
  CHECK(out.find("INDEX-REACHED") != std::string::npos);   // the allowlist, through the proxy that joined
  CHECK(out.find("INET-BLOCKED") != std::string::npos);    // the proxy refuses what is not listed
  CHECK(out.find("DIRECT-BLOCKED") != std::string::npos);  // and the runner left the outward network
  REQUIRE(r.egress.has_value());
  CAPTURE(egress_jsonl(*r.egress));
  CHECK(count_entries(*r.egress, "pkgs.example.test", "agent", "allowed") == 1);
  CHECK(r.networks == std::map<std::string, std::string>{{"setup", "full_internet"}, {"agent", "limited_internet"},
                                                         {"grade", "none"}});
  inet.reset();
  CHECK(rig.left_nothing());
}

namespace {

// A step's oracle: CONNECT through the runner's proxy variables to each of the task's upstreams
// (a.fake.test, b.fake.test) and write the proxy's status line for each into `file`.
std::string connect_both(const std::string& file) {
  return "px=${http_proxy#http://}; px=${px%/}\n"
         "c() { { printf 'CONNECT %s:443 HTTP/1.0\\r\\n\\r\\n' \"$1\"; sleep 1; } | nc -w 3 \"${px%%:*}\" \"${px##*:}\" "
         "| head -1; }\n"
         "echo \"a=$(c a.fake.test)\" > " + file + "; echo \"b=$(c b.fake.test)\" >> " + file + "\n";
}

// An upstream of the task's compose file: plain TCP on 443 (CONNECT's 200 is all the test reads).
std::string upstream(const std::string& name, const std::string& alias) {
  return "  " + name + ":\n    image: forgectl/runner:local\n    x-forgectl: {upstream: true}\n"
         "    networks:\n      default:\n        aliases: [" + alias + "]\n"
         "    command: [sh, -c, 'mkdir -p /tmp/w && exec httpd -f -p 443 -h /tmp/w']\n";
}

}  // namespace

TEST_CASE("per-phase policy: Harbor steps with allowlists of their own and a public step — each step reaches its "
          "allowlist alone through the one proxy, switched between steps, and the public step everything") {
  (void)docker_env().services_image;
  HarborRig rig;
  TempFiles d("forgectl-harbor-steplists-");
  d.write("t/task.toml", "schema_version = \"1.4\"\n[task]\nname = \"forgectl-test/steplists\"\n"
                         "[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
                         "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n"
                         "[[steps]]\nname = \"one\"\n[steps.agent]\nnetwork_mode = \"allowlist\"\nallowed_hosts = [\"a.fake.test\"]\n"
                         "[[steps]]\nname = \"two\"\n[steps.agent]\nnetwork_mode = \"allowlist\"\nallowed_hosts = [\"b.fake.test\"]\n"
                         "[[steps]]\nname = \"three\"\n[steps.agent]\nnetwork_mode = \"public\"\n");
  write_harbor_dockerfile(d, "t", rig.base);
  d.write("t/environment/docker-compose.yaml", "services:\n  main:\n    build: {context: .}\n" +
                                                   upstream("site-a", "a.fake.test") + upstream("site-b", "b.fake.test"));
  d.write("t/tests/test.sh", "echo 0 > /logs/verifier/reward.txt\n");
  for (const char* s : {"one", "two", "three"}) {
    d.write(std::string("t/steps/") + s + "/instruction.md", "Connect.\n");
    d.write(std::string("t/steps/") + s + "/solution/solve.sh", connect_both(std::string("got-") + s + ".txt"));
  }
  // Step three also fetches the fake internet straight (no proxy): public has the outward network.
  d.write("t/steps/three/solution/solve.sh", connect_both("got-three.txt") + fetch_into("direct-three.txt"));
  d.write("t/steps/one/tests/test.sh", "if grep -q '^a=HTTP/1.1 200' got-one.txt && grep -q '^b=HTTP/1.1 403' got-one.txt; "
                                       "then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  d.write("t/steps/two/tests/test.sh", "if grep -q '^a=HTTP/1.1 403' got-two.txt && grep -q '^b=HTTP/1.1 200' got-two.txt; "
                                       "then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  d.write("t/steps/three/tests/test.sh",
          "if grep -q '^a=HTTP/1.1 200' got-three.txt && grep -q '^b=HTTP/1.1 200' got-three.txt && "
          "grep -q hello-internet direct-three.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  auto task = rig.load(d.dir() + "/t");
  REQUIRE(trial::check_task(task, trial::PreflightInput{}).empty());

  auto r = run_oracle_with_internet(rig, task);
  CAPTURE(reasons_of(r));
  CAPTURE(r.verifier_output);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.components.at("step.one") == 1.0);    // a only
  CHECK(r.grade.components.at("step.two") == 1.0);    // b only: the proxy was switched
  CHECK(r.grade.components.at("step.three") == 1.0);  // both, through the open proxy, and the internet straight
  CHECK(r.networks.at("step.one") == "limited_internet");
  CHECK(r.networks.at("step.three") == "full_internet");
  CHECK(rig.left_nothing());
}

TEST_CASE("per-phase policy: grade: full_internet gives a task's test scripts a network of their own, not the trial's") {
  Rig rig;
  TempDir d;
  std::filesystem::create_directories(d.path() + "/tests");
  d.write("task.yaml",
          "task_id: grade_net\nname: grade net\ncategory: test\ndescription: \"Nothing.\"\n"
          "initial_user_message: \"Go.\"\n"
          "tools:\n  agent: {enabled: [bash]}\n  user: {enabled: []}\n"
          "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
          "grading: grading.yaml\n"
          "environment:\n  network_policy: {agent: no_internet, grade: full_internet}\n  stack: none\n");
  d.write("grading.yaml", "custom_checks:\n  command: \"sh /tests/test.sh\"\n");
  // The tests fetch the fake internet (its address in /tmp/go, written by this test) and pass on its page.
  d.write("tests/test.sh",
          "i=0; while [ ! -f /tmp/go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n"
          "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 3 \"$(cat /tmp/go)\" 80 | grep -q hello-internet || exit 5\n");
  auto task = manifest::load_task(d.path() + "/task.yaml");
  REQUIRE_MESSAGE(task.has_value(), (task ? "" : task.error().what()));
  const std::string trajectory = write_trajectory(d, {{"done", {}}});

  trial::TrialResult r;
  std::thread t([&] { r = rig.run(*task, replay(trajectory)); });
  // The grader (made ahead) and its own outward network, then the fake internet on it.
  auto* c = docker_env().client;
  std::string grader, net;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((grader.empty() || net.empty()) && std::chrono::steady_clock::now() < until) {
    auto cs = engine::list_containers(*c, {{"label", {"io.forgectl.run=" + rig.env.run_id, "io.forgectl.role=grader"}}});
    if (cs)
      for (const auto& g : *cs)
        if (g.state == "running") grader = g.id;
    auto nets = engine::list_networks(*c, run_filter(rig.env.run_id));
    if (nets)
      for (const auto& n : *nets)
        if (n.name.ends_with("-net")) net = n.name;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::optional<TestContainer> inet;
  if (!grader.empty() && !net.empty()) {
    engine::ContainerSpec s;
    s.network = net;
    s.cmd = std::vector<std::string>{"sh", "-c", "mkdir -p /tmp/w && echo hello-internet > /tmp/w/index.html && "
                                                 "exec httpd -f -p 80 -h /tmp/w"};
    inet.emplace(s);
    auto info = engine::inspect_container(*c, inet->id);
    REQUIRE(info.has_value());
    engine::ExecOptions go{{"sh", "-c", "echo " + info->networks.begin()->second.ip_address + " > /tmp/go"}};
    go.timeout = Millis(20000);
    CHECK(engine::exec_run(*c, grader, go).has_value());
  }
  t.join();
  REQUIRE_FALSE(grader.empty());
  REQUIRE_FALSE(net.empty());
  CAPTURE(reasons_of(r));
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.binary_pass);  // the tests reached the internet of their own network
  CHECK(r.networks.at("grade") == "full_internet");
  CHECK(r.networks.at("agent") == "no_internet");
  inet.reset();
  CHECK(rig.left_nothing());
}
