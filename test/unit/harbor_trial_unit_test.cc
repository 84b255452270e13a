// Harbor tasks as forgectl runs them, without Docker: the TaskConfig a task.toml becomes, the
// dataset search mixing formats, reward.json's score, and the base images a build needs.
#include <doctest/doctest.h>

#include <filesystem>

#include "manifest/harbor/harbor_load.h"
#include "stack/task_build.h"
#include "support/manifest_helpers.h"
#include "support/paths.h"
#include "sweep/task_set.h"
#include "sweep/trial_key.h"
#include "trial/grader_setup.h"
#include "trial/harbor_steps.h"
#include "trial/harbor_trial.h"
#include "manifest/task_parse.h"
#include "trial/preflight.h"

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

  // Terminal-Bench 1's files with a stray task.toml: the task.yaml stands for the task, in a
  // dataset and named alone.
  d.write("t/task.toml", "version = \"1.0\"\n");
  d.write("t/task.yaml", "instruction: Write 42.\ndifficulty: easy\n");
  d.write("t/run-tests.sh", "pytest -rA\n");
  found = sweep::discover_tasks({d.dir()}, "**/task.yaml");
  REQUIRE(found.has_value());
  CHECK(*found == std::vector<std::string>{d.dir() + "/h/task.toml", d.dir() + "/n/task.yaml", d.dir() + "/t/task.yaml"});
  CHECK(*sweep::discover_tasks({d.dir() + "/t"}, "**/task.yaml") == std::vector<std::string>{d.dir() + "/t/task.yaml"});
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

TEST_CASE("multi-step mean: each reward key averaged over the steps, a missing key 0; the score taken as a step's") {
  // reward.json {a, b} then {a}: a = (1 + 0.5) / 2, b = (1 + 0) / 2 — not the mean of the step scores.
  auto m = trial::mean_step_rewards({{{"a", 1}, {"b", 1}}, {{"a", 0.5}}});
  CHECK(m == std::map<std::string, double>{{"a", 0.75}, {"b", 0.5}});
  CHECK_FALSE(trial::harbor_score(m).has_value());  // several keys, no 'reward': no single score
  // reward.txt counts as 'reward'; a step with no reward map (a timed-out verifier) counts 0 for every key.
  auto r = trial::mean_step_rewards({{{"reward", 1}}, {{"reward", 1}, {"extra", 2}}, {}});
  CHECK(r.at("reward") == doctest::Approx(2.0 / 3));
  CHECK(r.at("extra") == doctest::Approx(2.0 / 3));
  CHECK(*trial::harbor_score(r) == doctest::Approx(2.0 / 3));
  CHECK(trial::mean_step_rewards({{}, {}}).empty());
  CHECK(trial::mean_step_rewards({}).empty());
}

TEST_CASE("preflight: a step's own agent user runs; a step's own network moves the runner, allowlists included") {
  test::TempFiles d("forgectl-harbor-steps-user-");
  auto write = [&](const std::string& c_network, const std::string& b_network = "") {
    d.write("t/task.toml",
            "schema_version = \"1.4\"\n[environment]\ndocker_image = \"example/img\"\nnetwork_mode = \"no-network\"\n"
            "[[steps]]\nname = \"a\"\n[[steps]]\nname = \"b\"\n[steps.agent]\nuser = \"1001:1001\"\n" + b_network +
            "[[steps]]\nname = \"c\"\n[steps.agent]\n" + c_network);
    d.write("t/environment/Dockerfile", "FROM example/img\n");
    d.write("t/tests/test.sh", "echo 1 > /logs/verifier/reward.txt\n");
    for (const char* s : {"a", "b", "c"}) d.write(std::string("t/steps/") + s + "/instruction.md", "Do it.\n");
    auto t = manifest::load_harbor_task_config(d.dir() + "/t");
    REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
    return std::move(*t);
  };
  auto pub = write("network_mode = \"public\"\n");
  REQUIRE(pub.harbor->steps[1].agent.user == "1001:1001");
  CHECK(trial::check_task(pub, trial::PreflightInput{}).empty());
  using manifest::NetworkPolicy;
  CHECK(pub.environment.manifest.step_network_policies ==
        std::vector<NetworkPolicy>{NetworkPolicy::kNoInternet, NetworkPolicy::kNoInternet, NetworkPolicy::kFullInternet});
  CHECK(manifest::runner_changes_network(pub.environment.manifest));

  // One allowlist among no-network steps: the proxy joins the task network for step c alone.
  auto allow = write("network_mode = \"allowlist\"\nallowed_hosts = [\"example.org\"]\n");
  CHECK(trial::check_task(allow, trial::PreflightInput{}).empty());
  CHECK(allow.environment.manifest.allowlist == std::vector<std::string>{"example.org"});
  CHECK(manifest::runner_ever(allow.environment.manifest, NetworkPolicy::kLimitedInternet));

  // Two allowlists, and an allowlist beside a public step: the steps switch between them.
  auto two = write("network_mode = \"allowlist\"\nallowed_hosts = [\"example.org\"]\n",
                   "network_mode = \"allowlist\"\nallowed_hosts = [\"example.net\"]\n");
  CHECK(trial::check_task(two, trial::PreflightInput{}).empty());
  CHECK(two.environment.manifest.allowlist == std::vector<std::string>{"example.net"});  // the first allowlist step's
  CHECK(two.environment.manifest.step_allowlists[2] == std::vector<std::string>{"example.org"});
  auto mixed = write("network_mode = \"allowlist\"\nallowed_hosts = [\"example.org\"]\n", "network_mode = \"public\"\n");
  CHECK(trial::check_task(mixed, trial::PreflightInput{}).empty());
}

