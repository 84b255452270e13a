// A real one-node Slurm cluster (munged, slurmctld, slurmd) for a docker test, started by
// scripts/slurm-test-cluster.sh with a private config and stopped at scope exit.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "core/strings.h"
#include "core/subprocess.h"
#include "support/paths.h"

namespace forge::test {

class SlurmCluster {
 public:
  SlurmCluster() : dir_("/tmp/forgectl-slurm-" + random_hex(4)) {
    auto r = run_process({"bash", script(), "start", dir_});
    if (!r || r->exit_code != 0) stop();
    REQUIRE_MESSAGE((r && r->exit_code == 0),
                    ("starting the test's Slurm cluster: " + (r ? r->out + r->err : r.error().what())));
  }
  ~SlurmCluster() { stop(); }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // What a client (sbatch, squeue, forgectl slurm) needs in its environment.
  std::map<std::string, std::string> env() const { return {{"SLURM_CONF", dir_ + "/slurm.conf"}}; }

  // A Slurm command (scancel, scontrol, squeue) against this cluster.
  ProcessResult command(std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {"env", "SLURM_CONF=" + dir_ + "/slurm.conf"});
    auto r = run_process(argv);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
    return *r;
  }

  // squeue's state of job `id` ("PENDING", "COMPLETED", …; "" once gone from the queue).
  std::string state(const std::string& id) const {
    auto r = command({"squeue", "-h", "-t", "all", "-j", id, "-o", "%T"});
    return trim(r.out);
  }

  // Waits until job `id` has ended (COMPLETED, FAILED, CANCELLED, TIMEOUT, …); its last state.
  std::string wait_ended(const std::string& id, std::chrono::seconds timeout) const {
    auto until = std::chrono::steady_clock::now() + timeout;
    std::string s;
    while (std::chrono::steady_clock::now() < until) {
      s = state(id);
      if (!s.empty() && s != "PENDING" && s != "RUNNING" && s != "CONFIGURING" && s != "COMPLETING" &&
          s != "REQUEUED" && s != "SUSPENDED")
        return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return "still " + s + " after " + std::to_string(timeout.count()) + " s";
  }

  // The daemons' logs, for a failure's message.
  std::string logs() const {
    std::string out;
    for (const char* f : {"slurmctld.log", "slurmd.log"}) {
      std::ifstream in(dir_ + "/" + f);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      out += std::string("--- ") + f + "\n" + text.substr(text.size() > 3000 ? text.size() - 3000 : 0);
    }
    return out;
  }

 private:
  static std::string script() { return source_dir() + "/scripts/slurm-test-cluster.sh"; }
  void stop() {
    (void)run_process({"bash", script(), "stop", dir_});
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string dir_;
};

}  // namespace forge::test
