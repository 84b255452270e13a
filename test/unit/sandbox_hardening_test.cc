// The sandbox hardening without a daemon: disk caps and the agent user in manifests and plans,
// forgectl's own volumes refused in compose files, and the request shapes of the read-only
// helper mount, tmpfs-backed volumes, task builds and the helper's --as and --token.
#include <doctest/doctest.h>

#include <memory>

#include "core/json.h"
#include "core/strings.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/images.h"
#include "engine/volumes.h"
#include "manifest/compose_parse.h"
#include "manifest/environment_parse.h"
#include "manifest/stacks.h"
#include "policy/hardening.h"
#include "policy/topology.h"
#include "stack/specs.h"
#include "stack/task_build.h"
#include "stack/up.h"
#include "stack/workspace.h"
#include "support/fake_transport.h"
#include "support/manifest_helpers.h"
#include "tools/helper_channel.h"

using namespace forge;
using engine::Method;
using forge::test::FakeTransport;
using forge::test::has;
using forge::test::only;

namespace {

policy::StackPlan plan_of(const manifest::LoadedEnvironment& env,
                          std::string helper_volume = "forgectl-helper-0123456789ab") {
  policy::PlanOptions o{"fg-t-1", {}, "forgectl/squid:local", {}, std::move(helper_volume)};
  auto p = policy::plan_stack(env, o, {policy::Ipv4Net{0x0ae70000u, 28}});
  REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().what()));
  return *p;
}

manifest::LoadedEnvironment runner_only() {
  manifest::LoadedEnvironment env;
  env.source = "/t/env.yaml";
  auto none = manifest::builtin_stack("none");
  REQUIRE(none.has_value());
  env.compose = *none;
  return env;
}

const policy::MountSpec& mount_at(const policy::ContainerPlan& c, const std::string& target) {
  for (const auto& m : c.hardening.mounts)
    if (m.target == target) return m;
  FAIL("no mount at " << target);
  throw 0;
}

}  // namespace

TEST_CASE("manifest: disk caps, and runner.user root") {
  manifest::Diagnostics diags;
  auto m = manifest::parse_environment(
      "runner: {disk_mb: 4096, tmp_mb: 64, user: root}\nstack: core\nservices:\n  json-db: {disk_mb: 100}\n",
      "env.yaml", diags);
  REQUIRE(diags.items().empty());
  CHECK(m.runner.disk_mb == 4096);
  CHECK(m.runner.tmp_mb == 64);
  CHECK(m.runner.user == "0:0");
  CHECK(m.services.at("json-db").disk_mb == 100);

  manifest::Diagnostics bad;
  (void)manifest::parse_environment("runner:\n  disk_mb: 8\n  tmp_mb: 100000\n", "env.yaml", bad);
  REQUIRE(bad.items().size() == 2);
  CHECK(only(bad, "'disk_mb' must be between 16 and 65536").line == 2);
  CHECK(only(bad, "'tmp_mb' must be between 16 and 65536").line == 3);
}

TEST_CASE("compose: forgectl's own volumes and the helper's path are refused at their line") {
  manifest::Diagnostics diags;
  (void)manifest::parse_compose(
      "services:\n"
      "  app:\n"
      "    image: busybox\n"
      "    volumes:\n"
      "      - data:/data\n"
      "      - forgectl-helper-0123456789ab:/x\n"
      "      - {type: volume, source: FORGECTL-other, target: /y}\n"
      "    tmpfs: [/.forgectl/exec]\n"
      "volumes:\n"
      "  forgectl-helper-0123456789ab: {}\n"
      "  mine: {name: forgectl-x}\n",
      "/t/compose.yaml", diags);
  auto text = diags.to_error().message;
  INFO(text);
  CHECK(has(text,
            "/t/compose.yaml:6:9: service 'app': 'volumes': 'forgectl-helper-0123456789ab' is forgectl's own volume"));
  CHECK(has(text, "/t/compose.yaml:7:9: service 'app': 'volumes': 'FORGECTL-other' is forgectl's own volume"));
  CHECK(has(text, "(its exec helper, mounted read-only in every runner)"));
  CHECK(has(text, "/t/compose.yaml:8:"));
  CHECK(has(text, "'/.forgectl/exec' is where forgectl mounts its exec helper"));
  CHECK(has(text, "/t/compose.yaml:10:3: volumes: 'forgectl-helper-0123456789ab' is forgectl's own volume"));
  CHECK(has(text, "/t/compose.yaml:11:3: volumes: 'forgectl-x' is forgectl's own volume"));
  // A task's ordinary volume is still refused, as before.
  manifest::Diagnostics plain;
  (void)manifest::parse_compose("services:\n  app:\n    image: busybox\n    volumes: [data:/data]\n", "/t/c.yaml",
                                plain);
  CHECK(has(plain.to_error().message, "unsupported key 'volumes'"));
}