TEST_CASE("dockerfile bases: every FROM image, stages and scratch left out") {
  CHECK(stack::dockerfile_bases("FROM a:1 AS build\nRUN x\nfrom --platform=linux/amd64 build\nFROM scratch\n"
                                "FROM \\\n  b:2\nFROM a:1\n") == std::vector<std::string>{"a:1", "b:2"});
  CHECK(stack::dockerfile_bases("ARG B=x\nFROM $B\n") == std::vector<std::string>{"$B"});
}

TEST_CASE("verifier ids: root and the agent's uid or gid are refused, naming the setting; others run") {
  CHECK(trial::check_verifier_ids(2000, 2000, "x").has_value());
  CHECK(trial::check_verifier_ids(2500, 2501, "x").has_value());
  for (auto [uid, gid] : {std::pair{0u, 0u}, {2000u, 0u}, {0u, 2000u}}) {
    auto st = trial::check_verifier_ids(uid, gid, "[verifier].user = 0");
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().code == Errc::kInvalid);
    CHECK(st.error().what().find("[verifier].user = 0 is root") != std::string::npos);
  }
  for (auto [uid, gid] : {std::pair{1000u, 1000u}, {1000u, 2000u}, {3000u, 1000u}}) {
    auto st = trial::check_verifier_ids(uid, gid, "[verifier].user");
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().what().find("shares the agent's uid or gid 1000") != std::string::npos);
  }
}

TEST_CASE("verifier ids: past 2147483647 is refused (Docker's runtime runs no such uid)") {
  CHECK(trial::check_verifier_ids(2147483647u, 2500, "x").has_value());
  for (auto [uid, gid] : {std::pair{4294967295u, 2500u}, {2500u, 2147483648u}}) {
    auto st = trial::check_verifier_ids(uid, gid, "[verifier].user");
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().what().find("is past 2147483647") != std::string::npos);
  }
}

TEST_CASE("verifier's reserved paths: the loader's list holds every path the grader keeps") {
  CHECK(manifest::reserved_verifier_path(trial::kTestsDir) == trial::kTestsDir);
  CHECK(manifest::reserved_verifier_path(trial::kVerifierLogs) == trial::kVerifierLogs);
  CHECK(manifest::reserved_verifier_path(trial::kVerifierHome) == trial::kVerifierHome);
  const std::string socket_dir = std::filesystem::path(trial::kAsAgentSocket).parent_path().string();
  CHECK(manifest::reserved_verifier_path(socket_dir) == socket_dir);
  const std::string helper_dir = std::filesystem::path(trial::kGraderHelper).parent_path().string();
  CHECK(manifest::reserved_verifier_path(helper_dir) == helper_dir);
  CHECK(manifest::reserved_verifier_path("/logs/artifacts").empty());
  CHECK(manifest::reserved_verifier_path("/testsuite").empty());
  CHECK(manifest::normal_path("//a/./b/") == std::optional<std::string>("/a/b"));
  CHECK(manifest::normal_path("./") == std::optional<std::string>(""));
  CHECK_FALSE(manifest::normal_path("a/../b"));
}

