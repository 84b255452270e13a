// Harbor task directories as forgectl reads them: a complete 1.4 task, an older 1.1 one, a
// multi-step task, a compose task, and every error class with its file:line and key.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "manifest/harbor/harbor_load.h"
#include "manifest/harbor/harbor_parse.h"
#include "support/manifest_helpers.h"
#include "support/paths.h"

using namespace forge;
using namespace forge::manifest;
using forge::test::has;

namespace {

std::string data(const std::string& rel) { return forge::test::test_data_dir() + "/harbor/" + rel; }

HarborTask loads(const std::string& path) {
  auto t = load_harbor_task(path);
  REQUIRE_MESSAGE(t, (t ? "" : t.error().what()));
  return std::move(*t);
}

std::string errors(const std::string& path) {
  auto t = load_harbor_task(path);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::kInvalid);
  return t.error().message;
}

// A task directory under /tmp with a valid Dockerfile, instruction and tests/test.sh.
class TempHarbor : public forge::test::TempFiles {
 public:
  TempHarbor() : TempFiles("forgectl-harbor-") {
    write("environment/Dockerfile", "FROM debian:12-slim\n");
    write("instruction.md", "Do the thing.\n");
    write("tests/test.sh", "#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n");
  }
  std::string toml(const std::string& text) const {
    write("task.toml", text);
    return dir();
  }
};

const EnvEntry& env(const std::vector<EnvEntry>& entries, const std::string& name) {
  for (const auto& e : entries)
    if (e.name == name) return e;
  FAIL("no env entry " << name);
  return entries.front();
}

}  // namespace

TEST_CASE("harbor: a complete schema 1.4 task, every section read") {
  HarborTask t = loads(data("complete-1.4"));
  CHECK(t.format == HarborFormat::kHarbor);
  CHECK(t.id == "complete-1.4");
  CHECK(t.schema_version == "1.4");
  CHECK(t.name == "forgectl/count-words");
  CHECK(t.version == "0.2.0");
  CHECK(t.source == "forgectl-fixtures");
  REQUIRE(t.authors.size() == 1);
  CHECK(t.authors[0].email == "ada@example.org");
  CHECK(t.keywords == std::vector<std::string>{"text", "shell"});
  CHECK(t.difficulty == "easy");
  CHECK(t.category == "text-processing");
  CHECK(t.tags == std::vector<std::string>{"wc", "shell"});
  CHECK(has(t.metadata_json, "\"expert_time_estimate_min\":5"));
  CHECK(has(t.instruction, "/app/count.txt"));

  CHECK(t.agent.timeout_sec == 900.0);
  CHECK(t.agent.user == "agent");
  REQUIRE(t.agent.network);
  CHECK(t.agent.network->mode == NetworkMode::kAllowlist);
  // Harbor's normal form: lower case, no trailing dot, duplicates gone.
  CHECK(t.agent.network->allowed_hosts == std::vector<std::string>{"pypi.org", "*.pythonhosted.org"});

  CHECK(t.verifier.timeout_sec == 120.0);
  CHECK(t.verifier.user == "0");
  CHECK(t.verifier.mode == VerifierMode::kShared);
  REQUIRE(t.verifier.network);
  CHECK(t.verifier.network->mode == NetworkMode::kNoNetwork);
  CHECK_FALSE(env(t.verifier.env, "EXPECTED").is_template());
  const EnvEntry& token = env(t.verifier.env, "API_TOKEN");
  CHECK(token.value == "${GRADER_TOKEN:-none}");  // unresolved
  CHECK(token.host_var == "GRADER_TOKEN");
  CHECK(token.fallback == "none");
  CHECK(env(t.solution_env, "HINT").host_var == "SOLUTION_HINT");
  CHECK_FALSE(env(t.solution_env, "HINT").fallback);

  const EnvironmentConfig& e = t.environment;
  CHECK(e.build_timeout_sec == 300.0);
  CHECK(e.cpus == 2);
  CHECK(e.memory_mb == 4096);
  CHECK_FALSE(e.storage_mb);
  CHECK(e.network.mode == NetworkMode::kPublic);
  CHECK(e.workdir == "/app");
  CHECK(env(e.env, "OPENAI_API_KEY").host_var == "OPENAI_API_KEY");
  CHECK(env(e.env, "OPENAI_API_KEY").where.line == 41);
  REQUIRE(e.healthcheck);
  CHECK(e.healthcheck->command == "test -f /app/ready");
  CHECK(e.healthcheck->interval_sec == 1.0);
  CHECK(e.healthcheck->timeout_sec == 30.0);  // Harbor's default
  CHECK(e.healthcheck->retries == 10);
  REQUIRE(e.mcp_servers.size() == 1);
  CHECK(e.mcp_servers[0].transport == McpTransport::kStdio);
  CHECK(e.mcp_servers[0].args == std::vector<std::string>{"--root", "/app"});

  REQUIRE(t.artifacts.size() == 2);
  CHECK(t.artifacts[0].source == "/app/report.json");
  CHECK(t.artifacts[1].destination == "logs");
  CHECK(t.artifacts[1].exclude == std::vector<std::string>{"*.tmp"});

  CHECK(t.files.dockerfile == t.dir + "/environment/Dockerfile");
  CHECK(t.files.test_script == t.dir + "/tests/test.sh");
  CHECK(t.files.solution_script == t.dir + "/solution/solve.sh");
  CHECK_FALSE(t.compose);
  CHECK(t.main_service == "main");
  CHECK(t.reward_source == RewardSource::kRewardFile);
  CHECK(t.steps.empty());
  CHECK(t.warnings.empty());
  // The task.toml itself names the same task.
  CHECK(loads(data("complete-1.4/task.toml")).dir == t.dir);
}

