// The run's spending cap.
#include "agent/budget.h"

#include "agent/llm_client.h"

namespace forge::agent {

Result<double> Budget::reserve(const std::string& model) {
  std::lock_guard lock(mu_);
  auto& m = per_model_[model];
  double estimate = m.n ? m.total / m.n : 0.0;
  if (max_ && spent_ + reserved_ + estimate > *max_ + 1e-12)
    return fail(Errc::kCancelled, "budget exhausted: $" + std::to_string(spent_) + " spent of $" + std::to_string(*max_));
  if (max_ && spent_ >= *max_) return fail(Errc::kCancelled, "budget exhausted: $" + std::to_string(spent_) + " spent of $" + std::to_string(*max_));
  reserved_ += estimate;
  return estimate;
}

void Budget::settle(const std::string& model, double reserved, std::optional<double> actual) {
  std::lock_guard lock(mu_);
  reserved_ -= reserved;
  if (reserved_ < 0) reserved_ = 0;
  if (actual) {
    spent_ += *actual;
    auto& m = per_model_[model];
    m.total += *actual;
    ++m.n;
  }
}

double Budget::spent() const {
  std::lock_guard lock(mu_);
  return spent_;
}

bool Budget::exhausted() const {
  std::lock_guard lock(mu_);
  return max_ && spent_ >= *max_;
}

namespace {

class BudgetedClient final : public LlmClient {
 public:
  BudgetedClient(std::shared_ptr<LlmClient> in, std::shared_ptr<Budget> b) : in_(std::move(in)), b_(std::move(b)) {}
  std::string describe() const override { return in_->describe(); }
  Result<ChatResponse> chat(const ChatRequest& req) override {
    auto held = b_->reserve(in_->describe());
    if (!held) return held.fail();
    auto r = in_->chat(req);
    b_->settle(in_->describe(), *held, r ? r->cost_usd : std::nullopt);
    return r;
  }

 private:
  std::shared_ptr<LlmClient> in_;
  std::shared_ptr<Budget> b_;
};

}  // namespace

std::shared_ptr<LlmClient> budgeted(std::shared_ptr<LlmClient> inner, std::shared_ptr<Budget> budget) {
  return std::make_shared<BudgetedClient>(std::move(inner), std::move(budget));
}

}  // namespace forge::agent
