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

// The trial switches the mode between phases through the Engine API's kill: SIGUSR1 the --allow
// names, SIGUSR2 every name, SIGHUP none. A lock-free atomic is safe to set in a handler.
std::atomic<int> g_mode{static_cast<int>(services::DnsMode::kAllowlist)};
static_assert(std::atomic<int>::is_always_lock_free);

void on_switch(int sig) {
  const auto m = sig == SIGUSR2 ? services::DnsMode::kOpen : sig == SIGUSR1 ? services::DnsMode::kAllowlist : services::DnsMode::kNone;
  g_mode.store(static_cast<int>(m));
}

void handle_switches() {
  struct sigaction sa {};
  sa.sa_handler = on_switch;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, nullptr);
  sigaction(SIGUSR2, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

std::optional<services::DnsMode> mode_named(const std::string& s) {
  for (auto m : {services::DnsMode::kAllowlist, services::DnsMode::kOpen, services::DnsMode::kNone})
    if (s == services::dns_mode_name(m)) return m;
  return std::nullopt;
}

// The log line the trial waits for after a switch (trial/phase_network.cc reads its word).
std::string mode_line(services::DnsMode m) {
  const char* what = m == services::DnsMode::kOpen ? " (every name)" : m == services::DnsMode::kNone ? " (no name)" : " (the allowed names only)";
  return std::string("resolver mode: ") + services::dns_mode_name(m) + what;
}

constexpr std::size_t kMaxAllowedNames = 1000;  // the allowlist's own limit is lower

Result<services::DnsPolicy> dns_policy(const DnsArgs& a) {
  services::DnsPolicy p;
  p.allow_private = a.allow_private;
  if (a.allow.size() > kMaxAllowedNames)
    return fail(Errc::kInvalid, "--allow: more than " + std::to_string(kMaxAllowedNames) + " names");
  for (const auto& n : a.allow) {
    std::string name = to_lower(n);
    if (name.empty() || name.size() > 253 || name.front() == '.' || name.back() == '.')
      return fail(Errc::kInvalid, "--allow '" + n + "': an exact host name, without a leading or trailing dot");
    p.names.push_back(name);
  }
  return p;
}

int serve_dns(Context& ctx, const DnsArgs& args) {
  auto policy = dns_policy(args);
  if (!policy) return ctx.report(policy.error());
  const auto mode = mode_named(args.mode);  // one of the three: the option's one_of checked it
  if (!mode) return ctx.report(fail(Errc::kInvalid, "--mode '" + args.mode + "': allowlist, open or none").error);
  services::DnsServerOptions o;
  o.host = args.host;
  o.port = static_cast<std::uint16_t>(args.port);
  o.policy = std::move(*policy);
  g_mode.store(static_cast<int>(*mode));
  handle_switches();
  o.policy.mode = &g_mode;
  o.on_mode = [&ctx](services::DnsMode m) { ctx.log.info(mode_line(m)); };
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
  dns.option("--allow", args->allow, "an exact host name to answer (repeatable); none: refuse every name");
  dns.flag("--allow-private", args->allow_private, "answer with private addresses (10/8, 172.16/12, 192.168/16, 100.64/10)");
  dns.option("--mode", args->mode,
             "what to answer at start: allowlist (the --allow names), open (every name: a full_internet phase) or none; "
             "SIGUSR1 switches to allowlist, SIGUSR2 to open, SIGHUP to none")
      .default_val("allowlist")
      .one_of({"allowlist", "open", "none"});
  dns.option("--port", args->port, "UDP port").default_val(53).in_range(0, 65535);
  dns.option("--host", args->host, "IPv4 address to listen on").default_val("0.0.0.0");
  dns.on_run([&ctx, rc, args] { *rc = serve_dns(ctx, *args); });
}

}  // namespace forge::cli