TEST_CASE("harbor: an older 1.1 task with [metadata], cpu, memory and allow_internet") {
  HarborTask t = loads(data("legacy-1.1"));
  CHECK(t.schema_version == "1.1");  // from `version`
  CHECK(t.name.empty());
  REQUIRE(t.authors.size() == 1);
  CHECK(t.authors[0].name == "Old Author");
  CHECK(t.difficulty == "medium");
  CHECK(t.environment.cpus == 1);
  CHECK(t.environment.memory_mb == 2048);                        // "2G"
  CHECK(t.environment.network.mode == NetworkMode::kNoNetwork);  // allow_internet = false
  CHECK_FALSE(t.agent.network);
  CHECK(t.agent.timeout_sec == 300.0);
  CHECK(t.verifier.timeout_sec == 60.0);
  CHECK(t.warnings.empty());
}

TEST_CASE("harbor: a multi-step task, steps resolved against the task's settings") {
  HarborTask t = loads(data("multi-step"));
  CHECK(t.instruction.empty());
  CHECK(t.reward_strategy == RewardStrategy::kFinal);
  REQUIRE(t.steps.size() == 2);

  const StepConfig& scaffold = t.steps[0];
  CHECK(scaffold.name == "scaffold");
  CHECK(scaffold.min_reward == 1.0);
  CHECK(scaffold.agent.timeout_sec == 60.0);     // its own
  CHECK(scaffold.agent.user == "agent");         // the task's
  CHECK(scaffold.verifier.timeout_sec == 90.0);  // the task's
  CHECK(has(scaffold.instruction, "/app/build.sh"));
  CHECK(scaffold.test_script == t.dir + "/steps/scaffold/tests/test.sh");
  CHECK(scaffold.setup_script == t.dir + "/steps/scaffold/workdir/setup.sh");
  CHECK(scaffold.solution_script.empty());

  const StepConfig& implement = t.steps[1];
  CHECK_FALSE(implement.min_reward);
  CHECK(implement.min_rewards == std::map<std::string, double>{{"style", 0.25}, {"tests", 0.5}});
  CHECK(implement.agent.timeout_sec == 600.0);
  CHECK(implement.verifier.timeout_sec == 30.0);
  CHECK(implement.verifier.user == "root");
  REQUIRE(implement.healthcheck);
  CHECK(implement.healthcheck->retries == 2);
  CHECK(implement.artifacts.size() == 1);
  CHECK(implement.tests_dir.empty());
  CHECK(implement.test_script == t.dir + "/tests/test.sh");  // the task's, as a fallback
  CHECK(implement.solution_script == t.dir + "/steps/implement/solution/solve.sh");
  CHECK(t.warnings.empty());
}