TEST_CASE("harbor verifier network: [verifier]'s own mode, else the baseline (not the agent's override)") {
  test::TempFiles d("forgectl-harbor-");
  write_harbor(d, "own",
               "version = \"1.0\"\n[agent]\nnetwork_mode = \"public\"\n"
               "[verifier]\nallowed_hosts = [\"pypi.org\"]\n[environment]\nnetwork_mode = \"no-network\"\n");
  write_harbor(d, "base",
               "version = \"1.0\"\n[agent]\nnetwork_mode = \"no-network\"\n[environment]\nnetwork_mode = \"public\"\n");
  auto own = manifest::load_harbor_task_config(d.dir() + "/own");
  REQUIRE_MESSAGE(own.has_value(), (own ? "" : own.error().what()));
  CHECK(manifest::verifier_network(*own->harbor).mode == manifest::NetworkMode::kAllowlist);
  CHECK(manifest::verifier_network(*own->harbor).allowed_hosts == std::vector<std::string>{"pypi.org"});
  CHECK(manifest::agent_network(*own->harbor).mode == manifest::NetworkMode::kPublic);
  write_harbor(d, "sep", "version = \"1.0\"\n[verifier.environment]\nnetwork_mode = \"no-network\"\n"
                         "[environment]\nnetwork_mode = \"public\"\n");
  write_harbor(d, "sepdefault", "version = \"1.0\"\n[verifier.environment]\ncpus = 1\n"
                                "[environment]\nnetwork_mode = \"no-network\"\n");
  auto sep = manifest::load_harbor_task_config(d.dir() + "/sep");
  REQUIRE_MESSAGE(sep.has_value(), (sep ? "" : sep.error().what()));
  CHECK(manifest::verifier_network(*sep->harbor).mode == manifest::NetworkMode::kNoNetwork);
  auto sepdefault = manifest::load_harbor_task_config(d.dir() + "/sepdefault");
  REQUIRE_MESSAGE(sepdefault.has_value(), (sepdefault ? "" : sepdefault.error().what()));
  // A verifier environment without network keys does not fall back to Harbor's default public.
  CHECK(manifest::verifier_network(*sepdefault->harbor).mode == manifest::NetworkMode::kNoNetwork);
  auto base = manifest::load_harbor_task_config(d.dir() + "/base");
  REQUIRE(base.has_value());
  CHECK(manifest::verifier_network(*base->harbor).mode == manifest::NetworkMode::kPublic);
  CHECK(base->environment.manifest.network_policy == manifest::NetworkPolicy::kNoInternet);
}

TEST_CASE("harbor env: templates read only passed host variables; fallbacks; literals; an error names the flag") {
  test::TempFiles d("forgectl-harbor-");
  write_harbor(d, "env",
               "version = \"1.0\"\n[verifier]\nenv = { A = \"${PASSED}\", B = \"${UNPASSED:-fb}\" }\n"
               "[environment]\nenv = { C = \"${PASSED:-unused}\", D = \"plain\" }\n"
               "[solution]\nenv = { E = \"${PASSED_UNSET:-none}\" }\n");
  auto t = manifest::load_harbor_task_config(d.dir() + "/env");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  EnvLookup host = [](const char* k) -> std::optional<std::string> {
    if (std::string(k) == "PASSED") return std::string("from-host");
    if (std::string(k) == "UNPASSED") return std::string("secret");
    return std::nullopt;
  };
  auto e = trial::resolve_harbor_env(*t->harbor, {"PASSED", "PASSED_UNSET"}, host);
  REQUIRE_MESSAGE(e.has_value(), (e ? "" : e.error().what()));
  CHECK(e->verifier == std::vector<std::string>{"A=from-host", "B=fb"});  // UNPASSED is set but not passed
  CHECK(e->environment == std::vector<std::string>{"C=from-host", "D=plain"});
  CHECK(e->solution == std::vector<std::string>{"E=none"});

  auto none = trial::resolve_harbor_env(*t->harbor, {}, host);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().code == Errc::kInvalid);
  CHECK(none.error().what().find("[verifier].env") != std::string::npos);
  CHECK(none.error().what().find("PASSED is not passed to this run and has no fallback (forgectl run "
                                 "--env-passthrough PASSED)") != std::string::npos);
}

