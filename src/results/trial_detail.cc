// trial.json's writer and reader.
#include "results/trial_detail.h"

#include <algorithm>

#include "core/files.h"
#include "core/json.h"
#include "results/screenshots.h"

namespace forge::results {

namespace {

void write_number_map(json::Writer& w, std::string_view key, const std::map<std::string, double>& m) {
  w.key(key).begin_object();
  for (const auto& [k, v] : m) w.key(k).num(v);
  w.end_object();
}

std::map<std::string, double> number_map(const json::Value& obj, const char* key) {
  std::map<std::string, double> out;
  if (const json::Value* m = json::get_object(obj, key))
    for (const auto& e : m->GetObject())
      if (e.value.IsNumber()) out[std::string(e.name.GetString(), e.name.GetStringLength())] = e.value.GetDouble();
  return out;
}

}  // namespace

std::string TrialDetail::to_json() const {
  json::Writer w;
  w.begin_object().field("version", version).field("task_id", task_id).field("task_name", task_name);
  w.field("category", category).field("difficulty", difficulty).field("tags", tags).field("agent", agent);
  w.field("trial_index", trial_index).field("attempt", attempt).field("trial_dir", trial_dir);
  w.field("outcome", outcome).field("infra_kind", infra_kind).field("error", error);
  w.field("termination_reason", termination_reason).field("started_at", started_at).field("finished_at", finished_at);
  w.field("docker_host", docker_host).field("stack", stack);
  write_number_map(w, "phases_s", phases_s);
  w.field("turns", turns).field("tokens_input", tokens_input).field("tokens_output", tokens_output);
  w.key("cost_usd").num(cost_usd).field("cost_known", cost_known).key("agent_s").num(agent_s);
  w.key("messages").begin_array();
  for (const auto& m : messages) {
    w.begin_object().field("role", m.role).field("content", m.content);
    if (!m.reasoning.empty()) w.field("reasoning", m.reasoning);
    if (!m.tool_calls.empty()) {
      w.key("tool_calls").begin_array();
      for (const auto& c : m.tool_calls) {
        w.begin_object().field("id", c.id).field("name", c.name).field("arguments", c.arguments);
        if (!c.provider_id.empty()) w.field("provider_id", c.provider_id);
        if (!c.refusal.empty()) w.field("refusal", c.refusal);
        w.end_object();
      }
      w.end_array();
    }
    if (!m.tool_call_id.empty()) w.field("tool_call_id", m.tool_call_id);
    if (!m.name.empty()) w.field("name", m.name);
    if (!m.images.empty()) w.field("images", m.images);
    if (m.images_dropped) w.field("images_dropped", m.images_dropped);
    w.end_object();
  }
  w.end_array().field("screenshots", screenshots).field("screenshots_dropped", screenshots_dropped);
  w.key("tool_log").begin_array();
  for (const auto& t : tool_log) {
    w.begin_object().field("requestor", t.requestor).field("tool", t.tool).field("arguments", t.arguments);
    w.field("outcome", t.outcome).field("output", t.output).field("error", t.error);
    w.key("duration_s").num(t.duration_s).field("truncated", t.truncated).end_object();
  }
  w.end_array().key("grade").begin_object().field("binary_pass", binary_pass).key("score").num(score);
  write_number_map(w, "components", components);
  w.field("reasons", reasons).field("state_diff", state_diff_json).end_object();
  w.end_object();
  return w.take();
}

Result<TrialDetail> TrialDetail::parse(std::string_view text, std::string_view path) {
  auto d = json::parse(text, path);
  if (!d) return d.fail();
  if (!d->IsObject()) return fail(Errc::kInvalid, std::string(path) + ": not a JSON object");
  const json::Value& o = *d;
  TrialDetail t;
  t.version = static_cast<int>(json::get_int(o, "version", kTrialDetailVersion));
  t.task_id = json::get_string(o, "task_id");
  t.task_name = json::get_string(o, "task_name");
  t.category = json::get_string(o, "category");
  t.difficulty = json::get_string(o, "difficulty");
  t.tags = json::get_strings(o, "tags");
  t.agent = json::get_string(o, "agent");
  t.trial_index = static_cast<int>(json::get_int(o, "trial_index"));
  t.attempt = static_cast<int>(json::get_int(o, "attempt", 1));
  t.trial_dir = json::get_string(o, "trial_dir");
  t.outcome = json::get_string(o, "outcome");
  t.infra_kind = json::get_string(o, "infra_kind");
  t.error = json::get_string(o, "error");
  t.termination_reason = json::get_string(o, "termination_reason");
  t.started_at = json::get_string(o, "started_at");
  t.finished_at = json::get_string(o, "finished_at");
  t.docker_host = json::get_string(o, "docker_host");
  t.stack = json::get_string(o, "stack");
  t.phases_s = number_map(o, "phases_s");
  t.turns = json::get_int(o, "turns");
  t.tokens_input = json::get_int(o, "tokens_input");
  t.tokens_output = json::get_int(o, "tokens_output");
  t.cost_usd = json::get_double(o, "cost_usd");
  t.cost_known = json::get_bool(o, "cost_known", true);
  t.agent_s = json::get_double(o, "agent_s");
  if (const json::Value* ms = json::get_array(o, "messages"))
    for (const auto& m : ms->GetArray()) {
      if (!m.IsObject()) continue;
      DetailMessage dm{json::get_string(m, "role"),         json::get_string(m, "content"),
                       json::get_string(m, "reasoning"),    {},
                       json::get_string(m, "tool_call_id"), json::get_string(m, "name")};
      if (const json::Value* cs = json::get_array(m, "tool_calls"))
        for (const auto& c : cs->GetArray())
          if (c.IsObject())
            dm.tool_calls.push_back({json::get_string(c, "id"), json::get_string(c, "name"),
                                     json::get_string(c, "arguments"), json::get_string(c, "provider_id"),
                                     json::get_string(c, "refusal")});
      // Only paths the store writes: a hand-edited or merged trial.json names nothing else.
      for (auto& p : json::get_strings(m, "images"))
        if (is_screenshot_path(p)) dm.images.push_back(std::move(p));
      dm.images_dropped = static_cast<int>(std::clamp<std::int64_t>(json::get_int(m, "images_dropped"), 0, 1000));
      t.messages.push_back(std::move(dm));
    }
  t.screenshots = static_cast<int>(std::clamp<std::int64_t>(json::get_int(o, "screenshots"), 0, 1000));
  t.screenshots_dropped = static_cast<int>(std::clamp<std::int64_t>(json::get_int(o, "screenshots_dropped"), 0, 1000));
  if (const json::Value* ls = json::get_array(o, "tool_log"))
    for (const auto& l : ls->GetArray())
      if (l.IsObject())
        t.tool_log.push_back({json::get_string(l, "requestor"), json::get_string(l, "tool"),
                              json::get_string(l, "arguments"), json::get_string(l, "outcome"),
                              json::get_string(l, "output"), json::get_string(l, "error"),
                              json::get_double(l, "duration_s"), json::get_bool(l, "truncated")});
  if (const json::Value* g = json::get_object(o, "grade")) {
    t.binary_pass = json::get_bool(*g, "binary_pass");
    t.score = json::get_double(*g, "score");
    t.components = number_map(*g, "components");
    t.reasons = json::get_strings(*g, "reasons");
    t.state_diff_json = json::get_string(*g, "state_diff");
  }
  return t;
}

Result<TrialDetail> TrialDetail::read(const std::string& path) {
  auto text = read_text(path);
  if (!text) return text.fail();
  return parse(*text, path);
}

}  // namespace forge::results
