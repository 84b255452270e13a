// engine_bench SCENARIO N [CONTAINER|DIR]: times N runs of one engine call sequence, one duration (ms) per line
// (`stack`: "up down" per line, and the phases of each on stderr).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/parallel.h"
#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/curl_transport.h"
#include "engine/exec.h"
#include "engine/images.h"
#include "engine/networks.h"
#include "engine/system.h"
#include "engine/tar.h"
#include "engine/volumes.h"
#include "manifest/environment_parse.h"
#include "policy/subnets.h"
#include "policy/topology.h"
#include "stack/helper_volume.h"
#include "stack/host_firewall.h"
#include "stack/labels.h"
#include "stack/local_images.h"
#include "stack/specs.h"
#include "stack/teardown.h"
#include "stack/up.h"

namespace {

using namespace forge;
using Ms = std::chrono::duration<double, std::milli>;

const std::map<std::string, std::string> kLabels{{"io.forgectl.bench", "1"}};

double ms_since(Clock::time_point t) { return Ms(Clock::now() - t).count(); }

// exec: `true` through exec_run, plain or wrapped in the runner image's helper.
Status exec_true(engine::Client& c, const std::string& box, const std::string& helper) {
  engine::ExecOptions o{{"true"}};
  o.helper = helper;
  auto r = engine::exec_run(c, box, o);
  if (!r) return r.fail();
  if (r->exit_code != 0) return fail(Errc::kServer, "exec of true exited " + std::to_string(r->exit_code));
  return {};
}

// exec-phases: the same round trip from the primitives; the phase split goes to stderr.
Status exec_phases(engine::Client& c, const std::string& box) {
  auto t0 = Clock::now();
  auto id = engine::exec_create(c, box, {{"true"}});
  if (!id) return id.fail();
  auto t1 = Clock::now();
  auto stream = engine::exec_start(c, *id);
  if (!stream) return stream.fail();
  auto t2 = Clock::now();
  char buf[4096];
  for (;;) {
    auto step = (*stream)->read_some(buf);
    if (!step) return step.fail();
    if (step->eof) break;
    if (step->would_block)
      if (auto ready = (*stream)->wait(false, Deadline::in(Millis(10000))); !ready || !*ready)
        return fail(Errc::kTimeout, "exec stream did not end");
  }
  auto t3 = Clock::now();
  auto ins = engine::exec_inspect(c, *id);
  if (!ins) return ins.fail();
  if (ins->running || ins->exit_code != 0) return fail(Errc::kServer, "exec of true did not end with 0");
  std::fprintf(stderr, "phase create=%.2f start_headers=%.2f stream_eof=%.2f inspect=%.2f\n", Ms(t1 - t0).count(),
               Ms(t2 - t1).count(), Ms(t3 - t2).count(), ms_since(t3));
  return {};
}

// run: create, start, wait and remove a container running `true` with no network.
Status run_true(engine::Client& c) {
  engine::ContainerSpec spec;
  spec.image = stack::kRunnerImage;
  spec.cmd = std::vector<std::string>{"true"};
  spec.labels = kLabels;
  spec.host.network_mode = "none";
  auto box = engine::create_container(c, spec);
  if (!box) return box.fail();
  if (auto st = engine::start_container(c, box->id); !st) return st;
  auto code = engine::wait_container(c, box->id, engine::WaitCondition::kNotRunning, Millis(60000));
  if (!code) return code.fail();
  if (auto st = engine::remove_container(c, box->id); !st) return st;
  if (*code != 0) return fail(Errc::kServer, "true exited " + std::to_string(*code));
  return {};
}

// network: create and remove an internal bridge network.
Status network_cycle(engine::Client& c) {
  engine::NetworkSpec spec{"forgectl-bench-" + random_hex(4)};
  spec.internal = true;
  spec.labels = kLabels;
  auto id = engine::create_network(c, spec);
  if (!id) return id.fail();
  return engine::remove_network(c, *id);
}

// ---- stack: stack::up_stack + stack::remove_stack in-process, every Engine call timed ----------

// Wraps the real transport and records each call: when it started (from the last `reset`), how
// long it took, and the container or network id it concerned.
class TimingTransport final : public engine::Transport {
 public:
  struct Call {
    engine::Method method;
    std::string target, id;
    double start = 0, end = 0;  // ms since reset()
    long status = 0;
    int thread = 0;
  };

