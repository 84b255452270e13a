// The environment manifest: task.yaml blocks, defaults, standalone files, policy rules, and
// problems across the manifest and its compose file reported together.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "manifest/environment_parse.h"
#include "support/manifest_helpers.h"
#include "support/paths.h"

using namespace forge;
using namespace forge::manifest;
using forge::test::has;
using forge::test::only;

namespace {

std::string data(const std::string& rel) { return forge::test::test_data_dir() + "/manifest/" + rel; }

Diagnostics env_errors(std::string_view text, const std::string& path = "env.yaml") {
  Diagnostics diags;
  (void)parse_environment(text, path, diags);
  return diags;
}

}  // namespace

TEST_CASE("manifest: a task.yaml's environment block with its compose file") {
  auto env = load_environment(data("task_env"));
  REQUIRE_MESSAGE(env, (env ? "" : env.error().what()));
  CHECK(env->task_id == "shop_orders_01");
  CHECK(env->source == data("task_env/task.yaml"));
  CHECK(env->base_dir == data("task_env"));
  const EnvironmentManifest& m = env->manifest;
  CHECK(m.path == data("task_env/task.yaml"));
  CHECK(m.where.line == 13);
  CHECK(m.network_policy == NetworkPolicy::kLimitedInternet);
  CHECK(m.allowlist == std::vector<std::string>{"pypi.org", ".pythonhosted.org"});
  CHECK(m.allow_plain_http);
  CHECK_FALSE(m.allow_private);
  CHECK(m.connect_ports == std::vector<int>{443, 8443});
  CHECK(m.compose_file == data("task_env/compose.yaml"));
  CHECK(m.runner.image == "forgectl/runner:local");
  CHECK(m.runner.user == "1000:1000");
  CHECK(m.runner.workdir == "/work");
  CHECK(m.runner.resources.memory == 2LL * 1024 * 1024 * 1024);
  CHECK(m.runner.resources.cpus == doctest::Approx(1.5));
  CHECK(m.runner.resources.pids_limit == 256);
  CHECK(m.runner.env_passthrough == std::vector<std::string>{"PIP_INDEX_URL"});
  REQUIRE(m.services.count("shop-api"));
  const ServiceIsolation& api = m.services.at("shop-api");
  CHECK(api.read_only == true);
  CHECK(api.resources.memory == 256LL * 1024 * 1024);
  CHECK(api.resources.pids_limit == 64);
  CHECK(api.where.line == 28);

  CHECK(env->compose.path == data("task_env/compose.yaml"));
  REQUIRE(env->compose.services.size() == 1);
  CHECK(env->compose.services[0].command == std::vector<std::string>{"httpd", "-f", "-p", "8080"});

  // The task.yaml path itself loads the same.
  auto direct = load_environment(data("task_env/task.yaml"));
  REQUIRE(direct);
  CHECK(direct->manifest.allowlist == m.allowlist);
}

TEST_CASE("manifest: a task without an environment block gets the defaults and the core stack") {
  auto env = load_environment(data("task_default"));
  REQUIRE_MESSAGE(env, (env ? "" : env.error().what()));
  CHECK(env->task_id == "package_public_example_01");
  CHECK(env->manifest.network_policy == NetworkPolicy::kNoInternet);
  CHECK(env->manifest.allowlist.empty());
  CHECK(env->manifest.connect_ports == std::vector<int>{443});
  CHECK(env->manifest.compose_file.empty());
  CHECK(env->manifest.stack == "core");
  CHECK(env->manifest.path == data("task_default/task.yaml"));
  CHECK(env->compose.path == "builtin:core");
  REQUIRE(env->compose.services.size() == 1);
  CHECK(env->compose.services[0].name == "json-db");
}

TEST_CASE("manifest: an unknown task.yaml key is an error with a did-you-mean") {
  auto env = load_environment(data("task_unknown_key"));
  REQUIRE_FALSE(env);
  CHECK(env.error().code == Errc::kInvalid);
  CHECK(env.error().message ==
        data("task_unknown_key/task.yaml") + ":8:1: unsupported key 'gradng' (hint: did you mean 'grading'?)");
}

