// up_stack on the fake transport: a runtime that silently drops a hardening field is caught,
// the stack is refused, and what was created is removed.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "core/files.h"
#include "core/json.h"
#include "core/strings.h"
#include "engine/client.h"
#include "engine/tar.h"
#include "manifest/stacks.h"
#include "stack/helper_volume.h"
#include "stack/up.h"
#include "support/fake_transport.h"

using namespace forge;
using engine::Method;
using forge::test::FakeTransport;

namespace {

// Settings for one test: a private state dir, no host firewall (the fake daemon is not local).
struct Env {
  std::string dir = (std::filesystem::temp_directory_path() / ("forgectl-unit-" + random_hex(4))).string();
  stack::UpOptions opts;
  Env() {
    opts.host = HostSettings::from(process_env());  // FORGECTL_EXEC_HELPER, set by meson
    opts.host.state_dir = dir;
    opts.host.host_firewall = false;
    // A runner alone needs no network (a closed network would bring the trial's resolver, which
    // these request scripts do not cover): the hardening checks are the runner's own.
    opts.omit_unused_network = true;
  }
  ~Env() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

manifest::LoadedEnvironment runner_only() {
  manifest::LoadedEnvironment env;
  env.source = "/tasks/demo/env.yaml";
  env.task_id = "demo";
  auto none = manifest::builtin_stack("none");
  REQUIRE(none.has_value());
  env.compose = *none;
  return env;
}

// This forgectl's helper, as the fake's helper volume holds it.
const stack::OwnHelper& helper() {
  static const stack::OwnHelper h = [] {
    auto o = stack::own_helper(HostSettings::from(process_env()));
    REQUIRE_MESSAGE(o.has_value(), (o ? "" : o.error().what()));
    return *o;
  }();
  return h;
}

// What forgectl asks of its own runner by default: the agent, a read-only root, capped disks.
constexpr std::int64_t kRunnerMemory = (2LL << 30) + ((2048LL + 512 + 64) << 20);

// The inspect answer of a runner whose runtime applied everything asked except `drop`.
std::string inspected_runner(const std::string& drop) {
  std::string cap_drop = drop == "CapDrop" ? "[]" : R"(["ALL"])";
  std::string secopt = drop == "SecurityOpt" ? "[]" : R"(["no-new-privileges:true"])";
  std::string pids = drop == "PidsLimit" ? "0" : "512";
  std::string user = drop == "User" ? "" : "1000:1000";
  std::string ro = drop == "ReadonlyRootfs" ? "false" : "true";
  std::string helper_rw = drop == "HelperRW" ? "true" : "false";
  std::string work_volume = drop == "WorkspaceTmpfs" ? "plain1" : "work1";
  std::string tmpfs =
      drop == "Tmpfs"
          ? "{}"
          : R"({"/tmp":"rw,exec,nosuid,nodev,size=512m,mode=1777","/home/agent":"rw,exec,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=0700"})";
  return R"({"Id":"c1","Name":"/x","State":{"Status":"created"},"Config":{"User":")" + user + R"(","Labels":{}},
    "Mounts":[{"Type":"volume","Name":")" +
         work_volume + R"(","Destination":"/work","Driver":"local","RW":true},
              {"Type":"volume","Name":")" +
         helper().volume + R"(","Destination":"/.forgectl","Driver":"local","RW":)" + helper_rw + R"(}],
    "HostConfig":{"CapDrop":)" +
         cap_drop + R"(,"CapAdd":["NET_BIND_SERVICE"],"SecurityOpt":)" + secopt + R"(,"PidsLimit":)" + pids +
         R"(,"Memory":)" + std::to_string(kRunnerMemory) + R"(,"MemorySwap":)" + std::to_string(kRunnerMemory) +
         R"(,"NanoCpus":1000000000,
    "ReadonlyRootfs":)" +
         ro + R"(,"Tmpfs":)" + tmpfs + R"(,"Init":true,"NetworkMode":"none"}})";
}

// GET archive of /.forgectl/exec: the helper, 0555 root:root.
std::string helper_tar() {
  engine::TarWriter tar;
  engine::TarEntry e;
  e.path = "exec";
  e.mode = 0555;
  auto bytes = read_text(helper().path);
  REQUIRE(bytes.has_value());
  e.content = *bytes;
  REQUIRE(tar.add_entry(e));
  auto out = tar.finish();
  REQUIRE(out.has_value());
  return *out;
}

void script_daemon(FakeTransport& f, const std::string& inspect) {
  f.on(Method::kGet, "/info", 200, R"({"NCPU":2,"Driver":"overlay2","DriverStatus":[["Backing Filesystem","extfs"]]})");
  f.on(Method::kGet, "/networks?", 200, "[]");
  f.on(Method::kGet, "/images/forgectl/runner:local/json", 200, R"({"Id":"sha256:abc"})");
  f.on(Method::kPost, "/networks/create", 201, R"({"Id":"net1"})");
  // The helper volume: new, so forgectl fills it through a short-lived container h1 and reads it back.
  f.on(Method::kGet, "/volumes/" + helper().volume, 404, R"({"message":"no such volume"})");
  f.on(Method::kGet, "/volumes/" + helper().volume, 200,
       R"({"Name":")" + helper().volume + R"(","Driver":"local","Labels":{"io.forgectl.helper":")" + helper().digest +
           R"("}})");
  f.on(Method::kPost, "/volumes/create", 201,
       R"({"Name":")" + helper().volume + R"(","Driver":"local","Labels":{"io.forgectl.helper":")" + helper().digest +
           R"("},"Options":null})");
  f.on(Method::kPost, "/containers/create", 201, R"({"Id":"h1","Warnings":[]})");
  f.on(Method::kPost, "/containers/create", 201, R"({"Id":"c1","Warnings":[]})");
  f.on(Method::kHead, "/containers/h1/archive", 404, R"({"message":"no such file"})");
  f.on(Method::kPut, "/containers/h1/archive", 200);
  f.on(Method::kGet, "/containers/h1/archive", 200, helper_tar());
  f.on(Method::kDelete, "/containers/h1", 204);
  f.on(
      Method::kGet, "/volumes/work1", 200,
      R"({"Name":"work1","Driver":"local","Options":{"type":"tmpfs","device":"tmpfs","o":"size=2048m,uid=1000,gid=1000,mode=0755"}})");
  f.on(Method::kGet, "/volumes/plain1", 200, R"({"Name":"plain1","Driver":"local","Options":null})");
  f.on(Method::kGet, "/containers/c1/json", 200, inspect);
  f.on(Method::kPut, "/containers/c1/archive", 200);
  f.on(Method::kPost, "/containers/c1/start", 204);
  f.on(Method::kGet, "/containers/json", 200, R"([{"Id":"c1","Labels":{"io.forgectl.stack":"x"}}])");
  f.on(Method::kGet, "/volumes?", 200, R"({"Volumes":[]})");
  f.on(Method::kDelete, "/containers/c1", 204);
  f.on(Method::kDelete, "/networks/net1", 204);
}

}  // namespace

