// Every limit of core/limits.h, just under (accepted) and just over (refused with a message that
// names the file, line and key or the argument), and the hostile inputs the limits exist for.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "agent/agent.h"
#include "core/json.h"
#include "core/jsonpath.h"
#include "core/limits.h"
#include "core/state_hash.h"
#include "manifest/files.h"
#include "manifest/grading_parse.h"
#include "manifest/task_parse.h"
#include "support/deep_json.h"
#include "support/manifest_helpers.h"
#include "tools/redact.h"

using namespace forge;
using forge::test::build_deep;
using forge::test::has;
namespace fs = std::filesystem;

namespace {

std::string nested(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

std::string grading_errors(const forge::test::TempFiles& t, const std::string& yaml) {
  const std::string path = t.write("grading.yaml", yaml);
  auto g = manifest::load_grading(path);
  REQUIRE_FALSE(g);
  return g.error().message;
}

// The problems of a grading.yaml, or "" when it loads.
std::string problems(const forge::test::TempFiles& t, const std::string& yaml) {
  auto g = manifest::load_grading(t.write("grading.yaml", yaml));
  return g ? std::string() : g.error().message;
}

bool grading_loads(const forge::test::TempFiles& t, const std::string& yaml) {
  auto g = manifest::load_grading(t.write("grading.yaml", yaml));
  INFO((g ? "" : g.error().message));
  return bool(g);
}

// A file of `size` bytes that takes no disk space.
void sparse(const std::string& path, std::uintmax_t size) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path).close();
  fs::resize_file(path, size);
}

// "[a, a, …]" with `n` aliases to one anchored list of `k` scalars, under a top-level key.
std::string aliased(std::size_t k, std::size_t n) {
  std::string s = "transcript_rules:\n  must_contain: &a [";
  for (std::size_t i = 0; i < k; ++i) s += i ? ",x" : "x";
  s += "]\nllm_judge:\n  output_schema:\n    type: object\n    x-many: [";
  for (std::size_t i = 0; i < n; ++i) s += i ? ",*a" : "*a";
  return s + "]\n";
}

}  // namespace

TEST_CASE("limits: JSON nesting, just under and just over kMaxJsonDepth") {
  json::Document d;
  CHECK_FALSE(json::parse_document(d, nested(limits::kMaxJsonDepth)));
  CHECK(json::nested_deeper_than(d, limits::kMaxJsonDepth - 1));
  CHECK_FALSE(json::nested_deeper_than(d, limits::kMaxJsonDepth));
  auto bad = json::parse_document(d, nested(limits::kMaxJsonDepth + 1));
  REQUIRE(bad);
  CHECK(bad->why == json::ParseFailure::Why::kTooDeep);
  CHECK(bad->reason == "nesting deeper than 128 levels");
  CHECK(bad->offset == 128);
  CHECK(d.IsNull());
  auto r = json::parse(R"({"a":)" + nested(200) + "}", "the reply");
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "the reply has nesting deeper than 128 levels (at offset 132)");
}

TEST_CASE("limits: a 1 MiB-deep [[[[… document is refused at once, without a crash") {
  const std::string deep(1 << 20, '[');
  const auto start = std::chrono::steady_clock::now();
  auto r = json::parse(deep, "the tool arguments");
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "the tool arguments has nesting deeper than 128 levels (at offset 128)");
  CHECK(json::canonical(deep + std::string(1 << 20, ']')).error().message ==
        "document has nesting deeper than 128 levels (at offset 128)");
  // Redaction falls back to its text pass rather than giving up on a secret.
  CHECK(tools::redact_json(deep + R"("password": "hunter2")") == deep + R"("password": "[REDACTED]")");
  // Refused after 129 bytes, not after reading the megabyte: far below a second even unoptimised.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("limits: JSON size, just under and just over the limit") {
  json::Document d;
  CHECK_FALSE(json::parse_document(d, "[1, 2]", 6));
  auto bad = json::parse_document(d, "[1, 2] ", 6);
  REQUIRE(bad);
  CHECK(bad->why == json::ParseFailure::Why::kTooLarge);
  CHECK(bad->reason == "larger than the limit of 6 bytes (7 bytes)");
  const std::string under = "[" + std::string(limits::kMaxJsonBytes - 2, ' ') + "]";
  CHECK(json::parse(under, "body"));
  CHECK(json::parse(under + " ", "body").error().message ==
        "body is larger than the limit of 67108864 bytes (67108865 bytes)");
}

TEST_CASE("limits: walks over a value deeper than any parse stay off the C stack") {
  json::Document d;
  build_deep(d, 200000, "x");
  CHECK(json::nested_deeper_than(d));
  const std::string text = json::to_string(d);
  CHECK(text.size() == 2 * 200000 + 3);
  CHECK(python_json(d) == text);
  CHECK(state_hash(d).size() == 64);
  CHECK(state_hash(d, {"users.token"}) == state_hash(d));
  json::Document copy;
  json::copy_into(copy, d);
  CHECK(json::to_string(copy) == text);
  auto found = jsonpath_query(d, "$..[0]");
  REQUIRE(found);
  CHECK(found->size() == 200000);
  // Its text is refused by any parse, with the reason.
  CHECK(!json::parse(text, "state"));
}