TEST_CASE("plan: forgectl's runner runs as the agent on a read-only root with capped, agent-owned disks") {
  auto p = plan_of(runner_only());
  const auto& h = p.runner.hardening;
  CHECK(h.user == "1000:1000");
  CHECK(h.readonly_rootfs);
  CHECK(h.writable_layer_limit == 0);  // nothing writable to cap
  CHECK(h.tmpfs.at("/tmp") == "rw,exec,nosuid,nodev,size=512m,mode=1777");
  CHECK(h.tmpfs.at("/home/agent") == "rw,exec,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=0700");
  // tmpfs pages count against the memory cgroup: the limit covers them, so a full disk is ENOSPC.
  CHECK(h.memory == (2LL << 30) + ((2048LL + 512 + 64) << 20));
  CHECK(h.memory_swap == h.memory);
  CHECK(p.runner.volumes.empty());  // no anonymous copy of an image's /.forgectl
  CHECK(mount_at(p.runner, "/work") == policy::MountSpec{"/work", "", false, "size=2048m,uid=1000,gid=1000,mode=0755"});
  CHECK(mount_at(p.runner, "/.forgectl") == policy::MountSpec{"/.forgectl", "forgectl-helper-0123456789ab", true, ""});
}

TEST_CASE("plan: runner.user, disk caps, another image, MCP files") {
  SUBCASE("root is allowed and owns the workspace; no agent home") {
    auto env = runner_only();
    env.manifest.runner.user = "0:0";
    env.manifest.runner.disk_mb = 100;
    env.manifest.runner.tmp_mb = 32;
    auto p = plan_of(env);
    CHECK(p.runner.hardening.user == "0:0");
    CHECK_FALSE(p.runner.hardening.tmpfs.count("/home/agent"));
    CHECK(p.runner.hardening.tmpfs.at("/tmp") == "rw,exec,nosuid,nodev,size=32m,mode=1777");
    CHECK(mount_at(p.runner, "/work").tmpfs_options == "size=100m,uid=0,gid=0,mode=0755");
    CHECK(p.runner.hardening.memory == (2LL << 30) + (132LL << 20));
  }
  SUBCASE("a task's image keeps its own user and a writable root, with its layer capped") {
    auto env = runner_only();
    env.manifest.runner.image = "task/image:1";
    auto p = plan_of(env);
    CHECK(p.runner.hardening.user.empty());
    CHECK_FALSE(p.runner.hardening.readonly_rootfs);
    CHECK(p.runner.hardening.writable_layer_limit == 2048LL << 20);
    CHECK(p.runner.hardening.tmpfs.count("/tmp"));
    CHECK(mount_at(p.runner, "/.forgectl").read_only);
    // StorageOpt only where the driver can (xfs with pquota, btrfs, zfs); otherwise a watch.
    auto h = p.runner.hardening;
    CHECK(policy::fit_to_storage(h, false).size() == 1);
    CHECK_FALSE(h.storage_opt);
    CHECK(policy::fit_to_storage(h, true).empty());
    CHECK(h.storage_opt);
  }
  SUBCASE("an MCP server's files get a small volume of their own") {
    auto env = runner_only();
    env.tools.mcp_server = manifest::McpServerConfig{{"python3", "server.py"}, {"server.py"}, {}};
    auto p = plan_of(env);
    CHECK(mount_at(p.runner, policy::kTaskFilesMount).tmpfs_options == "size=256m,uid=0,gid=0,mode=0755");
  }
  SUBCASE("services get a writable-layer cap unless read-only") {
    auto env = runner_only();
    auto core = manifest::builtin_stack("core");
    REQUIRE(core.has_value());
    env.compose = *core;
    env.compose.services.front().read_only = false;
    manifest::ServiceIsolation iso;
    iso.disk_mb = 100;
    env.manifest.services["json-db"] = iso;
    auto p = plan_of(env);
    REQUIRE(!p.services.empty());
    CHECK(p.services.front().hardening.writable_layer_limit == 100LL << 20);
  }
}

