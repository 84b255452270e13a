// A run's spending cap, shared by every trial of the process: each LLM call (agent, user
// simulator, judge) reserves its expected cost first and settles the actual one after, so a
// budget runs out before a call, never in the middle of one.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/result.h"

namespace forge::agent {

class Budget {
 public:
  explicit Budget(std::optional<double> max_usd) : max_(max_usd) {}

  // Reserves the expected cost of one call to `model`: the mean of its earlier calls (0 before
  // the first priced one). Errc::kCancelled ("budget exhausted") when it would not fit.
  Result<double> reserve(const std::string& model);
  // Replaces the reservation by what the call cost (nullopt: price unknown, counted as 0).
  void settle(const std::string& model, double reserved, std::optional<double> actual);
  double spent() const;
  bool exhausted() const;
  std::optional<double> cap() const { return max_; }

 private:
  std::optional<double> max_;
  mutable std::mutex mu_;
  double spent_ = 0, reserved_ = 0;
  struct Mean {
    double total = 0;
    int n = 0;
  };
  std::map<std::string, Mean> per_model_;
};

// An LlmClient that goes through the budget on every call.
class LlmClient;
std::shared_ptr<LlmClient> budgeted(std::shared_ptr<LlmClient> inner, std::shared_ptr<Budget> budget);

}  // namespace forge::agent
