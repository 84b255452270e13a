// Anthropic Messages: the request body (turns merged to alternate), the response, the client.
#include "agent/llm_anthropic.h"

#include "agent/llm_arguments.h"
#include "agent/tool_calls.h"
#include "core/json.h"

namespace forge::agent {

namespace {

// One turn of the conversation: a role and its content blocks, each already serialised.
struct Turn {
  const char* role;
  std::vector<std::string> blocks;
};

std::string text_block(const std::string& text) {
  json::Writer w;
  w.begin_object().field("type", "text").field("text", text).end_object();
  return w.take();
}

void add_block(std::vector<Turn>& turns, const char* role, std::string block) {
  if (turns.empty() || std::string_view(turns.back().role) != role) turns.push_back(Turn{role, {}});
  turns.back().blocks.push_back(std::move(block));
}

std::string map_stop_reason(const std::string& s) {
  if (s == "end_turn" || s == "stop_sequence") return "stop";
  if (s == "tool_use") return "tool_calls";
  if (s == "max_tokens") return "length";
  if (s == "refusal") return "content_filter";
  return s;
}

}  // namespace

Result<std::string> anthropic_request_body(const ResolvedModel& model, const ChatRequest& req) {
  const auto& cfg = model.config;
  std::string system;
  std::vector<Turn> turns;
  bool leading = true;
  // The provider knows each call by its own id; forgectl's ids stay on this side.
  const auto ids = provider_call_ids(req.messages);
  for (const auto& m : req.messages) {
    using R = ChatMessage::Role;
    if (m.role == R::kSystem && leading) {
      if (!m.content.empty()) system += (system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    leading = false;
    switch (m.role) {
      case R::kSystem:  // a note added mid-conversation: the API has no place for it but a user turn
      case R::kUser:
        if (!m.content.empty()) add_block(turns, "user", text_block(m.content));
        break;
      case R::kAssistant:
        if (!m.content.empty()) add_block(turns, "assistant", text_block(m.content));
        for (const auto& tc : m.tool_calls) {
          json::Writer w;
          w.begin_object().field("type", "tool_use").field("id", provider_id_of(tc)).field("name", tc.name);
          w.key("input").raw_value(arguments_for_wire(tc.arguments)).end_object();
          add_block(turns, "assistant", w.take());
        }
        break;
      case R::kTool: {
        json::Writer w;
        w.begin_object().field("type", "tool_result").field("tool_use_id", provider_id_of(ids, m.tool_call_id));
        if (m.images.empty()) {
          w.field("content", m.content).end_object();
        } else if (!provider_takes_images(model.config.provider)) {
          w.field("content", m.content + image_note(m.images.size(), model.config.provider)).end_object();
        } else {
          // Anthropic takes image blocks inside the tool result itself.
          w.key("content").begin_array();
          w.begin_object().field("type", "text").field("text", m.content).end_object();
          for (const auto& img : m.images) {
            w.begin_object().field("type", "image").key("source").begin_object().field("type", "base64");
            w.field("media_type", img.media_type).field("data", img.base64).end_object().end_object();
          }
          w.end_array().end_object();
        }
        add_block(turns, "user", w.take());
        break;
      }
    }
  }

  json::Writer w;
  w.begin_object().field("model", model.wire_name);
  w.field("max_tokens", cfg.max_tokens.value_or(kAnthropicDefaultMaxTokens));
  if (!system.empty()) w.field("system", system);
  w.key("messages").begin_array();
  for (const auto& t : turns) {
    w.begin_object().field("role", t.role).key("content").begin_array();
    for (const auto& b : t.blocks) w.raw_value(b);
    w.end_array().end_object();
  }
  w.end_array();
  if (!req.tools.empty()) {
    w.key("tools").begin_array();
    for (const auto& t : req.tools) {
      auto schema = tool_schema_for_wire(t);
      if (!schema) return schema.fail();
      w.begin_object().field("name", t.name).field("description", t.description);
      w.key("input_schema").raw_value(*schema).end_object();
    }
    w.end_array();
    w.key("tool_choice").begin_object().field("type", "auto").end_object();
  }
  w.key("temperature").num(cfg.temperature);
  if (cfg.top_p) w.key("top_p").num(*cfg.top_p);
  w.end_object();
  return w.take();
}

Result<ChatResponse> parse_anthropic_response(std::string_view body) {
  auto doc = json::parse(body, "the message");
  if (!doc) return doc.fail();
  const json::Value* content = json::get_array(*doc, "content");
  if (!content) return fail(Errc::kProtocol, "the answer has no content: '" + std::string(body.substr(0, 200)) + "'");
  ChatResponse r;
  r.message.role = ChatMessage::Role::kAssistant;
  for (const auto& block : content->GetArray()) {
    std::string type = json::get_string(block, "type");
    if (type == "text") {
      r.message.content += json::get_string(block, "text");
    } else if (type == "thinking") {
      r.message.reasoning += json::get_string(block, "thinking");
    } else if (type == "tool_use") {
      const json::Value* input = json::get_object(block, "input");
      // The API parses the model's arguments itself: input is always an object.
      r.message.tool_calls.push_back(
          ToolCall{json::get_string(block, "id"), json::get_string(block, "name"), input ? json::to_string(*input) : "{}"});
    }
  }
  r.finish_reason = map_stop_reason(json::get_string(*doc, "stop_reason"));
  if (r.finish_reason.empty()) r.finish_reason = r.message.tool_calls.empty() ? "stop" : "tool_calls";
  if (const json::Value* u = json::get_object(*doc, "usage")) {
    // Cache reads and writes are prompt tokens too, counted apart by the API.
    r.usage.input_tokens = json::get_int(*u, "input_tokens") + json::get_int(*u, "cache_creation_input_tokens") +
                           json::get_int(*u, "cache_read_input_tokens");
    r.usage.output_tokens = json::get_int(*u, "output_tokens");
  }
  return r;
}

AnthropicClient::AnthropicClient(ResolvedModel model, const LlmContext& ctx) : model_(std::move(model)), ctx_(ctx) {
  endpoint_.what = model_.describe();
  endpoint_.url = model_.base_url + "/messages";
  endpoint_.key_env = model_.api_key_env;
  endpoint_.bucket = model_.bucket;
  if (!model_.api_key.empty()) endpoint_.headers.emplace_back("x-api-key", model_.api_key);
  endpoint_.headers.emplace_back("anthropic-version", kAnthropicVersion);
}

Result<ChatResponse> AnthropicClient::chat(const ChatRequest& req) {
  auto start = Clock::now();
  auto body = anthropic_request_body(model_, req);
  if (!body) return body.fail_with(describe());
  auto sent = post_with_retries(http_, endpoint_, *body, req.deadline, ctx_.retry, ctx_.secrets, ctx_.log);
  if (!sent) return sent.fail();
  auto resp = parse_anthropic_response(sent->response.body);
  // A 2xx we cannot read is the provider's (or a proxy's) fault: infra, not the model's.
  if (!resp) return fail(Errc::kUnavailable, ctx_.secrets.redact(describe() + ": " + resp.error().message));
  finish_response(*resp, sent->attempts, start, model_, ctx_);
  return resp;
}

}  // namespace forge::agent
