// What every provider client is built from: the process-wide services and the resolved model.
#pragma once

#include <optional>
#include <string>

#include "agent/llm_retry.h"
#include "agent/pricing.h"
#include "agent/rate_bucket.h"
#include "agent/secrets.h"
#include "core/chat.h"
#include "core/log.h"
#include "manifest/run_config.h"

namespace forge::agent {

// Built once in main() (or a test) and borrowed by every client: all of it must outlive them.
struct LlmContext {
  Secrets& secrets;
  RateBucketRegistry& buckets;  // one bucket per provider and base_url, shared by all trials
  const Pricing& pricing;
  Logger* log = nullptr;
  RetryPolicy retry;
};

// A ModelConfig with the provider's defaults applied (make_llm_client does this).
struct ResolvedModel {
  manifest::ModelConfig config;
  std::string wire_name;    // the model name sent to the provider ("openrouter/" stripped)
  std::string base_url;     // effective, without a trailing '/'
  std::string api_key;      // empty when the provider needs none; never logged
  std::string api_key_env;  // where it came from, for messages
  std::optional<std::string> pricing_key;  // nullopt: not priced (a local server)
  RateBucket* bucket = nullptr;
  std::string describe() const { return config.provider + "/" + config.name; }
};

// What both protocols fill alike once a response is parsed: tries, wall time, cost.
inline void finish_response(ChatResponse& r, int attempts, Clock::time_point start, const ResolvedModel& m,
                            const LlmContext& ctx) {
  r.attempts = attempts;
  r.latency = elapsed_since(start);  // the whole call: pacing, retries and waits included
  r.cost_usd = m.pricing_key ? ctx.pricing.cost(*m.pricing_key, r.usage) : std::nullopt;
}

}  // namespace forge::agent
