// The trial's browser: its container, its Chromium, its preflight.
#include "trial/browser_use.h"

#include <algorithm>

#include "core/strings.h"
#include "stack/browser_image.h"
#include "stack/labels.h"
#include "trial/local_trial.h"

namespace forge::trial {

namespace {

constexpr std::int64_t kBrowserMemory = 1536LL << 20;  // Chromium's ~0.5 GiB, the 256 MiB /tmp, headroom
constexpr std::int64_t kBrowserPids = 512;

// The value of `name=` in a container's environment, or "".
std::string env_value(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& kv : env)
    if (kv.rfind(name + "=", 0) == 0) return kv.substr(name.size() + 1);
  return "";
}

}  // namespace

bool uses_browser(const manifest::TaskConfig& t) {
  const auto& tools = t.environment.tools;
  return tools.declared && !tools.mcp_server &&
         std::find(tools.agent_enabled.begin(), tools.agent_enabled.end(), "browser") != tools.agent_enabled.end();
}

std::vector<Problem> check_browser(const manifest::TaskConfig& t) {
  std::vector<Problem> out;
  const auto& tools = t.environment.tools;
  if (tools.mobile_where)
    out.push_back({location(*tools.mobile_where, t.path),
                   "tools.agent.mobile (Tolokaforge's mobile-viewport browser with apps) is not supported by "
                   "forgectl; use tools.agent.browser"});
  const auto& user = tools.user_enabled;
  if (std::find(user.begin(), user.end(), "browser") != user.end())
    out.push_back(
        {location(tools.where, t.path), "tool 'browser' is the agent's only; remove it from tools.user.enabled"});
  if (uses_browser(t) && runs_locally(t))
    out.push_back({location(tools.where, t.path),
                   "tool 'browser' runs Chromium in a container of its own, which the local executor has not; "
                   "use tools.executor: container"});
  return out;
}

engine::ContainerSpec browser_container_spec(const stack::UpResult& up) {
  engine::ContainerSpec s;
  s.name = up.name + "-browser";
  s.image = stack::kBrowserImage;
  s.user = stack::kBrowserUser;
  s.workdir = "/tmp";
  s.labels = up.labels.for_object("browser");
  s.labels[stack::kLabelService] = "browser";
  s.host.cap_drop = {"ALL"};
  s.host.security_opt = {"no-new-privileges"};
  s.host.readonly_rootfs = true;
  s.host.tmpfs = {{"/tmp", "rw,nosuid,nodev,size=256m,mode=1777"}};
  s.host.memory = kBrowserMemory;
  s.host.memory_swap = kBrowserMemory;
  s.host.pids_limit = kBrowserPids;
  s.host.init = true;  // reaps Chromium's helpers when it exits
  const auto& nets = up.plan.runner.networks;
  auto id = nets.empty() ? up.networks.end() : up.networks.find(nets.front().network_key);
  if (id == up.networks.end()) {
    s.host.network_mode = "none";
  } else {
    s.host.network_mode = id->second;
    s.network = id->second;
  }
  s.host.dns_options = up.plan.runner.dns_options;
  s.host.dns = up.plan.runner.dns;
  return s;
}

Result<TrialBrowser> start_browser(engine::Client& c, const stack::UpResult& up, Deadline deadline) {
  const std::string what = "starting the trial's browser";
  auto created = engine::create_container(c, browser_container_spec(up));
  if (!created) return created.fail_with(what);
  if (auto st = engine::start_container(c, created->id); !st) return st.fail_with(what);
  tools::BrowserLaunch launch;
  launch.container = created->id;
  launch.user = stack::kBrowserUser;
  launch.binary = stack::kBrowserBinary;
  // Under limited_internet the runner's proxy variables say where the egress proxy is.
  launch.proxy_server = env_value(up.plan.runner.env, "HTTP_PROXY");
  if (!launch.proxy_server.empty()) {
    launch.proxy_bypass = env_value(up.plan.runner.env, "NO_PROXY");
    std::replace(launch.proxy_bypass.begin(), launch.proxy_bypass.end(), ',', ';');
  }
  auto session = tools::BrowserSession::start(c, launch, deadline);
  if (!session) return session.fail_with(what);
  return TrialBrowser{created->id, std::shared_ptr<tools::BrowserSession>(std::move(*session))};
}

tools::BrowserRoute browser_route(const manifest::TaskConfig& task, const stack::UpResult& up,
                                  std::shared_ptr<tools::BrowserSession> session) {
  tools::BrowserRoute r;
  r.session = std::move(session);
  if (const auto& b = task.environment.tools.browser) {
    r.initial_url = b->initial_url;
    r.allowed_actions = b->allowed_actions;
  }
  if (up.containers.count("mock-web")) r.search_url = "http://mock-web:8080/search";
  return r;
}

}  // namespace forge::trial