TEST_CASE("harbor: a compose task has its main service, Harbor's plumbing taken out") {
  HarborTask t = loads(data("compose-main"));
  REQUIRE(t.compose);
  const ComposeService* main = t.compose->find("main");
  REQUIRE(main);
  REQUIRE(main->build);
  CHECK(std::filesystem::equivalent(main->build->context, t.dir + "/environment"));  // ${CONTEXT_DIR}
  CHECK(main->image.empty());  // ${MAIN_IMAGE_NAME}: forgectl names it
  CHECK(main->environment == std::vector<std::string>{"TEST_DIR=/tests", "API_URL=http://api:8080", "HTTP_PROXY="});
  CHECK(main->depends_on.at("api") == DependCondition::kHealthy);
  CHECK(main->mem_limit == 0);  // deploy limits dropped: task.toml's apply
  const ComposeService* api = t.compose->find("api");
  REQUIRE(api);
  CHECK(std::filesystem::equivalent(api->build->context, t.dir + "/environment/api"));
  CHECK(t.environment.network.mode == NetworkMode::kNoNetwork);
  CHECK(t.warnings.empty());
}

TEST_CASE("harbor: errors name file, line and key") {
  SUBCASE("type errors, each at its own line") {
    std::string e = errors(data("error-types"));
    CHECK(has(e, "task.toml:5:15: [agent] 'timeout_sec' must be a number, got 'forever'"));
    CHECK(has(e, "task.toml:8:8: [environment] 'cpus' must be an integer, got 'two'"));
    CHECK(has(e, "task.toml:9:17: [environment] 'allowed_hosts' must be an array of strings"));
  }
  SUBCASE("a mistyped key gets a did-you-mean") {
    std::string e = errors(data("error-typo"));
    CHECK(has(e, "task.toml:5:1: [verifier] unknown key 'timout_sec' (hint: did you mean 'timeout_sec'?)"));
  }
  SUBCASE("gpus > 0 is refused, saying why") {
    std::string e = errors(data("error-gpus"));
    CHECK(has(e, "task.toml:5:8: [environment] 'gpus' = 1: forgectl runs no GPUs"));
  }
  SUBCASE("a task without tests/test.sh") {
    std::string e = errors(data("error-no-tests"));
    CHECK(has(e, "error-no-tests/tests/test.sh: the task has no tests/test.sh"));
  }
  SUBCASE("an instruction.md that is a symlink out of the task directory") {
    std::string e = errors(data("error-symlink"));
    CHECK(has(e,
              "error-symlink/instruction.md: 'instruction.md' leads outside the task directory"
              " (a symlink to '../outside/instruction.md')"));
    CHECK_FALSE(has(e, "/etc/shadow"));
  }
}

TEST_CASE("harbor: keys without effect load with a warning naming file:line:key") {
  HarborTask t = loads(data("warning-ignored"));
  REQUIRE(t.warnings.size() == 2);
  CHECK(t.warnings[0].severity == Severity::kWarning);
  CHECK(has(t.warnings[0].format(), "task.toml:5:1: warning: [agent] 'favourite_colour' is not a key Harbor reads"));
  CHECK(has(t.warnings[1].format(), "task.toml:8:1: warning: [environment] 'skills_dir' has no effect"));
}

TEST_CASE("harbor: what forgectl cannot honour is refused") {
  TempHarbor d;
  SUBCASE("a verifier environment_mode Harbor does not have") {
    CHECK(has(errors(d.toml("[verifier]\nenvironment_mode = \"seperate\"\n")),
              "task.toml:2:20: [verifier] 'environment_mode' must be \"shared\" or \"separate\", got 'seperate' "
              "(hint: did you mean 'separate'?)"));
  }
  SUBCASE("a separate verifier with an image of its own") {
    std::string e = errors(d.toml("[verifier.environment]\ndocker_image = \"grader:1\"\n"));
    CHECK(
        has(e, "task.toml:2:16: [verifier.environment] 'docker_image': a verifier image of its own is not supported"));
  }
  SUBCASE("shared mode with a verifier environment") {
    CHECK(has(errors(d.toml("[verifier]\nenvironment_mode = \"shared\"\n[verifier.environment]\ncpus = 1\n")),
              "'environment_mode' \"shared\" cannot have a [verifier.environment]"));
  }
  SUBCASE("separate mode alone is accepted") {
    auto t = load_harbor_task(d.toml("[verifier.environment]\ncpus = 2\nallow_internet = false\n"));
    REQUIRE(t);
    CHECK(t->verifier.mode == VerifierMode::kSeparate);
    CHECK(t->verifier.environment->network.mode == NetworkMode::kNoNetwork);
  }
  SUBCASE("MCP over sse without a compose file: its host is no service of the task") {
    CHECK(has(errors(d.toml("[[environment.mcp_servers]]\nname = \"s\"\nurl = \"http://mcp:8000/sse\"\n")),
              "task.toml:3:7: MCP server 's': url \"http://mcp:8000/sse\" names host 'mcp', which is not a service "
              "of the task"));
  }
  SUBCASE("Windows, TPUs, continuous verification") {
    std::string e =
        errors(d.toml("[environment]\nos = \"Windows\"\n[environment.tpu]\ntype = \"v6e\"\n"
                      "[verifier.continuous]\nenabled = true\n"));
    CHECK(has(e, "task.toml:2:6: [environment] 'os': Windows containers are not supported"));
    CHECK(has(e, "task.toml:3:14: [environment.tpu] TPUs are not supported"));
    CHECK(has(e, "[verifier.continuous] continuous verification is not supported"));
  }
  SUBCASE("allowed_hosts with a mode other than allowlist, and hosts Harbor refuses") {
    std::string e = errors(d.toml(
        "[agent]\nnetwork_mode = \"public\"\nallowed_hosts = [\"https://x.org/\", \"a.*.b\", \"10.0.0.0/8\"]\n"));
    CHECK(has(e, "task.toml:3:1: [agent] 'allowed_hosts' is only valid with network_mode = \"allowlist\""));
    CHECK(has(e, "'https://x.org/' is not a host name, address or CIDR range"));
    CHECK(has(e, "'a.*.b' is a wildcard other than a leading '*.'"));
    CHECK(has(e, "'10.0.0.0/8' is an address, not a host name"));
  }
}

