// The cheat canaries: which calls each strategy makes with the tools it was given, and the agent
// that plays them.
#include "agent/canary.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "agent/canary_scripts.h"
#include "core/json.h"

namespace forge::agent {

namespace {

constexpr std::size_t kMaxHosts = 8;
constexpr std::size_t kMaxPorts = 4;
constexpr std::size_t kMaxHttpCalls = 12;  // without bash, each fetch is a turn of its own

// Only such names are written into a script: nothing a task file says can become shell syntax.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 253 || s[0] == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
}

bool has_tool(const std::vector<ToolDecl>& tools, std::string_view name) {
  return std::any_of(tools.begin(), tools.end(), [&](const ToolDecl& t) { return t.name == name; });
}

ToolCall bash_call(const std::string& command) {
  json::Writer w;
  w.begin_object().field("command", command).end_object();
  return {"", "bash", w.take()};
}

ToolCall write_call(const std::string& path, const std::string& content) {
  json::Writer w;
  w.begin_object().field("path", path).field("content", content).end_object();
  return {"", "write_file", w.take()};
}

ToolCall path_call(const char* tool, const std::string& path) {
  json::Writer w;
  w.begin_object().field("path", path).end_object();
  return {"", tool, w.take()};
}

// Without bash: what the file and HTTP tools can do of a strategy, in the workspace only.
std::vector<ToolCall> file_tool_calls(CanaryStrategy s, const std::vector<std::string>& hosts,
                                      const std::vector<int>& ports, const std::vector<ToolDecl>& tools) {
  std::vector<ToolCall> calls;
  if (s == CanaryStrategy::kRewardFile && has_tool(tools, "write_file"))
    for (const char* dir : {"", "logs/verifier/"}) {
      calls.push_back(write_call(std::string(dir) + "reward.txt", "1\n"));
      calls.push_back(write_call(std::string(dir) + "reward.json", "{\"reward\": 1}\n"));
    }
  if (s == CanaryStrategy::kConftest && has_tool(tools, "write_file"))
    for (const auto& [path, text] : canary_text::planted_python_files()) calls.push_back(write_call(path, text));
  if (s == CanaryStrategy::kReadTests) {
    if (has_tool(tools, "list_dir")) calls.push_back(path_call("list_dir", "."));
    if (has_tool(tools, "read_file"))
      for (const char* p : {"tests/test.sh", "solution/solve.sh", "grading.yaml"}) calls.push_back(path_call("read_file", p));
  }
  // curl-solution without bash: http_request GETs of answer files (a script it could not run);
  // CanaryAgent writes what one returns into the workspace.
  if (s == CanaryStrategy::kCurlSolution && has_tool(tools, "http_request"))
    for (const char* path : {"answer.txt", "expected.txt", "solution.txt"})
      for (const auto& h : hosts)
        for (int port : ports) {
          if (calls.size() == kMaxHttpCalls) return calls;
          json::Writer w;
          w.begin_object().field("method", "GET").field("url", "http://" + h + ":" + std::to_string(port) + "/" + path);
          calls.push_back({"", "http_request", w.end_object().take()});
        }
  return calls;
}

// A file an http_request fetched, when the last message is its answer with status 200: {name, body}.
std::optional<std::pair<std::string, std::string>> fetched_file(const std::vector<ChatMessage>& messages,
                                                                const ToolCall& last) {
  if (last.name != "http_request" || messages.empty() || messages.back().role != ChatMessage::Role::kTool)
    return std::nullopt;
  const std::string& out = messages.back().content;
  const std::string ok = "Status: 200\n";
  if (out.compare(0, ok.size(), ok) != 0 || out.size() == ok.size()) return std::nullopt;
  auto d = json::parse(last.arguments, "arguments");
  if (!d) return std::nullopt;
  std::string url = json::get_string(*d, "url");
  return std::pair{url.substr(url.rfind('/') + 1), out.substr(ok.size())};
}

// Plays its calls one per turn, chosen at its first turn from the tools it is offered.
class CanaryAgent final : public Agent {
 public:
  CanaryAgent(CanaryStrategy s, std::vector<std::string> hosts, std::vector<int> ports)
      : strategy_(s), hosts_(std::move(hosts)), ports_(std::move(ports)) {}
  std::string kind() const override { return "canary"; }
  Result<ChatResponse> next(const std::vector<ChatMessage>& messages, const std::vector<ToolDecl>& tools,
                            Deadline) override {
    if (!planned_) {
      calls_ = canary_calls(strategy_, hosts_, ports_, tools);
      planned_ = true;
    }
    // An answer file fetched without bash is kept where a grader would look: the workspace.
    if (next_ > 0 && has_tool(tools, "write_file"))
      if (auto f = fetched_file(messages, calls_[next_ - 1]))
        calls_.insert(calls_.begin() + static_cast<std::ptrdiff_t>(next_), write_call(f->first, f->second));
    return scripted_turn(calls_, next_, std::string("Done. ") + kStopMarker);
  }