TEST_CASE("hardening: a mount that is not what was asked is named") {
  auto want = plan_of(runner_only()).runner.hardening;
  auto got = want;
  CHECK(policy::hardening_mismatches(want, got).empty());
  policy::find_mount(got, "/.forgectl")->read_only = false;
  policy::find_mount(got, "/work")->tmpfs_options = "";
  auto m = policy::hardening_mismatches(want, got);
  REQUIRE(m.size() == 2);
  CHECK(has(m[0], "Mount /work: wanted an anonymous tmpfs (size=2048m"));
  CHECK(has(m[0], "applied an anonymous volume writable"));
  CHECK(has(m[1], "Mount /.forgectl: wanted volume 'forgectl-helper-0123456789ab' read-only"));
  got = want;
  got.mounts.pop_back();
  CHECK(has(policy::hardening_mismatches(want, got).at(0), "not mounted"));
}

TEST_CASE("engine: mounts and StorageOpt in the create body and read back from inspect") {
  engine::ContainerSpec s;
  s.image = "img";
  s.host.mounts = {{"forgectl-helper-0123456789ab", "/.forgectl", true, true, {}, "", {}},
                   {"",
                    "/work",
                    false,
                    false,
                    {{"io.forgectl.stack", "fg-x"}},
                    "local",
                    {{"type", "tmpfs"}, {"device", "tmpfs"}, {"o", "size=16m"}}}};
  s.host.storage_opt = {{"size", "1073741824"}};
  auto body = json::parse(engine::container_create_body(s), "body");
  REQUIRE(body.has_value());
  const auto& h = (*body)["HostConfig"];
  CHECK(json::get_string(h["StorageOpt"], "size") == "1073741824");
  REQUIRE(h["Mounts"].Size() == 2);
  CHECK(json::get_string(h["Mounts"][0], "Type") == "volume");
  CHECK(json::get_string(h["Mounts"][0], "Source") == "forgectl-helper-0123456789ab");
  CHECK(json::get_bool(h["Mounts"][0], "ReadOnly"));
  CHECK(json::get_bool(h["Mounts"][0]["VolumeOptions"], "NoCopy"));
  CHECK_FALSE(h["Mounts"][1].HasMember("Source"));
  CHECK(json::get_string(h["Mounts"][1]["VolumeOptions"]["DriverConfig"]["Options"], "o") == "size=16m");
  CHECK(json::get_string(h["Mounts"][1]["VolumeOptions"]["Labels"], "io.forgectl.stack") == "fg-x");

  auto fake = std::make_shared<FakeTransport>();
  fake->on(Method::kGet, "/containers/c/json", 200,
           R"({"Id":"c","Mounts":[{"Type":"volume","Name":"abc","Destination":"/work","Driver":"local","RW":true},
                                  {"Type":"volume","Name":"forgectl-helper-1","Destination":"/.forgectl","RW":false}],
               "HostConfig":{"StorageOpt":{"size":"100"}}})");
  engine::Client c(fake);
  auto info = engine::inspect_container(c, "c");
  REQUIRE(info.has_value());
  auto applied = stack::applied_hardening(*info, {{"abc", stack::tmpfs_driver_options("size=16m")}});
  REQUIRE(applied.mounts.size() == 2);
  CHECK(applied.mounts[0] == policy::MountSpec{"/work", "abc", false, "size=16m"});
  CHECK(applied.mounts[1] == policy::MountSpec{"/.forgectl", "forgectl-helper-1", true, ""});
  CHECK(applied.storage_opt);
  CHECK(applied.writable_layer_limit == 100);
}

