// The scalar forms manifests share (shell words, durations, sizes), diagnostics' format and
// suggestions, and the built-in stacks.
#include <doctest/doctest.h>

#include <string>

#include "manifest/compose_parse.h"
#include "manifest/scalar_parse.h"
#include "manifest/stacks.h"
#include "support/manifest_helpers.h"

using namespace forge;
using namespace forge::manifest;
using forge::test::has;
using forge::test::only;

namespace {

Diagnostics parse_errors(std::string_view text) {
  Diagnostics diags;
  (void)parse_compose(text, "compose.yaml", diags);
  return diags;
}

}  // namespace

TEST_CASE("manifest: command strings are shell-split like compose") {
  struct Case {
    const char* in;
    std::vector<std::string> out;
  };
  const Case cases[] = {
      {"echo hello world", {"echo", "hello", "world"}},
      {"  spaced\tout  ", {"spaced", "out"}},
      {"sh -c 'echo \"$HOME\" done'", {"sh", "-c", "echo \"$HOME\" done"}},
      {R"(say "a \"quoted\" \\ word" x)", {"say", R"(a "quoted" \ word)", "x"}},
      {R"(keep "\n" literal)", {"keep", R"(\n)", "literal"}},
      {R"(a\ b c\'d)", {"a b", "c'd"}},
      {"empty '' \"\" end", {"empty", "", "", "end"}},
      {"glued'single'\"double\"", {"gluedsingledouble"}},
      {"", {}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    auto words = shell_split(c.in);
    REQUIRE(words);
    CHECK(*words == c.out);
  }
  CHECK_FALSE(shell_split("echo 'open"));
  CHECK_FALSE(shell_split("echo \"open"));
  CHECK_FALSE(shell_split("trailing\\"));

  auto diags = parse_errors("services:\n  a:\n    image: x\n    command: echo 'unterminated\n");
  Diagnostic d = only(diags, "unterminated single quote");
  CHECK(d.line == 4);
  CHECK(d.message == "service 'a': 'command': unterminated single quote");
}

TEST_CASE("manifest: durations parse like Go's, as compose writes them") {
  CHECK(parse_duration("1s") == Millis(1000));
  CHECK(parse_duration("500ms") == Millis(500));
  CHECK(parse_duration("1m30s") == Millis(90'000));
  CHECK(parse_duration("1.5h") == Millis(5'400'000));
  CHECK(parse_duration("2h45m3s10ms") == Millis(9'903'010));
  CHECK(parse_duration("0") == Millis(0));
  CHECK(parse_duration("0s") == Millis(0));
  CHECK(parse_duration("10us") == Millis(1));  // never rounds down to "the default"
  for (const char* bad : {"", "1", "s", "-1s", "1x", "1s2", "1 s", "1.s5"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_duration(bad));
  }
  auto diags = parse_errors("services:\n  a:\n    image: x\n    healthcheck:\n      test: true\n      interval: 5\n");
  Diagnostic d = only(diags, "not a duration");
  CHECK(d.line == 6);
  CHECK(d.hint == "write e.g. 1s, 500ms or 1m30s");
}

TEST_CASE("manifest: memory sizes parse like compose's") {
  constexpr std::int64_t kKi = 1024, kMi = kKi * 1024, kGi = kMi * 1024;
  CHECK(parse_memory("1024") == 1024);
  CHECK(parse_memory("100b") == 100);
  CHECK(parse_memory("64k") == 64 * kKi);
  CHECK(parse_memory("256m") == 256 * kMi);
  CHECK(parse_memory("256M") == 256 * kMi);
  CHECK(parse_memory("256mb") == 256 * kMi);
  CHECK(parse_memory("512MiB") == 512 * kMi);
  CHECK(parse_memory("1g") == kGi);
  CHECK(parse_memory("1.5g") == kGi + kGi / 2);
  CHECK(parse_memory("2 GB") == 2 * kGi);
  for (const char* bad : {"", "m", "1x", "1mm", "-1m", "1 g b", "lots"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_memory(bad));
  }
  auto diags = parse_errors("services:\n  a:\n    image: x\n    mem_limit: 1m\n");
  CHECK(only(diags, "minimum of 6m").line == 4);
  CHECK(parse_errors("services:\n  a:\n    image: x\n    mem_limit: 6291456\n").empty());
}

TEST_CASE("manifest: the built-in stacks parse and carry Tolokaforge's names") {
  auto core = builtin_stack("core");
  REQUIRE_MESSAGE(core, (core ? "" : core.error().what()));
  CHECK(core->path == "builtin:core");
  REQUIRE(core->services.size() == 1);
  const ComposeService& db = core->services[0];
  CHECK(db.name == "json-db");
  CHECK(db.image == "forgectl/services:local");
  CHECK(db.read_only);  // json-db keeps its state in memory
  CHECK(db.networks.at("default") == std::vector<std::string>{"db-service", "tolokaforge-db-service"});
  REQUIRE(db.healthcheck);
  CHECK(db.healthcheck->interval == Millis(1000));
  CHECK(db.healthcheck->retries == 30);
  CHECK(db.healthcheck->test.size() == 2);
  CHECK(has(db.healthcheck->test[1], "nc 127.0.0.1 8000"));
  CHECK(has(db.healthcheck->test[1], "\\r\\n"));  // printf, not YAML, turns these into CR LF
  REQUIRE(db.command);
  CHECK(*db.command == std::vector<std::string>{"forgectl", "serve", "json-db", "--port", "8000"});

  auto full = builtin_stack("full");
  REQUIRE(full);
  std::vector<std::string> names;
  for (const auto& s : full->services) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"json-db", "mock-web", "rag"});
  CHECK(full->find("mock-web")->networks.at("default") == std::vector<std::string>{"tolokaforge-mock-web"});
  CHECK(full->find("rag")->networks.at("default") ==
        std::vector<std::string>{"rag-service", "tolokaforge-rag-service"});
  CHECK(has(full->find("mock-web")->healthcheck->test[1], "8080"));
  CHECK(*full->find("rag")->command == std::vector<std::string>{"forgectl", "serve", "rag", "--port", "8001"});
  CHECK(full->find("rag")->image == "forgectl/services:local");
  CHECK(has(full->find("rag")->healthcheck->test[1], "nc 127.0.0.1 8001"));

  auto none = builtin_stack("none");
  REQUIRE(none);
  CHECK(none->services.empty());

  auto missing = builtin_stack("huge");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::kNotFound);
  CHECK(builtin_stack_names() == std::vector<std::string>{"core", "full", "none"});
}

