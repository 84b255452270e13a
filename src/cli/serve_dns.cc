// `forgectl serve dns`: the trial's resolver, the process inside its container.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/verbs.h"
#include "core/strings.h"
#include "services/dns_server.h"

namespace forge::cli {

namespace {

struct DnsArgs {
  std::string host = "0.0.0.0";
  int port = 53;
  std::vector<std::string> allow;
  bool allow_private = false;
  std::string mode = "allowlist";
};

// The trial switches the mode between phases through the Engine API's kill: SIGUSR1 the first
// allowlist, SIGRTMIN+K allowlist K, SIGUSR2 every name, SIGHUP none. A lock-free atomic is safe
// to set in a handler.
std::atomic<int> g_mode{static_cast<int>(services::DnsMode::kAllowlist)};
static_assert(std::atomic<int>::is_always_lock_free);
constexpr int kMaxAllowlists = 8;  // policy::kMaxAllowlists: SIGRTMIN+1 … SIGRTMIN+7

void on_switch(int sig) {
  int m = static_cast<int>(services::DnsMode::kNone);
  if (sig == SIGUSR2) m = static_cast<int>(services::DnsMode::kOpen);
  if (sig == SIGUSR1) m = static_cast<int>(services::DnsMode::kAllowlist);
  if (sig > SIGRTMIN && sig < SIGRTMIN + kMaxAllowlists) m = services::allowlist_mode(static_cast<std::size_t>(sig - SIGRTMIN));
  g_mode.store(m);
}

void handle_switches() {
  struct sigaction sa {};
  sa.sa_handler = on_switch;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGUSR1, SIGUSR2, SIGHUP}) sigaction(sig, &sa, nullptr);
  for (int k = 1; k < kMaxAllowlists; ++k) sigaction(SIGRTMIN + k, &sa, nullptr);
}

// The log line the trial waits for after a switch (trial/phase_network.cc reads its word).
std::string mode_line(int m) {
  const char* what = m == static_cast<int>(services::DnsMode::kOpen)   ? " (every name)"
                     : m == static_cast<int>(services::DnsMode::kNone) ? " (no name)"
                                                                        : " (the allowed names only)";
  return "resolver mode: " + services::dns_mode_word(m) + what;
}

constexpr std::size_t kMaxAllowedNames = 1000;  // the allowlist's own limit is lower

// "name" (the first allowlist) or "K:name" (allowlist K, 1 <= K < kMaxAllowlists).
Status add_allowed(services::DnsPolicy& p, const std::string& arg) {
  std::size_t k = 0;
  std::string name = to_lower(arg);
  if (auto colon = name.find(':'); colon != std::string::npos) {
    const std::string key = name.substr(0, colon);
    if (key.size() != 1 || key[0] < '1' || key[0] >= '0' + kMaxAllowlists)
      return fail(Errc::kInvalid, "--allow '" + arg + "': K:name takes K from 1 to " + std::to_string(kMaxAllowlists - 1));
    k = static_cast<std::size_t>(key[0] - '0');
    name = name.substr(colon + 1);
  }
  if (name.empty() || name.size() > 253 || name.front() == '.' || name.back() == '.')
    return fail(Errc::kInvalid, "--allow '" + arg + "': an exact host name, without a leading or trailing dot");
  if (k == 0) {
    p.names.push_back(name);
  } else {
    if (p.more_names.size() < k) p.more_names.resize(k);
    p.more_names[k - 1].push_back(name);
  }
  return {};
}

Result<services::DnsPolicy> dns_policy(const DnsArgs& a) {
  services::DnsPolicy p;
  p.allow_private = a.allow_private;
  if (a.allow.size() > kMaxAllowedNames)
    return fail(Errc::kInvalid, "--allow: more than " + std::to_string(kMaxAllowedNames) + " names");
  for (const auto& n : a.allow)
    if (auto st = add_allowed(p, n); !st) return st.fail();
  return p;
}

int mode_named(const std::string& s) {
  return s == "open" ? static_cast<int>(services::DnsMode::kOpen)
         : s == "none" ? static_cast<int>(services::DnsMode::kNone)
                       : static_cast<int>(services::DnsMode::kAllowlist);
}

int serve_dns(Context& ctx, const DnsArgs& args) {
  auto policy = dns_policy(args);
  if (!policy) return ctx.report(policy.error());
  services::DnsServerOptions o;
  o.host = args.host;
  o.port = static_cast<std::uint16_t>(args.port);
  o.policy = std::move(*policy);
  g_mode.store(mode_named(args.mode));  // one of the three: the option's one_of checked it
  handle_switches();
  o.policy.mode = &g_mode;
  o.on_mode = [&ctx](int m) { ctx.log.info(mode_line(m)); };
  // Lines go to stdout whole: the trial reads them back from the container's log.
  auto mu = std::make_shared<std::mutex>();
  o.log_line = [&ctx, mu](std::string_view line) {
    std::lock_guard lock(*mu);
    ctx.out << line << '\n';
    ctx.out.flush();
  };
  ctx.handles_interrupts = true;
  auto server = services::DnsServer::start(std::move(o));
  if (!server) return ctx.report(server.error().with_context("starting the resolver"));
  ctx.log.info("resolver listening on " + args.host + ":" + std::to_string((*server)->port()) + "/udp, answering " +
               std::to_string(args.allow.size()) + " name(s)");
  while (ctx.interrupted.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*server)->stop();
  return kExitOk;
}

}  // namespace

void add_serve_dns(Command serve, Context& ctx, int* rc) {
  auto args = std::make_shared<DnsArgs>();
  auto dns = serve.subcommand("dns",
                              "The trial's resolver: refuses every name but the --allow ones (A queries), logging each "
                              "query as a JSON line on stdout");
  dns.option("--allow", args->allow,
             "an exact host name to answer (repeatable), or K:name for allowlist K (1-7, switched to by SIGRTMIN+K); "
             "none: refuse every name");
  dns.flag("--allow-private", args->allow_private, "answer with private addresses (10/8, 172.16/12, 192.168/16, 100.64/10)");
  dns.option("--mode", args->mode,
             "what to answer at start: allowlist (the --allow names), open (every name: a full_internet phase) or none; "
             "SIGUSR1 switches to allowlist, SIGRTMIN+K to allowlist K, SIGUSR2 to open, SIGHUP to none")
      .default_val("allowlist")
      .one_of({"allowlist", "open", "none"});
  dns.option("--port", args->port, "UDP port").default_val(53).in_range(0, 65535);
  dns.option("--host", args->host, "IPv4 address to listen on").default_val("0.0.0.0");
  dns.on_run([&ctx, rc, args] { *rc = serve_dns(ctx, *args); });
}

}  // namespace forge::cli
