// engine_bench SCENARIO N [CONTAINER]: times N runs of one engine call sequence, one duration (ms) per line.
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/strings.h"
#include "engine/containers.h"
#include "engine/curl_transport.h"
#include "engine/exec.h"
#include "engine/networks.h"
#include "stack/local_images.h"

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

int usage() {
  std::fprintf(stderr, "usage: engine_bench exec|exec-helper|exec-phases N CONTAINER | run|network N\n");
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
  auto host = engine::docker_host_from_env(engine::process_env());
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
