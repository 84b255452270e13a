// A scripted LLM provider on 127.0.0.1 (OpenAI chat completions and Anthropic Messages, answers
// from a script in order, every request recorded) and a harness building clients against it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "agent/llm_factory.h"
#include "core/json.h"

namespace forge::test {

struct ScriptedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. {"Retry-After", "2"}
  std::string body;
  std::chrono::milliseconds delay{0};  // wait before answering, to exercise timeouts
  bool held = false;  // answer only after release(): the test acts while the client waits
};

struct RecordedRequest {
  std::string method, path;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class FakeLlmServer {
 public:
  static constexpr std::string_view kOpenAiPath = "/v1/chat/completions";
  static constexpr std::string_view kAnthropicPath = "/v1/messages";

  FakeLlmServer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw std::runtime_error("fake llm server: socket failed");
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;  // ephemeral
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(listen_fd_);
      throw std::runtime_error("fake llm server: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~FakeLlmServer() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    acceptor_.join();
    for (auto& t : workers_) t.join();
    ::close(listen_fd_);
  }
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  int port() const { return port_; }
  // What a model entry's base_url should be: both protocols' paths live under it.
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

  // Appends `r` to the script `times` times. An exhausted script answers 599 (an obvious failure).
  void push(ScriptedResponse r, int times = 1) {
    std::lock_guard lock(mu_);
    for (int i = 0; i < times; ++i) script_.push_back(r);
  }
  void push(int status, std::string body, std::vector<std::pair<std::string, std::string>> headers = {}) {
    push(ScriptedResponse{status, std::move(headers), std::move(body)});
  }

  // Lets held responses go.
  void release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::size_t remaining() const {
    std::lock_guard lock(mu_);
    return script_.size();
  }

 private:
  void accept_loop() {
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (stop_) return;
      }
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard lock(mu_);
      workers_.emplace_back([this, fd] {
        serve(fd);
        ::close(fd);
      });
    }
  }

  bool stopping() {
    std::lock_guard lock(mu_);
    return stop_;
  }

  // Reads more bytes into `buf`; false on EOF, error or stop.
  bool read_more(int fd, std::string& buf) {
    for (;;) {
      if (stopping()) return false;
      pollfd p{fd, POLLIN, 0};
      int rc = ::poll(&p, 1, 20);
      if (rc == 0) continue;
      if (rc < 0) return false;
      char tmp[16384];
      ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n <= 0) return false;
      buf.append(tmp, static_cast<std::size_t>(n));
      return true;
    }
  }

  static void send_all(int fd, std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);  // the client may be gone
      if (n <= 0) return;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  static std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  static std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s);
  }

  void serve(int fd) {
    std::string buf;
    std::size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos)
      if (!read_more(fd, buf)) return;
    RecordedRequest req;
    std::string head = buf.substr(0, end);
    buf.erase(0, end + 4);
    std::size_t line_end = head.find("\r\n");
    std::string request_line = head.substr(0, line_end);
    auto sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
    req.method = request_line.substr(0, sp1);
    req.path = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    for (std::size_t pos = line_end; pos != std::string::npos && pos < head.size();) {
      std::size_t next = head.find("\r\n", pos + 2);
      std::string line = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      if (auto colon = line.find(':'); colon != std::string::npos)
        req.headers[lower(line.substr(0, colon))] = trim(std::string_view(line).substr(colon + 1));
      pos = next;
    }
    if (lower(req.headers["expect"]) == "100-continue") send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n");
    std::size_t length = std::strtoul(req.headers["content-length"].c_str(), nullptr, 10);
    while (buf.size() < length)
      if (!read_more(fd, buf)) return;
    req.body = buf.substr(0, length);

    ScriptedResponse r;
    if (req.method != "POST" || (req.path != kOpenAiPath && req.path != kAnthropicPath)) {
      r = ScriptedResponse{404, {}, R"({"error":{"message":"fake llm server: no route )" + req.method + " " + req.path + R"("}})"};
    } else {
      std::lock_guard lock(mu_);
      requests_.push_back(req);
      if (script_.empty()) {
        r = ScriptedResponse{599, {}, R"({"error":{"message":"fake llm server: the script is exhausted"}})"};
      } else {
        r = std::move(script_.front());
        script_.pop_front();
      }
    }
    if (r.delay.count() > 0) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, r.delay, [this] { return stop_; });
    }
    if (r.held) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stop_ || released_; });
    }
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " Scripted\r\nContent-Type: application/json\r\n";
    for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
    out += "Content-Length: " + std::to_string(r.body.size()) + "\r\nConnection: close\r\n\r\n" + r.body;
    send_all(fd, out);
  }

  int listen_fd_ = -1;
  int port_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool released_ = false;
  std::deque<ScriptedResponse> script_;
  std::vector<RecordedRequest> requests_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

