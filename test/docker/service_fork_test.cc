// Forks of a task with a compose service of its own (docs/sweeps.md "Forks"), through the
// forgectl binary against the real daemon: the service keeps rows in a VOLUME and in its root
// filesystem; setup writes a row into it once; every fork's service holds that row (both places)
// and no other trial's agent's row; no container, network, volume or image of the run is left.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/strings.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "engine/volumes.h"
#include "results/trial_record.h"
#include "stack/labels.h"
#include "stack/local_images.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// A busybox httpd (forgectl's runner image: nothing pulled) whose CGI appends a row to
// /data/rows.txt (a VOLUME) and /srv/rows.txt (its root filesystem) and lists both.
struct StoreImage {
  std::string tag = random_hex(5), name = "forgectl-test/svcfork-store:" + tag,
              base = "forgectl-test/svcfork-base:" + tag;
  StoreImage() {
    auto tagged = engine::tag_image(*docker_env().client, docker_env().runner_image, "forgectl-test/svcfork-base", tag);
    REQUIRE_MESSAGE(tagged.has_value(), (tagged ? "" : tagged.error().what()));
    engine::TarWriter t;
    REQUIRE(t.add_file("Dockerfile", "FROM " + base +
                                         "\nCOPY www /www\nCOPY srv /srv\nVOLUME /data\n"
                                         "CMD [\"httpd\", \"-f\", \"-p\", \"8080\", \"-h\", \"/www\"]\n"));
    REQUIRE(t.add_file("www/cgi-bin/put",
                       "#!/bin/sh\necho \"$QUERY_STRING\" >> /data/rows.txt\necho \"$QUERY_STRING\" >> /srv/rows.txt\n"
                       "printf 'Content-Type: text/plain\\r\\n\\r\\nok\\n'\n",
                       0755));
    REQUIRE(t.add_file("www/cgi-bin/get",
                       "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\n'\n"
                       "echo \"vol:$(cat /data/rows.txt 2>/dev/null | tr '\\n' ' ')\"\n"
                       "echo \"fs:$(cat /srv/rows.txt 2>/dev/null | tr '\\n' ' ')\"\n",
                       0755));
    REQUIRE(t.add_file("srv/.keep", ""));
    auto tar = t.finish();
    REQUIRE(tar.has_value());
    engine::BuildSpec spec;
    spec.context_tar = std::move(*tar);
    spec.tags = {name};
    auto built = engine::build_image(*docker_env().client, spec);
    REQUIRE_MESSAGE(built.has_value(), (built ? "" : built.error().what()));
  }
  ~StoreImage() {
    (void)engine::remove_image(*docker_env().client, name, true);
    (void)engine::remove_image(*docker_env().client, base);
  }
};

// setup.sh writes "setup-<ns>" into setup.txt and into the store; the oracle's check.sh (written
// by setup, so forked with the workspace) passes only when the store holds exactly that row, in
// the volume and the root filesystem, and then adds its own row.
std::string write_service_fork_task(const fs::path& dir, const std::string& image) {
  fs::create_directories(dir);
  std::ofstream(dir / "task.yaml")
      << "task_id: " << dir.filename().string()
      << "\nname: service fork probe\ncategory: test\ndescription: \"A service's set-up state, forked.\"\n"
         "initial_user_message: \"Go.\"\n"
         "tools:\n  agent: {enabled: [bash]}\n  user: {enabled: []}\n"
         "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
         "grading: grading.yaml\n"
         "solution:\n  tool_calls:\n    - {name: bash, arguments: {command: \"sh check.sh\"}}\n"
         "environment:\n  network_policy: no_internet\n  setup_script: setup.sh\n  compose_file: compose.yaml\n";
  std::ofstream(dir / "compose.yaml")
      << "services:\n  store:\n    image: " << image
      << "\n    healthcheck:\n      test: [\"CMD\", \"wget\", \"-qO-\", \"http://127.0.0.1:8080/cgi-bin/get\"]\n"
         "      interval: 1s\n      retries: 30\n";
  std::ofstream(dir / "setup.sh")
      << "ts=setup-$(date +%s%N)\necho $ts > setup.txt\n"
         "for i in 1 2 3 4 5 6 7 8 9 10; do wget -qO- \"http://store:8080/cgi-bin/put?$ts\" && break; sleep 1; done\n"
         "cat > check.sh <<'CHECK'\n"
         "ts=$(cat setup.txt)\n"
         "for i in 1 2 3 4 5 6 7 8 9 10; do got=$(wget -qO- http://store:8080/cgi-bin/get) && break; sleep 1; done\n"
         "wget -qO- \"http://store:8080/cgi-bin/put?agent-$$\" > /dev/null\n"
         "if echo \"$got\" | grep -qx \"vol:$ts \" && echo \"$got\" | grep -qx \"fs:$ts \"; then echo CLEAN; "
         "else echo \"LEAKED $got\"; fi > status.txt\n"
         "CHECK\n";
  std::ofstream(dir / "grading.yaml")
      << "combine: {method: weighted, pass_threshold: 0.99}\n"
         "state_checks:\n  jsonpaths:\n"
         "    - {path_glob: \"/env/fs/agent-visible/status.txt\", contains_ci: \"CLEAN\"}\n";
  return dir.string();
}

