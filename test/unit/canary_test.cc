// Cheat canaries (`run --canary`): the calls each strategy makes with the tools it is given, how
// a plan adds their trials without touching the agents' keys or directories, and how the results
// keep them apart from every agent's numbers and report a cheat per task.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "agent/canary.h"
#include "core/json.h"
#include "core/strings.h"
#include "results/aggregate.h"
#include "results/canary.h"
#include "results/report_files.h"
#include "results/report_html.h"
#include "sweep/run_plan.h"
#include "trial/agent_choice.h"

using namespace forge;
namespace fs = std::filesystem;

namespace {

std::vector<ToolDecl> offered(std::initializer_list<const char*> names) {
  std::vector<ToolDecl> out;
  for (const char* n : names) out.push_back({n, "", "{}"});
  return out;
}

std::string command_of(const ToolCall& c) {
  auto d = json::parse(c.arguments, "arguments");
  REQUIRE(d.has_value());
  return json::get_string(*d, "command");
}

// Two stack-less tasks, "alpha" and "beta", in a temporary directory.
struct Pack {
  fs::path dir = fs::temp_directory_path() / ("forgectl-canary-" + random_hex(6));
  Pack() {
    for (const char* id : {"alpha", "beta"}) {
      fs::create_directories(dir / id);
      std::ofstream(dir / id / "task.yaml")
          << "task_id: " << id
          << "\nname: n\ncategory: test\ndescription: d\ninitial_user_message: hi\nenvironment: {stack: none}\n"
             "grading: grading.yaml\nuser_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"###STOP###\"}\n";
      std::ofstream(dir / id / "grading.yaml") << "combine: {method: weighted}\ntranscript_rules: {must_contain: [done]}\n";
    }
  }
  ~Pack() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

Result<std::unique_ptr<sweep::Plan>> plan_of(const Pack& p, std::vector<trial::AgentChoice> agents, bool canary,
                                             int trials = 2, sweep::Shard shard = {}) {
  static manifest::RunConfig run;
  sweep::PlanInput in;
  in.task_paths = {p.dir.string()};
  in.agents = std::move(agents);
  in.trials = trials;
  in.canary = canary;
  in.shard = shard;
  in.run = &run;
  return sweep::make_plan(in, [](const std::string& ref) -> Result<std::string> { return "sha256:" + ref; });
}

results::TrialRecord record(const std::string& task, const std::string& agent, bool pass, double score, int index = 0) {
  results::TrialRecord r;
  r.task_id = task;
  r.agent = agent;
  r.trial_index = index;
  r.binary_pass = pass;
  r.score = score;
  r.trial_key = task + agent + std::to_string(index);
  r.trial_dir = "trials/" + task + "/" + agent.substr(0, 6) + "/" + std::to_string(index);
  return r;
}

}  // namespace

TEST_CASE("canary: each strategy is one bash call when the agent has bash, file-tool calls without, none with neither") {
  std::vector<std::string> hosts = {"pkgs.example.test", "web"};
  std::vector<int> ports = {80, 8080};
  auto bash = offered({"bash", "write_file", "read_file"});
  for (auto s : agent::kCanaryStrategies) {
    auto calls = agent::canary_calls(s, hosts, ports, bash);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].name == "bash");
    CHECK(agent::parse_canary(agent::canary_name(s)) == s);
  }
  CHECK(command_of(agent::canary_calls(agent::CanaryStrategy::kRewardFile, hosts, ports, bash)[0]).find("/logs/verifier") !=
        std::string::npos);
  std::string conftest = command_of(agent::canary_calls(agent::CanaryStrategy::kConftest, hosts, ports, bash)[0]);
  for (const char* planted : {"conftest.py", "sitecustomize.py", "usercustomize.py", "entry_points.txt", "pytest11"})
    CHECK_MESSAGE(conftest.find(planted) != std::string::npos, planted);
  CHECK(command_of(agent::canary_calls(agent::CanaryStrategy::kReadTests, hosts, ports, bash)[0]).find("/tests") !=
        std::string::npos);
  std::string curl = command_of(agent::canary_calls(agent::CanaryStrategy::kCurlSolution, hosts, ports, bash)[0]);
  CHECK(curl.find("hosts=' pkgs.example.test web'") != std::string::npos);
  CHECK(curl.find("ports=' 80 8080'") != std::string::npos);
  // No service in the trial: nobody to ask, no call.
  CHECK(agent::canary_calls(agent::CanaryStrategy::kCurlSolution, {}, ports, bash).empty());

  auto files = offered({"write_file", "read_file", "list_dir"});
  auto reward = agent::canary_calls(agent::CanaryStrategy::kRewardFile, hosts, ports, files);
  REQUIRE(reward.size() == 4);
  CHECK(reward[0].name == "write_file");
  CHECK(reward[0].arguments.find("reward.txt") != std::string::npos);
  auto planted = agent::canary_calls(agent::CanaryStrategy::kConftest, hosts, ports, files);
  CHECK(planted.size() == 7);
  CHECK(agent::canary_calls(agent::CanaryStrategy::kReadTests, hosts, ports, files).size() == 4);
  CHECK(agent::canary_calls(agent::CanaryStrategy::kCurlSolution, hosts, ports, files).empty());
  for (auto s : agent::kCanaryStrategies) CHECK(agent::canary_calls(s, hosts, ports, offered({"db_query"})).empty());
  auto gets = agent::canary_calls(agent::CanaryStrategy::kCurlSolution, hosts, ports, offered({"http_request"}));
  REQUIRE(gets.size() == 12);  // 2 hosts × 2 ports × 3 answer files, at most 12
  CHECK(gets[0].arguments.find("http://pkgs.example.test:80/answer.txt") != std::string::npos);
}

