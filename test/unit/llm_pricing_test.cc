// The pricing table: the built-in snapshot, name normalisation, overrides, and no made-up prices.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "agent/pricing.h"
#include "core/strings.h"

using namespace forge;
using namespace forge::agent;

namespace {

std::filesystem::path write_temp(const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / ("forge-pricing-" + random_hex(6) + ".json");
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("llm pricing: the built-in snapshot is compiled in and dated") {
  auto p = Pricing::builtin();
  REQUIRE(p);
  CHECK(p->as_of().size() == 10);  // YYYY-MM-DD
  CHECK(p->size() >= 10);
  auto mini = p->find("openai/gpt-4o-mini");
  REQUIRE(mini);
  CHECK(mini->input_per_mtok == doctest::Approx(0.15));
  CHECK(mini->output_per_mtok == doctest::Approx(0.60));
  CHECK(p->find("anthropic/claude-sonnet-4"));
  CHECK(p->find("openai/gpt-4.1"));
}

TEST_CASE("llm pricing: names are normalised to provider/model") {
  CHECK(Pricing::normalise("openai", "gpt-4o") == "openai/gpt-4o");
  CHECK(Pricing::normalise("litellm", "GPT-4o-mini") == "openai/gpt-4o-mini");
  CHECK(Pricing::normalise("anthropic", "claude-3-5-haiku-20241022") == "anthropic/claude-3-5-haiku-20241022");
  CHECK(Pricing::normalise("openrouter", "openrouter/anthropic/claude-sonnet-4") == "anthropic/claude-sonnet-4");
  CHECK(Pricing::normalise("openrouter", "google/gemini-2.5-pro") == "google/gemini-2.5-pro");
  CHECK(Pricing::normalise("openai_compatible", "o4-mini") == "openai/o4-mini");
  CHECK(Pricing::normalise("openai_compatible", "my-finetune") == "openai_compatible/my-finetune");
}

TEST_CASE("llm pricing: dots, dates and -latest find the undated entry; a listed date wins") {
  auto p = Pricing::builtin().value();
  auto haiku = p.find("anthropic/claude-3-5-haiku-20241022");
  REQUIRE(haiku);
  CHECK(haiku->input_per_mtok == doctest::Approx(0.80));
  CHECK(p.find("anthropic/claude-3.5-haiku"));
  CHECK(p.find("anthropic/claude-3-5-haiku-latest"));
  CHECK(p.find("openai/gpt-4-1"));
  CHECK(p.find("openai/gpt-4o-mini-2024-07-18")->input_per_mtok == doctest::Approx(0.15));
  CHECK(p.find("openai/gpt-4o-2024-05-13")->input_per_mtok == doctest::Approx(5.0));  // not gpt-4o's $2.50
  CHECK(p.find("openai/gpt-4o-2024-08-06")->input_per_mtok == doctest::Approx(2.5));
}

TEST_CASE("llm pricing: an unknown model has no cost, never a guess") {
  auto p = Pricing::builtin().value();
  Usage u{1000, 1000};
  CHECK_FALSE(p.cost("openai_compatible/my-finetune", u));
  CHECK_FALSE(p.cost("meta-llama/llama-3.1-8b-instruct", u));
  CHECK_FALSE(p.cost("anthropic/claude-sonnet-4:free", u));  // a variant with its own price
  CHECK_FALSE(Pricing().cost("openai/gpt-4o", u));
  auto c = p.cost("openai/gpt-4o", Usage{2'000'000, 500'000});
  REQUIRE(c);
  CHECK(*c == doctest::Approx(2 * 2.50 + 0.5 * 10.00));
}

TEST_CASE("llm pricing: an override file replaces and adds entries on top of the snapshot") {
  auto file = write_temp(R"({"as_of": "2030-01-01", "models": {
      "openai/gpt-4o": {"input": 1.0, "output": 2.0},
      "acme/rocket-1": {"input": 0.5, "output": 0.5}}})");
  auto p = Pricing::load(file.string());
  std::filesystem::remove(file);
  REQUIRE(p);
  CHECK(p->as_of() == "2030-01-01");
  CHECK(p->find("openai/gpt-4o")->input_per_mtok == doctest::Approx(1.0));
  CHECK(p->find("acme/rocket-1"));
  CHECK(p->find("openai/gpt-4o-mini"));  // the rest of the snapshot stays

  auto bad = write_temp(R"({"models": {"x/y": {"input": "cheap", "output": 1}}})");
  auto r = Pricing::load(bad.string());
  std::filesystem::remove(bad);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kInvalid);
  CHECK(r.error().message.find("models.x/y") != std::string::npos);

  auto typo = Pricing::parse(R"({"modles": {}})", "p.json");
  REQUIRE_FALSE(typo);
  CHECK(typo.error().message.find("unknown key 'modles'") != std::string::npos);

  CHECK_FALSE(Pricing::load("/nonexistent/pricing.json"));
  CHECK(Pricing::load("")->size() == Pricing::builtin()->size());
}