TEST_CASE("harbor: schema details Harbor has") {
  TempHarbor d;
  SUBCASE("allowed_hosts without a mode is an allowlist") {
    HarborTask t = loads(d.toml("[environment]\nallowed_hosts = [\"example.com\"]\n"));
    CHECK(t.environment.network.mode == NetworkMode::kAllowlist);
  }
  SUBCASE("allow_internet loses to network_mode, with a warning") {
    HarborTask t = loads(d.toml("[environment]\nnetwork_mode = \"public\"\nallow_internet = false\n"));
    CHECK(t.environment.network.mode == NetworkMode::kPublic);
    REQUIRE(t.warnings.size() == 1);
    CHECK(has(t.warnings[0].message, "'allow_internet' has no effect: network_mode is set"));
  }
  SUBCASE("schema_version wins over version; multi_step_reward_mode is dropped") {
    HarborTask t = loads(d.toml("version = \"1.0\"\nschema_version = \"1.2\"\nmulti_step_reward_mode = \"mean\"\n"));
    CHECK(t.schema_version == "1.2");
    REQUIRE(t.warnings.size() == 2);
    CHECK(has(t.warnings[0].format(), "task.toml:1:1: warning: 'version' has no effect"));
    CHECK(has(t.warnings[1].format(), "task.toml:3:1: warning: 'multi_step_reward_mode' has no effect"));
  }
  SUBCASE("an env value with a template inside is literal, with a warning") {
    HarborTask t = loads(d.toml("[environment.env]\nURL = \"http://${HOST}/x\"\n"));
    CHECK_FALSE(env(t.environment.env, "URL").is_template());
    REQUIRE(t.warnings.size() == 1);
    CHECK(has(t.warnings[0].message, "is used as written"));
  }
  SUBCASE("cpu and cpus together, memory disagreeing with memory_mb") {
    std::string e = errors(d.toml("[environment]\ncpu = 1\ncpus = 2\nmemory = \"1G\"\nmemory_mb = 512\n"));
    CHECK(has(e, "task.toml:2:1: [environment] 'cpu' and 'cpus' are both given"));
    CHECK(has(e, "'memory' (1024 MiB) disagrees with 'memory_mb' (512)"));
  }
  SUBCASE("collect hooks and artifacts name the task's services") {
    std::string e = errors(d.toml("artifacts = [{ source = \"/data\", service = \"db\" }]\n"
                                  "[[verifier.collect]]\ncommand = \"pg_dump > /data/db.sql\"\nservice = \"db\"\n"));
    CHECK(has(e, "task.toml:1:14: an artifact names service 'db', which the task does not have"));
    CHECK(has(e, "task.toml:2:1: a collect hook names service 'db'"));
  }
  SUBCASE("a TOML syntax error names its line") {
    CHECK(has(errors(d.toml("schema_version = \"1.4\"\n[agent\n")), "task.toml:2:"));
  }
  SUBCASE("a step without its directory, an unnamed step, a duplicate step") {
    std::string e = errors(d.toml("[[steps]]\nname = \"one\"\n[[steps]]\nname = \"one\"\n[[steps]]\nmin_reward = 1\n"));
    CHECK(has(e, "task.toml:3:1: [steps[1]] step 'one' is given twice"));
    CHECK(has(e, "task.toml:5:1: [steps[2]] has no 'name'"));
    CHECK(has(e, "task.toml:1:1: step 'one' has no directory steps/one/"));
  }
  SUBCASE("an empty instruction.md and an oversized one") {
    d.write("instruction.md", " \n\t\n");
    CHECK(has(errors(d.toml("")), "instruction.md: instruction.md is empty"));
    d.write("instruction.md", std::string(kMaxInstructionBytes + 1, 'x'));
    CHECK(has(errors(d.toml("")), "the instruction 'instruction.md' is 1 MiB; at most 1 MiB is read"));
  }
  SUBCASE("a symlink inside environment/ that leaves the task") {
    std::filesystem::create_symlink("/etc", d.file("environment/etc"));
    CHECK(has(errors(d.toml("")), "'environment/etc' leads outside the task directory (a symlink to '/etc')"));
  }
  SUBCASE("no task.toml, no directory") {
    auto missing = load_harbor_task(d.file("nope"));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == Errc::kNotFound);
    auto bare = load_harbor_task(d.file("environment"));
    REQUIRE_FALSE(bare);
    CHECK(has(bare.error().message, "has no task.toml"));
  }
}