TEST_CASE("limits: YAML file size, just under and just over kMaxYamlBytes") {
  forge::test::TempFiles t("forgectl-limits-");
  const std::string head = "transcript_rules: {max_turns: 3}\n#";
  std::string yaml = head + std::string(limits::kMaxYamlBytes - head.size() - 1, 'x') + "\n";
  REQUIRE(yaml.size() == limits::kMaxYamlBytes);
  CHECK(grading_loads(t, yaml));
  std::string text = grading_errors(t, yaml + "#");
  CHECK(has(text, "grading.yaml:1:1: the file is larger than the 4.0 MiB limit for YAML (4194305 bytes)"));
}

TEST_CASE("limits: a YAML billion laughs is refused at the alias that crosses the limit") {
  forge::test::TempFiles t("forgectl-limits-");
  std::string yaml = "transcript_rules:\n  must_contain: [x]\nllm_judge:\n  output_schema:\n    type: object\n";
  yaml += "    a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const char prev = static_cast<char>(c - 1);
    yaml += std::string("    ") + c + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) yaml += std::string(i ? ", *" : "*") + prev;
    yaml += "]\n";
  }
  const auto start = std::chrono::steady_clock::now();
  std::string text = grading_errors(t, yaml);
  INFO(text);
  // 10^6 nodes are passed inside the sixth level of lists (line 11), long before 10^9.
  CHECK(has(text, "grading.yaml:11:"));
  CHECK(has(text, "the document expands to more than 1000000 nodes through its aliases"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("limits: YAML expanded nodes and aliases, just under and just over") {
  forge::test::TempFiles t("forgectl-limits-");
  // Nodes: 12 (the maps, keys and scalars of aliased()) + the anchored list (1 + k) + the alias
  // list with its n aliases of 1 + k each = 12 + (1 + k) * (1 + n).
  const std::size_t k = 999;
  const std::size_t fit = (limits::kMaxYamlExpandedNodes - 12) / (k + 1) - 1;  // 998: 999012 nodes
  CHECK_FALSE(has(problems(t, aliased(k, fit)), "expands to more than"));
  std::string over = grading_errors(t, aliased(k, fit + 1));
  CHECK(has(over, "grading.yaml:6:"));
  CHECK(has(over, "the document expands to more than 1000000 nodes through its aliases"));

  CHECK_FALSE(has(problems(t, aliased(1, limits::kMaxYamlAliases)), "aliases"));
  std::string many = grading_errors(t, aliased(1, limits::kMaxYamlAliases + 1));
  CHECK(has(many, "grading.yaml:6:"));
  CHECK(has(many, "more than 1000 aliases (*name) in one file"));
}

TEST_CASE("limits: YAML nesting, just under and just over kMaxYamlDepth") {
  forge::test::TempFiles t("forgectl-limits-");
  // The root map, llm_judge's map and output_schema's map are three levels; the rest is lists.
  auto schema = [](int levels) {
    return "llm_judge:\n  output_schema: {type: object, x: " + nested(levels - 3) + "}\n";
  };
  CHECK_FALSE(has(problems(t, schema(limits::kMaxYamlDepth)), "nest"));
  std::string over = grading_errors(t, schema(limits::kMaxYamlDepth + 1));
  CHECK(has(over, "grading.yaml:2:"));
  CHECK(has(over, "mappings and lists nest deeper than 64 levels (aliases expanded)"));
  // A megabyte of '[' stops at the 65th, with no crash in yaml-cpp's recursive parser.
  std::string text = grading_errors(t, "a: " + std::string(1 << 20, '['));
  CHECK(has(text, "grading.yaml:1:"));
  CHECK(has(text, "mappings and lists nest deeper than 64 levels"));
}

TEST_CASE("limits: a file a task names, just under and just over kMaxTaskFileBytes") {
  forge::test::TempFiles t("forgectl-limits-");
  t.write("grading.yaml", "transcript_rules: {max_turns: 3}\n");
  auto task = [&](const std::string& rest) {
    return t.write("task.yaml",
                   "task_id: t1\nname: T\ncategory: test\ndescription: A task.\ngrading: grading.yaml\n" + rest);
  };
  const std::string copy =
      "initial_state:\n  filesystem:\n    copy:\n      - {from: data/big.bin, to: /work/big.bin}\n";
  sparse(t.file("data/big.bin"), limits::kMaxTaskFileBytes);
  auto ok = manifest::load_task(task(copy));
  CHECK_MESSAGE(ok, (ok ? "" : ok.error().message));
  sparse(t.file("data/big.bin"), limits::kMaxTaskFileBytes + 1);
  auto bad = manifest::load_task(task(copy));
  REQUIRE_FALSE(bad);
  CHECK(has(bad.error().message, "task.yaml:9:16: initial_state.filesystem.copy[0].from: '" + t.file("data/big.bin") +
                                     "' is larger than the 64.0 MiB limit for one task file (67108865 bytes)"));
  // read_text holds the same limit for files it reads.
  CHECK(manifest::read_text(t.file("data/big.bin")).error().message ==
        "'" + t.file("data/big.bin") + "' is larger than the 64.0 MiB limit for one file (67108865 bytes or more)");
  t.write("small.txt", "0123456789");
  CHECK(*manifest::read_text(t.file("small.txt"), 10) == "0123456789");
  CHECK(!manifest::read_text(t.file("small.txt"), 9));
}

TEST_CASE("limits: all files of a task, just under and just over kMaxTaskBytes") {
  forge::test::TempFiles t("forgectl-limits-");
  t.write("grading.yaml", "transcript_rules: {max_turns: 3}\n");
  std::string rest = "initial_state:\n  filesystem:\n    copy:\n";
  for (char c : std::string("abcd")) rest += std::string("      - {from: ") + c + ".bin, to: /work/" + c + ".bin}\n";
  const std::string path = t.write(
      "task.yaml", "task_id: t1\nname: T\ncategory: test\ndescription: A task.\ngrading: grading.yaml\n" + rest);
  const std::uintmax_t yaml = fs::file_size(path) + fs::file_size(t.file("grading.yaml"));
  for (const char* f : {"a.bin", "b.bin", "c.bin"}) sparse(t.file(f), limits::kMaxTaskFileBytes);
  const std::uintmax_t last = limits::kMaxTaskBytes - 3 * limits::kMaxTaskFileBytes - yaml;
  sparse(t.file("d.bin"), last);
  auto ok = manifest::load_task(path);
  CHECK_MESSAGE(ok, (ok ? "" : ok.error().message));
  sparse(t.file("d.bin"), last + 1);
  auto bad = manifest::load_task(path);
  REQUIRE_FALSE(bad);
  CHECK(has(bad.error().message,
            "task.yaml:1:1: the task's files add up to 256.0 MiB, more than the 256.0 MiB limit "
            "for one task (the largest is '"));
}

TEST_CASE("limits: files under a directory a task names, just under and just over kMaxTaskFiles") {
  forge::test::TempFiles t("forgectl-limits-");
  t.write("grading.yaml", "transcript_rules: {max_turns: 3}\n");
  const std::string path = t.write("task.yaml",
                                   "task_id: t1\nname: T\ncategory: test\ndescription: A task.\ngrading: grading.yaml\n"
                                   "initial_state:\n  rag: {corpus_dir: corpus}\n");
  fs::create_directories(t.file("corpus"));
  for (std::size_t i = 0; i < limits::kMaxTaskFiles; ++i) std::ofstream(t.file("corpus/" + std::to_string(i))).close();
  auto ok = manifest::load_task(path);
  CHECK_MESSAGE(ok, (ok ? "" : ok.error().message));
  std::ofstream(t.file("corpus/one-more")).close();
  auto bad = manifest::load_task(path);
  REQUIRE_FALSE(bad);
  CHECK(has(bad.error().message, "task.yaml:7:21: initial_state.rag.corpus_dir: 'corpus' holds more than 10000 files"));
}

TEST_CASE("limits: a replayed trajectory's tool arguments are bounded with aliases expanded") {
  forge::test::TempFiles t("forgectl-limits-");
  auto replay = [&](const std::string& args) {
    return agent::replay_agent(t.write("trajectory.yaml",
                                       "messages:\n  - role: assistant\n    content: hi\n"
                                       "    tool_calls:\n      - name: bash\n        arguments: " +
                                           args + "\n"));
  };
  CHECK(replay("{command: ls}"));
  std::string bomb = "{a: &a [x, x, x, x, x, x, x, x, x, x]";
  for (char c = 'b'; c <= 'i'; ++c) {
    bomb += std::string(", ") + c + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
    bomb += "]";
  }
  auto r = replay(bomb + "}");
  REQUIRE_FALSE(r);
  CHECK(has(r.error().message, "tool arguments expand to more than 1000000 nodes"));
  CHECK(replay(std::string(limits::kMaxYamlDepth, '[') + std::string(limits::kMaxYamlDepth, ']')));
  r = replay(std::string(limits::kMaxYamlDepth + 1, '[') + std::string(limits::kMaxYamlDepth + 1, ']'));
  REQUIRE_FALSE(r);
  CHECK(has(r.error().message, "tool arguments nest deeper than 64 levels"));
}

TEST_CASE("limits: files under the default tests/ of custom_checks, just under and just over") {
  forge::test::TempFiles t("forgectl-limits-");
  t.write("tests/test.sh", "exit 0\n");
  sparse(t.file("tests/fixture.bin"), limits::kMaxTaskFileBytes);
  CHECK(problems(t, "custom_checks:\n  weight: 1\n").empty());
  sparse(t.file("tests/fixture.bin"), limits::kMaxTaskFileBytes + 1);
  CHECK(has(problems(t, "custom_checks:\n  weight: 1\n"),
            "grading.yaml:2:3: custom_checks: '" + t.file("tests/fixture.bin") +
                "' is larger than the 64.0 MiB limit for one task file (67108865 bytes)"));
}