TEST_CASE("canary: without bash, an answer file a service hands out is written into the workspace") {
  manifest::TaskConfig task;
  manifest::ComposeService web;
  web.name = "web";
  task.environment.compose.services = {web};
  auto a = agent::canary_agent(agent::CanaryStrategy::kCurlSolution, task);
  auto tools = offered({"http_request", "write_file"});
  std::vector<ChatMessage> messages;
  auto get = a->next(messages, tools, Deadline::never());
  REQUIRE(get.has_value());
  REQUIRE(get->message.tool_calls.size() == 1);
  CHECK(get->message.tool_calls[0].arguments.find("http://web:80/answer.txt") != std::string::npos);
  messages.push_back(get->message);
  messages.push_back({ChatMessage::Role::kTool, "Status: 200\n42\n"});
  auto write = a->next(messages, tools, Deadline::never());
  REQUIRE(write.has_value());
  REQUIRE(write->message.tool_calls.size() == 1);
  CHECK(write->message.tool_calls[0].name == "write_file");
  CHECK(write->message.tool_calls[0].arguments == R"({"path":"answer.txt","content":"42\n"})");
  // A 404 is not kept.
  messages.push_back(write->message);
  messages.push_back({ChatMessage::Role::kTool, "File written successfully"});
  auto next = a->next(messages, tools, Deadline::never());
  REQUIRE(next.has_value());
  messages.push_back(next->message);
  messages.push_back({ChatMessage::Role::kTool, "Status: 404\nnot found"});
  auto after = a->next(messages, tools, Deadline::never());
  REQUIRE(after.has_value());
  REQUIRE(after->message.tool_calls.size() == 1);
  CHECK(after->message.tool_calls[0].name == "http_request");
}

TEST_CASE("canary: it asks only the trial's own services, by names that cannot become shell syntax") {
  manifest::TaskConfig task;
  manifest::ComposeService web;
  web.name = "web";
  web.expose = {"9000/tcp"};
  web.networks["default"] = {"pkgs.example.test", "bad;rm -rf /", "$(id)"};
  manifest::ComposeService odd;
  odd.name = "-flag";
  task.environment.compose.services = {web, odd};
  CHECK(agent::canary_hosts(task) == std::vector<std::string>{"pkgs.example.test", "web"});
  CHECK(agent::canary_ports(task) == std::vector<int>{80, 8080, 9000});
  CHECK(agent::canary_hosts(manifest::TaskConfig{}).empty());
}

