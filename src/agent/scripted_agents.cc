// The oracle, replay and noop agents: scripted assistants that need no model.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "agent/agent.h"
#include "core/confined_dir.h"
#include "core/json.h"
#include "core/limits.h"
#include "manifest/files.h"
#include "manifest/project.h"

namespace forge::agent {

ChatResponse scripted_turn(const std::vector<ToolCall>& calls, std::size_t& next, const std::string& final_message) {
  ChatResponse r;
  r.message.role = ChatMessage::Role::kAssistant;
  r.cost_usd = 0.0;
  if (next < calls.size()) {
    r.message.tool_calls.push_back(calls[next]);
    r.message.tool_calls.back().id = "call_" + std::to_string(++next);
    r.finish_reason = "tool_calls";
  } else {
    r.message.content = final_message;
    r.finish_reason = "stop";
  }
  return r;
}

namespace {

// Plays a fixed list of tool calls, one per turn, then a final message.
class ScriptAgent final : public Agent {
 public:
  ScriptAgent(std::string kind, std::vector<ToolCall> calls, std::string final_message)
      : kind_(std::move(kind)), calls_(std::move(calls)), final_(std::move(final_message)) {}
  std::string kind() const override { return kind_; }
  Result<ChatResponse> next(const std::vector<ChatMessage>&, const std::vector<ToolDecl>&, Deadline) override {
    return scripted_turn(calls_, next_, final_);
  }

 private:
  std::string kind_;
  std::vector<ToolCall> calls_;
  std::string final_;
  std::size_t next_ = 0;
};

// Plays a recorded trajectory's assistant messages in order, each with its text and tool calls;
// past the end, it stops (the recorded user may have asked for more than was recorded).
class ReplayAgent final : public Agent {
 public:
  explicit ReplayAgent(std::vector<ChatMessage> turns) : turns_(std::move(turns)) {}
  std::string kind() const override { return "replay"; }
  Result<ChatResponse> next(const std::vector<ChatMessage>&, const std::vector<ToolDecl>&, Deadline) override {
    ChatResponse r;
    r.cost_usd = 0.0;
    if (next_ < turns_.size()) {
      r.message = turns_[next_++];
      for (std::size_t i = 0; i < r.message.tool_calls.size(); ++i)
        r.message.tool_calls[i].id = "call_" + std::to_string(next_) + "_" + std::to_string(i + 1);
    } else {
      r.message = {ChatMessage::Role::kAssistant, std::string("Replay complete. ") + kStopMarker};
    }
    r.finish_reason = r.message.tool_calls.empty() ? "stop" : "tool_calls";
    return r;
  }

