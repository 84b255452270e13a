// The run config: Tolokaforge's RunConfig keys, strictly; paths relative to the file; the keys
// forgectl refuses (inline API keys, postgres queues, other runtimes) with their file:line.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "manifest/run_config_parse.h"
#include "support/manifest_helpers.h"
#include "support/paths.h"

using namespace forge;
using namespace forge::manifest;
using forge::test::has;
using namespace std::chrono_literals;

namespace {

std::string data(const std::string& rel) { return forge::test::test_data_dir() + "/manifest/tasks/" + rel; }

RunConfig parses(std::string_view text, const std::string& path = data("distributed_run/inline.yaml")) {
  auto c = parse_run_config(text, path);
  REQUIRE_MESSAGE(c, (c ? "" : c.error().what()));
  return std::move(*c);
}

// Problems as "L:C: message" lines of a file named run.yaml.
std::string errors(std::string_view text) {
  auto c = parse_run_config(text, "run.yaml");
  REQUIRE_FALSE(c);
  CHECK(c.error().code == Errc::kInvalid);
  return c.error().message;
}

}  // namespace

TEST_CASE("run config: the shape of Tolokaforge's examples/distributed_run/run_config.yaml") {
  auto loaded = load_run_config(data("distributed_run/run_config.yaml"));
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error().what()));
  const RunConfig& c = *loaded;
  CHECK(c.path == data("distributed_run/run_config.yaml"));
  REQUIRE(c.models.size() == 2);
  const ModelConfig& agent = c.models.at("agent");
  CHECK(agent.provider == "openrouter");
  CHECK(agent.name == "anthropic/claude-sonnet-4-6");
  CHECK(agent.temperature == 0.0);
  CHECK(agent.reasoning == "off");
  CHECK(agent.api_key_env.empty());
  CHECK(c.models.at("user").name == "anthropic/claude-sonnet-4-6");
  CHECK(c.workers == 2);
  CHECK(c.repeats == 2);
  CHECK(c.max_turns == 8);
  CHECK(c.queue_backend == "sqlite");
  // Relative to the config file, not to the working directory (unlike Tolokaforge).
  CHECK(c.task_packs == std::vector<std::string>{std::filesystem::path(data("")).lexically_normal().string()});
  CHECK(c.tasks_glob == "**/task.yaml");
  CHECK(c.output_dir == data("distributed_run/results/distributed_example"));
  // What the file leaves out keeps forgectl's defaults.
  CHECK(c.turn_timeout == 60s);
  CHECK(c.episode_timeout == 1800s);
  CHECK(c.max_attempt_retries == 2);
  CHECK(c.stuck.enabled);
  CHECK(c.stuck.max_repeated_tool_calls == 10);
  CHECK(c.stuck.max_idle_turns == 12);
  CHECK(c.harness_adapter == "native");

  CHECK(load_run_config(data("distributed_run/nope.yaml")).error().code == Errc::kNotFound);
}

