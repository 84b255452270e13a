// A sweep as a Slurm array, under a real Slurm (munged, slurmctld and slurmd started on this
// machine by scripts/slurm-test-cluster.sh) on a node whose Docker engine lacks forgectl's images:
// the shards build them once, under the node's lock; a shard cancelled mid-run and requeued
// resumes; the merge job's run holds exactly the trials, keys and report of the same sweep run on
// one machine (the same node, so the same images).
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/json.h"
#include "core/strings.h"
#include "engine/containers.h"
#include "engine/docker_host.h"
#include "results/run_json.h"
#include "results/trial_record.h"
#include "stack/labels.h"
#include "support/paths.h"
#include "support/process.h"
#include "support/second_engine.h"
#include "support/slurm_cluster.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<results::TrialRecord> trials_of(const std::string& run_dir) {
  auto log = results::read_trials_jsonl(run_dir + "/trials.jsonl");
  REQUIRE_MESSAGE(log.has_value(), (log ? "" : log.error().what()));
  return log->trials;
}

// A relative path as report.html writes it in an href (each '/' as &#47;).
std::string html_path(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '/' ? std::string("&#47;") : std::string(1, c);
  return out;
}

// Polls `ready` every 100 ms for up to `timeout`.
bool wait_for(const std::function<bool()>& ready, std::chrono::seconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ready();
}

}  // namespace

