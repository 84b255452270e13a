// OpenAI-compatible chat completions: the request body, the response, the client.
#include "agent/llm_openai.h"

#include "agent/llm_arguments.h"
#include "agent/tool_calls.h"
#include "core/json.h"
#include "core/strings.h"

namespace forge::agent {

namespace {

// OpenAI's reasoning models answer 400 to any temperature but the default.
bool is_openai_reasoning_model(const ResolvedModel& m) {
  if (m.config.provider != "openai") return false;
  std::string n = to_lower(m.wire_name);
  if (starts_with(n, "openai/")) n.erase(0, 7);
  return starts_with(n, "o1") || starts_with(n, "o3") || starts_with(n, "o4") || starts_with(n, "gpt-5");
}

// A member of any type (json::get_object wants an object).
const json::Value* member(const json::Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// Text of a content that is a string or an array of {"type":"text","text":…} parts.
std::string content_text(const json::Value* v) {
  if (!v) return "";
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  std::string out;
  if (v->IsArray())
    for (const auto& part : v->GetArray()) out += json::get_string(part, "text");
  return out;
}

}  // namespace

Result<std::string> openai_request_body(const ResolvedModel& model, const ChatRequest& req) {
  const auto& cfg = model.config;
  json::Writer w;
  w.begin_object().field("model", model.wire_name);
  // The provider knows each call by its own id; forgectl's ids stay on this side.
  const auto ids = provider_call_ids(req.messages);
  w.key("messages").begin_array();
  const bool images = provider_takes_images(cfg.provider);
  // A tool message holds text only in the chat completions API: the images of a run of tool
  // results follow it in one user message.
  std::vector<const ChatMessage*> pictured;
  auto flush_images = [&] {
    if (pictured.empty()) return;
    w.begin_object().field("role", "user").key("content").begin_array();
    for (const ChatMessage* t : pictured) {
      w.begin_object().field("type", "text");
      w.field("text", "Image returned by tool call " + provider_id_of(ids, t->tool_call_id) + " (" + t->name + "):");
      w.end_object();
      for (const auto& img : t->images) {
        w.begin_object().field("type", "image_url").key("image_url").begin_object();
        w.field("url", "data:" + img.media_type + ";base64," + img.base64).end_object().end_object();
      }
    }
    w.end_array().end_object();
    pictured.clear();
  };
  for (const auto& m : req.messages) {
    if (m.role != ChatMessage::Role::kTool) flush_images();
    w.begin_object().field("role", role_name(m.role));
    switch (m.role) {
      case ChatMessage::Role::kSystem:
      case ChatMessage::Role::kUser:
        w.field("content", m.content);
        break;
      case ChatMessage::Role::kAssistant:
        if (m.content.empty() && !m.tool_calls.empty()) w.key("content").null();
        else w.field("content", m.content);
        if (!m.tool_calls.empty()) {
          w.key("tool_calls").begin_array();
          for (const auto& tc : m.tool_calls) {
            w.begin_object().field("id", provider_id_of(tc)).field("type", "function");
            w.key("function").begin_object().field("name", tc.name).field("arguments", arguments_for_wire(tc.arguments));
            w.end_object().end_object();
          }
          w.end_array();
        }
        break;
      case ChatMessage::Role::kTool:
        w.field("tool_call_id", provider_id_of(ids, m.tool_call_id));
        if (!m.images.empty() && images) pictured.push_back(&m);
        w.field("content",
                m.images.empty() || images ? m.content : m.content + image_note(m.images.size(), cfg.provider));
        break;
    }
    w.end_object();
  }
  flush_images();
  w.end_array();
  if (!req.tools.empty()) {
    w.key("tools").begin_array();
    for (const auto& t : req.tools) {
      auto schema = tool_schema_for_wire(t);
      if (!schema) return schema.fail();
      w.begin_object().field("type", "function").key("function").begin_object();
      w.field("name", t.name).field("description", t.description).key("parameters").raw_value(*schema);
      w.end_object().end_object();
    }
    w.end_array();
    w.field("tool_choice", "auto");
  }
  if (!is_openai_reasoning_model(model)) {
    w.key("temperature").num(cfg.temperature);
    if (cfg.top_p) w.key("top_p").num(*cfg.top_p);
  }
  if (cfg.max_tokens) w.field(cfg.provider == "openai" ? "max_completion_tokens" : "max_tokens", *cfg.max_tokens);
  if (cfg.seed) w.field("seed", *cfg.seed);
  if (!cfg.reasoning.empty() && cfg.reasoning != "off") {
    // OpenRouter normalises reasoning across its upstreams under its own key.
    if (cfg.provider == "openrouter") w.key("reasoning").begin_object().field("effort", cfg.reasoning).end_object();
    else w.field("reasoning_effort", cfg.reasoning);
  }
  w.end_object();
  return w.take();
}

Result<ChatResponse> parse_openai_response(std::string_view body, std::vector<std::string>* repairs) {
  auto doc = json::parse(body, "the chat completion");
  if (!doc) return doc.fail();
  const json::Value* choices = json::get_array(*doc, "choices");
  if (!choices || choices->Empty() || !(*choices)[0].IsObject())
    return fail(Errc::kProtocol, "the answer has no choices: '" + std::string(body.substr(0, 200)) + "'");
  const json::Value& choice = (*choices)[0];
  const json::Value* msg = json::get_object(choice, "message");
  if (!msg || !msg->IsObject()) return fail(Errc::kProtocol, "the answer's first choice has no message");

  ChatResponse r;
  r.message.role = ChatMessage::Role::kAssistant;
  r.message.content = content_text(member(*msg, "content"));
  // vLLM and DeepSeek say reasoning_content, OpenRouter reasoning.
  r.message.reasoning = json::get_string(*msg, "reasoning_content", json::get_string(*msg, "reasoning"));
  if (const json::Value* calls = json::get_array(*msg, "tool_calls")) {
    int n = 0;
    for (const auto& c : calls->GetArray()) {
      ++n;
      const json::Value* fn = json::get_object(c, "function");
      if (!fn || !fn->IsObject()) continue;
      ToolCall tc;
      // Some local servers leave the id out; the tool result still needs one to refer to.
      tc.id = json::get_string(c, "id");
      if (tc.id.empty()) tc.id = "call_" + std::to_string(n);
      tc.name = json::get_string(*fn, "name");
      const json::Value* args = member(*fn, "arguments");
      std::string raw = !args || args->IsNull() ? ""
                        : args->IsString() ? std::string(args->GetString(), args->GetStringLength())
                                           : json::to_string(*args);  // Ollama sends an object
      auto fixed = repair_tool_arguments(raw);
      if (repairs && fixed.outcome != RepairedArguments::Outcome::kValid)
        repairs->push_back(tc.name + ": " + (fixed.outcome == RepairedArguments::Outcome::kRepaired ? "repaired " : "invalid, kept raw: ") + fixed.note);
      tc.arguments = std::move(fixed.text);
      r.message.tool_calls.push_back(std::move(tc));
    }
  }
  r.finish_reason = json::get_string(choice, "finish_reason");
  if (r.finish_reason.empty()) r.finish_reason = r.message.tool_calls.empty() ? "stop" : "tool_calls";
  if (const json::Value* u = json::get_object(*doc, "usage")) {
    r.usage.input_tokens = json::get_int(*u, "prompt_tokens");
    r.usage.output_tokens = json::get_int(*u, "completion_tokens");
  }
  return r;
}

OpenAiClient::OpenAiClient(ResolvedModel model, const LlmContext& ctx) : model_(std::move(model)), ctx_(ctx) {
  endpoint_.what = model_.describe();
  endpoint_.url = model_.base_url + "/chat/completions";
  endpoint_.key_env = model_.api_key_env;
  endpoint_.bucket = model_.bucket;
  if (!model_.api_key.empty()) endpoint_.headers.emplace_back("Authorization", "Bearer " + model_.api_key);
  if (model_.config.provider == "openrouter") endpoint_.headers.emplace_back("X-Title", "forgectl");
}

Result<ChatResponse> OpenAiClient::chat(const ChatRequest& req) {
  auto start = Clock::now();
  auto body = openai_request_body(model_, req);
  if (!body) return body.fail_with(describe());
  auto sent = post_with_retries(http_, endpoint_, *body, req.deadline, ctx_.retry, ctx_.secrets, ctx_.log);
  if (!sent) return sent.fail();
  std::vector<std::string> repairs;
  auto resp = parse_openai_response(sent->response.body, &repairs);
  // A 2xx we cannot read is the provider's (or a proxy's) fault: infra, not the model's.
  if (!resp) return fail(Errc::kUnavailable, ctx_.secrets.redact(describe() + ": " + resp.error().message));
  if (ctx_.log)
    for (const auto& note : repairs) ctx_.log->debug(describe() + ": tool call " + note);
  finish_response(*resp, sent->attempts, start, model_, ctx_);
  return resp;
}

}  // namespace forge::agent
