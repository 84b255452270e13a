// The sandbox's OCI runtime against the real daemon (the suite's daemon registers crun and runsc:
// scripts/install-runsc.sh, scripts/ensure-docker.sh): gVisor's kernel under runsc, the red
// team's privilege probes under each runtime, the helper's tool calls under runsc, a run's
// trials recording their runtime, and a runtime this host cannot give refused before anything starts.
#include <doctest/doctest.h>

#include <filesystem>

#include "engine/containers.h"
#include "engine/system.h"
#include "support/privilege_probes.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"
#include "tools/container_sandbox.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// A precondition, not a skip: the suite needs the runtime registered.
engine::SystemInfo require_runtime(const std::string& name) {
  auto info = engine::info(*docker_env().client);
  REQUIRE_MESSAGE(info.has_value(), (info ? "" : info.error().what()));
  REQUIRE_MESSAGE(
      info->runtimes.count(name) == 1,
      "the docker suite needs the '"
          << name
          << "' runtime registered with the daemon: run "
             "scripts/install-runsc.sh (builds runsc; scripts/test.sh runs it) and scripts/ensure-docker.sh (registers crun and runsc)");
  return *info;
}

std::string sh(const std::string& id, const std::string& script) {
  engine::ExecOptions o{{"sh", "-c", script}};
  o.timeout = Millis(20000);
  auto r = engine::exec_run(*docker_env().client, id, o);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return r->out;
}

}  // namespace

TEST_CASE("runtime: runsc's kernel is gVisor's; the privilege probes hold under runc and runsc alike") {
  for (const std::string rt : {"runc", "runsc"}) {
    CAPTURE(rt);
    require_runtime(rt);
    TempDir dir;
    TestStack s(dir.write("env.yaml", "stack: none\nruntime: " + rt + "\n"));
    CHECK(s.result.runtime == rt);
    auto runner = engine::inspect_container(*docker_env().client, s.id("runner"));
    REQUIRE(runner.has_value());
    CHECK(runner->host.runtime == rt);  // what the post-create verification compared
    const std::string kernel = sh(s.id("runner"), "uname -r");
    if (rt == "runsc")
      CHECK(kernel == "4.4.0\n");  // gVisor's Sentry reports this release
    else
      CHECK(kernel != "4.4.0\n");
    check_privilege_probes(s.id("runner"), rt);
    // What gVisor enforces differently (docs/environment.md): its /proc ignores dumpability, so
    // the helper's fd/ and environ are open to the agent's uid (its memory is not). If this
    // changes, so must the docs.
    const std::string open_fds = sh(s.id("runner"), with_helper_running("ls /proc/$h/fd >/dev/null 2>&1 && echo open"));
    CHECK(open_fds == (rt == "runsc" ? "open\n" : ""));
  }
}

TEST_CASE("runtime: under runsc the helper drops to the agent and serves bash and file tools") {
  require_runtime("runsc");
  TempDir dir;
  TestStack s(dir.write("env.yaml", "stack: none\nruntime: runsc\n"));
  tools::ContainerSandbox box(*docker_env().client, {s.id("runner"), "/work", "1000:1000"});
  auto r = box.run({{"sh", "-c", "id -u; id -g"}});
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  CHECK(r->exit_code == 0);
  CHECK(r->out == "1000\n1000\n");
  auto wrote = box.write_file("notes.txt", "under gVisor\n", false);
  REQUIRE_MESSAGE(wrote.has_value(), (wrote ? "" : wrote.error().what()));
  auto back = box.read_file("notes.txt", 0, 1 << 20);
  REQUIRE(back.has_value());
  CHECK(back->data == "under gVisor\n");
  // The deadline kills the command's group: kill tokens work on gVisor's /proc.
  tools::RunRequest slow{{"sh", "-c", "sleep 30 & sleep 30"}};
  slow.timeout = Millis(1500);
  auto t = box.run(slow);
  REQUIRE(t.has_value());
  CHECK(t->timed_out);
}