TEST_CASE("harbor: a compose file must have main, and stays within the compose subset") {
  TempHarbor d;
  d.write("environment/docker-compose.yaml",
          "services:\n  mains:\n    build: .\n    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n");
  std::string e = errors(d.toml(""));
  CHECK(has(e,
            "docker-compose.yaml: the compose file has no service 'main', the agent's container "
            "(hint: did you mean 'mains'?)"));
  CHECK(has(e, "docker-compose.yaml:4:5: service 'mains': unsupported key 'volumes'"));
}

TEST_CASE("harbor: main's image is the Dockerfile Harbor builds, or the prebuilt docker_image") {
  TempHarbor d;
  d.write("environment/docker-compose.yaml",
          "services:\n  main:\n    depends_on: [db]\n  db:\n    image: postgres:16\n");
  HarborTask built = loads(d.toml(""));
  const ComposeService* main = built.compose->find("main");
  REQUIRE(main->build);
  CHECK(std::filesystem::equivalent(main->build->context, built.dir + "/environment"));

  HarborTask prebuilt = loads(d.toml("[environment]\ndocker_image = \"shop:1\"\n"));
  main = prebuilt.compose->find("main");
  CHECK(main->image == "shop:1");
  CHECK_FALSE(main->build);

  // Only the harness's own variables have values; a host variable without a default is an error.
  d.write("environment/docker-compose.yaml", "services:\n  main:\n    environment: [\"TOKEN=${SECRET}\"]\n");
  CHECK(has(errors(d.toml("")),
            "docker-compose.yaml:3:19: service 'main': 'environment[0]': host variables are not "
            "interpolated (found '${SECRET}')"));
}

TEST_CASE("harbor: the task id is the directory's name as reached, a symlink's included") {
  forge::test::TempFiles d("forgectl-alias-");
  std::filesystem::create_symlink(data("complete-1.4"), d.file("alias"));
  CHECK(loads(d.file("alias")).id == "alias");
  CHECK(loads(data("complete-1.4/")).id == "complete-1.4");
}

