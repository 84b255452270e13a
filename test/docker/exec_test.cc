// Exec against the real daemon: streams and exit codes, stdin, output caps, and timeouts that
// leave no process behind in the container.
#include <doctest/doctest.h>

#include <random>

#include "core/strings.h"
#include "engine/exec.h"
#include "support/containers.h"

using namespace forge;
using namespace forge::test;

namespace {

engine::ContainerSpec sandbox_spec() {
  engine::ContainerSpec s;
  s.host.network_mode = "none";
  s.host.cap_drop = {"ALL"};
  s.host.security_opt = {"no-new-privileges:true"};
  s.host.readonly_rootfs = true;
  s.host.tmpfs = {{"/tmp", "rw,size=64m"}};
  s.host.pids_limit = 128;
  return s;
}

// Processes in the container whose command line mentions `needle` (the probe itself excluded).
std::string processes_matching(engine::Client& c, const std::string& id, const std::string& needle) {
  engine::ExecOptions ps{{"sh", "-c", "for p in /proc/[0-9]*; do c=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null); "
                                      "case \"$c\" in *" + needle + "*) case \"$c\" in *for\\ p\\ in*) ;; *) echo \"${p#/proc/} $c\";; esac;; esac; done"}};
  auto r = engine::exec_run(c, id, ps);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return r->out;
}

}  // namespace

TEST_CASE("exec gives exactly the command's stdout, stderr and exit code") {
  auto& c = *docker_env().client;
  TestContainer box(sandbox_spec());
  for (const std::string helper : {"", engine::kExecHelperPath}) {
    CAPTURE(helper);
    engine::ExecOptions o{{"sh", "-c", "echo out; echo err >&2; exit 3"}};
    o.helper = helper;
    auto r = engine::exec_run(c, box.id, o);
    must(r);
    CHECK(r->out == "out\n");
    CHECK(r->err == "err\n");
    CHECK(r->exit_code == 3);
    CHECK_FALSE(r->timed_out);
  }
}

TEST_CASE("exec env, user and workdir apply") {
  auto& c = *docker_env().client;
  TestContainer box(sandbox_spec());
  engine::ExecOptions o{{"sh", "-c", "echo \"$X|$Y|$(pwd)|$(id -u)\""}};
  o.env = {"X=1", "Y=two words"};
  o.user = "65534:65534";
  o.workdir = "/tmp";
  auto r = engine::exec_run(c, box.id, o);
  must(r);
  CHECK(r->out == "1|two words|/tmp|65534\n");
}

TEST_CASE("exec with stdin round-trips 1 MiB through cat") {
  auto& c = *docker_env().client;
  TestContainer box(sandbox_spec());
  std::string data(1 << 20, '\0');
  std::mt19937 rng(42);
  for (auto& ch : data) ch = static_cast<char>(rng());
  for (const std::string helper : {"", engine::kExecHelperPath}) {
    CAPTURE(helper);
    engine::ExecOptions o{{"cat"}};
    o.stdin_data = data;
    o.helper = helper;
    o.timeout = Millis(30000);
    auto r = engine::exec_run(c, box.id, o);
    must(r);
    CHECK(r->exit_code == 0);
    CHECK(r->out.size() == data.size());
    CHECK(r->out == data);
  }
}

TEST_CASE("exec output beyond the cap is dropped and marked") {
  auto& c = *docker_env().client;
  TestContainer box(sandbox_spec());
  engine::ExecOptions o{{"sh", "-c", "head -c 1048576 /dev/zero; echo tail >&2"}};
  o.output_cap = 1000;
  auto r = engine::exec_run(c, box.id, o);
  must(r);
  CHECK(r->out.size() == 1000);
  CHECK(r->out_truncated);
  CHECK(r->err == "tail\n");
  CHECK_FALSE(r->err_truncated);
  CHECK(r->exit_code == 0);
}

TEST_CASE("an exec timeout stops the process inside the container") {
  auto& c = *docker_env().client;
  TestContainer box(sandbox_spec());
  SUBCASE("through the helper, which kills the whole process group") {
    engine::ExecOptions o{{"sh", "-c", "sleep 1000 & sleep 1001; echo late"}};
    o.timeout = Millis(2000);
    o.helper = engine::kExecHelperPath;
    auto start = Clock::now();
    auto r = engine::exec_run(c, box.id, o);
    must(r);
    auto took = elapsed_since(start);
    CHECK(r->timed_out);
    CHECK(r->kill_method == "helper");
    CHECK(took < Millis(4000));
    CHECK(r->out.find("late") == std::string::npos);
    CHECK(processes_matching(c, box.id, "sleep 100") == "");
  }
  SUBCASE("a child that escapes into its own session is found by its token") {
    engine::ExecOptions o{{"sh", "-c", "setsid sleep 1002 & sleep 1003"}};
    o.timeout = Millis(1500);
    o.helper = engine::kExecHelperPath;
    auto r = engine::exec_run(c, box.id, o);
    must(r);
    CHECK(r->timed_out);
    CHECK(processes_matching(c, box.id, "sleep 100") == "");
  }
  SUBCASE("without the helper, by killing the exec's session from the host") {
    engine::ExecOptions o{{"sh", "-c", "sleep 1004 & sleep 1005"}};
    o.timeout = Millis(2000);
    auto start = Clock::now();
    auto r = engine::exec_run(c, box.id, o);
    must(r);
    CHECK(r->timed_out);
    CHECK(r->kill_method == "host-session");
    CHECK(elapsed_since(start) < Millis(4500));
    CHECK(processes_matching(c, box.id, "sleep 100") == "");
  }
  // The container itself is untouched by the kill.
  auto info = engine::inspect_container(c, box.id);
  must(info);
  CHECK(info->state.running);
}

TEST_CASE("a command that cannot start is an error, not an exit code") {
  auto& c = *docker_env().client;
  TestContainer box(sandbox_spec());
  engine::ExecOptions o{{"/no/such/binary"}};
  auto r = engine::exec_run(c, box.id, o);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::kInvalid);
  CHECK(r.error().what().find("/no/such/binary") != std::string::npos);

  must(engine::kill_container(c, box.id));
  (void)engine::wait_container(c, box.id, engine::WaitCondition::kNotRunning, Millis(10000));
  auto stopped = engine::exec_run(c, box.id, {{"true"}});
  REQUIRE_FALSE(stopped.has_value());
  CHECK(stopped.error().code == Errc::kConflict);
}