TEST_CASE("manifest: a standalone manifest, with a built-in stack") {
  auto env = load_environment(data("standalone/env.yaml"));
  REQUIRE_MESSAGE(env, (env ? "" : env.error().what()));
  CHECK(env->task_id.empty());
  CHECK(env->manifest.network_policy == NetworkPolicy::kFullInternet);
  CHECK(env->manifest.stack == "full");
  CHECK(env->manifest.runner.env_passthrough == std::vector<std::string>{"HF_TOKEN"});
  CHECK(env->manifest.services.at("rag").read_only == false);
  CHECK(env->manifest.services.at("rag").resources.cpus == doctest::Approx(0.5));
  CHECK(env->compose.services.size() == 3);

  auto parsed = parse_environment("network_policy: no_internet\nstack: none\n", "m.yaml");
  REQUIRE(parsed);
  CHECK(parsed->stack == "none");
  auto empty = parse_environment("", "m.yaml");
  REQUIRE(empty);
  CHECK(empty->network_policy == NetworkPolicy::kNoInternet);
  CHECK(empty->stack == "core");
}

TEST_CASE("manifest: limited_internet needs an allowlist, and only it may have one") {
  SUBCASE("limited_internet without an allowlist") {
    auto diags = env_errors("network_policy: limited_internet\n");
    Diagnostic d = only(diags, "limited_internet needs a non-empty limited_internet_allowlist");
    CHECK(d.line == 1);
    CHECK(has(d.hint, ".example.org"));
    CHECK(env_errors("network_policy: limited_internet\nlimited_internet_allowlist: []\n").size() == 1);
  }
  SUBCASE("an allowlist under no_internet, explicit or default") {
    auto diags = env_errors("network_policy: no_internet\nlimited_internet_allowlist: [example.org]\n");
    REQUIRE(diags.size() == 1);
    CHECK(diags.items()[0].line == 2);
    CHECK(diags.items()[0].message ==
          "'limited_internet_allowlist' applies only to network_policy: limited_internet (this is no_internet)");
    CHECK(diags.items()[0].hint == "set network_policy: limited_internet, or remove it");
    auto defaulted = env_errors("limited_internet_allowlist: [example.org]\nlimited_internet_ports: [443]\n");
    CHECK(defaulted.size() == 2);
    auto full = env_errors("network_policy: full_internet\nlimited_internet_allow_private: true\n");
    CHECK(has(only(full, "allow_private").message, "(this is full_internet)"));
  }
  SUBCASE("allowlist entries are host names or .domains") {
    auto diags = env_errors(
        "network_policy: limited_internet\n"
        "limited_internet_allowlist:\n"
        "  - api.example.org\n"
        "  - .example.net\n"
        "  - \"*.example.com\"\n"
        "  - https://example.org/path\n"
        "  - example.org:8443\n"
        "  - bad..name\n"
        "  - api.example.org\n");
    REQUIRE(diags.size() == 5);
    CHECK(has(only(diags, "has a wildcard").hint, ".example.org"));
    CHECK(only(diags, "has a wildcard").line == 5);
    CHECK(has(only(diags, "'https://example.org/path' is not a host name").hint, "without scheme"));
    CHECK(has(only(diags, "has a port").hint, "limited_internet_ports"));
    CHECK(only(diags, "'bad..name'").line == 8);
    CHECK(only(diags, "given twice").line == 9);
  }
  SUBCASE("ports are 1-65535") {
    auto diags = env_errors(
        "network_policy: limited_internet\nlimited_internet_allowlist: [a.org]\nlimited_internet_ports: [0, 443, "
        "70000]\n");
    CHECK(diags.size() == 2);
  }
}

