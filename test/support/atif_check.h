// The rules Harbor's ATIF v1.7 models enforce (harbor.models.trajectories, RFC 0001), checked on a
// trajectory.atif.json: every object's keys among the schema's fields (the models forbid others),
// required fields present with their types, step_id 1, 2, 3, …, source one of system/user/agent,
// agent-only fields on agent steps only, each observation result naming a tool call of its own
// step, content (a message, an observation result) a string or a list of text and image parts,
// final_metrics.total_steps the number of steps. Returns the violations, none when valid.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/json.h"

namespace forge::test {

namespace atif_detail {

inline void keys_within(const json::Value& v, const std::set<std::string>& allowed, const std::string& where,
                        std::vector<std::string>& out) {
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    const std::string k(it->name.GetString(), it->name.GetStringLength());
    if (!allowed.count(k)) out.push_back(where + ": field '" + k + "' is not in ATIF v1.7");
  }
}

inline void require(const json::Value& v, const char* key, bool ok_type, const std::string& where,
                    std::vector<std::string>& out) {
  if (!v.HasMember(key))
    out.push_back(where + ": '" + key + "' is required");
  else if (!ok_type)
    out.push_back(where + ": '" + key + "' has the wrong type");
}

// v1.7's multimodal content (ContentPart, ImageSource): a text part holds text; an image part a
// source naming its media type and its path (a file beside the trajectory), nothing else.
inline void check_parts(const json::Value& parts, const std::string& where, std::vector<std::string>& out) {
  if (!parts.IsArray()) return out.push_back(where + ": content is neither a string nor a list of parts");
  for (rapidjson::SizeType i = 0; i < parts.Size(); ++i) {
    const auto& p = parts[i];
    const std::string w = where + "[" + std::to_string(i) + "]";
    if (!p.IsObject()) {
      out.push_back(w + ": not an object");
      continue;
    }
    keys_within(p, {"type", "text", "source"}, w, out);
    const std::string type = p.HasMember("type") && p["type"].IsString() ? p["type"].GetString() : "";
    if (type == "text") {
      require(p, "text", p.HasMember("text") && p["text"].IsString(), w, out);
      if (p.HasMember("source")) out.push_back(w + ": a text part has no source");
    } else if (type == "image") {
      if (p.HasMember("text")) out.push_back(w + ": an image part has no text");
      if (!p.HasMember("source") || !p["source"].IsObject()) {
        out.push_back(w + ": an image part needs a source");
        continue;
      }
      const auto& src = p["source"];
      keys_within(src, {"media_type", "path"}, w + ".source", out);
      const std::string mt =
          src.HasMember("media_type") && src["media_type"].IsString() ? src["media_type"].GetString() : "";
      if (mt != "image/png" && mt != "image/jpeg" && mt != "image/gif" && mt != "image/webp")
        out.push_back(w + ".source: media_type must be image/png, image/jpeg, image/gif or image/webp");
      require(src, "path", src.HasMember("path") && src["path"].IsString(), w + ".source", out);
    } else {
      out.push_back(w + ": type must be text or image");
    }
  }
}

inline void check_calls(const json::Value& step, const std::string& where, std::vector<std::string>& out) {
  std::set<std::string> ids;
  if (step.HasMember("tool_calls")) {
    const auto& calls = step["tool_calls"];
    if (!calls.IsArray()) return out.push_back(where + ": tool_calls is not an array");
    for (rapidjson::SizeType i = 0; i < calls.Size(); ++i) {
      const auto& c = calls[i];
      const std::string w = where + ".tool_calls[" + std::to_string(i) + "]";
      if (!c.IsObject()) {
        out.push_back(w + ": not an object");
        continue;
      }
      keys_within(c, {"tool_call_id", "function_name", "arguments", "extra"}, w, out);
      require(c, "tool_call_id", c.HasMember("tool_call_id") && c["tool_call_id"].IsString(), w, out);
      require(c, "function_name", c.HasMember("function_name") && c["function_name"].IsString(), w, out);
      require(c, "arguments", c.HasMember("arguments") && c["arguments"].IsObject(), w, out);
      if (c.HasMember("tool_call_id") && c["tool_call_id"].IsString()) ids.insert(c["tool_call_id"].GetString());
    }
  }
  if (!step.HasMember("observation")) return;
  const auto& obs = step["observation"];
  if (!obs.IsObject() || !obs.HasMember("results") || !obs["results"].IsArray())
    return out.push_back(where + ".observation: needs a 'results' array");
  keys_within(obs, {"results"}, where + ".observation", out);
  const auto& results = obs["results"];
  for (rapidjson::SizeType i = 0; i < results.Size(); ++i) {
    const auto& r = results[i];
    const std::string w = where + ".observation.results[" + std::to_string(i) + "]";
    if (!r.IsObject()) {
      out.push_back(w + ": not an object");
      continue;
    }
    keys_within(r, {"source_call_id", "content", "subagent_trajectory_ref", "extra"}, w, out);
    if (r.HasMember("content") && !r["content"].IsString() && !r["content"].IsNull())
      check_parts(r["content"], w + ".content", out);
    if (r.HasMember("source_call_id") &&
        (!r["source_call_id"].IsString() || !ids.count(r["source_call_id"].GetString())))
      out.push_back(w + ": source_call_id names no tool call of this step");
  }
}

inline void check_step(const json::Value& step, rapidjson::SizeType i, std::vector<std::string>& out) {
  const std::string where = "steps[" + std::to_string(i) + "]";
  if (!step.IsObject()) return out.push_back(where + ": not an object");
  keys_within(step,
              {"step_id", "timestamp", "source", "model_name", "reasoning_effort", "message", "reasoning_content",
               "tool_calls", "observation", "metrics", "is_copied_context", "llm_call_count", "extra"},
              where, out);
  if (!step.HasMember("step_id") || !step["step_id"].IsInt() || step["step_id"].GetInt() != static_cast<int>(i) + 1)
    out.push_back(where + ": step_id must be " + std::to_string(i + 1));
  const std::string source = step.HasMember("source") && step["source"].IsString() ? step["source"].GetString() : "";
  if (source != "system" && source != "user" && source != "agent")
    out.push_back(where + ": source must be system, user or agent");
  require(step, "message", step.HasMember("message") && (step["message"].IsString() || step["message"].IsArray()),
          where, out);
  if (step.HasMember("message") && step["message"].IsArray()) check_parts(step["message"], where + ".message", out);
  if (source != "agent")
    for (const char* k : {"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"})
      if (step.HasMember(k)) out.push_back(where + ": '" + k + "' is only for agent steps");
  check_calls(step, where, out);
}

}  // namespace atif_detail