TEST_CASE("engine: volume create body, and disk use from inspect size=1") {
  auto body = json::parse(engine::volume_create_body({"v", "local", {}, {{"io.forgectl.helper", "d"}}}), "body");
  REQUIRE(body.has_value());
  CHECK(json::get_string(*body, "Name") == "v");
  CHECK(json::get_string((*body)["Labels"], "io.forgectl.helper") == "d");
  auto fake = std::make_shared<FakeTransport>();
  fake->on(Method::kGet, "/containers/c/json?size=1", 200, R"({"SizeRw":12345,"SizeRootFs":99999})");
  engine::Client c(fake);
  auto size = engine::container_size(c, "c");
  REQUIRE(size.has_value());
  CHECK(size->rw == 12345);
}

TEST_CASE("task builds: limits, no network, no tag until forgectl checked it; a foreign tag is never overwritten") {
  test::TempFiles dir("forgectl-build-");
  dir.write("api/Dockerfile", "FROM scratch\nCOPY x /x\n");
  dir.write("api/x", "content");
  manifest::ComposeBuild b{dir.dir() + "/api", "Dockerfile", {{"V", "1"}}};
  auto ctx = stack::task_build_context(b);
  REQUIRE(ctx.has_value());
  auto again = stack::task_build_context(b);
  REQUIRE(again.has_value());
  CHECK(ctx->hash == again->hash);  // stable: the same inputs give the same tag
  const std::string tag = stack::task_image_tag("My_API..v2", ctx->hash);
  CHECK(tag == "forgectl-task/my-api-v2:" + ctx->hash.substr(0, 16));
  b.args["V"] = "2";
  CHECK(stack::task_build_context(b)->hash != ctx->hash);
  b.args["V"] = "1";

  auto q = engine::build_query(stack::task_build_spec(*ctx, b, {}));
  CHECK(has(q, "networkmode=none"));
  CHECK(has(q, "&memory=2147483648&memswap=2147483648&cpuperiod=100000&cpuquota=100000"));
  CHECK(has(q, "&ulimits=" + url_encode(R"([{"Name":"nproc","Soft":4096,"Hard":4096}])")));
  CHECK_FALSE(has(q, "&t="));
  stack::TaskBuildLimits full;
  full.network = true;
  CHECK(has(engine::build_query(stack::task_build_spec(*ctx, b, full)), "networkmode=default"));

  const std::string api_tag = stack::task_image_tag("api", ctx->hash);
  const std::string inspect_path = "/images/" + api_tag + "/json";
  SUBCASE("a tag forgectl did not build is refused, and nothing is built") {
    auto fake = std::make_shared<FakeTransport>();
    fake->on(Method::kGet, inspect_path, 200, R"({"Id":"sha256:foreign","Config":{"Labels":{}}})");
    engine::Client c(fake);
    auto r = stack::ensure_task_image(c, "api", b, {}, nullptr);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::kConflict);
    CHECK(has(r.error().what(), "forgectl will not overwrite it"));
    CHECK(fake->sent("/build").empty());
  }
  SUBCASE("forgectl's own build of the same content is reused") {
    auto fake = std::make_shared<FakeTransport>();
    fake->on(Method::kGet, inspect_path, 200,
             R"({"Id":"sha256:ours","Config":{"Labels":{"io.forgectl.image":"task-build","io.forgectl.content":")" +
                 ctx->hash + R"("}}})");
    engine::Client c(fake);
    auto r = stack::ensure_task_image(c, "api", b, {}, nullptr);
    REQUIRE(r.has_value());
    CHECK(*r == api_tag);
    CHECK(fake->sent("/build").empty());
  }
  SUBCASE("new content is built untagged, labelled, then tagged") {
    auto fake = std::make_shared<FakeTransport>();
    fake->on(Method::kGet, inspect_path, 404, R"({"message":"no such image"})");
    fake->on(Method::kPost, "/build", 200,
             R"({"aux":{"ID":"sha256:new"}})"
             "\n");
    fake->on(Method::kPost, "/images/sha256:new/tag", 201);
    engine::Client c(fake);
    auto r = stack::ensure_task_image(c, "api", b, {}, nullptr);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
    auto builds = fake->sent("/build");
    REQUIRE(builds.size() == 1);
    CHECK(has(builds[0].target, "labels=" + url_encode(R"({"io.forgectl.content":")" + ctx->hash +
                                                       R"(","io.forgectl.image":"task-build"})")));
    auto tags = fake->sent("/images/sha256:new/tag");
    REQUIRE(tags.size() == 1);
    CHECK(has(tags[0].target, "repo=" + url_encode("forgectl-task/api") + "&tag=" + ctx->hash.substr(0, 16)));
  }
}