TEST_CASE("manifest: environment keys are checked strictly") {
  auto diags = env_errors(
      "network_policy: no_internets\n"
      "compose_file: /abs/compose.yaml\n"
      "stack: core\n"
      "runner:\n"
      "  user: nobody\n"
      "  workdir: work\n"
      "  memory: 2x\n"
      "  env_passthrough: [OK_NAME, 1BAD, OK_NAME]\n"
      "  imgae: x\n"
      "services:\n"
      "  db:\n"
      "    read_only: maybe\n"
      "    network: none\n"
      "runer: {}\n");
  CHECK(only(diags, "'network_policy' must be").hint == "did you mean 'no_internet'?");
  CHECK(only(diags, "must be a path relative to the manifest").line == 2);
  CHECK(only(diags, "either compose_file or stack").line == 3);
  Diagnostic user = only(diags, "'user' must be");
  CHECK(user.message == "runner: 'user' must be \"uid\", \"uid:gid\" or \"root\", got 'nobody'");
  CHECK(user.line == 5);
  CHECK(only(diags, "'workdir' must be an absolute path").line == 6);
  CHECK(only(diags, "'2x' is not a size").line == 7);
  CHECK(only(diags, "'1BAD' is not a variable name").line == 8);
  CHECK(only(diags, "'OK_NAME' is given twice").line == 8);
  CHECK(only(diags, "unsupported key 'imgae'").hint == "did you mean 'image'?");
  CHECK(only(diags, "services.db: 'read_only' must be true or false").line == 12);
  CHECK(only(diags, "services.db: unsupported key 'network'").line == 13);
  CHECK(only(diags, "unsupported key 'runer'").hint == "did you mean 'runner'?");
  CHECK(diags.size() == 12);
}

TEST_CASE("manifest: problems in the manifest and its compose file are reported together") {
  auto env = load_environment(data("task_bad_env"));
  REQUIRE_FALSE(env);
  const std::string& text = env.error().message;
  INFO(text);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  CHECK(has(text, data("task_bad_env/task.yaml") + ":10:11: environment.runner: 'user' must be"));
  CHECK(has(text, data("task_bad_env/compose.yaml") + ":4:5: service 'database': unsupported key 'privileged'"));
  CHECK(has(text, data("task_bad_env/task.yaml") +
                      ":12:5: environment.services: 'databse' is not a service of the compose file '" +
                      data("task_bad_env/compose.yaml") + "' (hint: did you mean 'database'?)"));
}

TEST_CASE("manifest: environment.services must name services of the built-in stack") {
  auto env = load_environment(data("standalone/unknown_service.yaml"));
  REQUIRE_FALSE(env);
  CHECK(env.error().message == data("standalone/unknown_service.yaml") +
                                   ":4:3: services: 'json_db' is not a service of the built-in stack 'core' "
                                   "(hint: did you mean 'json-db'?)");
}

TEST_CASE("manifest: a task.yaml needs a task_id") {
  auto env = load_environment(data("task_no_id"));
  REQUIRE_FALSE(env);
  CHECK(has(env.error().message, "task.yaml:1:1: the task has no 'task_id'"));
}