TEST_CASE(
    "preflight: a Harbor verifier user refused by id and an env template the run does not pass stop the run first") {
  test::TempFiles d("forgectl-harbor-");
  write_harbor(d, "bad",
               "version = \"1.0\"\n[verifier]\nuser = 1000\nenv = { K = \"${HOST_ONLY}\", F = \"${OTHER:-ok}\" }\n");
  write_harbor(d, "named", "version = \"1.0\"\n[verifier]\nuser = \"checker\"\n");
  auto bad = manifest::load_harbor_task_config(d.dir() + "/bad");
  REQUIRE_MESSAGE(bad.has_value(), (bad ? "" : bad.error().what()));
  trial::PreflightInput in;
  auto problems = trial::check_task(*bad, in);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].text().find("task.toml: [verifier].user = \"1000\" (1000:1000) shares the agent's uid") !=
        std::string::npos);
  CHECK(problems[1].text().find("task.toml:4: [verifier].env K = \"${HOST_ONLY}\": HOST_ONLY is not passed to this "
                                "run and has no fallback (forgectl run --env-passthrough HOST_ONLY)") !=
        std::string::npos);
  manifest::RunConfig run;
  run.env_passthrough = {"HOST_ONLY"};
  in.run = &run;
  CHECK(trial::check_task(*bad, in).size() == 1);  // passed: the host's value is the trial's to read

  auto named = manifest::load_harbor_task_config(d.dir() + "/named");
  REQUIRE(named.has_value());
  CHECK(trial::check_task(*named, trial::PreflightInput{}).empty());  // a name is looked up in the image, per trial
}

TEST_CASE("preflight: a multi-step Harbor task runs; workdir, setup.sh, healthcheck and artifacts pass; a root verifier does not") {
  auto t = manifest::load_harbor_task_config(forge::test::test_data_dir() + "/harbor/multi-step");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  REQUIRE_FALSE(t->harbor->steps.empty());
  REQUIRE_FALSE(t->harbor->steps[0].setup_script.empty());
  REQUIRE(t->harbor->steps[1].healthcheck);
  REQUIRE_FALSE(t->harbor->steps[1].artifacts.empty());
  auto refused = trial::check_task(*t, trial::PreflightInput{});
  std::string all;
  for (const auto& p : refused) all += p.text() + "\n";
  CAPTURE(all);
  REQUIRE(refused.size() == 1);  // workdir/, setup.sh, [steps.healthcheck] and artifacts are run now
  CHECK(all.find("step 'implement': [steps.verifier].user = \"root\" is root") != std::string::npos);

  test::TempFiles d("forgectl-harbor-steps-unit-");
  d.write("plain/task.toml",
          "schema_version = \"1.3\"\n[environment]\ndocker_image = \"example/img\"\n"
          "[[steps]]\nname = \"a\"\n[[steps]]\nname = \"b\"\n[steps.verifier]\nenv = { K = \"${STEP_ONLY}\" }\n");
  d.write("plain/environment/Dockerfile", "FROM example/img\n");
  d.write("plain/tests/test.sh", "echo 1 > /logs/verifier/reward.txt\n");
  for (const char* s : {"a", "b"}) {
    d.write(std::string("plain/steps/") + s + "/instruction.md", "Do it.\n");
    d.write(std::string("plain/steps/") + s + "/solution/solve.sh", "true\n");
  }
  auto plain = manifest::load_harbor_task_config(d.dir() + "/plain");
  REQUIRE_MESSAGE(plain.has_value(), (plain ? "" : plain.error().what()));
  CHECK(plain->solution.declared);  // the oracle runs each step's solve.sh
  auto problems = trial::check_task(*plain, trial::PreflightInput{});
  REQUIRE(problems.size() == 1);  // a step's env template is checked like the task's
  CHECK(problems[0].text().find("[steps.verifier].env K = \"${STEP_ONLY}\": STEP_ONLY is not passed") != std::string::npos);
  manifest::RunConfig run;
  run.env_passthrough = {"STEP_ONLY"};
  trial::PreflightInput in;
  in.run = &run;
  CHECK(trial::check_task(*plain, in).empty());
}