TEST_CASE("a runtime that drops a hardening field is caught and the stack refused and removed") {
  Env scoped;
  for (std::string field :
       {"CapDrop", "SecurityOpt", "PidsLimit", "User", "ReadonlyRootfs", "HelperRW", "WorkspaceTmpfs", "Tmpfs"}) {
    CAPTURE(field);
    auto fake = std::make_shared<FakeTransport>();
    script_daemon(*fake, inspected_runner(field));
    // The list of networks for teardown differs from the list for subnets only by its filter.
    engine::Client c(fake);
    auto r = stack::up_stack(c, runner_only(), scoped.opts);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::kUnsupported);
    CHECK(r.error().what().find("did not apply the hardening of runner 'runner'") != std::string::npos);
    std::string named = field == "HelperRW" ? "Mount /.forgectl" : field == "WorkspaceTmpfs" ? "Mount /work" : field;
    CHECK(r.error().what().find(named) != std::string::npos);
    CHECK(fake->sent("/containers/c1/start").empty());  // never started
    CHECK(fake->sent("/containers/c1?force=1").size() == 1);  // removed again
  }
}

TEST_CASE("a runtime that applies everything gets a started runner") {
  Env scoped;
  auto fake = std::make_shared<FakeTransport>();
  script_daemon(*fake, inspected_runner(""));
  engine::Client c(fake);
  auto r = stack::up_stack(c, runner_only(), scoped.opts);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  CHECK(starts_with(r->name, "fg-demo-"));
  CHECK(fake->sent("/containers/c1/start").size() == 1);
  CHECK(fake->sent("/containers/c1?force=1").empty());
  // The helper went into forgectl's helper volume through the short-lived h1, never into the runner.
  std::vector<engine::Request> puts;
  for (auto& r : fake->sent("/containers/h1/archive?path=%2F.forgectl"))
    if (r.method == Method::kPut) puts.push_back(r);
  REQUIRE(puts.size() == 1);
  auto entries = engine::read_tar(puts[0].body);
  REQUIRE(entries.has_value());
  REQUIRE(entries->size() == 2);
  CHECK(entries->at(0).path == "exec");
  CHECK(entries->at(0).mode == 0555);
  CHECK(entries->at(0).uid == 0);
  CHECK(entries->at(0).content.size() > 100000);
  // /.forgectl/task, where tasks find their MCP server's files, links to the files' own volume.
  CHECK(entries->at(1).type == engine::EntryType::kSymlink);
  CHECK(entries->at(1).link_target == "/.forgectl-task");
  for (auto& r : fake->sent("/containers/c1/archive")) CHECK(r.method != Method::kPut);
  CHECK(fake->sent("/containers/h1?force=1").size() == 1);  // the filler is gone again
  // The filler mounted the volume writable (and never copied the image's /.forgectl into it).
  auto creates = fake->sent("/containers/create");
  REQUIRE(creates.size() == 2);
  auto filler = json::parse(creates[0].body, "filler");
  REQUIRE(filler.has_value());
  const auto& fm = (*filler)["HostConfig"]["Mounts"][0];
  CHECK(json::get_string(fm, "Source") == helper().volume);
  CHECK_FALSE(json::get_bool(fm, "ReadOnly"));
  CHECK(json::get_bool(fm["VolumeOptions"], "NoCopy"));
  // The runner: the agent's uid, a read-only root, the helper volume read-only, capped disks.
  auto runner = json::parse(creates[1].body, "runner");
  REQUIRE(runner.has_value());
  CHECK(json::get_string(*runner, "User") == "1000:1000");
  const auto& host = (*runner)["HostConfig"];
  CHECK(json::get_bool(host, "ReadonlyRootfs"));
  CHECK(json::get_int(host, "Memory") == kRunnerMemory);
  CHECK(json::get_string(host["Tmpfs"], "/tmp") == "rw,exec,nosuid,nodev,size=512m,mode=1777");
  CHECK(json::get_string(host["Tmpfs"], "/home/agent") == "rw,exec,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=0700");
  CHECK_FALSE(host.HasMember("StorageOpt"));  // ext4: nothing to ask for
  REQUIRE(host["Mounts"].Size() == 2);
  const auto& work = host["Mounts"][0];
  CHECK(json::get_string(work, "Target") == "/work");
  CHECK_FALSE(work.HasMember("Source"));  // anonymous: removed with the container
  CHECK_FALSE(json::get_bool(work, "ReadOnly"));
  const auto& driver = work["VolumeOptions"]["DriverConfig"];
  CHECK(json::get_string(driver, "Name") == "local");
  CHECK(json::get_string(driver["Options"], "type") == "tmpfs");
  CHECK(json::get_string(driver["Options"], "device") == "tmpfs");
  CHECK(json::get_string(driver["Options"], "o") == "size=2048m,uid=1000,gid=1000,mode=0755");
  const auto& rt = host["Mounts"][1];
  CHECK(json::get_string(rt, "Target") == "/.forgectl");
  CHECK(json::get_string(rt, "Source") == helper().volume);
  CHECK(json::get_bool(rt, "ReadOnly"));
  CHECK(json::get_bool(rt["VolumeOptions"], "NoCopy"));
  CHECK_FALSE((*runner).HasMember("Volumes"));  // no anonymous copy of the image's /.forgectl
  // A runner alone gets no network (omit_unused_network); policy_test covers the networks'
  // plans and the docker suite the daemon's networks.
  CHECK(fake->sent("/networks/create").empty());
  CHECK(json::get_string(host, "NetworkMode") == "none");
}