 private:
  std::vector<ChatMessage> turns_;
  std::size_t next_ = 0;
};

// The YAML block scalars trajectories use end content with a newline the model never sent.
std::string trim_newline(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

class NoopAgent final : public Agent {
 public:
  std::string kind() const override { return "noop"; }
  Result<ChatResponse> next(const std::vector<ChatMessage>&, const std::vector<ToolDecl>&, Deadline) override {
    ChatResponse r;
    r.message.role = ChatMessage::Role::kAssistant;
    r.message.content = std::string("I will not do anything. ") + kStopMarker;
    r.finish_reason = "stop";
    r.cost_usd = 0.0;
    return r;
  }
};

// Thrown when a replayed tool call's arguments pass a limit of core/limits.h; caught as a YAML error.
struct TooBig : YAML::Exception {
  explicit TooBig(const YAML::Node& n, const std::string& what) : YAML::Exception(n.Mark(), what) {}
};

// YAML (as Tolokaforge writes tool arguments) to JSON text; plain scalars that read as numbers,
// booleans or null keep that type, as YAML's core schema says. Aliases are expanded, so depth and
// the nodes visited are bounded (`budget` counts down).
void yaml_to_json(const YAML::Node& n, json::Writer& w, int depth, std::size_t& budget) {
  if (budget-- == 0)
    throw TooBig(n, "tool arguments expand to more than " + std::to_string(limits::kMaxYamlExpandedNodes) + " nodes");
  if ((n.IsMap() || n.IsSequence()) && depth >= limits::kMaxYamlDepth)
    throw TooBig(n, "tool arguments nest deeper than " + std::to_string(limits::kMaxYamlDepth) + " levels");
  if (n.IsMap()) {
    w.begin_object();
    for (const auto& kv : n) {
      w.key(kv.first.as<std::string>());
      yaml_to_json(kv.second, w, depth + 1, budget);
    }
    w.end_object();
  } else if (n.IsSequence()) {
    w.begin_array();
    for (const auto& e : n) yaml_to_json(e, w, depth + 1, budget);
    w.end_array();
  } else if (n.IsNull()) {
    w.null();
  } else {
    std::string v = n.as<std::string>();
    if (n.Tag() == "?") {
      if (v == "true" || v == "false") {
        w.boolean(v == "true");
        return;
      }
      if (v == "null" || v == "~") {
        w.null();
        return;
      }
      char* end = nullptr;
      long long i = std::strtoll(v.c_str(), &end, 10);
      if (!v.empty() && *end == '\0') {
        w.i64(i);
        return;
      }
      double d = std::strtod(v.c_str(), &end);
      if (!v.empty() && *end == '\0') {
        w.num(d);
        return;
      }
    }
    w.str(v);
  }
}

// Empty when missing, unreadable or larger than a JSON document may be.
std::string read_file(const std::string& path) {
  auto text = manifest::read_text(path, limits::kMaxJsonBytes);
  return text ? *text : std::string();
}

}  // namespace

std::unique_ptr<Agent> noop_agent() { return std::make_unique<NoopAgent>(); }

Result<std::unique_ptr<Agent>> oracle_agent(const manifest::TaskConfig& task) {
  const auto& s = task.solution;
  std::vector<ToolCall> calls;
  for (const auto& c : s.tool_calls) calls.push_back({"", c.name, c.arguments_json});
  if (!s.script.empty()) {
    // Read beneath the task directory: its text goes into the runner, so no link may lead out.
    auto dir = manifest::open_task_files(task.dir);
    auto read = dir ? dir->read(s.script, std::size_t{1} << 20) : Result<std::string>(dir.fail());
    if (!read) return read.fail_with("task '" + task.task_id + "': solution script");
    std::string text = std::move(*read);
    if (text.empty())
      return fail(Errc::kNotFound, "task '" + task.task_id + "': solution script " + s.script + " is empty");
    json::Writer w;
    w.begin_object().field("command", text).end_object();
    calls.push_back({"", "bash", w.take()});
  }
  if (calls.empty())
    for (const auto& g : task.grading.state_checks.hash.golden_actions) calls.push_back({"", g.name, g.arguments_json});
  if (calls.empty() && s.final_message.empty())
    return fail(Errc::kInvalid, "task '" + task.task_id + "' has no solution (solution.tool_calls, solution.script, "
                                "or golden_actions in grading.yaml) for the oracle agent");
  std::string final_message = s.final_message.empty() ? std::string("Done. ") + kStopMarker : s.final_message;
  return std::unique_ptr<Agent>(std::make_unique<ScriptAgent>("oracle", std::move(calls), final_message));
}

Result<std::unique_ptr<Agent>> replay_agent(const std::string& path) {
  std::vector<ChatMessage> turns;
  std::string text = read_file(path);
  if (text.empty()) return fail(Errc::kNotFound, "replay: cannot read " + path);
  // forgectl writes trajectories as JSON and YAML; YAML is a superset, so one reader takes both.
  try {
    YAML::Node doc = YAML::Load(text);
    YAML::Node messages = doc["messages"];
    if (!messages || !messages.IsSequence()) return fail(Errc::kInvalid, "replay: " + path + " has no 'messages' list");
    for (const auto& m : messages) {
      if (!m["role"] || m["role"].as<std::string>() != "assistant") continue;
      ChatMessage turn{ChatMessage::Role::kAssistant, trim_newline(m["content"].as<std::string>(""))};
      if (m["tool_calls"])
        for (const auto& tc : m["tool_calls"]) {
          std::string args;
          const YAML::Node a = tc["arguments"];
          if (a && a.IsScalar()) args = a.as<std::string>();
          else if (a) {
            json::Writer w;
            std::size_t budget = limits::kMaxYamlExpandedNodes;
            yaml_to_json(a, w, 0, budget);
            args = w.take();
          }
          turn.tool_calls.push_back({"", tc["name"].as<std::string>(""), args.empty() ? "{}" : args});
        }
      turns.push_back(std::move(turn));
    }
  } catch (const YAML::Exception& e) {
    return fail(Errc::kInvalid, "replay: " + path + ": " + e.what());
  }
  if (turns.empty()) return fail(Errc::kInvalid, "replay: " + path + " has no assistant messages to replay");
  return std::unique_ptr<Agent>(std::make_unique<ReplayAgent>(std::move(turns)));
}

}  // namespace forge::agent
