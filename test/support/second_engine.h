// A second, private Docker engine on this host for docker tests: a node without forgectl's images.
#pragma once

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "core/host_settings.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "engine/client.h"
#include "engine/docker_host.h"
#include "support/process.h"

namespace forge::test {

// A second, private Docker engine on this host (its own data root, exec root, containerd and
// default bridge, no iptables of its own), stopped and removed at scope exit. Never
// `--bridge=none`: dockerd then deletes the host's docker0, which the first daemon needs.
class SecondEngine {
 public:
  // On disk, not under /run: /run is often a noexec tmpfs, and the engine runs images from its root.
  SecondEngine() : root_("/var/lib/forgectl-test/engine-" + random_hex(4)), bridge_("fgt" + random_hex(3)) {
    std::filesystem::create_directories(root_);
    remove_root_.f = [root = root_] {
      std::error_code ec;
      std::filesystem::remove_all(root, ec);
    };
    socket_ = root_ + "/docker.sock";
    for (const auto& argv :
         std::vector<std::vector<std::string>>{{"ip", "link", "add", bridge_, "type", "bridge"},
                                               {"ip", "addr", "add", free_bridge_address(), "dev", bridge_},
                                               {"ip", "link", "set", bridge_, "up"}}) {
      auto r = run_process(argv);
      REQUIRE_MESSAGE((r && r->exit_code == 0), ("setting up the second engine's bridge: " + join(argv, " ")));
      remove_bridge_.f = [b = bridge_] { (void)run_process({"ip", "link", "del", b}); };
    }
    auto p = Process::spawn("/usr/sbin/dockerd", {"--host", "unix://" + socket_, "--data-root", root_ + "/data",
                                                  "--exec-root", root_ + "/exec", "--pidfile", root_ + "/docker.pid",
                                                  "--bridge=" + bridge_, "--iptables=false", "--ip6tables=false"});
    REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().what()));
    daemon_ = std::move(*p);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      auto host = engine::parse_docker_host("unix://" + socket_, forge::process_env());
      REQUIRE(host.has_value());
      if (auto c = engine::Client::connect(*host)) break;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until,
                      (std::string("the second dockerd did not answer:\n") + daemon_->err()));
      REQUIRE_MESSAGE(daemon_->running(), (std::string("the second dockerd exited:\n") + daemon_->err()));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  ~SecondEngine() {
    if (daemon_) {
      daemon_->kill(SIGTERM);
      if (!daemon_->wait_for(Millis(30000))) daemon_->kill(SIGKILL);
    }
  }
  std::string address() const { return "unix://" + socket_; }

  // A /28 for the engine's bridge that no interface of this host is in: the docker suite's two
  // shards may each start one at the same time.
  static std::string free_bridge_address() {
    auto addrs = run_process({"ip", "-4", "-o", "addr", "show"});
    std::string used = addrs ? addrs->out : "";
    for (int i = 0; i < 16; ++i) {
      if (used.find("10.213.255." + std::to_string(i * 16 + 1) + "/") == std::string::npos)
        return "10.213.255." + std::to_string(i * 16 + 1) + "/28";
    }
    FAIL("no free /28 in 10.213.255.0/24 for a second engine's bridge");
    return "";
  }

 private:
  struct OnExit {
    std::function<void()> f;
    ~OnExit() {
      if (f) f();
    }
  };
  std::string root_, bridge_, socket_;
  // Destroyed in reverse: the daemon first, then its bridge, then its directory — also when the
  // constructor fails half-way.
  OnExit remove_root_, remove_bridge_;
  std::unique_ptr<Process> daemon_;
};

}  // namespace forge::test
