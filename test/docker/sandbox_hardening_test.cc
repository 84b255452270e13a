// The red team's holes, closed, against the real daemon: the helper cannot be replaced (not by
// the agent as root, not by an image's own), the agent runs as uid 1000 and cannot read its
// helper's environment, the workspace and /tmp stop at their caps with ENOSPC and leave the
// host's disk alone, a task build cannot overwrite an existing tag, and a compose file that
// mounts the helper volume is refused at load. Fixtures: test/docker/attacks/.
#include <doctest/doctest.h>

#include <sys/statvfs.h>

#include <filesystem>

#include "core/files.h"
#include "core/sha256.h"
#include "engine/archive.h"
#include "engine/images.h"
#include "engine/system.h"
#include "engine/tar.h"
#include "engine/volumes.h"
#include "stack/helper_volume.h"
#include "stack/local_images.h"
#include "stack/task_build.h"
#include "stack/workspace.h"
#include "support/containers.h"
#include "support/paths.h"
#include "support/stack_env.h"
#include "tools/container_sandbox.h"

using namespace forge;
using namespace forge::test;

namespace {

namespace fs = std::filesystem;

std::string attack(const std::string& rel) { return source_dir() + "/test/docker/attacks/" + rel; }

std::string attack_script(const std::string& rel) {
  auto text = read_text(attack(rel));
  REQUIRE_MESSAGE(text.has_value(), (text ? "" : text.error().what()));
  return *text;
}

// The tool channel into a stack's runner, as forgectl opens it (the container's user).
std::unique_ptr<tools::ContainerSandbox> sandbox(const TestStack& s) {
  auto info = engine::inspect_container(*docker_env().client, s.id("runner"));
  REQUIRE(info.has_value());
  return std::make_unique<tools::ContainerSandbox>(*docker_env().client,
                                                   tools::HelperChannelSpec{s.id("runner"), info->workdir, info->user});
}

tools::RunResult run(tools::ContainerSandbox& box, const std::string& script, Millis timeout = Millis(60000)) {
  tools::RunRequest req;
  req.argv = {"sh", "-c", script};
  req.timeout = timeout;
  auto r = box.run(req);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return *r;
}

const stack::OwnHelper& helper() {
  static const stack::OwnHelper h = [] {
    auto o = stack::own_helper(docker_env().host);
    REQUIRE(o.has_value());
    return *o;
  }();
  return h;
}

// What the agent sees at /.forgectl/exec is this forgectl's helper, byte for byte.
void check_real_helper(tools::ContainerSandbox& box) {
  auto r = run(box, "sha256sum /.forgectl/exec; /.forgectl/exec --version");
  CHECK(r.out.find(helper().digest) == 0);
  CHECK(r.out.find("forgectl-exec 2") != std::string::npos);
}

std::uint64_t free_bytes(const std::string& dir) {
  struct statvfs st {};
  REQUIRE(::statvfs(dir.c_str(), &st) == 0);
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

}  // namespace

TEST_CASE("sandbox: as root in the runner the agent cannot replace or chmod forgectl's helper") {
  TempDir dir;
  TestStack s(dir.write("env.yaml", "stack: none\nrunner: {user: root}\n"));
  auto box = sandbox(s);
  auto id = run(*box, "id -u");
  CHECK(id.out == "0\n");
  auto r = run(*box, attack_script("replace_helper.sh"));
  INFO(r.out);
  CHECK(r.out.find("ATTACK WORKED") == std::string::npos);
  CHECK(r.out.find("Read-only file system") != std::string::npos);
  // An honest call still gets the real helper's answer.
  check_real_helper(*box);
  auto echo = run(*box, "echo honest");
  CHECK(echo.out == "honest\n");
  CHECK(echo.exit_code == 0);
  // What the daemon reports: the helper volume, read-only, on every runner.
  auto info = engine::inspect_container(*docker_env().client, s.id("runner"));
  REQUIRE(info.has_value());
  const auto* m = engine::find_mount(*info, "/.forgectl");
  REQUIRE(m != nullptr);
  CHECK(m->name == helper().volume);
  CHECK_FALSE(m->rw);
}

TEST_CASE("sandbox: by default the agent is uid 1000, owns /work, and cannot read its helper's environment") {
  TempDir dir;
  TestStack s(dir.write("env.yaml", "stack: none\n"));
  auto box = sandbox(s);
  auto id = run(*box, "id -u; id -g; echo $HOME");
  CHECK(id.out == "1000\n1000\n/home/agent\n");
  REQUIRE(box->write_file("notes.txt", "mine", false));
  auto w = run(*box, "cat /work/notes.txt; echo more >> /work/notes.txt && mkdir -p /work/d/e && echo ok");
  CHECK(w.out == "mineok\n");
  // The helper serving this very call is the agent's uid, yet non-dumpable: /proc/<pid>/environ
  // and mem are closed to the agent. (Its token is on its command line, which kill-token reads.)
  auto pong = box->channel().call(R"({"op":"ping"})", Deadline::in(Millis(5000)));
  REQUIRE(pong.has_value());
  const auto pid = std::to_string(json::get_int(*pong, "pid"));
  auto peek =
      run(*box, "cat /proc/" + pid + "/environ; echo \"rc=$?\"; head -c 16 /proc/" + pid + "/mem; echo \"rc=$?\"");
  INFO(peek.out << peek.err);
  CHECK(peek.out.find("rc=0") == std::string::npos);
  CHECK(peek.err.find("Permission denied") != std::string::npos);
  // The root filesystem is read-only; the workspace, /tmp and the home are the writable places.
  auto ro = run(*box, "touch /etc/x 2>&1; touch /tmp/x ~/x && echo writable");
  CHECK(ro.out.find("Read-only file system") != std::string::npos);
  CHECK(ro.out.find("writable") != std::string::npos);
}

TEST_CASE("sandbox: an image built FROM forgectl's runner with a trojan helper is not used") {
  auto& c = *docker_env().client;
  engine::TarWriter tar;
  REQUIRE(tar.add_host_file("Dockerfile", attack("trojan_helper/Dockerfile")));
  REQUIRE(tar.add_host_file("exec", attack("trojan_helper/exec")));
  auto bytes = tar.finish();
  REQUIRE(bytes.has_value());
  engine::BuildSpec spec;
  spec.context_tar = std::move(*bytes);
  const std::string tag = "forgectl-test/trojan:" + docker_env().run_value;
  spec.tags = {tag};
  spec.labels = test_labels();
  auto built = engine::build_image(c, spec);
  REQUIRE_MESSAGE(built.has_value(), (built ? "" : built.error().what()));
  struct Cleanup {
    engine::Client& c;
    std::string tag;
    ~Cleanup() { (void)engine::remove_image(c, tag, true); }
  } cleanup{c, tag};
  auto img = engine::inspect_image(c, tag);
  REQUIRE(img.has_value());
  CHECK(img->labels.count(stack::kHelperLabel));  // it did inherit the label forgectl used to trust

  TempDir dir;
  TestStack s(dir.write("env.yaml", "stack: none\nrunner: {image: \"" + tag + "\"}\n"));
  auto box = sandbox(s);
  auto r = run(*box, "echo from-the-real-helper");  // a trojan answering the channel would be a protocol error
  CHECK(r.out == "from-the-real-helper\n");
  check_real_helper(*box);
  // The image's own workdir came along into the capped workspace, with its owner and mode.
  auto seed = stack::image_workdir(c, tag, "/work", test_labels());
  REQUIRE(seed.has_value());
  auto ls = run(*box, "stat -c '%u %a' /work; df -k /work | tail -1 | awk '{print $2}'");
  char mode[8];
  std::snprintf(mode, sizeof mode, "%o", seed->mode);
  CHECK(ls.out == std::to_string(seed->uid) + " " + mode + "\n2097152\n");
}

TEST_CASE("sandbox: 3 GiB into /work and /tmp stop at their caps with ENOSPC; the host's disk is untouched") {
  auto info = engine::info(*docker_env().client);
  REQUIRE(info.has_value());
  const std::string docker_root = info->docker_root_dir;
  TempDir dir;
  TestStack s(dir.write("env.yaml", "stack: none\nrunner: {disk_mb: 256, tmp_mb: 64}\n"));
  auto box = sandbox(s);
  // Control: a small write works.
  auto small = run(*box, "echo small > /work/small && cat /work/small && echo tmp > /tmp/small && cat /tmp/small");
  CHECK(small.out == "small\ntmp\n");
  const auto before = free_bytes(docker_root);
  const std::string fill = attack_script("fill_disk.sh");
  for (const auto& [path, cap_mb] : {std::pair<std::string, long>{"/work/big", 256}, {"/tmp/big", 64}}) {
    CAPTURE(path);
    auto r = run(*box, "set -- " + path + "\n" + fill, Millis(120000));
    INFO(r.out);
    CHECK(r.out.find("No space left on device") != std::string::npos);
    CHECK(r.out.find("dd exit 0") == std::string::npos);
    auto size = run(*box, "wc -c < " + path);
    const long bytes = std::atol(size.out.c_str());
    CHECK(bytes <= cap_mb << 20);
    CHECK(bytes > (cap_mb - 8) << 20);  // it stopped at the cap, not before
  }
  // tmpfs pages live in the container's memory cgroup, not on the host's disk.
  const auto after = free_bytes(docker_root);
  CHECK(before - std::min(before, after) < (64ULL << 20));
  // Nothing went into the writable layer either (the root is read-only).
  auto rw = stack::disk_usage(*docker_env().client, s.id("runner"));
  REQUIRE(rw.has_value());
  CHECK(*rw < (1 << 20));
}

TEST_CASE("sandbox: the default caps are 2048 MiB for the workspace and 512 MiB for /tmp") {
  TempDir dir;
  TestStack s(dir.write("env.yaml", "stack: none\n"));
  auto box = sandbox(s);
  auto df = run(*box, "df -k /work /tmp | tail -2 | awk '{print $2}'");
  CHECK(df.out == "2097152\n524288\n");
}

TEST_CASE("sandbox: a task build naming an existing tag leaves that tag alone and is tagged forgectl-task/…") {
  auto& c = *docker_env().client;
  auto runner_before = engine::inspect_image(c, stack::kRunnerImage);
  REQUIRE(runner_before.has_value());
  auto env = manifest::load_environment(attack("poison_tag/env.yaml"));
  REQUIRE_MESSAGE(env.has_value(), (env ? "" : env.error().what()));
  auto ctx = stack::task_build_context(env->compose.services.at(0).build.value());
  REQUIRE(ctx.has_value());
  const std::string tag = stack::task_image_tag("api", ctx->hash);
  struct Cleanup {
    engine::Client& c;
    std::string tag;
    ~Cleanup() { (void)engine::remove_image(c, tag, true); }
  } cleanup{c, tag};
  {
    TestStack s(attack("poison_tag/env.yaml"));
    auto svc = engine::inspect_container(c, s.id("api"));
    REQUIRE(svc.has_value());
    CHECK(svc->config_image == tag);
  }
  auto runner_after = engine::inspect_image(c, stack::kRunnerImage);
  REQUIRE(runner_after.has_value());
  CHECK(runner_after->id == runner_before->id);
  auto built = engine::inspect_image(c, tag);
  REQUIRE(built.has_value());
  CHECK(built->labels.at(stack::kImageLabel) == "task-build");
  CHECK(built->labels.at(stack::kContentLabel) == ctx->hash);
  // A second up reuses it: same content, same image, no rebuild.
  TestStack again(attack("poison_tag/env.yaml"));
  auto svc = engine::inspect_container(c, again.id("api"));
  REQUIRE(svc.has_value());
  CHECK(svc->image == built->id);
}

TEST_CASE("sandbox: a compose file that mounts a forgectl-helper volume is refused at load, at its line") {
  auto env = manifest::load_environment(attack("mount_helper/env.yaml"));
  REQUIRE_FALSE(env.has_value());
  const std::string text = env.error().message;
  INFO(text);
  CHECK(text.find(attack("mount_helper/compose.yaml") + ":8:9: service 'evil': 'volumes': "
                                                        "'forgectl-helper-000000000000' is forgectl's own volume") !=
        std::string::npos);
}

TEST_CASE("sandbox: a helper volume holding another binary is an error naming the volume") {
  auto& c = *docker_env().client;
  const std::string name = "forgectl-test-helper-" + docker_env().run_value;
  auto vol = engine::create_volume(c, {name, "local", {}, test_labels()});
  REQUIRE(vol.has_value());
  struct Cleanup {
    engine::Client& c;
    std::string name;
    ~Cleanup() { (void)engine::remove_volume(c, name, true); }
  } cleanup{c, name};
  {
    engine::ContainerSpec spec;
    spec.host.mounts = {{name, "/.forgectl", false, true, {}, "", {}}};
    TestContainer box(spec, false);
    engine::TarWriter tar;
    REQUIRE(tar.add_file("exec", "#!/bin/sh\necho forged\n", 0555));
    auto bytes = tar.finish();
    REQUIRE(bytes.has_value());
    REQUIRE(engine::put_archive(c, box.id, "/.forgectl", std::move(*bytes)));
    auto st = stack::verify_helper_in(c, box.id, name, helper().digest);
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().what().find("verifying forgectl's helper volume '" + name + "'") != std::string::npos);
    CHECK(st.error().what().find("docker volume rm " + name) != std::string::npos);
  }
}

TEST_CASE("sandbox: stack teardown leaves the shared helper volume, and removes the workspace volumes") {
  auto& c = *docker_env().client;
  std::string runner;
  std::vector<std::string> volumes;
  {
    TempDir dir;
    TestStack s(dir.write("env.yaml", "stack: none\n"));
    auto info = engine::inspect_container(c, s.id("runner"));
    REQUIRE(info.has_value());
    for (const auto& m : info->mounts)
      if (m.type == "volume" && m.name != helper().volume) volumes.push_back(m.name);
  }
  CHECK(engine::inspect_volume(c, helper().volume).has_value());
  REQUIRE_FALSE(volumes.empty());
  for (const auto& v : volumes) CHECK(engine::inspect_volume(c, v).error().code == Errc::kNotFound);
}
