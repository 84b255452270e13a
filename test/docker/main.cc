// The docker suite's main: connect, build the local images, run the tests, remove what they made.
// Without a daemon it skips (exit 77), unless FORGECTL_REQUIRE_DOCKER=1 makes that a failure.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/containers.h"
#include "engine/images.h"
#include "engine/networks.h"
#include "stack/local_images.h"
#include "stack/python_image.h"
#include "support/docker_env.h"

namespace forge::test {

DockerEnv& docker_env() {
  static DockerEnv env;  // test-suite state, set once by main
  return env;
}

std::map<std::string, std::string> test_labels(std::map<std::string, std::string> extra) {
  extra["io.forgectl.test"] = docker_env().run_value;
  return extra;
}

std::string free_test_subnet() {
  std::set<std::string> used;
  if (auto nets = engine::list_networks(*docker_env().client))
    for (const auto& n : *nets)
      for (const auto& c : n.ipam) used.insert(c.subnet);
  for (;;) {
    unsigned r = static_cast<unsigned>(std::stoul(random_hex(2), nullptr, 16));
    std::string subnet = "10.213." + std::to_string(r & 255) + "." + std::to_string((r >> 8 & 15) * 16) + "/28";
    if (!used.count(subnet)) return subnet;
  }
}

static void remove_leftovers(engine::Client& c) {
  engine::Filters f{{"label", {docker_env().run_label}}};
  if (auto cs = engine::list_containers(c, f))
    for (const auto& x : *cs) (void)engine::remove_container(c, x.id);
  if (auto ns = engine::list_networks(c, f))
    for (const auto& n : *ns) (void)engine::remove_network(c, n.id);
  if (auto is = engine::list_images(c, f))
    for (const auto& i : *is) (void)engine::remove_image(c, i.id, true);
}

// Builds (or finds cached) the images every test uses. The docker suite runs as shards in parallel
// processes (test/meson.build); a lock makes the second wait for the first's builds and then find
// them cached, instead of both debootstrapping the same image at once.
static bool build_suite_images(DockerEnv& env, const std::string& helper) {
  constexpr const char* kLockPath = "/tmp/forgectl-docker-suite-images.lock";
  int lock = ::open(kLockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ScopeGuard unlock([lock] {
    if (lock >= 0) ::close(lock);
  });
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) {
    std::cerr << "docker suite: locking " << kLockPath << ": " << std::strerror(errno) << '\n';
    return false;
  }
  auto image = stack::build_runner_image(*env.client, {"/bin/busybox", helper});
  if (!image) {
    std::cerr << "docker suite: building the runner image: " << image.error().what() << '\n';
    return false;
  }
  env.runner_image = *image;
  // Stacks under limited_internet need the egress proxy's image; build it up front so no test
  // depends on another having built it first (a fresh machine has none).
  auto squid = stack::build_squid_image(*env.client, {});
  if (!squid) {
    std::cerr << "docker suite: building the squid image: " << squid.error().what() << '\n';
    return false;
  }
  // The built-in stacks' services (json-db, mock-web) run `forgectl serve` from the services image.
  const char* bin = std::getenv("FORGECTL_BIN");
  if (!bin || !*bin) {
    std::cerr << "docker suite: set FORGECTL_BIN to the forgectl binary (meson test does)\n";
    return false;
  }
  auto services = stack::build_services_image(*env.client, {bin, "/bin/busybox"});
  if (!services) {
    std::cerr << "docker suite: building the services image: " << services.error().what() << '\n';
    return false;
  }
  env.services_image = *services;
  // In-process trials run the json-db of FORGECTL_BIN, the binary the image was built from (the
  // binary's own digest tag: another build's suite on this daemon cannot replace it).
  auto services_tag = stack::services_tag_for(bin);
  if (!services_tag) {
    std::cerr << "docker suite: " << services_tag.error().what() << '\n';
    return false;
  }
  env.host.services_image = *services_tag;
  // Python tasks (examples, attacks, the python suites) run on forgectl/python:local; build it here
  // too, for the same reason as squid's (debootstrap on a fresh machine: a few minutes, then cached).
  auto python = stack::build_python_image(*env.client, {.debian_mirror = "http://deb.debian.org/debian"});
  if (!python) {
    std::cerr << "docker suite: building the python image: " << python.error().what() << '\n';
    return false;
  }
  env.python_image = python->id;
  return true;
}

}  // namespace forge::test

int main(int argc, char** argv) {
  using namespace forge;
  bool required = [] {
    const char* v = std::getenv("FORGECTL_REQUIRE_DOCKER");
    return v && std::string(v) == "1";
  }();
  auto host = engine::docker_host_from_env(forge::process_env());
  auto client = host ? engine::Client::connect(*host) : Result<std::unique_ptr<engine::Client>>(host.fail());
  if (!client) {
    std::cerr << "docker suite: " << client.error().what() << '\n';
    if (required) {
      std::cerr << "docker suite: FORGECTL_REQUIRE_DOCKER=1, so a missing daemon is a failure\n";
      return 1;
    }
    std::cerr << "docker suite: skipped (set FORGECTL_REQUIRE_DOCKER=1 to make this a failure)\n";
    return 77;
  }
  auto& env = test::docker_env();
  env.client = client->get();
  env.run_value = random_hex(6);
  env.run_label = "io.forgectl.test=" + env.run_value;

  auto helper = stack::find_exec_helper(env.host.exec_helper);
  if (!helper) {
    std::cerr << "docker suite: " << helper.error().what() << '\n';
    return 1;
  }
  if (!test::build_suite_images(env, *helper)) return 1;

  doctest::Context ctx;
  ctx.applyCommandLine(argc, argv);
  int rc = ctx.run();
  test::remove_leftovers(*env.client);
  return rc;
}