TEST_CASE("harbor: [verifier.environment] limits; what it cannot apply is refused or warned, naming file:line:key") {
  TempHarbor d;
  SUBCASE("cpus and memory_mb are read with [environment]'s rules") {
    HarborTask t = loads(d.toml("[verifier.environment]\ncpus = 2\nmemory_mb = 256\nenv = { K = \"v\" }\n"));
    REQUIRE(t.verifier.environment);
    CHECK(t.verifier.environment->cpus == 2);
    CHECK(t.verifier.environment->memory_mb == 256);
    CHECK(env(t.verifier.environment->env, "K").value == "v");
    CHECK(t.warnings.empty());
    CHECK(loads(d.toml("[verifier.environment]\nmemory = \"1G\"\n")).verifier.environment->memory_mb == 1024);
  }
  SUBCASE("out of range, and a memory too small for the verifier's own processes") {
    std::string e = errors(d.toml("[verifier.environment]\ncpus = 513\n"));
    CHECK(has(e, "task.toml:2:8: [verifier.environment] 'cpus' must be from 1 to 512, got 513"));
    e = errors(d.toml("[verifier.environment]\nmemory_mb = 16\n"));
    CHECK(has(e, "task.toml:2:13: [verifier.environment] 'memory_mb' = 16 MiB is below forgectl's 32 MiB for the "
                 "verifier's container"));
    CHECK(has(errors(d.toml("[verifier.environment]\nmemory = \"8M\"\n")), "[verifier.environment] 'memory' = 8 MiB"));
    // The agent's environment has no such floor: its limit also holds its tmpfs caps.
    CHECK(loads(d.toml("[environment]\nmemory_mb = 16\n")).environment.memory_mb == 16);
  }
  SUBCASE("healthcheck and workdir have no effect there") {
    HarborTask t = loads(d.toml("[verifier.environment]\nworkdir = \"/srv\"\n"
                                "[verifier.environment.healthcheck]\ncommand = \"true\"\n"));
    REQUIRE(t.warnings.size() == 2);
    CHECK(has(t.warnings[0].format(), "task.toml:2:1: warning: [verifier.environment] 'workdir' has no effect: the "
                                      "tests run in the agent's workspace copy"));
    CHECK(has(t.warnings[1].format(), "[verifier.environment.healthcheck] has no effect"));
    CHECK(t.verifier.environment->workdir.empty());
  }
  SUBCASE("a step's own table replaces the task's; a step without one keeps the task's") {
    d.write("steps/one/instruction.md", "One.\n");
    d.write("steps/two/instruction.md", "Two.\n");
    HarborTask t = loads(d.toml("[verifier.environment]\nmemory_mb = 64\nenv = { T = \"task\" }\n"
                                "[[steps]]\nname = \"one\"\n[steps.verifier.environment]\ncpus = 1\n"
                                "env = { S = \"step\" }\n[[steps]]\nname = \"two\"\n"));
    REQUIRE(t.steps.size() == 2);
    REQUIRE(t.steps[0].verifier.environment);
    CHECK(t.steps[0].verifier.environment->cpus == 1);
    CHECK_FALSE(t.steps[0].verifier.environment->memory_mb);  // Harbor: the whole table, not merged
    CHECK(t.steps[0].verifier.environment->env.size() == 1);
    REQUIRE(t.steps[1].verifier.environment);
    CHECK(t.steps[1].verifier.environment->memory_mb == 64);
  }
}

TEST_CASE("harbor: artifacts on the verifier's reserved paths are refused in every spelling, naming file:line") {
  TempHarbor d;
  for (const char* source : {"/logs", "/logs/verifier", "/logs/verifier/reward.txt", "/tests", "/tests/conftest.py",
                             "/tmp", "/tmp/forgectl-as-agent", "/tmp/forgectl-as-agent/sock", "/", "/.forgectl",
                             "/.forgectl/exec", "/forgectl-verifier-home", "//logs", "/logs/", "/./logs",
                             "/logs//verifier/", "///", "/tmp/.", "//tests/./x"}) {
    CAPTURE(source);
    std::string e = errors(d.toml(std::string("artifacts = [\"") + source + "\"]\n"));
    CHECK(has(e, "task.toml:1:14: [artifacts[0]] source '" + std::string(source) + "' is, holds or lies inside "));
  }
  SUBCASE("a table's source, a step's artifacts, another service's") {
    CHECK(has(errors(d.toml("artifacts = [{ source = \"/logs/\", destination = \"l\" }]\n")),
              "source '/logs/' is, holds or lies inside /logs/verifier"));
    d.write("steps/a/instruction.md", "Do it.\n");
    CHECK(has(errors(d.toml("[[steps]]\nname = \"a\"\nartifacts = [\"/tmp\"]\n")),
              "task.toml:3:14: [steps[0].artifacts[0]] source '/tmp' is, holds or lies inside /tmp/forgectl-as-agent"));
  }
  SUBCASE("'..' is refused before anything else") {
    CHECK(has(errors(d.toml("artifacts = [\"/app/../logs\"]\n")), "source '/app/../logs' must not contain '..'"));
  }
  SUBCASE("a source among the system's programs, libraries or /etc is refused") {
    std::string e = errors(d.toml("artifacts = [\"/usr/local/bin\", \"/etc\", \"/app/out\"]\n"));
    CHECK(has(e, "task.toml:1:14: [artifacts[0]] source '/usr/local/bin' is under /usr"));
    CHECK(has(e, "[artifacts[1]] source '/etc' is under /etc"));
    CHECK_FALSE(has(e, "/app/out"));
  }
  SUBCASE("a source on the runner's /tmp (a tmpfs the archive API cannot read) is refused") {
    CHECK(has(errors(d.toml("artifacts = [\"/tmp/out.json\"]\n")),
              "[artifacts[0]] source '/tmp/out.json' is on the runner's /tmp, a tmpfs"));
  }
  SUBCASE("the paths beside them load, in their normal form") {
    HarborTask t = loads(d.toml("artifacts = [\"/logs/artifacts/\", \"//srv/out\", \"/app/./tests\", \"/testsuite\", "
                                "\"/logs/verifier2\", \"out/\", \"./\"]\n"));
    REQUIRE(t.artifacts.size() == 7);
    CHECK(t.artifacts[0].source == "/logs/artifacts");
    CHECK(t.artifacts[1].source == "/srv/out");
    CHECK(t.artifacts[2].source == "/app/tests");
    CHECK(t.artifacts[3].source == "/testsuite");
    CHECK(t.artifacts[4].source == "/logs/verifier2");
    CHECK(t.artifacts[5].source == "out");
    CHECK(t.artifacts[6].source == ".");
  }
}