TEST_CASE("runtime: files-basic with the oracle under runsc passes, and its trial records runsc") {
  require_runtime("runsc");
  TempDir dir;
  const std::string task = copy_example_task("files-basic", dir.path() + "/files-basic");
  const std::string out = dir.path() + "/out";
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--runtime", "runsc", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 1);
  INFO(trials[0].error, " ", trials[0].termination_reason);
  CHECK(trials[0].graded());
  CHECK(trials[0].binary_pass);
  CHECK(trials[0].runtime == "runsc");
  CHECK(slurp(out + "/" + trials[0].trial_dir + "/trial.html").find("runtime runsc") != std::string::npos);
}

TEST_CASE("runtime: --runtime nosuch, and crun on a cgroup v1 host, exit 2 before any container, saying why") {
  const auto info = require_runtime("crun");
  TempDir dir;
  const std::string task = copy_example_task("files-basic", dir.path() + "/files-basic");
  auto nosuch = forgectl_run({"run", task, "--agent", "oracle", "--runtime", "nosuch", "--out", dir.path() + "/a"});
  CHECK_MESSAGE(nosuch.code == 2, nosuch.text());
  CHECK(nosuch.err.find("runtime 'nosuch': the daemon does not have it") != std::string::npos);
  CHECK(nosuch.err.find("\"runtimes\"") != std::string::npos);  // the daemon.json snippet
  CHECK(!fs::exists(dir.path() + "/a/trials.jsonl"));

  auto up = forgectl_run({"up", task, "--runtime", "nosuch"});
  CHECK_MESSAGE(up.code == 2, up.text());
  CHECK(up.err.find("does not have it") != std::string::npos);

  auto crun = forgectl_run({"run", task, "--agent", "oracle", "--runtime", "crun", "--out", dir.path() + "/b"});
  if (info.cgroup_version == "1") {
    CHECK_MESSAGE(crun.code == 2, crun.text());
    CHECK(crun.err.find("crun cannot apply a sandbox's limits on this host") != std::string::npos);
    CHECK(!fs::exists(dir.path() + "/b/trials.jsonl"));
  } else {
    CHECK_MESSAGE(crun.code == 0, crun.text());  // cgroup v2: crun serves
  }
}

TEST_CASE("runtime: a helper that cannot drop privileges makes the trial an infra error (sandbox), never a grade") {
  TempDir dir;
  const std::string task = copy_example_task("files-basic", dir.path() + "/files-basic");
  // A helper that refuses to serve exactly as forgectl-exec did under gVisor before prctl; every
  // other mode runs its command, so the rest of the trial goes on as usual.
  const std::string helper = dir.write("refusing-helper",
                                       "#!/bin/sh\n"
                                       "case \"$1\" in\n"
                                       "  --serve) echo 'forgectl-exec: cannot drop privileges to 1000:1000: "
                                       "/proc/self/status shows NoNewPrivs not set' >&2; exit 125;;\n"
                                       "  --kill-all|--kill-token) echo 0; exit 0;;\n"
                                       "esac\n"
                                       "while [ $# -gt 0 ] && [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n");
  fs::permissions(helper, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  const std::string cfg = dir.write("run.yaml", "orchestrator:\n  max_attempt_retries: 0\n");
  const std::string out = dir.path() + "/out";
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--config", cfg, "--out", out},
                        {{"FORGECTL_EXEC_HELPER", helper}});
  CHECK_MESSAGE(r.code == 1, r.text());  // an infra error after retries: exit 1
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 1);
  CHECK(trials[0].outcome == results::Outcome::kInfraError);
  CHECK(trials[0].infra_kind == results::InfraKind::kSandbox);
  CHECK(trials[0].termination_reason == "sandbox_broken");
  CHECK(trials[0].error.find("cannot drop privileges to 1000:1000") != std::string::npos);
  CHECK(!trials[0].graded());
  CHECK(!trials[0].binary_pass);
}
