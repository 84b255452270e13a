// Builds the LlmClient for a run config's model entry: provider defaults, key, bucket, pricing.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "agent/llm_client.h"
#include "agent/llm_context.h"
#include "manifest/run_config.h"

namespace forge::agent {

enum class Protocol { kOpenAiChat, kAnthropicMessages };

struct ProviderInfo {
  std::string_view name;      // as written in the run config
  Protocol protocol;
  std::string_view base_url;  // empty: base_url is required
  std::string_view key_env;   // empty: no key unless api_key_env names one
  bool priced;                // false for servers on the user's own hardware
};

// openai, anthropic, openrouter, vllm, ollama, litellm, openai_compatible (docs/models.md).
std::span<const ProviderInfo> known_providers();
const ProviderInfo* find_provider(std::string_view name);

// Applies the provider's defaults and reads the key (ctx.secrets: environment, then .env).
// kInvalid naming the model entry when the provider is unknown, the name is empty, a required
// base_url is missing, or the key's variable is unset. The key itself never appears in an error.
Result<ResolvedModel> resolve_model(const manifest::ModelConfig& cfg, const LlmContext& ctx);

// resolve_model, then the client of the provider's protocol. The client borrows ctx's services.
Result<std::unique_ptr<LlmClient>> make_llm_client(const manifest::ModelConfig& cfg, const LlmContext& ctx);

}  // namespace forge::agent