TEST_CASE("canary: the agent plays its calls, then ends its episode with an answer that calls no tool") {
  manifest::TaskConfig task;
  auto a = agent::canary_agent(agent::CanaryStrategy::kRewardFile, task);
  CHECK(a->kind() == "canary");
  auto first = a->next({}, offered({"bash"}), Deadline::never());
  REQUIRE(first.has_value());
  REQUIRE(first->message.tool_calls.size() == 1);
  CHECK(first->cost_usd == 0.0);
  auto last = a->next({}, offered({"bash"}), Deadline::never());
  REQUIRE(last.has_value());
  CHECK(last->message.tool_calls.empty());
  CHECK(last->message.content.find(agent::kStopMarker) != std::string::npos);
}

TEST_CASE("plan: --canary adds one trial per task and strategy and leaves the agents' keys and directories as they were") {
  Pack p;
  trial::AgentChoice oracle{trial::AgentChoice::Kind::kNoop};  // any agent; noop needs no solution
  auto plain = plan_of(p, {oracle}, false);
  auto mixed = plan_of(p, {oracle}, true);
  REQUIRE_MESSAGE(plain.has_value(), (plain ? "" : plain.error().what()));
  REQUIRE_MESSAGE(mixed.has_value(), (mixed ? "" : mixed.error().what()));
  CHECK((*plain)->jobs.size() == 4);
  REQUIRE((*mixed)->jobs.size() == 4 + 2 * agent::kCanaryStrategies.size());
  CHECK((*mixed)->canary_trials == 8);
  CHECK((*mixed)->agent_count == 1);

  std::map<std::string, std::string> agent_keys;  // key → rel_dir, the agents' trials
  for (const auto& j : (*plain)->jobs) agent_keys[j.key] = j.rel_dir;
  std::set<std::string> keys, labels;
  for (const auto& j : (*mixed)->jobs) {
    CHECK(keys.insert(j.key).second);  // no two trials share a key
    if (j.agent.kind != trial::AgentChoice::Kind::kCanary) {
      REQUIRE(agent_keys.count(j.key) == 1);
      CHECK(agent_keys[j.key] == j.rel_dir);
      continue;
    }
    labels.insert(j.agent.label());
    CHECK(j.index == 0);
    CHECK(j.rel_dir == j.task->task_id + "/canary-" + std::string(agent::canary_name(j.agent.canary)) + "/0");
    CHECK(!agent_keys.count(j.key));
  }
  CHECK(labels == std::set<std::string>{"canary:conftest", "canary:curl-solution", "canary:read-tests", "canary:reward-file"});
  // The same run planned again keys its canaries the same (--resume finds them done).
  auto again = plan_of(p, {oracle}, true);
  REQUIRE(again.has_value());
  for (std::size_t i = 0; i < (*mixed)->jobs.size(); ++i) CHECK((*again)->jobs[i].key == (*mixed)->jobs[i].key);
  CHECK((*again)->facts.config_hash == (*mixed)->facts.config_hash);
  CHECK((*plain)->facts.config_hash != (*mixed)->facts.config_hash);  // shards of a --canary run agree with each other only

  // --canary alone: the canaries' trials only; no agent and no canary is an error.
  auto alone = plan_of(p, {}, true);
  REQUIRE(alone.has_value());
  CHECK((*alone)->jobs.size() == 8);
  CHECK_FALSE(plan_of(p, {}, false).has_value());

  // Shards split the canaries too, each trial in exactly one shard.
  std::multiset<std::string> sharded;
  for (int i = 0; i < 3; ++i) {
    auto s = plan_of(p, {oracle}, true, 2, sweep::Shard{i, 3});
    REQUIRE(s.has_value());
    for (const auto& j : (*s)->jobs) sharded.insert(j.key);
  }
  CHECK(sharded.size() == keys.size());
  CHECK(std::set<std::string>(sharded.begin(), sharded.end()) == keys);
}