TEST_CASE("a remote daemon is refused unless the host firewall is explicitly off") {
  auto fake = std::make_shared<FakeTransport>();
  engine::Client c(fake);
  auto r = stack::up_stack(c, runner_only(), {});  // the default settings enforce the host firewall
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::kUnsupported);
  CHECK(r.error().what().find("FORGECTL_HOST_FIREWALL=off") != std::string::npos);
  CHECK(fake->requests.empty());
}

TEST_CASE("an existing helper volume is verified through the runner before it starts; another binary is refused") {
  Env scoped;
  for (bool honest : {true, false}) {
    CAPTURE(honest);
    auto fake = std::make_shared<FakeTransport>();
    fake->on(Method::kGet, "/info", 200, R"({"NCPU":2})");
    fake->on(Method::kGet, "/networks?", 200, "[]");
    fake->on(Method::kGet, "/images/forgectl/runner:local/json", 200, R"({"Id":"sha256:abc"})");
    fake->on(Method::kPost, "/networks/create", 201, R"({"Id":"net1"})");
    fake->on(Method::kGet, "/volumes/" + helper().volume, 200,
             R"({"Name":")" + helper().volume + R"(","Labels":{"io.forgectl.helper":")" + helper().digest + R"("}})");
    fake->on(
        Method::kGet, "/volumes/work1", 200,
        R"({"Name":"work1","Options":{"type":"tmpfs","device":"tmpfs","o":"size=2048m,uid=1000,gid=1000,mode=0755"}})");
    fake->on(Method::kPost, "/containers/create", 201, R"({"Id":"c1","Warnings":[]})");
    fake->on(Method::kGet, "/containers/c1/json", 200, inspected_runner(""));
    std::string forged;
    if (!honest) {
      engine::TarWriter tar;
      REQUIRE(tar.add_file("exec", "#!/bin/sh\necho forged\n", 0555));
      forged = *tar.finish();
    }
    fake->on(Method::kGet, "/containers/c1/archive", 200, honest ? helper_tar() : forged);
    std::string link = base64_encode(R"({"name":"task","mode":134218239,"linkTarget":"/.forgectl-task"})");
    fake->on(Method::kHead, "/containers/c1/archive", 200, "", {{"x-docker-container-path-stat", link}});
    fake->on(Method::kPost, "/containers/c1/start", 204);
    fake->on(Method::kGet, "/containers/json", 200, R"([{"Id":"c1","Labels":{"io.forgectl.stack":"x"}}])");
    fake->on(Method::kGet, "/volumes?", 200, R"({"Volumes":[]})");
    fake->on(Method::kDelete, "/containers/c1", 204);
    fake->on(Method::kDelete, "/networks/net1", 204);
    engine::Client c(fake);
    auto r = stack::up_stack(c, runner_only(), scoped.opts);
    CHECK(fake->sent("/containers/create").size() == 1);  // no filler for a volume that exists
    CHECK(fake->sent("/containers/c1/archive?path=%2F.forgectl%2Fexec").size() == 1);
    if (honest) {
      REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
      CHECK(fake->sent("/containers/c1/start").size() == 1);
    } else {
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().what().find("verifying forgectl's helper volume '" + helper().volume + "'") != std::string::npos);
      CHECK(fake->sent("/containers/c1/start").empty());
      CHECK(fake->sent("/containers/c1?force=1").size() == 1);
    }
  }
}
