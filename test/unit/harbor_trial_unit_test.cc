// Harbor tasks as forgectl runs them, without Docker: the TaskConfig a task.toml becomes, the
// dataset search mixing formats, reward.json's score, and the base images a build needs.
#include <doctest/doctest.h>

#include "manifest/harbor_load.h"
#include "stack/task_build.h"
#include "support/manifest_helpers.h"
#include "sweep/task_set.h"
#include "trial/harbor_trial.h"

using namespace forge;

namespace {

void write_harbor(test::TempFiles& d, const std::string& name, const std::string& toml) {
  d.write(name + "/task.toml", toml);
  d.write(name + "/instruction.md", "Write 42 to answer.txt.\n");
  d.write(name + "/environment/Dockerfile", "FROM forgectl-test/harbor-base:1\nWORKDIR /work\n");
  d.write(name + "/tests/test.sh", "echo 1 > /logs/verifier/reward.txt\n");
  d.write(name + "/solution/solve.sh", "echo 42 > answer.txt\n");
}

}  // namespace

TEST_CASE("harbor load: a Dockerfile task becomes a built runner; no-network, limits; the oracle's one call") {
  test::TempFiles d("forgectl-harbor-");
  write_harbor(d, "t1",
               "version = \"1.0\"\n[verifier]\ntimeout_sec = 30\n[agent]\ntimeout_sec = 60\n"
               "[environment]\ncpus = 1\nmemory_mb = 512\nstorage_mb = 64\nnetwork_mode = \"no-network\"\n");
  auto t = manifest::load_harbor_task_config(d.dir() + "/t1");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  CHECK(t->task_id == "t1");
  CHECK(t->harbor);
  CHECK(t->initial_user_message == "Write 42 to answer.txt.\n");
  const auto& r = t->environment.manifest.runner;
  CHECK(r.image.empty());
  REQUIRE(r.build);
  CHECK(r.build->context == d.dir() + "/t1/environment");
  CHECK(r.resources.cpus == 1);
  CHECK(r.resources.memory == 512LL << 20);
  CHECK(r.disk_mb == 64);
  CHECK(t->environment.manifest.network_policy == manifest::NetworkPolicy::kNoInternet);
  REQUIRE(t->solution.tool_calls.size() == 1);
  CHECK(t->solution.tool_calls[0].arguments_json.find("/solution/solve.sh") != std::string::npos);
}

TEST_CASE("harbor load: allowlist is limited_internet with its hosts; public is full_internet") {
  test::TempFiles d("forgectl-harbor-");
  write_harbor(d, "a", "[environment]\nnetwork_mode = \"allowlist\"\nallowed_hosts = [\"example.org\"]\n");
  write_harbor(d, "p", "[environment]\nnetwork_mode = \"public\"\n");
  auto a = manifest::load_harbor_task_config(d.dir() + "/a");
  REQUIRE_MESSAGE(a.has_value(), (a ? "" : a.error().what()));
  CHECK(a->environment.manifest.network_policy == manifest::NetworkPolicy::kLimitedInternet);
  CHECK(a->environment.manifest.allowlist == std::vector<std::string>{"example.org"});
  auto p = manifest::load_harbor_task_config(d.dir() + "/p");
  REQUIRE(p.has_value());
  CHECK(p->environment.manifest.network_policy == manifest::NetworkPolicy::kFullInternet);
}

TEST_CASE("dataset: Harbor and Tolokaforge tasks found together; a task.toml wins over a task.yaml beside it") {
  test::TempFiles d("forgectl-harbor-");
  write_harbor(d, "h", "");
  d.write("h/task.yaml", "task_id: shadow\n");
  d.write("n/task.yaml", "task_id: n\n");
  auto found = sweep::discover_tasks({d.dir()}, "**/task.yaml");
  REQUIRE(found.has_value());
  REQUIRE(found->size() == 2);
  CHECK((*found)[0] == d.dir() + "/h/task.toml");
  CHECK((*found)[1] == d.dir() + "/n/task.yaml");
  auto one = sweep::discover_tasks({d.dir() + "/h"}, "**/task.yaml");
  REQUIRE(one.has_value());
  CHECK(*one == std::vector<std::string>{d.dir() + "/h/task.toml"});
}

TEST_CASE("reward.json: every key kept; the score is 'reward', else the only key; bad files refused") {
  auto r = trial::parse_reward_json(R"({"reward": 0.5, "accuracy": 1, "ok": true})");
  REQUIRE(r.has_value());
  CHECK(r->size() == 3);
  CHECK(r->at("ok") == 1);
  CHECK(*trial::harbor_score(*r) == 0.5);
  CHECK(*trial::harbor_score({{"accuracy", 0.25}}) == 0.25);
  auto several = trial::harbor_score({{"a", 1}, {"b", 0}});
  REQUIRE_FALSE(several.has_value());
  CHECK(several.error().message.find("a, b") != std::string::npos);
  CHECK_FALSE(trial::parse_reward_json("[1]").has_value());
  CHECK_FALSE(trial::parse_reward_json(R"({"reward": "1"})").has_value());
  CHECK_FALSE(trial::parse_reward_json("{}").has_value());
  CHECK_FALSE(trial::parse_reward_json("{not json").has_value());
}

TEST_CASE("dockerfile bases: every FROM image, stages and scratch left out") {
  CHECK(stack::dockerfile_bases("FROM a:1 AS build\nRUN x\nfrom --platform=linux/amd64 build\nFROM scratch\n"
                                "FROM \\\n  b:2\nFROM a:1\n") == std::vector<std::string>{"a:1", "b:2"});
  CHECK(stack::dockerfile_bases("ARG B=x\nFROM $B\n") == std::vector<std::string>{"$B"});
}
