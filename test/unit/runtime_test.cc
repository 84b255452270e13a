// The sandbox's OCI runtime: the manifest key and flags, the preflight against /info, the create
// body and what verification reads back; and a helper that cannot run as the sandbox's failure.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "core/json.h"
#include "engine/containers.h"
#include "engine/stdcopy.h"
#include "engine/system.h"
#include "helper/resolve.h"
#include "manifest/environment_parse.h"
#include "policy/hardening.h"
#include "stack/runtime.h"
#include "support/fake_transport.h"
#include "tools/helper_channel.h"
#include "trial/fault.h"

using namespace forge;
using namespace forge::test;
using engine::Method;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

engine::SystemInfo daemon(const std::string& cgroup, std::map<std::string, engine::RuntimeInfo> runtimes) {
  engine::SystemInfo i;
  i.cgroup_version = cgroup;
  i.runtimes = std::move(runtimes);
  i.default_runtime = "runc";
  return i;
}

}  // namespace

TEST_CASE("runtime: /info's Runtimes and DefaultRuntime are read; HostConfig.Runtime is sent and read back") {
  auto fake = std::make_shared<FakeTransport>();
  fake->on(Method::kGet, "/info", 200,
           R"({"CgroupVersion":"1","DefaultRuntime":"runc","Runtimes":{"runc":{"path":"runc"},)"
           R"("runsc":{"path":"/usr/local/bin/runsc","runtimeArgs":["--platform=ptrace"]}}})");
  engine::Client c(fake);
  auto i = engine::info(c);
  REQUIRE(i.has_value());
  CHECK(i->default_runtime == "runc");
  REQUIRE(i->runtimes.count("runsc") == 1);
  CHECK(i->runtimes.at("runsc").path == "/usr/local/bin/runsc");
  CHECK(i->runtimes.at("runsc").args == std::vector<std::string>{"--platform=ptrace"});

  engine::ContainerSpec s;
  s.image = "x";
  s.host.runtime = "runsc";
  auto body = json::parse(engine::container_create_body(s), "create");
  REQUIRE(body.has_value());
  CHECK(json::get_string(*json::get_object(*body, "HostConfig"), "Runtime") == "runsc");
  s.host.runtime.clear();  // auto: the daemon's default, nothing sent
  CHECK(!has(engine::container_create_body(s), "\"Runtime\""));

  policy::Hardening want, got;
  want.runtime = "runsc";
  got.runtime = "runc";
  auto m = policy::hardening_mismatches(want, got);
  REQUIRE(m.size() == 1);
  CHECK(m[0] == "Runtime: wanted 'runsc', applied 'runc'");
  want.runtime.clear();  // auto is not checked
  CHECK(policy::hardening_mismatches(want, got).empty());
}

TEST_CASE("runtime: a name the daemon lacks, crun on cgroup v1 and runsc without a network are refused, with why") {
  const auto v1 =
      daemon("1", {{"runc", {"runc", {}}}, {"crun", {"/usr/bin/crun", {}}}, {"runsc", {"/usr/local/bin/runsc", {}}}});
  auto nosuch = stack::choose_runtime("nosuch", v1);
  REQUIRE(!nosuch);
  CHECK(nosuch.error().code == Errc::kInvalid);
  CHECK(has(nosuch.error().message, "runtime 'nosuch': the daemon does not have it (it lists crun, runc, runsc)"));
  CHECK(has(nosuch.error().message, R"({"runtimes": {"nosuch": {"path": )"));
  CHECK(has(nosuch.error().message, "kill -HUP $(pidof dockerd)"));

  auto crun = stack::choose_runtime("crun", v1);
  REQUIRE(!crun);
  CHECK(has(crun.error().message, "crun cannot apply a sandbox's limits on this host: the daemon runs cgroup v1"));
  auto crun2 = stack::choose_runtime("crun", daemon("2", {{"crun", {"/usr/bin/crun", {}}}}));
  REQUIRE(crun2.has_value());
  CHECK(crun2->name == "crun");
  CHECK(crun2->named);

  // The binary decides the kind, whatever daemon.json calls it.
  const auto offline = daemon("2", {{"gvisor", {"/usr/local/bin/runsc", {"--network=none"}}}});
  auto no_net = stack::choose_runtime("gvisor", offline);
  REQUIRE(!no_net);
  CHECK(has(no_net.error().message, "runsc is registered with --network=none"));
  CHECK(stack::choose_runtime("gvisor", offline, {.limits = true, .network = false}).has_value());

  auto fine = stack::choose_runtime("runsc", v1);
  REQUIRE(fine.has_value());
  CHECK(fine->name == "runsc");

  for (const char* a : {"", "auto", "docker"}) {
    auto d = stack::choose_runtime(a, v1);
    REQUIRE(d.has_value());
    CHECK(d->name == "runc");
    CHECK(!d->named);  // nothing set on the container, nothing to verify
  }
  CHECK(!stack::choose_runtime("Bad Name", v1));
}