TEST_CASE(
    "slurm: an array on a node without images builds them once, survives scancel and requeue, and merges into "
    "the one-machine sweep") {
  SecondEngine node;  // the compute node's own Docker daemon: none of forgectl's images on it
  SlurmCluster cluster;
  TempDir dir;
  fs::create_directories(dir.path() + "/tasks");
  // Both run in the runner alone (stack: none): the second engine's bridges carry no traffic
  // between containers, which this host's first daemon would drop.
  for (const char* t : {"vpn-fix", "script-tests"})
    fs::copy(fs::path(source_dir()) / "examples" / "tasks" / t, dir.path() + "/tasks/" + t,
             fs::copy_options::recursive);
  std::string tasks = dir.path() + "/tasks", sweep = dir.path() + "/sweep", single = dir.path() + "/single";

  auto env = cluster.env();
  env["DOCKER_HOST"] = node.address();  // sbatch passes the environment on to the shards
  auto submitted = run_forgectl(
      {"slurm", "submit", tasks, "--agent", "oracle", "--trials", "2", "--shards", "2", "--out", sweep, "--json"},
      Millis(60000), env);
  REQUIRE_MESSAGE(submitted.has_value(), (submitted ? "" : submitted.error().what()));
  REQUIRE_MESSAGE(submitted->code == 0, submitted->text());
  auto ids = json::parse(submitted->out, "submit --json");
  REQUIRE(ids.has_value());
  std::string array = json::get_string(*ids, "array_job"), merge = json::get_string(*ids, "merge_job");
  REQUIRE(!array.empty());
  REQUIRE(!merge.empty());

  // Shard 0 holds one trial (vpn_fix#1), shard 1 the other three: shard 0 is cancelled while its
  // trial's sandbox is up, when shard 1 still has work, so the merge job waits for the requeue.
  std::string shard0 = sweep + "/shards/0-of-2";
  REQUIRE_MESSAGE(wait_for([&] { return fs::exists(shard0 + "/run.json"); }, std::chrono::seconds(90)),
                  ("shard 0 never started\n" + cluster.logs() + read_all(sweep + "/slurm/logs/shard-0.out")));
  auto run0 = results::RunJson::read(shard0 + "/run.json");
  REQUIRE(run0.has_value());
  CHECK(run0->planned == 1);
  CHECK(run0->shard == "0/2");
  // The runner the node built enters trial keys by its content, not its id: nodes agree on keys.
  REQUIRE(run0->images.count("forgectl/runner:local"));
  CHECK(starts_with(run0->images.at("forgectl/runner:local"), "content:"));
  auto host = engine::parse_docker_host(node.address(), forge::process_env());
  REQUIRE(host.has_value());
  auto client = engine::Client::connect(*host);
  REQUIRE(client.has_value());
  engine::Filters mine{{"label", {std::string(stack::kLabelRun) + "=" + run0->run_id}}};
  REQUIRE_MESSAGE(wait_for(
                      [&] {
                        auto cs = engine::list_containers(**client, mine);
                        return cs && !cs->empty();
                      },
                      std::chrono::seconds(90)),
                  ("shard 0's trial never started\n" + read_all(sweep + "/slurm/logs/shard-0.out")));
  CHECK_FALSE(fs::exists(shard0 + "/trials.jsonl"));  // mid-run: its trial is not recorded yet
  // The same sweep on one machine — this node, whose images the shards have built by now — while
  // the array runs. (Not the suite's daemon: its forgectl/runner:local is whichever build's suite
  // tagged it last, so its content, and the keys, may differ.)
  auto one = spawn_forgectl({"run", tasks, "--agent", "oracle", "--trials", "2", "--concurrency", "2", "--out", single},
                            {{"DOCKER_HOST", node.address()}});
  REQUIRE(one.has_value());
  auto cancelled = cluster.command({"scancel", array + "_0"});
  REQUIRE_MESSAGE(cancelled.exit_code == 0, cancelled.err);
  // A cancelled job can be requeued once Slurm has finished ending it.
  bool requeued = wait_for(
      [&] {
        return cluster.command({"scontrol", "requeue", array + "_0"}).exit_code == 0;
      },
      std::chrono::seconds(20));
  REQUIRE_MESSAGE(requeued, cluster.logs());

  std::string merge_state = cluster.wait_ended(merge, std::chrono::seconds(180));
  std::string logs = read_all(sweep + "/slurm/logs/shard-0.out") + read_all(sweep + "/slurm/logs/shard-1.out");
  REQUIRE_MESSAGE(merge_state == "COMPLETED", ("merge job " + merge_state + "\n" + logs +
                                               read_all(sweep + "/slurm/logs/merge.out") + cluster.logs()));
  auto one_code = (*one)->wait_for(Millis(180000));
  REQUIRE(one_code.has_value());
  REQUIRE_MESSAGE(*one_code == 0, (*one)->err());

  // Exactly the one-machine sweep's trials (the same keys), each once.
  std::string merged = sweep + "/merged";
  auto got = trials_of(merged), want = trials_of(single);
  CHECK(got.size() == 4);
  std::set<std::string> got_keys, want_keys;
  for (const auto& t : want) want_keys.insert(t.trial_key);
  for (const auto& t : got) {
    CAPTURE(t.task_id);
    CAPTURE(t.trial_index);
    CHECK(got_keys.insert(t.trial_key).second);
    CHECK(t.binary_pass);
    CHECK(t.docker_host == node.address());
    if (t.task_id == "vpn_fix" && t.trial_index == 1) CHECK(t.attempt == 2);  // redone by the requeued shard
  }
  CHECK(got_keys == want_keys);
  std::string report = read_all(merged + "/report.html");
  for (const auto& t : got) {
    CHECK(report.find("href=\"" + html_path(t.trial_dir + "/trial.html") + "\"") != std::string::npos);
    CHECK(fs::exists(merged + "/" + t.trial_dir + "/trial.html"));
  }

  // Two shards started on one node at once, shard 0 twice: each image was built once, under the lock.
  CHECK(count_of(logs, ": built forgectl/runner:local") == 1);
  CHECK(count_of(logs, ": built forgectl/squid:local") == 1);
  CHECK((*one)->err().find(": built ") == std::string::npos);
  // The cancelled run left nothing behind on the node once the requeued one had finished.
  auto left = engine::list_containers(**client, mine);
  REQUIRE(left.has_value());
  CHECK(left->empty());

  auto status = run_forgectl({"slurm", "status", sweep}, Millis(30000), cluster.env());
  REQUIRE(status.has_value());
  REQUIRE_MESSAGE(status->code == 0, status->text());
  CHECK(status->out.find("[4/4] pass 100.0% (4/4) · infra 0") != std::string::npos);
  CHECK(status->out.find("merged into " + merged) != std::string::npos);
  CHECK(status->out.find(array + "_0") != std::string::npos);
  MESSAGE(status->out);
}