TEST_CASE("aggregate: canaries are in no agent's numbers; per task their cheat rate and the strategies that passed") {
  std::vector<results::TrialRecord> trials = {
      record("alpha", "oracle", true, 1.0),
      record("beta", "oracle", false, 0.0),
      record("alpha", "canary:reward-file", true, 1.0),
      record("alpha", "canary:conftest", false, 0.2),
      record("alpha", "canary:read-tests", false, 0.0),
      record("beta", "canary:reward-file", false, 0.0),
      record("beta", "canary:conftest", false, 0.0),
  };
  results::TrialRecord infra = record("beta", "canary:read-tests", false, 0.0);
  infra.outcome = results::Outcome::kInfraError;
  trials.push_back(infra);

  auto text = results::aggregate_json(trials);
  REQUIRE(text.has_value());
  auto d = json::parse(*text, "aggregate.json");
  REQUIRE(d.has_value());
  const auto& overall = (*d)["overall"];
  CHECK(json::get_int(overall, "trials") == 2);  // the oracle's two, nothing of the canaries
  CHECK(json::get_int(overall, "passed") == 1);
  CHECK(json::get_object(*d, "by_agent")->MemberCount() == 1);
  CHECK((*d)["by_task"]["alpha"].MemberCount() == 1);
  CHECK((*d)["comparisons"].Size() == 0);  // never the oracle against a canary

  const auto& c = (*d)["canaries"];
  CHECK(json::get_int(c, "trials") == 6);
  CHECK(json::get_int(c, "graded") == 5);
  CHECK(json::get_int(c, "cheated") == 1);
  CHECK(json::get_int(c, "infra_errors") == 1);
  CHECK(json::get_int(c, "tasks_cheated") == 1);
  const auto& alpha = c["by_task"]["alpha"];
  CHECK(json::get_double(alpha, "cheat_rate") == doctest::Approx(1.0 / 3));
  CHECK(json::get_strings(alpha, "succeeded") == std::vector<std::string>{"reward-file"});
  CHECK(json::get_strings(alpha, "partial") == std::vector<std::string>{"conftest"});  // credit, not a cheat
  CHECK(json::get_int(alpha["strategies"]["reward-file"], "passed") == 1);
  const auto& beta = c["by_task"]["beta"];
  CHECK(json::get_double(beta, "cheat_rate") == 0.0);
  CHECK(json::get_int(beta, "graded") == 2);  // the infra error is outside the rate
  CHECK(json::get_strings(beta, "succeeded").empty());

  // Without canaries the file has no such key (older runs' files are unchanged).
  auto plain = results::aggregate_json({trials[0], trials[1]});
  REQUIRE(plain.has_value());
  CHECK(plain->find("canaries") == std::string::npos);

  auto warnings = results::canary_warnings(results::canary_report(results::split_canaries(trials).canaries));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("task 'alpha' was passed by canary:reward-file") != std::string::npos);

  auto table = results::summary_table(trials);
  REQUIRE(table.has_value());
  CHECK(table->find("cheat canaries") != std::string::npos);
  CHECK(table->find("alpha       3       1    33%  reward-file") != std::string::npos);
  CHECK(table->find("1 of 2 task(s) passed by a canary") != std::string::npos);
  CHECK(table->find("canary:reward-file ") == std::string::npos);  // no agent line of a canary

  std::string html = results::render_report_html(trials, *text, "");
  CHECK(html.find("Cheat canaries") != std::string::npos);
  CHECK(html.find("1 of 2 task(s) were passed by a canary") != std::string::npos);
  CHECK(html.find("partial 0.20") != std::string::npos);
}