inline std::vector<std::string> atif_v17_violations(const json::Value& doc) {
  using namespace atif_detail;
  std::vector<std::string> out;
  if (!doc.IsObject()) return {"the document is not an object"};
  keys_within(doc,
              {"schema_version", "session_id", "trajectory_id", "agent", "steps", "notes", "final_metrics",
               "continued_trajectory_ref", "subagent_trajectories", "extra"},
              "trajectory", out);
  if (!doc.HasMember("schema_version") || !doc["schema_version"].IsString() ||
      std::string(doc["schema_version"].GetString()) != "ATIF-v1.7")
    out.push_back("trajectory: schema_version must be ATIF-v1.7");
  for (const char* k : {"session_id", "trajectory_id"})
    if (doc.HasMember(k) && !doc[k].IsString()) out.push_back(std::string("trajectory: '") + k + "' is not a string");
  if (!doc.HasMember("agent") || !doc["agent"].IsObject())
    out.push_back("trajectory: 'agent' is required");
  else {
    keys_within(doc["agent"], {"name", "version", "model_name", "tool_definitions", "extra"}, "agent", out);
    require(doc["agent"], "name", doc["agent"].HasMember("name") && doc["agent"]["name"].IsString(), "agent", out);
    require(doc["agent"], "version", doc["agent"].HasMember("version") && doc["agent"]["version"].IsString(), "agent",
            out);
  }
  if (!doc.HasMember("steps") || !doc["steps"].IsArray() || doc["steps"].Empty())
    return out.push_back("trajectory: 'steps' must be a non-empty array"), out;
  const auto& steps = doc["steps"];
  for (rapidjson::SizeType i = 0; i < steps.Size(); ++i) check_step(steps[i], i, out);
  if (doc.HasMember("final_metrics")) {
    const auto& m = doc["final_metrics"];
    keys_within(m,
                {"total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_cost_usd",
                 "total_steps", "extra"},
                "final_metrics", out);
    if (m.HasMember("total_steps") && (!m["total_steps"].IsInt() || m["total_steps"].GetUint() != steps.Size()))
      out.push_back("final_metrics: total_steps is not the number of steps");
  }
  return out;
}

}  // namespace forge::test