TEST_CASE("runtime: the environment's runtime key and orchestrator.runtime") {
  manifest::Diagnostics d;
  auto m = manifest::parse_environment("runtime: runsc\n", "/t/env.yaml", d);
  CHECK(!d.has_errors());
  CHECK(m.runtime == "runsc");
  manifest::Diagnostics d2;
  auto a = manifest::parse_environment("runtime: auto\n", "/t/env.yaml", d2);
  CHECK(!d2.has_errors());
  CHECK(a.runtime.empty());
  manifest::Diagnostics d3;
  (void)manifest::parse_environment("runtime: \"Run SC\"\n", "/t/env.yaml", d3);
  CHECK(d3.has_errors());
  CHECK(has(d3.to_error().message, "'Run SC' is not a runtime name"));
}

TEST_CASE("helper: the sandbox's first helper dying before its ping is kBroken, an infra error (sandbox)") {
  auto fake = std::make_shared<FakeTransport>();
  fake->on(Method::kPost, "/containers/r/exec", 201, R"({"Id":"e1"})");
  auto stream = fake->on_hijack("/exec/e1/start");
  // What the helper says under gVisor before this fix, then its output closes: exit 125.
  stream->chunks = {engine::stdcopy_frame(engine::StdStream::kStderr,
                                          "forgectl-exec: cannot drop privileges to 1000:1000: /proc/self/status "
                                          "shows NoNewPrivs not set\n")};
  fake->on(Method::kGet, "/exec/e1/json", 200, R"({"Running":false,"ExitCode":125,"Pid":0,"ContainerID":"r"})");
  engine::Client c(fake);
  tools::HelperChannel ch(c, {"r", "/work", "1000:1000"});
  auto r = ch.call(R"({"op":"ping"})", Deadline::in(Millis(2000)));
  REQUIRE(!r);
  CHECK(r.error().code == Errc::kBroken);
  CHECK(has(r.error().what(), "the sandbox cannot run its tool helper"));
  CHECK(has(r.error().what(), "(exit code 125)"));
  CHECK(has(r.error().what(), "cannot drop privileges to 1000:1000"));
  const auto f = trial::classify(r.error(), results::InfraKind::kProvider);
  CHECK(f.outcome == results::Outcome::kInfraError);
  CHECK(f.kind == results::InfraKind::kSandbox);  // whatever phase met it
}

TEST_CASE("helper without openat2 (gVisor): the walk keeps every path and link beneath the workspace") {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("forgectl-walk-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::create_directories(base / "ws/sub");
  fs::create_directories(base / "secret");
  std::ofstream(base / "secret/key") << "hidden";
  std::ofstream(base / "ws/sub/a.txt") << "inside";
  fs::create_symlink("sub/a.txt", base / "ws/rel-link");
  fs::create_symlink("../a.txt", base / "ws/sub/up-link");  // to ws/a.txt: beneath, absent
  fs::create_symlink("../secret/key", base / "ws/out-link");
  fs::create_symlink((base / "secret/key").string(), base / "ws/abs-link");
  fs::create_symlink("loop", base / "ws/loop");
  helper::Root root;
  REQUIRE(helper::Root::open((base / "ws").string(), &root).ok());
  auto read_all = [&](const std::string& rel, std::string* text) {
    helper::Fd fd;
    auto st = helper::walk_beneath(root, rel, O_RDONLY, 0, &fd);
    if (!st.ok()) return st;
    char buf[64];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    *text = std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    return st;
  };
  std::string text;
  CHECK(read_all("sub/a.txt", &text).ok());
  CHECK(text == "inside");
  CHECK(read_all("rel-link", &text).ok());
  CHECK(text == "inside");
  CHECK(read_all("sub/../sub/a.txt", &text).ok());
  CHECK(read_all("out-link", &text).code == helper::OpCode::kForbidden);
  CHECK(read_all("abs-link", &text).code == helper::OpCode::kForbidden);
  CHECK(read_all("../secret/key", &text).code == helper::OpCode::kForbidden);
  CHECK(read_all("sub/up-link", &text).code == helper::OpCode::kNotFound);
  CHECK(!read_all("loop", &text).ok());
  helper::Fd made;  // O_CREAT through the walk lands beneath the root
  CHECK(helper::walk_beneath(root, "sub/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0644, &made).ok());
  CHECK(fs::exists(base / "ws/sub/new.txt"));
  helper::Fd dir;
  CHECK(helper::walk_beneath(root, "sub", O_PATH | O_DIRECTORY, 0, &dir).ok());
  CHECK(helper::walk_beneath(root, "rel-link", O_PATH | O_DIRECTORY, 0, &dir).code != helper::OpCode::kForbidden);
  fs::remove_all(base);
}