TEST_CASE("harbor verifier env: [verifier.environment].env replaces [environment].env; [verifier].env wins over it") {
  test::TempFiles d("forgectl-harbor-");
  write_harbor(d, "sep",
               "version = \"1.0\"\n[verifier]\nenv = { C = \"verifier\", D = \"verifier\" }\n"
               "[verifier.environment]\nenv = { B = \"venv\", C = \"venv\", T = \"${PASSED:-fb}\" }\n"
               "[environment]\nenv = { A = \"env\", B = \"env\" }\n");
  write_harbor(d, "plain",
               "version = \"1.0\"\n[verifier]\nenv = { B = \"verifier\" }\n"
               "[environment]\nenv = { A = \"env\", B = \"env\" }\n");
  EnvLookup host = [](const char* k) -> std::optional<std::string> {
    return std::string(k) == "PASSED" ? std::optional<std::string>("host") : std::nullopt;
  };
  auto sep = manifest::load_harbor_task_config(d.dir() + "/sep");
  REQUIRE_MESSAGE(sep.has_value(), (sep ? "" : sep.error().what()));
  auto e = trial::resolve_harbor_env(*sep->harbor, {"PASSED"}, host);
  REQUIRE_MESSAGE(e.has_value(), (e ? "" : e.error().what()));
  // Harbor's separate verifier environment is the [verifier.environment] table, not a copy of [environment].
  CHECK(trial::harbor_verifier_env(*e) == std::vector<std::string>{"B=venv", "C=verifier", "T=host", "D=verifier"});
  // The runner (the agent's environment) gets [environment].env only.
  CHECK(e->environment == std::vector<std::string>{"A=env", "B=env"});
  auto unpassed = trial::resolve_harbor_env(*sep->harbor, {}, host);
  REQUIRE(unpassed.has_value());
  CHECK(trial::harbor_verifier_env(*unpassed)[2] == "T=fb");  // set on the host, not passed: the fallback

  auto plain = manifest::load_harbor_task_config(d.dir() + "/plain");
  REQUIRE(plain.has_value());
  auto p = trial::resolve_harbor_env(*plain->harbor, {}, host);
  REQUIRE(p.has_value());
  CHECK_FALSE(p->verifier_environment);
  CHECK(trial::harbor_verifier_env(*p) == std::vector<std::string>{"A=env", "B=verifier"});

  // A template without a fallback that the run does not pass is refused, naming the table.
  write_harbor(d, "bad", "version = \"1.0\"\n[verifier.environment]\nenv = { K = \"${HOST_ONLY}\" }\n");
  auto bad = manifest::load_harbor_task_config(d.dir() + "/bad");
  REQUIRE(bad.has_value());
  auto none = trial::resolve_harbor_env(*bad->harbor, {}, host);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().what().find("[verifier.environment].env") != std::string::npos);
  auto problems = trial::check_task(*bad, trial::PreflightInput{});
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].text().find("task.toml:3: [verifier.environment].env K = \"${HOST_ONLY}\": HOST_ONLY is not "
                                "passed to this run and has no fallback (forgectl run --env-passthrough HOST_ONLY)") !=
        std::string::npos);
}

TEST_CASE("harbor verifier env and limits: each step's own tables, else the task's") {
  test::TempFiles d("forgectl-harbor-");
  write_harbor(d, "steps",
               "version = \"1.0\"\n[verifier]\nenv = { V = \"task\" }\n"
               "[verifier.environment]\ncpus = 2\nmemory_mb = 128\nenv = { E = \"task\" }\n"
               "[environment]\nenv = { A = \"env\" }\n"
               "[[steps]]\nname = \"one\"\n[steps.verifier]\nenv = { V = \"one\" }\n"
               "[steps.verifier.environment]\nmemory_mb = 64\nenv = { E = \"one\" }\n"
               "[[steps]]\nname = \"two\"\n");
  for (const char* s : {"one", "two"}) {
    d.write(std::string("steps/steps/") + s + "/instruction.md", "Step.\n");
    d.write(std::string("steps/steps/") + s + "/tests/test.sh", "echo 1 > /logs/verifier/reward.txt\n");
  }
  auto t = manifest::load_harbor_task_config(d.dir() + "/steps");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  const auto& h = *t->harbor;
  auto e = trial::resolve_harbor_env(h, {}, EnvLookup{});
  REQUIRE_MESSAGE(e.has_value(), (e ? "" : e.error().what()));
  CHECK(trial::harbor_verifier_env(*e, 0) == std::vector<std::string>{"E=one", "V=one"});
  CHECK(trial::harbor_verifier_env(*e, 1) == std::vector<std::string>{"E=task", "V=task"});
  auto one = trial::harbor_verifier_limits(h, &h.steps[0]);
  CHECK(one.memory_mb == 64);
  CHECK(one.cpus == 0);  // the step's table is the whole of it: unset is forgectl's default
  auto two = trial::harbor_verifier_limits(h, &h.steps[1]);
  CHECK(two.memory_mb == 128);
  CHECK(two.cpus == 2);
  CHECK(trial::harbor_verifier_limits(h).memory_mb == 128);
}

