// trajectory.atif.json's writer.
#include "trial/trial_atif.h"

#include <vector>

#include "core/json.h"
#include "tools/redact.h"
#include "trial/trial_files.h"

namespace forge::trial {

namespace {

// An observation's content: its text alone, or v1.7's content parts when the trial's directory
// keeps images the tool returned — the text, then each image by its path beside this file.
void atif_content(json::Writer& w, const std::string& text, const std::vector<ImagePart>& images) {
  std::size_t kept = 0;
  for (const auto& img : images) kept += !img.path.empty();
  if (kept == 0) {
    w.str(text);
    return;
  }
  w.begin_array().begin_object().field("type", "text").field("text", text).end_object();
  for (const auto& img : images)
    if (!img.path.empty())
      w.begin_object()
          .field("type", "image")
          .key("source")
          .begin_object()
          .field("media_type", img.media_type)
          .field("path", img.path)
          .end_object()
          .end_object();
  w.end_array();
}

// Unique per document within a run: the trial's directory and its attempt ("files-basic/0@1").
std::string atif_trajectory_id(const TrialResult& t) { return rel_dir_of(t) + "@" + std::to_string(t.attempt); }

}  // namespace

// The trajectory in Harbor's ATIF (v1.7, the version Harbor writes and validates): one step per
// system, user and assistant message, each assistant step carrying its tool calls and, as its
// observation, the tool results that answered them. v1.7's session_id is run-scoped (every trial
// of a run shares it) and trajectory_id names this document. forgectl keeps token counts per
// episode only, so metrics are in final_metrics alone. No reader needs v1.2: it is not written.
std::string atif_json(const TrialResult& t, const std::string& session_id,
                      const std::function<std::string(std::string_view)>& redact) {
  const auto& ep = t.episode;
  json::Writer w;
  w.begin_object().field("schema_version", kAtifVersion).field("session_id", session_id);
  w.field("trajectory_id", atif_trajectory_id(t));
  w.key("agent")
      .begin_object()
      .field("name", "forgectl")
      .field("version", "1")
      .field("model_name", t.agent)
      .end_object();
  w.key("steps").begin_array();
  int step = 0;
  bool open = false;  // an assistant step whose observation may still receive tool results
  bool in_results = false;
  auto close = [&] {
    if (in_results) w.end_array().end_object();
    if (open) w.end_object();
    open = in_results = false;
  };
  for (const auto& m : ep.messages) {
    if (m.role == ChatMessage::Role::kTool) {
      if (!open) continue;  // a result with no call before it: nothing to attach it to
      if (!in_results) {
        w.key("observation").begin_object().key("results").begin_array();
        in_results = true;
      }
      w.begin_object().field("source_call_id", m.tool_call_id).key("content");
      atif_content(w, redact(m.content), m.images);
      // v1.7's ObservationResult.extra: the call was refused, failed or timed out (the model saw
      // "Error: …"), which the content alone does not tell a reader apart from a tool's own text.
      if (m.tool_error) w.key("extra").begin_object().field("tool_error", true).end_object();
      w.end_object();
      continue;
    }
    // A bare stop marker is forgectl's scripted user ending the episode, not a turn of the task.
    if (m.role == ChatMessage::Role::kUser && m.content == "###STOP###") continue;
    close();
    const char* source = m.role == ChatMessage::Role::kAssistant ? "agent"
                         : m.role == ChatMessage::Role::kUser    ? "user"
                                                                 : "system";
    w.begin_object().field("step_id", ++step).field("source", source).field("message", redact(m.content));
    if (!m.reasoning.empty()) w.field("reasoning_content", redact(m.reasoning));
    if (!m.tool_calls.empty()) {
      w.key("tool_calls").begin_array();
      for (const auto& c : m.tool_calls) {
        w.begin_object().field("tool_call_id", c.id).field("function_name", c.name).key("arguments");
        const std::string args = redact(tools::redact_json(c.arguments));
        json::Document d;
        if (!json::parse_document(d, args) && d.IsObject())
          w.raw_value(args);
        else
          w.begin_object().field("raw", args).end_object();
        w.end_object();
      }
      w.end_array();
    }
    open = true;
    if (m.role != ChatMessage::Role::kAssistant) {
      w.end_object();
      open = false;
    }
  }
  close();
  w.end_array();
  w.key("final_metrics")
      .begin_object()
      .field("total_prompt_tokens", static_cast<std::int64_t>(ep.agent_usage.input_tokens))
      .field("total_completion_tokens", static_cast<std::int64_t>(ep.agent_usage.output_tokens));
  w.key("total_cost_usd");
  if (ep.cost_known)
    w.num(ep.agent_cost_usd);
  else
    w.null();
  w.field("total_steps", step).end_object();
  w.key("extra")
      .begin_object()
      .field("task_id", t.task_id)
      .field("trial_index", t.trial_index)
      .field("attempt", t.attempt);
  if (!t.trial_key.empty()) w.field("trial_key", t.trial_key);
  w.end_object();
  w.end_object();
  return w.take();
}

}  // namespace forge::trial