TEST_CASE("manifest: closest_match suggests only close names") {
  const std::vector<std::string> keys = {"image", "depends_on", "environment", "user"};
  CHECK(closest_match("depend_on", keys) == "depends_on");
  CHECK(closest_match("enviroment", keys) == "environment");
  CHECK(closest_match("Image", keys) == "image");
  CHECK(closest_match("ports", keys) == "");
  CHECK(closest_match("cpu", keys) == "");
}

TEST_CASE("manifest: diagnostics format as file:line:col: message (hint: …)") {
  CHECK((Diagnostic{"c.yaml", 3, 5, "bad", "do this"}.format()) == "c.yaml:3:5: bad (hint: do this)");
  CHECK((Diagnostic{"c.yaml", 3, 0, "bad", ""}.format()) == "c.yaml:3: bad");
  CHECK((Diagnostic{"c.yaml", 0, 0, "unreadable", ""}.format()) == "c.yaml: unreadable");
  Diagnostics all;
  all.add({"a.yaml", 1, 1, "one", ""});
  all.add({"b.yaml", 2, 2, "two", "fix"});
  Error e = all.to_error();
  CHECK(e.code == Errc::kInvalid);
  CHECK(e.message == "a.yaml:1:1: one\nb.yaml:2:2: two (hint: fix)");
}