// Response bodies in each protocol's shape.
namespace fake_llm {

inline std::string openai_message(std::string_view content, const std::vector<std::vector<std::string>>& calls,
                                  std::string_view finish, int in, int out) {
  json::Writer w;
  w.begin_object().field("id", "chatcmpl-fake").field("object", "chat.completion").field("model", "fake");
  w.key("choices").begin_array().begin_object().field("index", 0).key("message").begin_object();
  w.field("role", "assistant");
  if (content.empty()) w.key("content").null();
  else w.field("content", content);
  if (!calls.empty()) {
    w.key("tool_calls").begin_array();
    for (const auto& c : calls) {  // {id, name, arguments text}
      w.begin_object().field("id", c[0]).field("type", "function").key("function").begin_object();
      w.field("name", c[1]).field("arguments", c[2]).end_object().end_object();
    }
    w.end_array();
  }
  w.end_object().field("finish_reason", finish).end_object().end_array();
  w.key("usage").begin_object().field("prompt_tokens", in).field("completion_tokens", out);
  w.field("total_tokens", in + out).end_object();
  return w.end_object().take();
}

inline std::string openai_text(std::string_view text, int in = 12, int out = 3) {
  return openai_message(text, {}, "stop", in, out);
}
// `arguments` is the text the model produced, valid JSON or not.
inline std::string openai_tool_call(std::string_view id, std::string_view name, std::string_view arguments,
                                    int in = 20, int out = 8) {
  return openai_message("", {{std::string(id), std::string(name), std::string(arguments)}}, "tool_calls", in, out);
}
inline std::string openai_error(std::string_view message, std::string_view code, std::string_view type = "invalid_request_error") {
  json::Writer w;
  w.begin_object().key("error").begin_object().field("message", message).field("type", type).field("code", code);
  return w.end_object().end_object().take();
}

inline std::string anthropic_message(std::string_view text, std::string_view tool_id, std::string_view tool_name,
                                     std::string_view input_json, std::string_view stop, int in, int out) {
  json::Writer w;
  w.begin_object().field("id", "msg_fake").field("type", "message").field("role", "assistant").field("model", "fake");
  w.key("content").begin_array();
  if (!text.empty()) w.begin_object().field("type", "text").field("text", text).end_object();
  if (!tool_id.empty()) {
    w.begin_object().field("type", "tool_use").field("id", tool_id).field("name", tool_name);
    w.key("input").raw_value(input_json).end_object();
  }
  w.end_array().field("stop_reason", stop).key("stop_sequence").null();
  w.key("usage").begin_object().field("input_tokens", in).field("output_tokens", out).end_object();
  return w.end_object().take();
}
inline std::string anthropic_text(std::string_view text, int in = 12, int out = 3) {
  return anthropic_message(text, "", "", "", "end_turn", in, out);
}
// `input_json` must be a JSON object: the Messages API always sends parsed input.
inline std::string anthropic_tool_use(std::string_view id, std::string_view name, std::string_view input_json,
                                      std::string_view text = "", int in = 20, int out = 8) {
  return anthropic_message(text, id, name, input_json, "tool_use", in, out);
}
inline std::string anthropic_error(std::string_view type, std::string_view message) {
  json::Writer w;
  w.begin_object().field("type", "error").key("error").begin_object().field("type", type).field("message", message);
  return w.end_object().end_object().take();
}

}  // namespace fake_llm

// A fake server plus everything make_llm_client needs, with fake keys in a fake environment and
// sleeps recorded instead of slept (the jitter is fixed at 0.5, so backoff is deterministic).
struct LlmHarness {
  static constexpr const char* kOpenAiKey = "sk-test-openai-5f2c9a71";
  static constexpr const char* kAnthropicKey = "sk-ant-test-8d41b0e3";
  static constexpr const char* kOpenRouterKey = "sk-or-test-2a6e77c4";

  FakeLlmServer server;
  std::map<std::string, std::string> env{
      {"OPENAI_API_KEY", kOpenAiKey}, {"ANTHROPIC_API_KEY", kAnthropicKey}, {"OPENROUTER_API_KEY", kOpenRouterKey}};
  agent::Secrets secrets{{}, [this](const std::string& name) -> std::optional<std::string> {
                           auto it = env.find(name);
                           return it == env.end() ? std::nullopt : std::optional(it->second);
                         }};
  agent::RateBucketRegistry buckets;
  agent::Pricing pricing = agent::Pricing::builtin().value();
  std::mutex sleeps_mu;
  std::vector<std::chrono::milliseconds> sleeps;
  agent::LlmContext ctx{secrets, buckets, pricing, nullptr,
                        agent::RetryPolicy{.sleep = [this](std::chrono::milliseconds d) {
                                             std::lock_guard lock(sleeps_mu);
                                             sleeps.push_back(d);
                                           },
                                           .jitter = [] { return 0.5; }}};

  manifest::ModelConfig model(std::string provider, std::string name) const {
    manifest::ModelConfig m;
    m.provider = std::move(provider);
    m.name = std::move(name);
    m.base_url = server.base_url();
    return m;
  }
  std::unique_ptr<agent::LlmClient> client(const manifest::ModelConfig& m) {
    auto c = agent::make_llm_client(m, ctx);
    if (!c) throw std::runtime_error(c.error().what());
    return std::move(*c);
  }
  std::unique_ptr<agent::LlmClient> client(std::string provider, std::string name) {
    return client(model(std::move(provider), std::move(name)));
  }
  // The i-th recorded request body, parsed.
  json::Document body(std::size_t i) const {
    auto reqs = server.requests();
    json::Document d;
    if (i < reqs.size()) d.Parse(reqs[i].body.c_str());
    return d;
  }
};

}  // namespace forge::test
