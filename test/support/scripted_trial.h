// Trials played by scripted agents in-process: a replay trajectory written by the test, run
// through trial::run_trial against the real daemon with no model and no budget.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/json.h"
#include "manifest/task_parse.h"
#include "support/stack_env.h"
#include "support/trial_rig.h"
#include "sweep/task_set.h"
#include "trial/trial.h"

namespace forge::test {

struct Call {
  std::string name, arguments_json;
};
struct Turn {
  std::string text;
  std::vector<Call> calls;
};

// A trajectory file for the replay agent (`name` in `dir`): each turn one assistant message.
inline std::string write_trajectory(const TempDir& dir, const std::vector<Turn>& turns,
                                    const std::string& name = "trajectory.json") {
  json::Writer w;
  w.begin_object().key("messages").begin_array();
  for (const auto& t : turns) {
    w.begin_object().field("role", "assistant").field("content", t.text).key("tool_calls").begin_array();
    for (const auto& c : t.calls)
      w.begin_object().field("name", c.name).field("arguments", c.arguments_json).end_object();
    w.end_array().end_object();
  }
  w.end_array().end_object();
  return dir.write(name, w.take());
}

inline std::string bash(const std::string& command) {
  return json::Writer().begin_object().field("command", command).end_object().take();
}

// Trials with scripted agents: no model, no budget.
struct Rig : TrialRig {
  Rig() : TrialRig("atk") {}
  trial::TrialResult run(const manifest::TaskConfig& task, trial::AgentChoice choice, bool local = true) {
    env.engine_is_local = local;
    return TrialRig::run(task, choice);
  }
};

// A file task: answer.txt must hold 42. `environment` is the task's environment block.
inline manifest::TaskConfig answer_task(const TempDir& dir, const std::string& id, const std::string& environment) {
  dir.write("task.yaml",
            "task_id: " + id +
                "\nname: dodge\ncategory: test\ndescription: \"Write 42.\"\n"
                "initial_user_message: \"Write answer.txt containing 42.\"\n"
                "tools:\n  agent: {enabled: [bash, write_file]}\n  user: {enabled: []}\n"
                "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
                "grading: grading.yaml\n" +
                environment);
  dir.write("grading.yaml",
            "state_checks:\n  jsonpaths:\n"
            "    - {path_glob: \"/env/fs/agent-visible/answer.txt\", contains_ci: \"42\"}\n");
  auto t = manifest::load_task(dir.path() + "/task.yaml");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

// The one task in `dir` as `forgectl run` loads it: through the run's own loader and preflight
// (which add the services a task's initial_state asks for).
inline manifest::TaskConfig load_as_run(const std::string& dir) {
  auto set = sweep::load_task_set({dir}, "", trial::PreflightInput{});
  INFO(set.report());
  REQUIRE(set.ok());
  REQUIRE(set.tasks.size() == 1);
  return std::move(set.tasks[0]);
}

inline trial::AgentChoice replay(const std::string& path) {
  trial::AgentChoice c{trial::AgentChoice::Kind::kReplay};
  c.replay_path = path;
  return c;
}

}  // namespace forge::test