TEST_CASE("harbor: an artifact destination is normalised before the reserved-name check; '..' and '.' are refused") {
  TempHarbor d;
  auto with_dest = [&](const std::string& dest) {
    return d.toml("artifacts = [{ source = \"/app/out\", destination = \"" + dest + "\" }]\n");
  };
  for (const char* dest :
       {"manifest.json", "./manifest.json", "manifest.json/", ".//manifest.json", "manifest.json/x"}) {
    CAPTURE(dest);
    CHECK(has(errors(with_dest(dest)), "task.toml:1:14: [artifacts[0]] destination '" + std::string(dest) +
                                           "' is reserved for the collection manifest"));
  }
  for (const char* dest : {"../x", "a/../../x", "a/..", ".", "./", "/abs", "a\\\\b"}) {
    CAPTURE(dest);
    CHECK(has(errors(with_dest(dest)), "must be a relative path inside the trial's artifact directory, without '..'"));
  }
  CHECK(has(errors(d.toml("artifacts = [\"/manifest.json\"]\n")),
            "destination 'manifest.json' is reserved for the collection manifest"));
  HarborTask t = loads(with_dest("./out//a/"));
  REQUIRE(t.artifacts.size() == 1);
  CHECK(t.artifacts[0].destination == "out/a");
  CHECK(t.artifacts[0].source == "/app/out");
}

TEST_CASE("harbor: a user Docker cannot run as is refused at load, naming file:line:key") {
  TempHarbor d;
  for (const char* user : {"-1", "4294967295", "2147483648", "99999999999", "+5", "1x", "2000:-1", "2000:4294967295",
                           "2000:", ":2000", "2000:2000:2000"}) {
    CAPTURE(user);
    std::string e = errors(d.toml(std::string("[verifier]\nuser = \"") + user + "\"\n"));
    CHECK(has(e, "task.toml:2:8: [verifier] 'user' = \"" + std::string(user) + "\": "));
    d.write("steps/a/instruction.md", "Do it.\n");
    e = errors(d.toml(std::string("[[steps]]\nname = \"a\"\n[steps.verifier]\nuser = \"") + user + "\"\n"));
    CHECK(has(e, "task.toml:4:8: [steps[0].verifier] 'user' = \"" + std::string(user) + "\": "));
  }
  CHECK(has(errors(d.toml("[verifier]\nuser = -1\n")),
            "task.toml:2:8: [verifier] 'user' must be a uid from 0 to 2147483647"));
  CHECK(has(errors(d.toml("[agent]\nuser = 4294967295\n")), "[agent] 'user' must be a uid from 0 to 2147483647"));
  CHECK(loads(d.toml("[verifier]\nuser = \"2147483647:2500\"\n")).verifier.user == "2147483647:2500");
  CHECK(loads(d.toml("[verifier]\nuser = \"tester\"\n")).verifier.user == "tester");
  CHECK(loads(d.toml("[verifier]\nuser = \"tester:staff\"\n")).verifier.user == "tester:staff");
  CHECK(loads(d.toml("[verifier]\nuser = 2500\n")).verifier.user == "2500");
}