TEST_CASE("exec: the helper verifies the agent's uid with --as and carries its token on the command line") {
  CHECK(engine::helper_as_args("1000:1000") == std::vector<std::string>{"--as", "1000:1000"});
  CHECK(engine::helper_as_args("0:0").empty());
  CHECK(engine::helper_as_args("1000").empty());  // --as needs both ids
  CHECK(engine::helper_as_args("agent:agent").empty());
  CHECK(engine::helper_as_args("").empty());

  auto fake = std::make_shared<FakeTransport>();
  fake->on(Method::kPost, "/containers/r/exec", 201, R"({"Id":"e1"})");
  auto stream = fake->on_hijack("/exec/e1/start");
  stream->hang = true;  // the helper never answers the ping: the start fails at its deadline
  fake->on(Method::kGet, "/exec/e1/json", 200, R"({"Running":true,"Pid":0,"ContainerID":"r"})");
  engine::Client c(fake);
  tools::HelperChannel ch(c, {"r", "/work", "1000:1000"});
  (void)ch.call(R"({"op":"ping"})", Deadline::in(Millis(50)));
  auto creates = fake->sent("/containers/r/exec");
  REQUIRE(creates.size() >= 2);  // the helper, then the killer
  auto serve = json::parse(creates[0].body, "serve");
  REQUIRE(serve.has_value());
  auto cmd = json::get_strings(*serve, "Cmd");
  CHECK(cmd == std::vector<std::string>{"/.forgectl/exec", "--serve", "--root", "/work", "--token", cmd.at(5), "--as",
                                        "1000:1000"});
  CHECK(json::get_strings(*serve, "Env").empty());  // a non-dumpable helper's environment is unreadable anyway
  CHECK(json::get_string(*serve, "User") == "1000:1000");
  auto killer = json::parse(creates[1].body, "killer");
  REQUIRE(killer.has_value());
  CHECK(json::get_strings(*killer, "Cmd") ==
        std::vector<std::string>{"/.forgectl/exec", "--kill-token", cmd.at(5), "--as", "1000:1000"});
  CHECK(json::get_string(*killer, "User") == "1000:1000");  // the uid whose processes it kills
}

TEST_CASE("disk watches: only writable layers the driver does not cap; the workspace owner") {
  stack::UpResult up;
  up.plan = plan_of(runner_only());
  up.containers = {{"runner", "r1"}};
  CHECK(stack::disk_watches(up).empty());  // forgectl's runner: a read-only root
  REQUIRE(stack::workspace_owner(up));
  CHECK(stack::workspace_owner(up)->uid == 1000);
  auto env = runner_only();
  env.manifest.runner.image = "task/image:1";
  up.plan = plan_of(env);
  auto w = stack::disk_watches(up);
  REQUIRE(w.size() == 1);
  CHECK(w[0].key == "runner");
  CHECK(w[0].container == "r1");
  CHECK(w[0].limit == 2048LL << 20);
  CHECK(!stack::workspace_owner(up));  // the image's own user: only the running runner can tell
  (void)policy::fit_to_storage(up.plan.runner.hardening, true);
  CHECK(stack::disk_watches(up).empty());  // StorageOpt enforces it
}