  explicit TimingTransport(std::shared_ptr<engine::Transport> inner) : inner_(std::move(inner)) {}

  Result<engine::Response> send(const engine::Request& req) override {
    auto t = Clock::now();
    auto r = inner_->send(req);
    note(req, t, r ? r->status : -1, r ? std::string_view(r->body) : std::string_view());
    return r;
  }
  Result<engine::Response> stream(const engine::Request& req, const engine::ChunkSink& sink) override {
    auto t = Clock::now();
    auto r = inner_->stream(req, sink);
    note(req, t, r ? r->status : -1, {});
    return r;
  }
  Result<std::unique_ptr<engine::Stream>> hijack(const engine::Request& req) override {
    auto t = Clock::now();
    auto r = inner_->hijack(req);
    note(req, t, r ? 101 : -1, {});
    return r;
  }
  std::string describe() const override { return inner_->describe(); }
  bool is_local() const override { return inner_->is_local(); }

  void reset() {
    std::lock_guard lock(mu_);
    calls_.clear();
    origin_ = Clock::now();
  }
  double now() const { return Ms(Clock::now() - origin_).count(); }
  std::vector<Call> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  void note(const engine::Request& req, Clock::time_point t, long status, std::string_view body) {
    auto end = Clock::now();
    Call c{req.method, req.target, {}, Ms(t - origin_).count(), Ms(end - origin_).count(), status, 0};
    // The object: from a create's answer ({"Id":"…"}), else the path segment after containers/ or networks/.
    if (auto at = body.find("\"Id\":\""); req.method == engine::Method::kPost && at != std::string_view::npos) {
      auto from = at + 6;
      c.id = std::string(body.substr(from, body.find('"', from) - from));
    } else {
      std::string_view path = std::string_view(req.target).substr(0, req.target.find('?'));
      for (std::string_view kind : {"/containers/", "/networks/"})
        if (auto k = path.find(kind); k != std::string_view::npos) {
          auto rest = path.substr(k + kind.size());
          c.id = std::string(rest.substr(0, rest.find('/')));
        }
    }
    std::lock_guard lock(mu_);
    auto [it, fresh] = threads_.try_emplace(std::this_thread::get_id(), static_cast<int>(threads_.size()));
    c.thread = it->second;
    calls_.push_back(std::move(c));
  }