TEST_CASE("harbor: an [environment].workdir on the verifier's reserved paths is refused; /app loads") {
  TempHarbor d;
  for (const char* dir : {"/logs", "/logs/verifier", "/tests", "/tests/x", "/", "/tmp", "//logs/"}) {
    CAPTURE(dir);
    CHECK(has(errors(d.toml(std::string("[environment]\nworkdir = \"") + dir + "\"\n")),
              "task.toml:2:11: [environment] 'workdir' = \"" + std::string(dir) + "\" is, holds or lies inside "));
  }
  CHECK(has(errors(d.toml("[environment]\nworkdir = \"/app/../logs\"\n")), "must not contain '..'"));
  CHECK(loads(d.toml("[environment]\nworkdir = \"/app\"\n")).environment.workdir == "/app");
  CHECK(loads(d.toml("[environment]\nworkdir = \"/logs/work\"\n")).environment.workdir == "/logs/work");
}

TEST_CASE("harbor: MCP servers over HTTP are services of the task's compose file, and nothing else") {
  TempHarbor d;
  d.write("environment/docker-compose.yaml",
          "services:\n  main:\n    build: {context: .}\n  tools:\n    image: forgectl/python:local\n"
          "    networks:\n      default:\n        aliases: [tools-http]\n");
  auto server = [&](const std::string& transport, const std::string& url) {
    return d.toml("[[environment.mcp_servers]]\nname = \"t\"\ntransport = \"" + transport + "\"\nurl = \"" + url +
                  "\"\n");
  };
  SUBCASE("sse to a service by name; streamable-http (and its spelling http) by alias") {
    HarborTask t = loads(server("sse", "http://tools:8000/sse"));
    REQUIRE(t.environment.mcp_servers.size() == 1);
    CHECK(t.environment.mcp_servers[0].transport == McpTransport::kSse);
    CHECK(t.environment.mcp_servers[0].service == "tools");
    for (const char* spelling : {"streamable-http", "http"}) {
      HarborTask h = loads(server(spelling, "http://Tools-HTTP:8001/mcp?x=1"));
      CHECK(h.environment.mcp_servers[0].transport == McpTransport::kStreamableHttp);
      CHECK(h.environment.mcp_servers[0].service == "tools");
    }
    auto cfg = load_harbor_task_config(server("http", "http://tools-http:8001/mcp"));
    REQUIRE_MESSAGE(cfg, (cfg ? "" : cfg.error().what()));
    const auto& tools = cfg->environment.tools;
    REQUIRE(tools.http_mcp_servers.size() == 1);
    CHECK(tools.http_mcp_servers[0].service == "tools");
    CHECK(tools.http_mcp_servers[0].host == "tools-http:8001");
    CHECK(tools.http_mcp_servers[0].port == 8001);
    CHECK(tools.http_mcp_servers[0].path == "/mcp");
    CHECK(tools.mcp_tools_for_agent);
    CHECK_FALSE(tools.mcp_server);
  }
  SUBCASE("a host that is not a service: refused at the url's line") {
    for (const char* url : {"http://example.com/sse", "http://127.0.0.1:8000/sse", "http://localhost:8000/sse"})
      CHECK(has(errors(server("sse", url)), "task.toml:4:7: MCP server 't': url \"" + std::string(url) + "\" names host"));
  }
  SUBCASE("the agent's own container is not a server over HTTP") {
    CHECK(has(errors(server("sse", "http://main:8000/sse")), "names 'main', the agent's own container"));
  }
  SUBCASE("urls forgectl does not connect to") {
    CHECK(has(errors(server("sse", "https://tools:8000/sse")), "https is not used"));
    CHECK(has(errors(server("sse", "ftp://tools/sse")), "the url must start with http://"));
    CHECK(has(errors(server("sse", "http://u:p@tools:8000/sse")), "must not carry user info"));
    CHECK(has(errors(server("sse", "http://tools:99999/sse")), "port is not a number from 1 to 65535"));
    CHECK(has(errors(d.toml("[[environment.mcp_servers]]\nname = \"t\"\n")), "needs a 'url' for transport \"sse\""));
  }
  SUBCASE("names are unique, and one stdio server at most") {
    CHECK(has(errors(d.toml("[[environment.mcp_servers]]\nname = \"t\"\nurl = \"http://tools/sse\"\n"
                            "[[environment.mcp_servers]]\nname = \"t\"\nurl = \"http://tools:1/sse\"\n")),
              "MCP server 't' is declared twice"));
    CHECK(has(errors(d.toml("[[environment.mcp_servers]]\nname = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\n"
                            "[[environment.mcp_servers]]\nname = \"b\"\ntransport = \"stdio\"\ncommand = \"y\"\n")),
              "forgectl runs one stdio server per task"));
  }
}