// Dangling volumes of the daemon (on this host) that hold a store's rows.
std::set<std::string> store_volumes() {
  std::set<std::string> out;
  auto vs = engine::list_volumes(*docker_env().client, {{"dangling", {"true"}}});
  REQUIRE(vs.has_value());
  std::error_code ec;
  // Read through the volumes' mountpoints: a daemon on this host, whose volume root the tests may read.
  REQUIRE_MESSAGE(fs::exists("/var/lib/docker/volumes", ec), "the daemon's volumes are not readable here");
  for (const auto& v : *vs)
    if (fs::exists(fs::path(v.mountpoint) / "rows.txt", ec)) out.insert(v.name);
  return out;
}

}  // namespace

TEST_CASE(
    "service fork: a compose service's volume and filesystem as setup left them in every fork; agents' rows stay in "
    "their trial; nothing left") {
  StoreImage store;
  TempDir dir;
  const std::string task = write_service_fork_task(fs::path(dir.path()) / "svc_fork", store.name);
  const std::string out = dir.path() + "/run";
  const auto volumes_before = store_volumes();
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--trials", "3", "--concurrency", "1", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 3);
  std::size_t taken = 0, forked = 0;
  std::set<std::string> hashes;
  for (const auto& t : trials) {
    CAPTURE(t.trial_index);
    CHECK(t.outcome == results::Outcome::kGraded);
    // CLEAN: the store held setup's row (the workspace's timestamp) in its volume and its root
    // filesystem, and no other trial's agent row.
    CHECK(t.score == doctest::Approx(1.0));
    taken += t.snapshot_source == "taken";
    forked += t.snapshot_source == "forked";
    hashes.insert(t.workspace_sha256);
  }
  CHECK(taken == 1);  // setup ran once: one timestamp for all three workspaces
  CHECK(forked == 2);
  CHECK(hashes.size() == 1);
  const std::string run_id = json::get_string(json_file(out + "/run.json"), "run_id");
  auto images =
      engine::list_images(*docker_env().client, {{"label", {std::string(stack::kLabelSnapshot) + "=" + run_id}}});
  REQUIRE(images.has_value());
  CHECK(images->empty());  // the runner's snapshot and the service's set-up image
  CHECK_MESSAGE(r.out.find("leak audit: nothing") != std::string::npos, r.out);
  // The store's anonymous volumes (no label of the run): none of the run's is left.
  for (const auto& v : store_volumes()) CHECK_MESSAGE(volumes_before.count(v), "volume left: " << v);
}

TEST_CASE("service fork: a service with a tmpfs is not forked; every trial runs setup") {
  StoreImage store;
  TempDir dir;
  const std::string task = write_service_fork_task(fs::path(dir.path()) / "svc_tmpfs", store.name);
  std::ofstream(fs::path(task) / "compose.yaml", std::ios::app) << "    tmpfs: [/cache]\n";
  auto r = forgectl_run(
      {"run", task, "--agent", "oracle", "--trials", "2", "--concurrency", "1", "--out", dir.path() + "/run"});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(dir.path() + "/run");
  REQUIRE(trials.size() == 2);
  for (const auto& t : trials) {
    CHECK(t.score == doctest::Approx(1.0));
    CHECK(t.snapshot_source.empty());
  }
}

TEST_CASE(
    "service fork: --keep-snapshots keeps the service's set-up image too; the next run forks it with no setup; down "
    "--snapshots removes both") {
  StoreImage store;
  TempDir dir;
  const std::string task = write_service_fork_task(fs::path(dir.path()) / "svc_kept", store.name);
  auto run = [&](const std::string& name) {
    auto r = forgectl_run({"run", task, "--agent", "oracle", "--trials", "2", "--concurrency", "1", "--keep-snapshots",
                           "--out", dir.path() + "/" + name});
    REQUIRE_MESSAGE(r.code == 0, r.text());
    CHECK_MESSAGE(r.out.find("leak audit: nothing") != std::string::npos, r.out);
    return trials_of(dir.path() + "/" + name);
  };
  auto first = run("a");
  const std::string run_id = json::get_string(json_file(dir.path() + "/a/run.json"), "run_id");
  auto kept = [&] {
    auto is =
        engine::list_images(*docker_env().client, {{"label", {std::string(stack::kLabelSnapshot) + "=" + run_id}}});
    REQUIRE(is.has_value());
    std::multiset<std::string> kinds;
    for (const auto& i : *is) kinds.insert(i.labels.count(stack::kImageLabel) ? i.labels.at(stack::kImageLabel) : "");
    return kinds;
  };
  CHECK(kept() == std::multiset<std::string>{"snapshot", "snapshot-service"});
  auto second = run("b");
  for (const auto& t : second) {
    CHECK(t.snapshot_source == "kept");      // no trial of the second run ran setup
    CHECK(t.score == doctest::Approx(1.0));  // its store holds the first run's set-up row, no agent's
    CHECK(t.workspace_sha256 == first[0].workspace_sha256);
  }
  auto down = forgectl_run({"down", "--snapshots"});
  REQUIRE_MESSAGE(down.code == 0, down.text());
  CHECK(kept().empty());
}
