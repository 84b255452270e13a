// The built-in tools (docs/tools.md), acting through a Sandbox so the container and local
// executors behave the same.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/limits.h"
#include "tools/sandbox.h"
#include "tools/tool.h"

namespace forge::tools {

// How http_request reaches the network: directly to the trial's services, through the egress
// proxy for anything else under limited_internet.
struct HttpRoute {
  std::string proxy_host;  // empty: no proxy (no_internet: only the task network is reachable)
  int proxy_port = 0;
  std::vector<std::string> no_proxy;  // names reached directly
};

// The trial's json-db namespace, for db_query and db_update (absent: no database tools). The tools
// carry only agent tokens (core/service_token.h: agent_token) for this namespace, each only when
// the task enables the tool that needs it; never the stack's control token, which stays on the host.
struct DbRoute {
  std::string host = "json-db";
  int port = 8000;
  std::string trial;        // "{task_id}_{trial_index}"; empty: no database
  std::string read_token;   // db_query's; empty: sent without a token (json-db answers 401)
  std::string write_token;  // db_update's; likewise
};

// The trial's knowledge base in the rag service, for search_kb (absent: no search_kb). The tool
// carries only the trial's read token of rag's own control token (never json-db's, never a token
// that loads an index).
struct RagRoute {
  std::string host = "rag";
  int port = 8001;
  std::string trial;  // "{task_id}_{trial_index}"; empty: no knowledge base
  std::string token;  // agent_token(service_control_token(stack token, "rag"), trial, kRead)
};

class BrowserSession;

// The trial's browser, for the `browser` tool (absent: no browser tool). Tolokaforge's
// tools.agent.browser settings travel with it.
struct BrowserRoute {
  std::shared_ptr<BrowserSession> session;
  std::string initial_url;                   // loaded before the first action; empty: about:blank
  std::vector<std::string> allowed_actions;  // empty: every action type
  std::string search_url;                    // mock-web's /search; empty: `search` is refused
  int max_screenshots = limits::kMaxScreenshots;  // per trial
};

struct BuiltinOptions {
  std::shared_ptr<Sandbox> sandbox;
  std::vector<std::string> env;  // added to every command bash runs
  HttpRoute http;
  DbRoute db;
  RagRoute rag;
  BrowserRoute browser;
  std::size_t file_read_cap = 8u << 20;  // read_file reads at most this much of a file
};

// Every built-in, calculator included; the executor decides which are enabled.
std::vector<std::shared_ptr<Tool>> builtin_tools(const BuiltinOptions& opts);
std::vector<std::string> builtin_tool_names();

// Each tool, for the factory above.
std::vector<std::shared_ptr<Tool>> file_tools(const BuiltinOptions& opts);
std::shared_ptr<Tool> bash_tool(const BuiltinOptions& opts);
std::shared_ptr<Tool> grep_tool(const BuiltinOptions& opts);
std::shared_ptr<Tool> http_tool(const BuiltinOptions& opts);
std::vector<std::shared_ptr<Tool>> db_tools(const BuiltinOptions& opts);  // empty without a DbRoute::trial
std::shared_ptr<Tool> rag_tool(const BuiltinOptions& opts);               // null without a RagRoute::trial
ToolSpec search_kb_spec();
std::shared_ptr<Tool> browser_tool(const BuiltinOptions& opts);  // null without a BrowserRoute::session
// The db tools' declarations, which golden replay's host-side db_update checks arguments against.
ToolSpec db_query_spec();
ToolSpec db_update_spec();

// A tool whose action is a function; the built-ins are all of this shape.
class FunctionTool : public Tool {
 public:
  using Fn = std::function<Result<std::string>(const json::Value&, const CallContext&)>;
  FunctionTool(ToolSpec spec, Fn fn) : spec_(std::move(spec)), fn_(std::move(fn)) {}
  const ToolSpec& spec() const override { return spec_; }
  Result<std::string> call(const json::Value& args, const CallContext& ctx) override { return fn_(args, ctx); }

 private:
  ToolSpec spec_;
  Fn fn_;
};

}  // namespace forge::tools