TEST_CASE("harbor shared verifier: applies to a multi-step task's shared steps, and is then part of the trial key") {
  test::TempFiles d("forgectl-harbor-");
  auto steps = [&](const std::string& name, const std::string& second) {
    write_harbor(d, name,
                 "schema_version = \"1.3\"\n[[steps]]\nname = \"one\"\n[[steps]]\nname = \"two\"\n" + second);
    for (const char* s : {"one", "two"}) d.write(name + "/steps/" + s + "/instruction.md", "Step.\n");
    auto t = manifest::load_harbor_task_config(d.dir() + "/" + name);
    REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
    return std::move(*t);
  };
  auto mixed = steps("mixed", "[steps.verifier]\nenvironment_mode = \"separate\"\n");
  CHECK(manifest::shared_verifier_applies(*mixed.harbor));  // step one is shared
  write_harbor(d, "separate", "version = \"1.0\"\n[verifier]\nenvironment_mode = \"separate\"\n");
  auto separate = manifest::load_harbor_task_config(d.dir() + "/separate");
  REQUIRE(separate.has_value());
  CHECK_FALSE(manifest::shared_verifier_applies(*separate->harbor));
  write_harbor(d, "allsep", "schema_version = \"1.3\"\n[verifier]\nenvironment_mode = \"separate\"\n"
                            "[[steps]]\nname = \"one\"\n");
  d.write("allsep/steps/one/instruction.md", "Step.\n");
  auto allsep = manifest::load_harbor_task_config(d.dir() + "/allsep");
  REQUIRE_MESSAGE(allsep.has_value(), (allsep ? "" : allsep.error().what()));
  CHECK_FALSE(manifest::shared_verifier_applies(*allsep->harbor));  // a step inherits the task's mode

  manifest::RunConfig run;
  trial::AgentChoice oracle{trial::AgentChoice::Kind::kOracle};
  const std::string plain = sweep::agent_fingerprint(oracle, run, mixed);
  run.harbor_shared_verifier = true;
  CHECK(sweep::agent_fingerprint(oracle, run, mixed) != plain);  // a shared verdict is not a separate one
  CHECK(sweep::agent_fingerprint(oracle, run, *allsep) == sweep::agent_fingerprint(oracle, manifest::RunConfig{}, *allsep));
}

TEST_CASE("preflight: network_policy grade gives test scripts a network; a checks.py grader asked one is named") {
  test::TempFiles d("forgectl-grade-net-");
  auto load = [&](const std::string& grading) {
    d.write("t/task.yaml",
            "task_id: g\nname: g\ncategory: test\ndescription: \"x\"\ninitial_user_message: \"Go.\"\n"
            "tools:\n  agent: {enabled: [bash]}\n  user: {enabled: []}\n"
            "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"###STOP###\"}\n"
            "grading: grading.yaml\n"
            "environment:\n  network_policy: {agent: no_internet, grade: full_internet}\n  stack: none\n");
    d.write("t/grading.yaml", grading);
    d.write("t/checks.py", "def check(ctx):\n    return True\n");
    d.write("t/tests/test.sh", "exit 0\n");
    auto t = manifest::load_task(d.dir() + "/t/task.yaml");
    REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
    return std::move(*t);
  };
  CHECK(trial::check_task(load("custom_checks:\n  command: \"sh /tests/test.sh\"\n"), trial::PreflightInput{}).empty());
  auto problems = trial::check_task(load("custom_checks:\n  file: checks.py\n"), trial::PreflightInput{});
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].text().find("network_policy grade: full_internet gives test scripts a network; checks.py graders run "
                                "with none") != std::string::npos);
}
