// Provider table and the construction of clients from model entries.
#include "agent/llm_factory.h"

#include <array>

#include "agent/llm_anthropic.h"
#include "agent/llm_openai.h"
#include "core/strings.h"

namespace forge::agent {

namespace {

constexpr std::array kProviders = {
    ProviderInfo{"openai", Protocol::kOpenAiChat, "https://api.openai.com/v1", "OPENAI_API_KEY", true},
    ProviderInfo{"anthropic", Protocol::kAnthropicMessages, "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", true},
    ProviderInfo{"openrouter", Protocol::kOpenAiChat, "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", true},
    // vLLM has no conventional address (the run-config parser asks for base_url too).
    ProviderInfo{"vllm", Protocol::kOpenAiChat, "", "", false},
    ProviderInfo{"ollama", Protocol::kOpenAiChat, "http://localhost:11434/v1", "", false},
    // A LiteLLM proxy forwards to paid providers under their own model names: priced by name.
    ProviderInfo{"litellm", Protocol::kOpenAiChat, "http://localhost:4000/v1", "", true},
    ProviderInfo{"openai_compatible", Protocol::kOpenAiChat, "", "", true},
};

std::string provider_list() {
  std::string out;
  for (const auto& p : kProviders) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

}  // namespace

std::span<const ProviderInfo> known_providers() { return kProviders; }

const ProviderInfo* find_provider(std::string_view name) {
  for (const auto& p : kProviders)
    if (p.name == name) return &p;
  return nullptr;
}

Result<ResolvedModel> resolve_model(const manifest::ModelConfig& cfg, const LlmContext& ctx) {
  std::string what = "model '" + cfg.provider + "/" + cfg.name + "'";
  const ProviderInfo* p = find_provider(cfg.provider);
  if (!p) return fail(Errc::kInvalid, what + ": unknown provider '" + cfg.provider + "' (known: " + provider_list() + ")");
  if (trim(cfg.name).empty()) return fail(Errc::kInvalid, what + ": the model name is empty");

  ResolvedModel m;
  m.config = cfg;
  m.wire_name = cfg.name;
  if (cfg.provider == "openrouter" && starts_with(m.wire_name, "openrouter/")) m.wire_name.erase(0, 11);
  m.base_url = cfg.base_url.empty() ? std::string(p->base_url) : cfg.base_url;
  while (!m.base_url.empty() && m.base_url.back() == '/') m.base_url.pop_back();
  if (m.base_url.empty()) return fail(Errc::kInvalid, what + ": provider '" + cfg.provider + "' needs a base_url");
  if (!starts_with(m.base_url, "http://") && !starts_with(m.base_url, "https://"))
    return fail(Errc::kInvalid, what + ": base_url must start with http:// or https://");

  // Anthropic's extended thinking needs its signed thinking blocks sent back with every tool
  // result; the conversation keeps reasoning as plain text, so it cannot be offered honestly.
  if (p->protocol == Protocol::kAnthropicMessages && !cfg.reasoning.empty() && cfg.reasoning != "off")
    return fail(Errc::kInvalid, what + ": 'reasoning' is not supported with provider anthropic yet");

  m.api_key_env = cfg.api_key_env.empty() ? std::string(p->key_env) : cfg.api_key_env;
  if (!m.api_key_env.empty()) {
    auto key = ctx.secrets.get(m.api_key_env);
    if (!key) return fail(Errc::kInvalid, what + ": " + m.api_key_env + " is not set (in the environment or .env)");
    m.api_key = std::move(*key);
  }
  if (p->priced) m.pricing_key = Pricing::normalise(cfg.provider, cfg.name);
  // Trials of one provider endpoint share a bucket; two local servers do not.
  m.bucket = ctx.buckets.bucket(cfg.provider + " " + m.base_url);
  return m;
}

Result<std::unique_ptr<LlmClient>> make_llm_client(const manifest::ModelConfig& cfg, const LlmContext& ctx) {
  auto m = resolve_model(cfg, ctx);
  if (!m) return m.fail();
  if (find_provider(cfg.provider)->protocol == Protocol::kAnthropicMessages)
    return std::unique_ptr<LlmClient>(std::make_unique<AnthropicClient>(std::move(*m), ctx));
  return std::unique_ptr<LlmClient>(std::make_unique<OpenAiClient>(std::move(*m), ctx));
}

}  // namespace forge::agent
