// Harbor trials in-process against the real daemon: forgectl's runner image tagged as the name
// the tasks' Dockerfiles start FROM (nothing pulled), scripted agents only; the tag and every
// image the trials built are removed with the rig.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/images.h"
#include "engine/tar.h"
#include "manifest/harbor/harbor_load.h"
#include "stack/task_build.h"
#include "support/manifest_helpers.h"
#include "support/trial_rig.h"

namespace forge::test {

struct HarborRig : TrialRig {
  std::string base;  // "<repo>:<run value>"
  std::vector<std::string> built;

  explicit HarborRig(const std::string& repo = "forgectl-test/harbor-base", const std::string& run_prefix = "h")
      : TrialRig(run_prefix) {
    base = repo + ":" + docker_env().run_value;
    auto st = engine::tag_image(*docker_env().client, docker_env().runner_image, repo, docker_env().run_value);
    REQUIRE_MESSAGE(st.has_value(), (st ? "" : st.error().what()));
    cfg.turn_timeout = Millis(30000);
    cfg.episode_timeout = Millis(120000);
  }
  ~HarborRig() {
    for (const auto& tag : built) (void)engine::remove_image(*docker_env().client, tag);
    (void)engine::remove_image(*docker_env().client, base);
  }

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
    return TrialRig::run(t, a);
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

// The trial's logs/ (each tar of r.log_tars unpacked): path under logs/ → content.
inline std::map<std::string, std::string> log_files(const trial::TrialResult& r) {
  std::map<std::string, std::string> files;
  for (const auto& tar : r.log_tars) {
    auto entries = engine::read_tar(tar);
    REQUIRE_MESSAGE(entries.has_value(), (entries ? "" : entries.error().what()));
    for (const auto& e : *entries) files[e.path] = e.content;
  }
  return files;
}

// environment/Dockerfile of task `name`: FROM the rig's base, WORKDIR /work, USER 1000:1000 and
// the test's label.
inline void write_harbor_dockerfile(const TempFiles& d, const std::string& name, const std::string& base) {
  d.write(name + "/environment/Dockerfile",
          "FROM " + base + "\nWORKDIR /work\nUSER 1000:1000\nLABEL io.forgectl.test.task=" + name + "\n");
}

// A replay of one bash call (no single quotes in `command`), then a final answer; a multi-step
// task replays it at every step.
inline std::string write_bash_replay(const TempFiles& d, const std::string& file, const std::string& command) {
  return d.write(file,
                 "messages:\n  - role: assistant\n    content: \"\"\n    tool_calls:\n"
                 "      - name: bash\n        arguments:\n          command: '" +
                     command +
                     "'\n"
                     "  - role: assistant\n    content: \"done\"\n");
}

}  // namespace forge::test