TEST_CASE("run config: every key") {
  RunConfig c = parses("models:\n"
                       "  agent: {provider: openai, name: gpt-4o-mini, api_key_env: MY_OPENAI_KEY, temperature: 0.2,\n"
                       "          max_tokens: 4096, seed: 7, top_p: 0.9, reasoning: medium}\n"
                       "  judge: {provider: vllm, name: qwen, base_url: \"http://gpu-box:8000/v1\"}\n"
                       "  user: {provider: anthropic, name: claude-haiku, reasoning: off}\n"
                       "orchestrator:\n"
                       "  workers: 16\n"
                       "  repeats: 5\n"
                       "  max_budget_usd: 12.5\n"
                       "  max_requests_per_second: 2\n"
                       "  max_attempt_retries: 0\n"
                       "  timeouts: {turn_s: 90, episode_s: 20m}\n"
                       "  max_turns: 30\n"
                       "  stuck_heuristics: {enabled: false, max_repeated_tool_calls: 5, max_idle_turns: 8}\n"
                       "  queue_backend: sqlite\n"
                       "  queue_postgres_dsn: null\n"
                       "  auto_start_services: false\n"
                       "  continue_prompt: \"Please continue.\"\n"
                       "  runtime: docker\n"
                       "  typesense: {enabled: false, mode: disabled}\n"
                       "evaluation:\n"
                       "  task_packs: [\"../package_public_example_01\", \"../shop_orders_02\"]\n"
                       "  tasks_glob: \"task.yaml\"\n"
                       "  output_dir: /var/tmp/forgectl-run\n"
                       "  harness_adapter: {type: native, params: {strict: true}}\n"
                       "  cache_images: true\n"
                       "pricing_file: run_config.yaml\n");
  const ModelConfig& a = c.models.at("agent");
  CHECK(a.provider == "openai");
  CHECK(a.api_key_env == "MY_OPENAI_KEY");
  CHECK(a.temperature == doctest::Approx(0.2));
  CHECK(a.max_tokens == 4096);
  CHECK(a.seed == 7);
  CHECK(a.top_p == doctest::Approx(0.9));
  CHECK(a.reasoning == "medium");
  CHECK(c.models.at("judge").base_url == "http://gpu-box:8000/v1");
  CHECK(c.models.at("user").reasoning == "off");
  CHECK(c.workers == 16);
  CHECK(c.repeats == 5);
  CHECK(c.max_budget_usd == doctest::Approx(12.5));
  CHECK(c.max_requests_per_second == doctest::Approx(2));
  CHECK(c.max_attempt_retries == 0);
  CHECK(c.turn_timeout == 90s);
  CHECK(c.episode_timeout == 20min);
  CHECK(c.max_turns == 30);
  CHECK_FALSE(c.stuck.enabled);
  CHECK(c.stuck.max_repeated_tool_calls == 5);
  CHECK(c.stuck.max_idle_turns == 8);
  CHECK_FALSE(c.auto_start_services);
  CHECK(c.continue_prompt == "Please continue.");
  CHECK(c.task_packs == std::vector<std::string>{data("package_public_example_01"), data("shop_orders_02")});
  CHECK(c.tasks_glob == "task.yaml");
  CHECK(c.output_dir == "/var/tmp/forgectl-run");
  CHECK(c.harness_params_json == R"({"strict":true})");
  CHECK(c.cache_images);
  CHECK(c.pricing_file == data("distributed_run/run_config.yaml"));

  // Empty sections and an empty file are fine: everything has a default or comes from flags.
  CHECK(parses("").models.empty());
  CHECK(parses("models:\norchestrator:\n").workers == 1);
}

TEST_CASE("run config: models are checked, and keys never live in the file") {
  std::string text = errors("models:\n"
                            "  agent:\n"
                            "    provider: openai\n"
                            "    name: gpt-4o\n"
                            "    api_key: sk-live-123\n"
                            "  user: {provider: bedrock, name: x}\n"
                            "  judge: {provider: vllm, name: qwen}\n"
                            "  extra: {name: y, temprature: 1}\n"
                            "  local: {provider: ollama, name: llama3, base_url: \"localhost:11434\", api_key_env: \"MY-KEY\"}\n"
                            "  tuned: {provider: openai, name: m, temperature: 3, top_p: 0, max_tokens: 0, reasoning: extreme}\n");
  INFO(text);
  CHECK(has(text, "run.yaml:5:5: models.agent: an inline 'api_key' is not accepted "
                  "(hint: keys are read from the environment or .env; use api_key_env)"));
  CHECK(has(text, "run.yaml:6:20: models.user.provider: unknown provider 'bedrock' (hint: one of: openai, anthropic, "
                  "openrouter, vllm, ollama, litellm, openai_compatible)"));
  CHECK(has(text, "run.yaml:7:3: models.judge: provider 'vllm' needs a 'base_url'"));
  CHECK(has(text, "run.yaml:8:3: models.extra needs a 'provider'"));
  CHECK(has(text, "run.yaml:8:20: models.extra: unsupported key 'temprature' (hint: did you mean 'temperature'?)"));
  CHECK(has(text, "run.yaml:9:53: models.local.base_url: 'localhost:11434' is not an http(s) URL"));
  CHECK(has(text, "run.yaml:9:85: models.local.api_key_env: 'MY-KEY' is not an environment variable name"));
  CHECK(has(text, "run.yaml:10:51: models.tuned.temperature must be between 0 and 2"));
  CHECK(has(text, "run.yaml:10:61: models.tuned.top_p must be greater than 0 and at most 1"));
  CHECK(has(text, "run.yaml:10:76: models.tuned.max_tokens must be a positive number of tokens"));
  CHECK(has(text, "run.yaml:10:90: models.tuned.reasoning must be one of off, low, medium, high, got 'extreme'"));
}