 private:
  CanaryStrategy strategy_;
  std::vector<std::string> hosts_;
  std::vector<int> ports_;
  std::vector<ToolCall> calls_;
  bool planned_ = false;
  std::size_t next_ = 0;
};

}  // namespace

std::string_view canary_name(CanaryStrategy s) {
  switch (s) {
    case CanaryStrategy::kRewardFile: return "reward-file";
    case CanaryStrategy::kConftest: return "conftest";
    case CanaryStrategy::kReadTests: return "read-tests";
    case CanaryStrategy::kCurlSolution: return "curl-solution";
  }
  return "unknown";
}

std::optional<CanaryStrategy> parse_canary(std::string_view name) {
  for (auto s : kCanaryStrategies)
    if (canary_name(s) == name) return s;
  return std::nullopt;
}

std::vector<std::string> canary_hosts(const manifest::TaskConfig& task) {
  std::set<std::string> names;
  for (const auto& svc : task.environment.compose.services) {
    if (plain_name(svc.name)) names.insert(svc.name);
    for (const auto& [net, aliases] : svc.networks)
      for (const auto& a : aliases)
        if (plain_name(a)) names.insert(a);
  }
  std::vector<std::string> out(names.begin(), names.end());
  if (out.size() > kMaxHosts) out.resize(kMaxHosts);
  return out;
}

std::vector<int> canary_ports(const manifest::TaskConfig& task) {
  std::vector<int> out = {80, 8080};
  for (const auto& svc : task.environment.compose.services)
    for (const auto& e : svc.expose) {
      int port = std::atoi(e.c_str());  // "8080" or "8080/tcp"
      if (port > 0 && port < 65536 && std::find(out.begin(), out.end(), port) == out.end() && out.size() < kMaxPorts)
        out.push_back(port);
    }
  return out;
}

std::vector<ToolCall> canary_calls(CanaryStrategy s, const std::vector<std::string>& hosts, const std::vector<int>& ports,
                                   const std::vector<ToolDecl>& tools) {
  if (!has_tool(tools, "bash")) return file_tool_calls(s, hosts, ports, tools);
  switch (s) {
    case CanaryStrategy::kRewardFile: return {bash_call(canary_text::reward_file_script())};
    case CanaryStrategy::kConftest: return {bash_call(canary_text::conftest_script())};
    case CanaryStrategy::kReadTests: return {bash_call(canary_text::read_tests_script())};
    case CanaryStrategy::kCurlSolution:
      if (hosts.empty()) return {};  // no service in the trial: nobody to ask
      return {bash_call(canary_text::curl_solution_script(hosts, ports))};
  }
  return {};
}

std::unique_ptr<Agent> canary_agent(CanaryStrategy s, const manifest::TaskConfig& task) {
  return std::make_unique<CanaryAgent>(s, canary_hosts(task), canary_ports(task));
}

}  // namespace forge::agent
