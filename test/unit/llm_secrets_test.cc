// Secrets: .env parsing, the environment first, the environment untouched, redaction.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agent/secrets.h"
#include "core/strings.h"

using namespace forge;
using namespace forge::agent;

TEST_CASE("llm secrets: .env lines, quotes, comments and export") {
  auto vars = Secrets::parse_dotenv(R"(# keys for the dev box
export OPENAI_API_KEY=sk-plain-123456
ANTHROPIC_API_KEY="sk-ant \"quoted\" \n two"
OPENROUTER_API_KEY='sk-or-$literal\n'
WITH_COMMENT=abc123 # a note
HASH_INSIDE=pa#ss
EMPTY=

  SPACED = value with spaces
)", ".env");
  REQUIRE(vars);
  auto& v = *vars;
  CHECK(v["OPENAI_API_KEY"] == "sk-plain-123456");
  CHECK(v["ANTHROPIC_API_KEY"] == "sk-ant \"quoted\" \n two");
  CHECK(v["OPENROUTER_API_KEY"] == "sk-or-$literal\\n");
  CHECK(v["WITH_COMMENT"] == "abc123");
  CHECK(v["HASH_INSIDE"] == "pa#ss");
  CHECK(v["EMPTY"].empty());
  CHECK(v["SPACED"] == "value with spaces");
}

TEST_CASE("llm secrets: a malformed line names the file and line, never the value") {
  auto r = Secrets::parse_dotenv("A=1\nB=\"sk-unterminated-secret\n", "/home/u/.env");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kInvalid);
  CHECK(r.error().message.find("/home/u/.env:2") != std::string::npos);
  CHECK(r.error().message.find("sk-unterminated") == std::string::npos);
  CHECK_FALSE(Secrets::parse_dotenv("just words\n", ".env"));
  CHECK_FALSE(Secrets::parse_dotenv("1BAD=x\n", ".env"));
}

TEST_CASE("llm secrets: the environment wins over .env, and .env never enters the environment") {
  auto dir = std::filesystem::temp_directory_path() / ("forge-secrets-" + random_hex(6));
  std::filesystem::create_directories(dir);
  const std::string only_file = "FORGE_TEST_ONLY_IN_DOTENV_" + random_hex(3);
  const std::string both = "FORGE_TEST_IN_BOTH_" + random_hex(3);
  std::ofstream(dir / ".env") << only_file << "=from-file-1234\n" << both << "=from-file-5678\n";
  ::setenv(both.c_str(), "from-env-9999", 1);

  auto s = Secrets::load(dir / ".env");
  REQUIRE(s);
  CHECK(s->get(only_file) == "from-file-1234");
  CHECK(s->get(both) == "from-env-9999");
  CHECK_FALSE(s->get("FORGE_TEST_NOT_ANYWHERE"));
  CHECK(std::getenv(only_file.c_str()) == nullptr);  // read, never exported
  ::unsetenv(both.c_str());

  CHECK(Secrets::load(dir / "missing.env"));  // optional by default
  auto required = Secrets::load(dir / "missing.env", DotenvMissing::kError);
  REQUIRE_FALSE(required);
  CHECK(required.error().code == Errc::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST_CASE("llm secrets: redact masks every value handed out, longest first, and nothing else") {
  Secrets s({{"KEY_A", "sk-abcdef123456"}, {"KEY_B", "sk-abcdef123456-long-suffix"}, {"SHORT", "ab"},
             {"NEVER_READ", "unread-value-42"}},
            [](const std::string&) { return std::nullopt; });
  CHECK(s.redact("nothing yet sk-abcdef123456") == "nothing yet sk-abcdef123456");  // nothing handed out
  REQUIRE(s.get("KEY_A"));
  REQUIRE(s.get("KEY_B"));
  REQUIRE(s.get("SHORT"));
  CHECK(s.redact("a=sk-abcdef123456 b=sk-abcdef123456-long-suffix, again sk-abcdef123456") ==
        "a=[REDACTED] b=[REDACTED], again [REDACTED]");
  CHECK(s.redact("about the lab") == "about the lab");  // "ab" is too short to mask
  CHECK(s.redact("unread-value-42") == "unread-value-42");

  // A moved Secrets keeps what it handed out.
  Secrets moved(std::move(s));
  CHECK(moved.redact("x sk-abcdef123456") == "x [REDACTED]");
}