  std::shared_ptr<engine::Transport> inner_;
  mutable std::mutex mu_;
  Clock::time_point origin_ = Clock::now();
  std::vector<Call> calls_;
  std::map<std::thread::id, int> threads_;
};

bool is_call(const TimingTransport::Call& c, engine::Method m, std::string_view path_part) {
  return c.method == m && c.target.find(path_part) != std::string::npos;
}

void print_trace(const char* what, const std::vector<TimingTransport::Call>& calls) {
  for (const auto& c : calls)
    std::fprintf(stderr, "call %s +%8.2f %7.2f t%d %-6s %s %ld\n", what, c.start, c.end - c.start, c.thread,
                 engine::method_name(c.method), c.target.c_str(), c.status);
}

// "phase up k=v …": where an up went. prep is everything before the network create (info,
// network list, image inspects); firewall is the gap between the network create's answer and the
// first container create, where close_host runs iptables and ip6tables. svc_* are means over the
// services; services_wall runs from the first create to the end of the last service start,
// runner_wall from the runner's create to the end of its start (runner_archive: the PUT archive
// calls that copy forgectl's helper in before the start), containers_wall from the first create to
// the end of the last start, and after is what follows that.
void print_up_phases(const std::vector<TimingTransport::Call>& calls, const std::string& runner_id, double total) {
  using engine::Method;
  double net_start = -1, net_end = -1, first_create = -1, svc_end = 0, run_from = -1, run_end = 0, last_end = 0;
  double sums[4] = {0, 0, 0, 0}, runner[4] = {0, 0, 0, 0};
  int counts[4] = {0, 0, 0, 0};
  for (const auto& c : calls) {
    double d = c.end - c.start;
    int kind = is_call(c, Method::kPost, "/containers/create") ? 0
               : c.method == Method::kGet && c.target.find("/containers/") != std::string::npos &&
                       c.target.ends_with("/json") && c.target.find("/containers/json") == std::string::npos
                   ? 1
               : is_call(c, Method::kPost, "/start") ? 2
               : is_call(c, Method::kPut, "/archive")  ? 3
                                                       : -1;
    if (is_call(c, Method::kPost, "/networks/create") && net_start < 0) net_start = c.start, net_end = c.end;
    if (kind == 0 && first_create < 0) first_create = c.start;
    if (kind < 0) continue;
    if (kind == 2) last_end = std::max(last_end, c.end);
    if (c.id == runner_id) {
      runner[kind] += d;
      if (kind == 0) run_from = c.start;
      if (kind == 2) run_end = c.end;
    } else {
      sums[kind] += d;
      ++counts[kind];
      if (kind == 2) svc_end = std::max(svc_end, c.end);
    }
  }
  auto mean = [&](int k) { return counts[k] ? sums[k] / counts[k] : 0.0; };
  std::fprintf(stderr,
               "phase up prep=%.2f network=%.2f firewall=%.2f services_wall=%.2f svc_create=%.2f svc_inspect=%.2f "
               "svc_start=%.2f runner_wall=%.2f runner_create=%.2f runner_inspect=%.2f runner_archive=%.2f "
               "runner_start=%.2f containers_wall=%.2f after=%.2f calls=%zu total=%.2f\n",
               net_start, net_end - net_start, first_create - net_end, svc_end - first_create, mean(0), mean(1), mean(2),
               run_end - run_from, runner[0], runner[1], runner[3], runner[2], last_end - first_create, total - last_end,
               calls.size(), total);
}

// "phase down k=v …": list, the parallel removes, network list and remove; firewall is the time
// after the network delete, where reopen_host runs iptables -D until it fails, and ip6tables -D.
void print_down_phases(const std::vector<TimingTransport::Call>& calls, double total) {
  using engine::Method;
  double list = 0, rm_from = 1e18, rm_end = 0, net_list = 0, net_rm = 0, net_rm_end = 0;
  for (const auto& c : calls) {
    double d = c.end - c.start;
    if (is_call(c, Method::kGet, "/containers/json")) list += d;
    else if (c.method == Method::kDelete && c.target.find("/containers/") != std::string::npos)
      rm_from = std::min(rm_from, c.start), rm_end = std::max(rm_end, c.end);
    else if (c.method == Method::kGet && c.target.find("/networks?") != std::string::npos) net_list += d;
    else if (c.method == Method::kDelete && c.target.find("/networks/") != std::string::npos)
      net_rm += d, net_rm_end = std::max(net_rm_end, c.end);
  }
  std::fprintf(stderr, "phase down list=%.2f remove_wall=%.2f net_list=%.2f net_remove=%.2f firewall=%.2f calls=%zu total=%.2f\n",
               list, rm_end - rm_from, net_list, net_rm, total - net_rm_end, calls.size(), total);
}

// ---- stack-whatif: up_stack and remove_stack with the changes suggested in bench/README.md -------
// A prototype for measuring, not a replacement: the same plan, specs, labels, subnet reservation,
// firewall rule and hardening check as stack/up.cc for a stack without sidecar, builds or
// healthchecks, with these changes, each on unless FORGECTL_BENCH_WHATIF (a comma list) leaves it out:
//   parallel      the runner is created, checked, given the helper and started together with the
//                 services instead of after them
//   prestage      (without parallel; off by default) the runner is created, checked and given the
//                 helper while the services start, and started once they have: a running runner
//                 still means a finished stack
//   image-helper  no effect since the helper comes from forgectl's read-only helper volume
//                 (stack/helper_volume.h) in every runner; kept so old command lines still parse
//   fw            on down, the firewall rule is removed while the network is deleted (the
//                 containers are gone by then) instead of after it
// Each distinct image is inspected once in every case.
struct WhatIfUp {
  std::string name, runner_id;
};

struct WhatIf {
  bool parallel = true, image_helper = true, fw = true, prestage = false;
  static WhatIf from_env() {
    const char* v = std::getenv("FORGECTL_BENCH_WHATIF");
    if (!v) return {};
    std::string s = std::string(",") + v + ",";
    auto on = [&](const char* k) { return s.find(std::string(",") + k + ",") != std::string::npos; };
    return {on("parallel"), on("image-helper"), on("fw"), on("prestage")};
  }
};

Result<WhatIfUp> whatif_up(engine::Client& c, const manifest::LoadedEnvironment& env, WhatIf w) {
  WhatIfUp out;
  out.name = stack::new_stack_name(env.task_id);
  stack::StackLabels sl{out.name, random_hex(8), manifest::policy_name(env.manifest.network_policy), env.source,
                        ProcessIdentity::current(), std::time(nullptr) + 12 * 3600, stack::OwnerMode::kDetached};
  // The bench is a main of its own: it reads the environment here, once per stack.
  const HostSettings host = HostSettings::from(process_env());
  auto pool = policy::SubnetPool::from_settings(host);
  if (!pool) return pool.fail();
  std::vector<policy::Ipv4Net> reserved;
  bool done = false;
  ScopeGuard guard([&] {
    if (!done) (void)stack::remove_stack(c, out.name);
    (void)pool->release(reserved);
  });
  auto host_info = engine::info(c);
  if (!host_info) return host_info.fail();
  auto subnets = pool->reserve(policy::network_prefixes(env), [&]() -> Result<std::vector<std::string>> {
    auto nets = engine::list_networks(c);
    if (!nets) return nets.fail();
    std::vector<std::string> in_use;
    for (const auto& n : *nets)
      for (const auto& cfg : n.ipam) in_use.push_back(cfg.subnet);
    return in_use;
  });
  if (!subnets) return subnets.fail();
  reserved = *subnets;
  auto helper = stack::own_helper(host);
  if (!helper) return helper.fail();
  policy::PlanOptions popts{out.name, "", stack::kDefaultProxyImage, [](const std::string&) { return std::nullopt; },
                            helper->volume};
  auto plan = policy::plan_stack(env, popts, *subnets);
  if (!plan) return plan.fail();
  if (plan->proxy) return fail(Errc::kUnsupported, "stack-whatif covers stacks without the egress proxy");
  std::vector<policy::ContainerPlan*> all;
  for (auto& s : plan->services) all.push_back(&s);
  all.push_back(&plan->runner);
  std::map<std::string, std::map<std::string, std::string>> images;  // image -> its labels
  for (auto* p : all) {
    (void)policy::fit_to_host(p->hardening, host_info->ncpu);
    if (p->build || !p->depends_on.empty() || (p->healthcheck && !p->healthcheck->disable))
      return fail(Errc::kUnsupported, "stack-whatif covers services without build, depends_on or healthcheck");
    if (!images.count(p->image)) {
      auto img = engine::inspect_image(c, p->image);
      if (!img) return img.fail();
      images[p->image] = img->labels;
    }
  }
  if (auto hv = stack::ensure_helper_volume(c, host, plan->runner.image); !hv) return hv.fail();
  std::map<std::string, std::string> net_names;
  for (const auto& n : plan->networks) {
    net_names[n.key] = n.name;
    if (auto id = engine::create_network(c, stack::network_spec(n, sl)); !id) return id.fail();
  }
  (void)pool->release(reserved);
  reserved.clear();
  if (host.host_firewall)
    for (const auto& n : plan->networks)
      if (auto st = stack::close_host(n.bridge, out.name); !st) return st.fail();
  std::vector<Status> outcomes(all.size());
  std::vector<std::string> ids(all.size());
  // Creates, checks and (the runner) gives the helper; start_container follows unless staged.
  auto prepare = [&](std::size_t i) -> Status {
    const auto& p = *all[i];
    auto box = engine::create_container(c, stack::container_spec(p, sl, net_names));
    if (!box) return box.fail();
    ids[i] = box->id;
    auto info = engine::inspect_container(c, box->id);
    if (!info) return info.fail();
    std::map<std::string, std::map<std::string, std::string>> volume_options;
    for (const auto& m : info->mounts)
      if (auto v = engine::inspect_volume(c, m.name); m.type == "volume" && v) volume_options[m.name] = v->options;
    if (!policy::hardening_mismatches(p.hardening, stack::applied_hardening(*info, volume_options)).empty())
      return fail(Errc::kUnsupported, "hardening of '" + p.key + "' not applied");
    return {};
  };
  auto one = [&](std::size_t i) {
    outcomes[i] = prepare(i);
    if (outcomes[i]) outcomes[i] = engine::start_container(c, ids[i]);
  };
  std::size_t runner = all.size() - 1;
  std::size_t batch = w.parallel ? all.size() : runner;  // otherwise the runner starts after the services
  std::thread staged;
  if (!w.parallel && w.prestage) staged = std::thread([&] { outcomes[runner] = prepare(runner); });
  parallel_for(batch, one, batch);
  if (staged.joinable()) staged.join();
  bool services_ok = std::all_of(outcomes.begin(), outcomes.begin() + runner, [](const Status& s) { return !!s; });
  if (batch == runner && services_ok) {
    if (!w.prestage) one(runner);
    else if (outcomes[runner]) outcomes[runner] = engine::start_container(c, ids[runner]);
  }
  for (const auto& st : outcomes)
    if (!st) return st.fail();
  out.runner_id = ids.back();
  done = true;
  return out;
}

stack::TeardownReport whatif_down(engine::Client& c, const std::string& name, WhatIf w) {
  stack::TeardownReport rep;
  engine::Filters f{{"label", {std::string(stack::kLabelStack) + "=" + name}}};
  auto boxes = engine::list_containers(c, f);
  if (!boxes) return rep.errors.push_back(boxes.error().what()), rep;
  std::mutex mu;
  parallel_for(boxes->size(), [&](std::size_t i) {
    auto st = engine::remove_container(c, (*boxes)[i].id);
    std::lock_guard lock(mu);
    if (st) ++rep.containers;
    else rep.errors.push_back(st.error().what());
  });
  auto nets = engine::list_networks(c, f);
  if (!nets) return rep.errors.push_back(nets.error().what()), rep;
  for (const auto& n : *nets) {
    std::thread fw;
    auto b = n.labels.find(stack::kLabelBridge);
    if (b != n.labels.end() && w.fw) fw = std::thread([&, bridge = b->second] { (void)stack::reopen_host(bridge, name); });
    auto st = engine::remove_network(c, n.id);
    if (fw.joinable()) fw.join();
    if (b != n.labels.end() && !w.fw) (void)stack::reopen_host(b->second, name);
    if (st) ++rep.networks;
    else rep.errors.push_back(st.error().what());
  }
  return rep;
}

// stack N DIR: up the task in DIR through stack::up_stack, then remove it with stack::remove_stack,
// as `forgectl up DIR` and `forgectl down NAME` do but without their process start and connect.
// stack-whatif N DIR: the same with the prototype above.
int stack_bench(int n, const std::string& dir, const engine::DockerHost& host, bool whatif) {
  auto env = manifest::load_environment(dir);
  if (!env) {
    std::fprintf(stderr, "engine_bench stack: %s\n", env.error().what().c_str());
    return 1;
  }
  auto timing = std::make_shared<TimingTransport>(std::make_shared<engine::CurlTransport>(host));
  engine::Client client(timing);
  if (auto st = client.negotiate(host.api_version); !st) {
    std::fprintf(stderr, "engine_bench stack: %s\n", st.error().what().c_str());
    return 1;
  }
  WhatIf what = WhatIf::from_env();
  const char* trace_env = std::getenv("FORGECTL_BENCH_TRACE");
  bool trace = trace_env && *trace_env && std::string(trace_env) != "0";
  for (int i = 0; i < n; ++i) {
    timing->reset();
    std::string name, runner_id;
    if (whatif) {
      auto up = whatif_up(client, *env, what);
      if (!up) {
        std::fprintf(stderr, "engine_bench stack-whatif: %s\n", up.error().what().c_str());
        return 1;
      }
      name = up->name, runner_id = up->runner_id;
    } else {
      stack::UpOptions uo;
      uo.host = HostSettings::from(process_env());
      auto up = stack::up_stack(client, *env, uo);
      if (!up) {
        std::fprintf(stderr, "engine_bench stack: %s\n", up.error().what().c_str());
        return 1;
      }
      name = up->name, runner_id = up->containers.at(policy::kRunnerKey);
    }
    double up_ms = timing->now();
    auto up_calls = timing->calls();
    timing->reset();
    auto rep = whatif ? whatif_down(client, name, what) : stack::remove_stack(client, name);
    double down_ms = timing->now();
    auto down_calls = timing->calls();
    if (!rep.clean() || rep.containers == 0) {
      std::fprintf(stderr, "engine_bench stack: down of %s: %d containers, %d networks, %s\n", name.c_str(),
                   rep.containers, rep.networks, rep.errors.empty() ? "nothing found" : rep.errors.front().c_str());
      return 1;
    }
    if (trace) {
      print_trace("up", up_calls);
      print_trace("down", down_calls);
    }
    print_up_phases(up_calls, runner_id, up_ms);
    print_down_phases(down_calls, down_ms);
    std::printf("%.3f %.3f\n", up_ms, down_ms);
    std::fflush(stdout);
  }
  return 0;
}

int usage() {
  std::fprintf(stderr, "usage: engine_bench exec|exec-helper|exec-phases N CONTAINER | run|network N | stack|stack-whatif N TASK_DIR\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  std::string scenario = argv[1];
  int n = 0;
  std::string_view n_arg = argv[2];
  if (std::from_chars(n_arg.data(), n_arg.data() + n_arg.size(), n).ec != std::errc() || n < 1) return usage();
  std::string box = argc > 3 ? argv[3] : "";

  if (scenario == "stack" || scenario == "stack-whatif") {
    if (box.empty()) return usage();
    auto host = engine::docker_host_from_env(forge::process_env());
    if (!host) {
      std::fprintf(stderr, "engine_bench: %s\n", host.error().what().c_str());
      return 1;
    }
    return stack_bench(n, box, *host, scenario == "stack-whatif");
  }

  std::function<Status(engine::Client&)> once;
  if (scenario == "exec" || scenario == "exec-helper") {
    std::string helper = scenario == "exec-helper" ? engine::kExecHelperPath : "";
    once = [box, helper](engine::Client& c) { return exec_true(c, box, helper); };
  } else if (scenario == "exec-phases") {
    once = [box](engine::Client& c) { return exec_phases(c, box); };
  } else if (scenario == "run") {
    once = run_true;
  } else if (scenario == "network") {
    once = network_cycle;
  } else {
    return usage();
  }
  if (scenario.starts_with("exec") && box.empty()) return usage();

  // Connecting (HEAD /_ping) opens the keep-alive connection; it is set-up, not timed.
  auto host = engine::docker_host_from_env(forge::process_env());
  if (!host) {
    std::fprintf(stderr, "engine_bench: %s\n", host.error().what().c_str());
    return 1;
  }
  auto client = engine::Client::connect(*host);
  if (!client) {
    std::fprintf(stderr, "engine_bench: %s\n", client.error().what().c_str());
    return 1;
  }
  auto* curl = dynamic_cast<engine::CurlTransport*>(&(*client)->transport());
  long connects_before = curl ? curl->connects() : 0;

  for (int i = 0; i < n; ++i) {
    auto t = Clock::now();
    if (auto st = once(**client); !st) {
      std::fprintf(stderr, "engine_bench %s: %s\n", scenario.c_str(), st.error().what().c_str());
      return 1;
    }
    std::printf("%.3f\n", ms_since(t));
    std::fflush(stdout);
  }
  if (curl) std::fprintf(stderr, "connects %ld over %d runs\n", curl->connects() - connects_before, n);
  return 0;
}
