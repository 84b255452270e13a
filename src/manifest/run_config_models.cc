// Reads the run config's `models:` block: one model per role (agent, user, judge, …).
#include <algorithm>
#include <limits>

#include "manifest/run_config_parse.h"
#include "manifest/run_config_reader.h"
#include "manifest/scalar_parse.h"

namespace forge::manifest {

namespace {

const std::vector<std::string> kModelKeys = {"provider", "name",     "base_url", "api_key_env", "temperature",
                                             "max_tokens", "seed",   "top_p",    "reasoning",   "api_key"};
const std::vector<std::string> kReasoning = {"off", "low", "medium", "high"};
// Self-hosted servers have no address forgectl could assume.
const std::vector<std::string> kNeedBaseUrl = {"vllm", "openai_compatible"};

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

ModelConfig read_model(YamlReader& r, const Field& f) {
  const std::string what = "models." + f.key;
  ModelConfig m;
  bool has_provider = false, has_name = false;
  for (const auto& k : r.known_keys(r.mapping(f, what), what, kModelKeys)) {
    const std::string sub = what + "." + k.key;
    if (k.key == "api_key") {
      refuse_api_key(r, k, what);
    } else if (k.key == "provider") {
      has_provider = true;
      auto v = r.string(k, what);
      const auto& all = model_providers();
      if (v && std::find(all.begin(), all.end(), *v) == all.end())
        r.error(k, sub + ": unknown provider '" + *v + "'", "one of: " + join(all));
      else if (v) m.provider = *v;
    } else if (k.key == "name") {
      has_name = true;
      auto v = r.string(k, what);
      if (v && v->empty()) r.error(k, sub + " is empty");
      else if (v) m.name = *v;
    } else if (k.key == "base_url") {
      auto v = r.string(k, what);
      if (v && v->rfind("http://", 0) != 0 && v->rfind("https://", 0) != 0)
        r.error(k, sub + ": '" + *v + "' is not an http(s) URL");
      else if (v) m.base_url = *v;
    } else if (k.key == "api_key_env") {
      auto v = r.string(k, what);
      if (v && !is_env_name(*v)) r.error(k, sub + ": '" + *v + "' is not an environment variable name");
      else if (v) m.api_key_env = *v;
    } else if (k.key == "temperature") {
      auto v = r.number(k, what);
      if (v && (*v < 0 || *v > 2)) r.error(k, sub + " must be between 0 and 2");
      else if (v) m.temperature = *v;
    } else if (k.key == "top_p") {
      auto v = r.number(k, what);
      if (v && (*v <= 0 || *v > 1)) r.error(k, sub + " must be greater than 0 and at most 1");
      else if (v) m.top_p = *v;
    } else if (k.key == "max_tokens" || k.key == "seed") {
      auto v = r.integer(k, what);
      if (v && (k.key == "max_tokens" ? *v <= 0 || *v > 10'000'000 : *v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max()))
        r.error(k, sub + (k.key == "max_tokens" ? " must be a positive number of tokens" : " is out of range"));
      else if (v) (k.key == "max_tokens" ? m.max_tokens : m.seed) = static_cast<int>(*v);
    } else if (k.key == "reasoning") {
      auto v = r.string(k, what);
      if (v && std::find(kReasoning.begin(), kReasoning.end(), *v) == kReasoning.end())
        r.error(k, sub + " must be one of " + join(kReasoning) + ", got '" + *v + "'");
      else if (v) m.reasoning = *v;
    }
  }
  if (f.node.IsMap()) {
    if (!has_provider) r.error(f, what + " needs a 'provider'", "one of: " + join(model_providers()), At::kKey);
    if (!has_name) r.error(f, what + " needs the model's 'name'", {}, At::kKey);
    if (!m.provider.empty() && m.base_url.empty() &&
        std::find(kNeedBaseUrl.begin(), kNeedBaseUrl.end(), m.provider) != kNeedBaseUrl.end())
      r.error(f, what + ": provider '" + m.provider + "' needs a 'base_url'", {}, At::kKey);
  }
  return m;
}

}  // namespace

const std::vector<std::string>& model_providers() {
  static const std::vector<std::string> kProviders = {"openai", "anthropic", "openrouter",       "vllm",
                                                      "ollama", "litellm",   "openai_compatible"};
  return kProviders;
}

void refuse_api_key(YamlReader& r, const Field& key, const std::string& what) {
  r.error(key, prefix(what) + "an inline 'api_key' is not accepted",
          "keys are read from the environment or .env; use api_key_env", At::kKey);
}

std::map<std::string, ModelConfig> read_models(YamlReader& r, const Field& block) {
  std::map<std::string, ModelConfig> out;
  for (const auto& f : r.mapping_or_null(block, "models")) out[f.key] = read_model(r, f);
  return out;
}

}  // namespace forge::manifest
