// Harbor trials in-process against the real daemon: forgectl's runner image tagged as the name
// the tasks' Dockerfiles start FROM (nothing pulled), scripted agents only; the tag and every
// image the trials built are removed with the rig.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/budget.h"
#include "core/strings.h"
#include "engine/images.h"
#include "manifest/harbor/harbor_load.h"
#include "stack/task_build.h"
#include "support/docker_env.h"
#include "trial/trial.h"

namespace forge::test {

struct HarborRig {
  manifest::RunConfig cfg;
  trial::TrialEnv env;
  std::string base;  // "<repo>:<run value>"
  std::vector<std::string> built;

  explicit HarborRig(const std::string& repo = "forgectl-test/harbor-base", const std::string& run_prefix = "h") {
    base = repo + ":" + docker_env().run_value;
    auto st = engine::tag_image(*docker_env().client, docker_env().runner_image, repo, docker_env().run_value);
    REQUIRE_MESSAGE(st.has_value(), (st ? "" : st.error().what()));
    cfg.turn_timeout = Millis(30000);
    cfg.episode_timeout = Millis(120000);
    env.docker = docker_env().client;
    env.host = docker_env().host;
    env.run = &cfg;
    env.budget = std::make_shared<agent::Budget>(std::nullopt);
    env.run_id = run_prefix + random_hex(5);
    env.models = [](const std::string& key) -> Result<std::shared_ptr<agent::LlmClient>> {
      return fail(Errc::kInvalid, "no model '" + key + "' in this test");
    };
  }
  ~HarborRig() {
    for (const auto& tag : built) (void)engine::remove_image(*docker_env().client, tag);
    (void)engine::remove_image(*docker_env().client, base);
  }
  HarborRig(const HarborRig&) = delete;
  HarborRig& operator=(const HarborRig&) = delete;

  // The tag the task's runner is built under (stack/task_build.h), remembered for removal.
  std::string runner_tag(const manifest::TaskConfig& t) {
    auto ctx = stack::task_build_context(*t.environment.manifest.runner.build);
    REQUIRE(ctx.has_value());
    std::string tag = stack::task_image_tag("runner", ctx->hash);
    built.push_back(tag);
    return tag;
  }

  // The task loaded, its runner's tag remembered.
  manifest::TaskConfig load(const std::string& dir) {
    auto t = manifest::load_harbor_task_config(dir);
    REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
    runner_tag(*t);
    return std::move(*t);
  }

  trial::TrialResult run(const manifest::TaskConfig& t, trial::AgentChoice::Kind kind, const std::string& replay = "") {
    trial::AgentChoice a{kind};
    a.replay_path = replay;
    return trial::run_trial(t, 0, 1, a, env);
  }

  // A replay agent's trial that must be graded (else the trial's error and the verifier's output
  // are shown) and, when `tool_calls` is given, must have made exactly that many tool calls.
  trial::TrialResult replay_graded(const manifest::TaskConfig& t, const std::string& replay,
                                   std::optional<std::size_t> tool_calls = std::nullopt) {
    auto r = run(t, trial::AgentChoice::Kind::kReplay, replay);
    REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded,
                    "error: " << r.error << "\nverifier output: " << r.verifier_output);
    if (tool_calls) REQUIRE_MESSAGE(r.tool_log.size() == *tool_calls, "error: " << r.error);
    return r;
  }
};

}  // namespace forge::test