TEST_CASE("manifest: loading reports missing paths and files") {
  auto missing = load_environment(data("no_such_task"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::kNotFound);
  auto no_task = load_environment(data("compose_full"));
  REQUIRE_FALSE(no_task);
  CHECK(has(no_task.error().message, "without a task.yaml"));

  auto compose_missing = env_errors("compose_file: nowhere.yaml\n", data("standalone/env.yaml"));
  Diagnostic d = only(compose_missing, "does not exist");
  CHECK(d.line == 1);
  CHECK(has(d.message, data("standalone/nowhere.yaml")));
}

TEST_CASE("manifest: network_policy by phase: a string for setup and agent, or a map; what is not supported yet") {
  SUBCASE("a string is setup's and the agent's; grading keeps no network") {
    Diagnostics diags;
    auto m = parse_environment("network_policy: full_internet\n", "env.yaml", diags);
    CHECK(diags.empty());
    CHECK(phase_policy(m, Phase::kSetup) == NetworkPolicy::kFullInternet);
    CHECK(phase_policy(m, Phase::kAgent) == NetworkPolicy::kFullInternet);
    CHECK(phase_policy(m, Phase::kGrade) == NetworkPolicy::kNoInternet);
    CHECK_FALSE(runner_changes_network(m));
  }
  SUBCASE("a map: setup full, agent and grade closed") {
    Diagnostics diags;
    auto m = parse_environment(
        "network_policy: {setup: full_internet, agent: no_internet, grade: no_internet}\n", "env.yaml", diags);
    CHECK(diags.empty());
    CHECK(phase_policy(m, Phase::kSetup) == NetworkPolicy::kFullInternet);
    CHECK(m.network_policy == NetworkPolicy::kNoInternet);
    CHECK(runner_changes_network(m));
  }
  SUBCASE("a missing setup is the agent's, a missing agent no_internet") {
    Diagnostics diags;
    auto m = parse_environment("network_policy:\n  agent: full_internet\n", "env.yaml", diags);
    CHECK(diags.empty());
    CHECK(phase_policy(m, Phase::kSetup) == NetworkPolicy::kFullInternet);
    auto only_setup = parse_environment("network_policy:\n  setup: full_internet\n", "env.yaml", diags);
    CHECK(only_setup.network_policy == NetworkPolicy::kNoInternet);
    CHECK(runner_changes_network(only_setup));
  }
  SUBCASE("errors name the line and the phase") {
    auto bad = env_errors("stack: none\nnetwork_policy:\n  setup: full_internt\n  verify: no_internet\n");
    Diagnostic typo = only(bad, "full_internt");
    CHECK(typo.line == 3);
    CHECK(has(typo.message, "network_policy: 'setup' must be no_internet, limited_internet or full_internet"));
    CHECK(typo.hint == "did you mean 'full_internet'?");
    CHECK(only(bad, "verify").line == 4);
  }
  SUBCASE("limited_internet may change between phases; a grader may have a network of its own") {
    Diagnostics diags;
    auto m = parse_environment(
        "network_policy: {setup: limited_internet, agent: no_internet}\nlimited_internet_allowlist: [pypi.org]\n",
        "env.yaml", diags);
    CHECK(diags.empty());
    CHECK(runner_changes_network(m));
    CHECK(runner_ever(m, NetworkPolicy::kLimitedInternet));
    CHECK_FALSE(runner_ever(m, NetworkPolicy::kFullInternet));
    CHECK(env_errors("network_policy: {setup: full_internet, agent: limited_internet}\n"
                     "limited_internet_allowlist: [pypi.org]\n")
              .empty());
    CHECK(env_errors("network_policy: {agent: no_internet, grade: full_internet}\n").empty());
    Diagnostics gd;
    auto g = parse_environment("network_policy: {agent: no_internet, grade: limited_internet}\n"
                               "limited_internet_allowlist: [pkgs.example.org]\n",
                               "env.yaml", gd);
    CHECK(gd.empty());
    CHECK(phase_policy(g, Phase::kGrade) == NetworkPolicy::kLimitedInternet);
    CHECK_FALSE(runner_changes_network(g));  // the grader's network is its own, not the runner's
    // A limited grade needs the allowlist like any limited phase.
    CHECK(has(only(env_errors("network_policy: {grade: limited_internet}\n"), "non-empty").message,
              "limited_internet needs a non-empty limited_internet_allowlist"));
  }
  SUBCASE("limited_internet_* keys apply when any runner phase is limited") {
    CHECK(env_errors("network_policy: {setup: limited_internet, agent: limited_internet}\n"
                     "limited_internet_allowlist: [pypi.org]\n")
              .empty());
  }
}

TEST_CASE("manifest: setup_fork is a boolean, true unless given") {
  forge::test::TempFiles d("forgectl-setup-fork-");
  d.write("setup.sh", "echo hi\n");
  Diagnostics diags;
  auto on = parse_environment("setup_script: setup.sh\n", d.file("env.yaml"), diags);
  CHECK(on.setup_fork);
  auto off = parse_environment("setup_script: setup.sh\nsetup_fork: false\n", d.file("env.yaml"), diags);
  CHECK(diags.empty());
  CHECK_FALSE(off.setup_fork);
  Diagnostics bad;
  (void)parse_environment("setup_script: setup.sh\nsetup_fork: sometimes\n", d.file("env.yaml"), bad);
  CHECK(only(bad, "setup_fork").line == 2);
}

TEST_CASE("manifest: setup_script is a file beneath the manifest's directory") {
  forge::test::TempFiles d("forgectl-setup-script-");
  d.write("setup.sh", "echo hi\n");
  Diagnostics diags;
  auto m = parse_environment("setup_script: setup.sh\n", d.file("env.yaml"), diags);
  CHECK(diags.empty());
  CHECK(m.setup_script == d.file("setup.sh"));
  Diagnostics missing;
  (void)parse_environment("\nsetup_script: nope.sh\n", d.file("env.yaml"), missing);
  CHECK(only(missing, "setup_script").line == 2);
  Diagnostics absolute;
  (void)parse_environment("setup_script: /etc/passwd\n", d.file("env.yaml"), absolute);
  CHECK(has(only(absolute, "setup_script").message, "must be a path relative to the manifest"));
}
