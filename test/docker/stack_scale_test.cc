// Forty limited_internet stacks (80 networks) brought up at once in-process, then torn down.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/parallel.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "engine/images.h"
#include "manifest/environment_parse.h"
#include "policy/subnets.h"
#include "stack/labels.h"
#include "stack/teardown.h"
#include "stack/up.h"
#include "support/containers.h"

using namespace forge;
using namespace forge::test;

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kStacks = 40;

engine::Filters by_run(const std::string& run) { return {{"label", {std::string(stack::kLabelRun) + "=" + run}}}; }

// At scope exit, removes every stack with an object of run `run` (pass or fail).
struct RunCleanup {
  std::string run;
  ~RunCleanup() {
    auto& c = *docker_env().client;
    std::set<std::string> names;
    if (auto cs = engine::list_containers(c, by_run(run)))
      for (const auto& x : *cs) names.insert(x.labels.count(stack::kLabelStack) ? x.labels.at(stack::kLabelStack) : "");
    if (auto ns = engine::list_networks(c, by_run(run)))
      for (const auto& n : *ns) names.insert(n.labels.count(stack::kLabelStack) ? n.labels.at(stack::kLabelStack) : "");
    names.erase("");
    std::vector<std::string> v(names.begin(), names.end());
    parallel_for(v.size(), [&](std::size_t i) { (void)stack::remove_stack(c, v[i]); }, kStacks);
  }
};

// A temp directory holding one limited_internet manifest with no services; removed at scope exit.
struct ScaleManifest {
  ScaleManifest() {
    std::string tmpl = (fs::temp_directory_path() / "forgectl-scaletest-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    path = (fs::path(dir) / "scale.yaml").string();
    std::ofstream(path) << "network_policy: limited_internet\n"
                           "limited_internet_allowlist: [api.example.org]\n"
                           "limited_internet_allow_private: true\n"
                           "stack: none\n";
  }
  ~ScaleManifest() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string dir, path;
};

double seconds(Millis m) { return static_cast<double>(m.count()) / 1000.0; }

}  // namespace

TEST_CASE("stack scale: 40 limited_internet stacks come up at once on non-overlapping subnets and all go away") {
  auto& c = *docker_env().client;
  REQUIRE_MESSAGE(engine::inspect_image(c, stack::kDefaultProxyImage).has_value(),
                  stack::kDefaultProxyImage << " is missing: run 'forgectl images build'");
  ScaleManifest manifest;
  auto env = manifest::load_environment(manifest.path);
  must(env);
  REQUIRE(env->manifest.network_policy == manifest::NetworkPolicy::kLimitedInternet);

  stack::UpOptions opts;
  opts.host = docker_env().host;
  opts.run_id = "scale-" + docker_env().run_value + "-" + random_hex(3);
  opts.health_timeout = Millis(120000);
  RunCleanup cleanup{opts.run_id};

  // Up, 40 at once.
  std::vector<Result<stack::UpResult>> ups(kStacks, fail(Errc::kIo, "not run"));
  auto start = Clock::now();
  parallel_for(kStacks, [&](std::size_t i) { ups[i] = stack::up_stack(c, *env, opts); }, kStacks);
  Millis up_took = elapsed_since(start);
  MESSAGE("40 concurrent ups took " << seconds(up_took) << " s");

  int ok = 0;
  std::set<std::string> names;
  for (std::size_t i = 0; i < kStacks; ++i) {
    CHECK_MESSAGE(ups[i].has_value(), "stack " << i << ": " << (ups[i] ? "" : ups[i].error().what()));
    if (!ups[i]) continue;
    ++ok;
    names.insert(ups[i]->name);
    CHECK(ups[i]->networks.size() == 2);
    CHECK(ups[i]->containers.size() == 3);  // proxy, resolver, runner
  }
  CHECK(names.size() == static_cast<std::size_t>(ok));

  // What the daemon has for the run: a proxy, a resolver and a runner per stack, two networks per
  // stack, and no two subnets overlapping.
  auto containers = engine::list_containers(c, by_run(opts.run_id));
  auto networks = engine::list_networks(c, by_run(opts.run_id));
  CHECK(must(containers).size() == 3 * kStacks);
  CHECK(must(networks).size() == 2 * kStacks);
  for (const auto& ctr : *containers) CHECK_MESSAGE(ctr.state == "running", ctr.names[0] << " is " << ctr.state);
  std::vector<std::pair<std::string, policy::Ipv4Net>> subnets;
  for (const auto& n : *networks) {
    REQUIRE_MESSAGE(n.ipam.size() == 1, n.name);
    auto net = policy::parse_cidr(n.ipam[0].subnet);
    subnets.emplace_back(n.name, must(net));
  }
  int overlaps = 0;
  for (std::size_t i = 0; i < subnets.size(); ++i)
    for (std::size_t j = i + 1; j < subnets.size(); ++j)
      if (subnets[i].second.overlaps(subnets[j].second)) {
        ++overlaps;
        MESSAGE(subnets[i].first << " " << subnets[i].second.str() << " overlaps " << subnets[j].first << " "
                                 << subnets[j].second.str());
      }
  CHECK(overlaps == 0);

  // Down, 40 at once.
  std::vector<std::string> to_remove(names.begin(), names.end());
  std::vector<stack::TeardownReport> reports(to_remove.size());
  start = Clock::now();
  parallel_for(to_remove.size(), [&](std::size_t i) { reports[i] = stack::remove_stack(c, to_remove[i]); }, kStacks);
  Millis down_took = elapsed_since(start);
  MESSAGE("40 concurrent teardowns took " << seconds(down_took) << " s");
  for (std::size_t i = 0; i < reports.size(); ++i) {
    CHECK_MESSAGE(reports[i].clean(), to_remove[i] << ": " << join(reports[i].errors, "; "));
    CHECK(reports[i].containers == 3);
    CHECK(reports[i].networks == 2);
  }

  auto left_c = engine::list_containers(c, by_run(opts.run_id));
  auto left_n = engine::list_networks(c, by_run(opts.run_id));
  CHECK(must(left_c).empty());
  CHECK(must(left_n).empty());
  auto rules = run_process({"iptables", "-w", "5", "-S", "INPUT"});
  REQUIRE(rules.has_value());
  for (const auto& name : to_remove) CHECK_MESSAGE(rules->out.find("forgectl:" + name) == std::string::npos, name);
}
