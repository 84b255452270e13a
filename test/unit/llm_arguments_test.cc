// Tool-call argument repair: only repairs that cannot change the meaning; the rest stays raw.
#include <doctest/doctest.h>

#include "agent/llm_arguments.h"

using namespace forge;
using namespace forge::agent;
using O = RepairedArguments::Outcome;

namespace {

std::string fixed(std::string_view raw) {
  auto r = repair_tool_arguments(raw);
  return r.outcome == O::kInvalid ? "RAW:" + r.text : r.text;
}

}  // namespace

TEST_CASE("llm arguments: valid JSON objects are kept byte for byte") {
  auto r = repair_tool_arguments(R"({ "path" : "a b",  "n": 1 })");
  CHECK(r.outcome == O::kValid);
  CHECK(r.text == R"({ "path" : "a b",  "n": 1 })");
}

TEST_CASE("llm arguments: unambiguous repairs") {
  CHECK(fixed("") == "{}");
  CHECK(fixed("  ") == "{}");
  CHECK(fixed(R"({"a": 1,})") == R"({"a":1})");
  CHECK(fixed(R"({"a": [1, 2,], "b": {"c": 3,},})") == R"({"a":[1,2],"b":{"c":3}})");
  CHECK(fixed("```json\n{\"cmd\": \"ls\"}\n```") == R"({"cmd":"ls"})");
  CHECK(fixed("```\n{\"cmd\": \"ls\"}\n```") == R"({"cmd":"ls"})");
  CHECK(fixed("{'path': '/tmp/x', 'n': 2}") == R"({"path":"/tmp/x","n":2})");
  CHECK(fixed(R"({"path": "/tmp/x", "opts": {"r": true})") == R"({"path":"/tmp/x","opts":{"r":true}})");
  CHECK(fixed(R"("{\"a\": 1}")") == R"({"a":1})");  // encoded twice
  CHECK(repair_tool_arguments(R"({"a": 1,})").note == "trailing comma");
}

TEST_CASE("llm arguments: anything ambiguous stays raw") {
  CHECK(fixed(R"({"a": "it's", 'b': 1})") == R"(RAW:{"a": "it's", 'b': 1})");  // mixed quotes
  CHECK(fixed("{'msg': 'it's here'}") == "RAW:{'msg': 'it's here'}");          // an apostrophe
  CHECK(fixed(R"({"a": {"b": 1)") == R"(RAW:{"a": {"b": 1)");                  // two braces missing
  CHECK(fixed(R"({"a": "unterminated)") == R"(RAW:{"a": "unterminated)");
  CHECK(fixed(R"({"a": "x,}",})") == R"({"a":"x,}"})");  // a comma inside a string is not trailing
  CHECK(fixed("[1, 2]") == "RAW:[1, 2]");                 // not an object
  CHECK(fixed("ls -la") == "RAW:ls -la");
  auto r = repair_tool_arguments(R"({"a" 1})");
  CHECK(r.outcome == O::kInvalid);
  CHECK(r.note.find("offset") != std::string::npos);
}

TEST_CASE("llm arguments: what goes back on the wire") {
  CHECK(arguments_for_wire(R"({"a":1})") == R"({"a":1})");
  CHECK(arguments_for_wire("ls -la") == "{}");

  CHECK(*tool_schema_for_wire(ToolDecl{"t", "", ""}) == R"({"type":"object","properties":{}})");
  CHECK_FALSE(tool_schema_for_wire(ToolDecl{"t", "", "[1]"}));
}
