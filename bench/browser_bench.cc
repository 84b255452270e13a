// browser_bench [N]: the browser tool's action round trip against Chromium's own --dump-dom.
//
// On its own internal network: a busybox httpd serving a page (forgectl/runner:local) and a browser
// container as a trial makes it (trial::browser_container_spec, forgectl/browser:local). Prints
//   start_ms      create + start the container + Chromium answering on its DevTools pipe
//   action p50/p95  one `browser` call {navigate PAGE} (load + the page read back as the model sees it)
//   dump_dom p50/p95  `chromium-headless-shell --headless --dump-dom PAGE` exec'd in the same container
//   peak_mib      the browser container's peak memory (cgroup v1 max_usage_in_bytes, or v2 memory.peak)
// and removes everything it made.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/strings.h"
#include "engine/client.h"
#include "engine/containers.h"
#include "engine/docker_host.h"
#include "engine/exec.h"
#include "engine/networks.h"
#include "stack/browser_image.h"
#include "stack/local_images.h"
#include "tools/builtin_tools.h"
#include "trial/browser_use.h"

namespace {

using namespace forge;
using Ms = std::chrono::duration<double, std::milli>;

int die(const std::string& why) {
  std::fprintf(stderr, "browser_bench: %s\n", why.c_str());
  return 1;
}

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * (v.size() - 1))];
}

std::string peak_mib(const std::string& id) {
  for (const std::string& f : {"/sys/fs/cgroup/memory/docker/" + id + "/memory.max_usage_in_bytes",
                               "/sys/fs/cgroup/system.slice/docker-" + id + ".scope/memory.peak"}) {
    std::ifstream in(f);
    double bytes = 0;
    if (in >> bytes) return std::to_string(static_cast<int>(bytes / (1 << 20)));
  }
  return "n/a";
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(3, std::atoi(argv[1])) : 30;
  auto host = engine::docker_host_from_env(process_env());
  if (!host) return die(host.error().what());
  auto client = engine::Client::connect(*host);
  if (!client) return die(client.error().what());
  engine::Client& c = **client;
  if (auto b = stack::build_browser_image(c, {}); !b) return die(b.error().what());

  const std::string tag = "fg-bench-browser-" + random_hex(3);
  const std::map<std::string, std::string> labels = {{"io.forgectl.bench", tag}};
  engine::NetworkSpec ns{.name = tag, .internal = true, .labels = labels};
  auto net = engine::create_network(c, ns);
  if (!net) return die(net.error().what());
  std::vector<std::string> made;
  auto cleanup = [&] {
    for (const auto& id : made) (void)engine::remove_container(c, id, engine::RemoveMode::kForce);
    (void)engine::remove_network(c, *net);
  };

  // The page: text, links and a form, about what a task's shop page holds.
  std::string page = "<html><head><title>Bench page</title></head><body><h1>Bench</h1>";
  for (int i = 0; i < 40; ++i)
    page += "<p>Paragraph " + std::to_string(i) + " with some words to read.</p><a href='/p" + std::to_string(i) +
            "'>link " + std::to_string(i) + "</a>";
  page += "<form><input name=q placeholder=Search><button>Go</button></form></body></html>";
  engine::ContainerSpec web;
  web.name = tag + "-web";
  web.image = stack::kRunnerImage;
  web.labels = labels;
  web.cmd = std::vector<std::string>{"sh", "-c",
                                     "mkdir -p /tmp/www && printf '%s' \"$PAGE\" > /tmp/www/index.html && "
                                     "exec httpd -f -p 8080 -h /tmp/www"};
  web.env = {"PAGE=" + page};
  web.host.network_mode = *net;
  web.network = *net;
  web.aliases = {"web"};
  web.host.init = true;
  auto w = engine::create_container(c, web);
  if (!w) return cleanup(), die(w.error().what());
  made.push_back(w->id);
  if (auto st = engine::start_container(c, w->id); !st) return cleanup(), die(st.error().what());

  stack::UpResult up;
  up.name = tag;
  up.plan.runner.networks = {{"internal", {}}};
  up.networks["internal"] = *net;
  auto t0 = Clock::now();
  auto b = trial::start_browser(c, up, Deadline::in(Millis(60000)));
  if (!b) return cleanup(), die(b.error().what());
  const double start_ms = Ms(Clock::now() - t0).count();
  made.push_back(b->container);

  tools::BuiltinOptions o;
  o.browser.session = b->session;
  auto tool = tools::browser_tool(o);
  auto args = json::parse(R"({"actions":[{"type":"navigate","url":"http://web:8080/"}]})", "args");
  std::vector<double> action;
  for (int i = 0; i < n + 1; ++i) {
    auto t1 = Clock::now();
    auto r = tool->call(*args, {Deadline::in(Millis(30000))});
    if (!r) return cleanup(), die(r.error().what());
    if (r->find("Paragraph 3 with") == std::string::npos) return cleanup(), die("the page was not read: " + *r);
    if (i > 0) action.push_back(Ms(Clock::now() - t1).count());  // the first warms the cache
  }
  std::vector<double> dump;
  for (int i = 0; i < std::max(3, n / 3); ++i) {
    engine::ExecOptions eo;
    eo.cmd = {stack::kBrowserBinary,       "--headless", "--no-sandbox",    "--disable-gpu", "--disable-dev-shm-usage",
              "--user-data-dir=/tmp/dump", "--dump-dom", "http://web:8080/"};
    eo.user = stack::kBrowserUser;
    eo.timeout = Millis(60000);
    auto t1 = Clock::now();
    auto r = engine::exec_run(c, b->container, eo);
    if (!r) return cleanup(), die(r.error().what());
    if (r->out.find("Paragraph 39") == std::string::npos) return cleanup(), die("dump-dom printed no page: " + r->err);
    dump.push_back(Ms(Clock::now() - t1).count());
  }
  const std::string peak = peak_mib(b->container);
  std::printf(
      "start_ms %.0f\naction_p50_ms %.0f\naction_p95_ms %.0f\ndump_dom_p50_ms %.0f\ndump_dom_p95_ms %.0f\n"
      "peak_mib %s\n",
      start_ms, pct(action, 0.5), pct(action, 0.95), pct(dump, 0.5), pct(dump, 0.95), peak.c_str());
  b->session.reset();
  cleanup();
  return 0;
}
