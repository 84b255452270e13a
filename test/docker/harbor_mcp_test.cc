// A Harbor task whose MCP servers are services of its stack, one over SSE and one over
// streamable HTTP (a Python stdlib server in forgectl/python:local): the agent's calls reach
// them from the host through the trial's network, and a call to a tool no server declared is
// refused before it reaches one.
#include <doctest/doctest.h>

#include "core/json.h"
#include "support/harbor_rig.h"
#include "support/mcp_http_server.h"
#include "trial/trial.h"

using namespace forge;
using namespace forge::test;

namespace {

// A compose service running the test server: `python3 -c SCRIPT MODE PORT HOST PREFIX`.
std::string mcp_service(const std::string& name, const std::string& mode, int port, const std::string& host,
                        const std::string& prefix) {
  json::Writer cmd;
  cmd.begin_array().str("python3").str("-c").str(kHttpMcpServer).str(mode).str(std::to_string(port));
  cmd.str(host + ":" + std::to_string(port)).str(prefix).end_array();
  return "  " + name + ":\n    image: forgectl/python:local\n    command: " + cmd.take() + "\n";
}

std::string write_mcp_task(const TempFiles& d, const std::string& base) {
  const std::string name = "mcp-http";
  d.write(name + "/task.toml",
          "schema_version = \"1.1\"\n[task]\nname = \"test/mcp-http\"\n[agent]\ntimeout_sec = 120\n"
          "[verifier]\ntimeout_sec = 60\n[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n"
          "[[environment.mcp_servers]]\nname = \"notes\"\nurl = \"http://mcp-sse:8000/sse\"\n"  // sse: Harbor's default
          "[[environment.mcp_servers]]\nname = \"calc\"\ntransport = \"streamable-http\"\n"
          "url = \"http://tools-http:8001/mcp\"\n");
  d.write(name + "/instruction.md", "Use the tools.\n");
  write_harbor_dockerfile(d, name, base);
  d.write(name + "/environment/docker-compose.yaml",
          "services:\n  main:\n    build: {context: .}\n" + mcp_service("mcp-sse", "sse", 8000, "mcp-sse", "s_") +
              mcp_service("mcp-http", "streamable", 8001, "tools-http", "h_") +
              "    networks:\n      default:\n        aliases: [tools-http]\n");
  d.write(name + "/tests/test.sh", "echo 1 > /logs/verifier/reward.txt\n");
  return d.dir() + "/" + name;
}

// One assistant turn of these calls, then a final answer.
std::string write_calls(const TempFiles& d, const std::vector<std::pair<std::string, std::string>>& calls) {
  json::Writer w;
  w.begin_object().key("messages").begin_array();
  w.begin_object().field("role", "assistant").field("content", "").key("tool_calls").begin_array();
  for (const auto& [name, args] : calls) w.begin_object().field("name", name).field("arguments", args).end_object();
  w.end_array().end_object();
  w.begin_object().field("role", "assistant").field("content", "done").end_object();
  w.end_array().end_object();
  return d.write("mcp-calls.json", w.take());
}

}  // namespace

TEST_CASE("harbor mcp over http: an sse and a streamable-http service answer the agent; undeclared tools are refused") {
  HarborRig rig("forgectl-test/harbor-mcp-base", "m");
  TempFiles d("forgectl-harbor-mcp-");
  auto task = rig.load(write_mcp_task(d, rig.base));
  auto replay = write_calls(d, {{"s_add", R"({"a":2,"b":40})"},
                                {"h_whoami", "{}"},
                                {"hidden", "{}"},             // answered by either server, declared by neither
                                {"s_add", R"({"a":"two"})"},  // outside the tool's schema
                                {"s_calls", "{}"},
                                {"h_calls", "{}"}});
  auto r = rig.replay_graded(task, replay, 6);
  const auto& log = r.tool_log;
  CHECK(log[0].record.content == "42");  // over SSE, from the host to the service's address
  CHECK(log[1].record.content == "served over streamable");
  CHECK(log[2].record.outcome == tools::ToolOutcome::Kind::kRefused);
  CHECK(log[2].record.content.find("Error: unknown tool 'hidden'") == 0);
  CHECK(log[3].record.outcome == tools::ToolOutcome::Kind::kRefused);
  CHECK(log[3].record.content.find("invalid arguments for 's_add'") != std::string::npos);
  // What each server received: the refused calls never reached either.
  CHECK(log[4].record.content == "s_add,s_calls");
  CHECK(log[5].record.content == "h_whoami,h_calls");
  CHECK(r.grade.score == 1.0);
  CHECK(rig.left_nothing());
}