TEST_CASE("run config: orchestrator and evaluation errors") {
  std::string text = errors("orchestrator:\n"
                            "  worker: 4\n"
                            "  repeats: 0\n"
                            "  max_budget_usd: -1\n"
                            "  queue_backend: postgres\n"
                            "  queue_postgres_dsn: \"postgresql://db/runs\"\n"
                            "  runtime: kubernetes\n"
                            "  timeouts: {turn_s: soon, episode_s: 0}\n"
                            "  typesense: {enabled: true, api_key: xyz}\n"
                            "evaluation:\n"
                            "  task_packs: [\"/definitely/not/here\"]\n"
                            "  tasks_glob: \"/abs/**/task.yaml\"\n"
                            "  harness_adapter: {type: tau}\n"
                            "  metrics: [pass@1]\n"
                            "pricing_file: prices.json\n"
                            "evalution: {}\n");
  INFO(text);
  CHECK(has(text, "run.yaml:2:3: orchestrator: unsupported key 'worker' (hint: did you mean 'workers'?)"));
  CHECK(has(text, "run.yaml:3:12: orchestrator.repeats must be positive"));
  CHECK(has(text, "run.yaml:4:19: orchestrator.max_budget_usd must not be negative"));
  CHECK(has(text, "run.yaml:5:18: orchestrator.queue_backend 'postgres' is not supported"));
  CHECK(has(text, "run.yaml:6:3: orchestrator.queue_postgres_dsn is not supported"));
  CHECK(has(text, "run.yaml:7:12: orchestrator.runtime 'kubernetes' is an orchestrator forgectl does not have"));
  CHECK(has(text, "run.yaml:8:22: orchestrator.timeouts.turn_s must be a positive number of seconds or a duration like 90s, got 'soon'"));
  CHECK(has(text, "run.yaml:8:39: orchestrator.timeouts.episode_s must be a positive number of seconds"));
  CHECK(has(text, "run.yaml:9:30: orchestrator.typesense: an inline 'api_key' is not accepted"));
  CHECK(has(text, "run.yaml:9:3: orchestrator.typesense is not supported (hint: set enabled: false, or remove it)"));
  CHECK(has(text, "run.yaml:11:16: evaluation.task_packs: '/definitely/not/here' is not a directory"));
  CHECK(has(text, "run.yaml:13:27: evaluation.harness_adapter.type 'tau' is not supported"));
  CHECK(has(text, "run.yaml:14:3: evaluation.metrics is not supported (hint: forgectl always reports pass@k and pass^k)"));
  CHECK(has(text, "run.yaml:15:15: 'pricing_file': 'prices.json' does not exist"));
  CHECK(has(text, "run.yaml:16:1: unsupported key 'evalution' (hint: did you mean 'evaluation'?)"));

  text = errors("evaluation:\n  task_packs: [\".\"]\n  tasks_glob: \"/abs/**/task.yaml\"\n");
  CHECK(has(text, "run.yaml:3:15: evaluation.tasks_glob must be relative when task_packs are given"));
  CHECK(has(errors("models: [agent]\n"), "run.yaml:1:9: models: 'models' must be a mapping, got a list"));
  CHECK(has(errors("orchestrator: {workers: 2, workers: 3}\n"), "run.yaml:1:28: orchestrator: 'workers' is given twice"));
}

TEST_CASE("run config: orchestrator.max_infra_rate, the validity gate's threshold in percent") {
  CHECK_FALSE(parses("orchestrator: {workers: 1}\n").max_infra_rate);
  CHECK(*parses("orchestrator: {max_infra_rate: 2.5}\n").max_infra_rate == 2.5);
  CHECK(*parses("orchestrator: {max_infra_rate: \"10%\"}\n").max_infra_rate == 10);
  CHECK(*parses("orchestrator: {max_infra_rate: 0}\n").max_infra_rate == 0);
  std::string e = errors("orchestrator:\n  max_infra_rate: 150\n");
  CHECK(has(e, "run.yaml:2:19: orchestrator.max_infra_rate must be a percentage between 0 and 100 (5, 2.5 or 5%), "
               "got '150'"));
  CHECK(has(errors("orchestrator: {max_infra_rate: lots}\n"), "got 'lots'"));
}
