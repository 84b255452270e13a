// A Tolokaforge-format web task of our own (test/support/tf_web_task.h) on the built-in core stack,
// run unchanged against the real daemon: the run's loader gives it mock-web for its
// initial_state.mock_web.base_url, the runner reaches it as mock-web and tolokaforge-mock-web under
// no_internet, the task directory's pages answer at /task/<category>/<task_id>/… and /<name>.html
// and www/'s at /, a scripted agent that reads them passes and one that guesses fails, as
// grading.yaml weighs them; no route answers a grading file, and mock-web's container holds none.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>

#include "core/files.h"
#include "engine/exec.h"
#include "results/trial_record.h"
#include "stack/labels.h"
#include "support/fs_scan.h"
#include "support/process.h"
#include "support/scripted_trial.h"
#include "support/tf_web_task.h"
#include "sweep/task_set.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

std::string get(const std::string& url) {
  return json::Writer().begin_object().field("method", "GET").field("url", url).end_object().take();
}
std::string write_file(const std::string& path, const std::string& content) {
  return json::Writer().begin_object().field("path", path).field("content", content).end_object().take();
}

const std::string kTask = std::string("http://mock-web:8080/task/") + tf_web::kCategory + "/" + tf_web::kTaskId;

// Grading material and task files through every route and both host names: each must be 404.
const std::vector<std::string> kWithheld = {
    kTask + "/grading.yaml", kTask + "/task.yaml", kTask + "/tests/test.sh", kTask + "/tests/expected.html",
    kTask + "/solution.html", kTask + "/solution/steps.txt", kTask + "/expected_state.json",
    kTask + "/fixtures/answers.json", kTask + "/checks.py", kTask + "/.notes.txt", kTask + "/README.md",
    kTask + "/mock_web/grading.yaml", kTask + "/www/grading.yaml", kTask + "/www/tests/answer.html",
    kTask + "/www/server.py", "http://mock-web:8080/grading.yaml", "http://mock-web:8080/task.yaml",
    "http://mock-web:8080/tests/expected.html", "http://mock-web:8080/solution.html",
    "http://mock-web:8080/solution_notes.txt", "http://mock-web:8080/server.py",
    "http://tolokaforge-mock-web:8080/grading.yaml",
    "http://tolokaforge-mock-web:8080/task/webshop/order_lookup/grading.yaml",
    // Another category or task id than the task's own.
    "http://mock-web:8080/task/shop/order_lookup/index.html", "http://mock-web:8080/task/webshop/other/index.html"};
// The same, climbing out: refused before any lookup.
const std::vector<std::string> kClimbing = {kTask + "/%2e%2e/order_lookup/grading.yaml",
                                            kTask + "/orders/..%2f..%2fgrading.yaml",
                                            "http://mock-web:8080/task/webshop/%2e%2e/grading.yaml"};

// The agent that reads the site: the order desk (base_url), the order page, the carrier table
// (www/, by the other host name), the help page (mock_web/, by /<name>.html); the probes; then the
// answer in tracking.txt and to the user.
std::vector<Turn> reader() {
  std::vector<Turn> turns{{"Opening the order desk.", {{"http_request", get(tf_web::kBaseUrl)}}},
                          {"Opening the order and the carriers.",
                           {{"http_request", get(kTask + "/orders/1187.html")},
                            {"http_request", get("http://tolokaforge-mock-web:8080/carriers.html")},
                            {"http_request", get("http://mock-web:8080/help.html")},
                            {"http_request", get("http://mock-web:8080/")}}}};
  Turn probes{"Looking around.", {}};
  for (const auto& u : kWithheld) probes.calls.push_back({"http_request", get(u)});
  for (const auto& u : kClimbing) probes.calls.push_back({"http_request", get(u)});
  turns.push_back(probes);
  turns.push_back(
      {"Recording it.", {{"write_file", write_file("tracking.txt", std::string(tf_web::kTracking) + "\n")}}});
  turns.push_back(
      {std::string("Order 1187's tracking code is ") + tf_web::kTracking + ", carrier " + tf_web::kCarrier + ".", {}});
  return turns;
}

// The agent that guesses: it opens the desk, then writes a made-up code.
std::vector<Turn> guesser() {
  return {{"Opening the order desk.", {{"http_request", get(tf_web::kBaseUrl)}}},
          {"Recording it.", {{"write_file", write_file("tracking.txt", "TRK-0000-AA\n")}}},
          {"The tracking code is TRK-0000-AA.", {}}};
}

// During the agent phase: what mock-web's container holds under /srv, and its filesystem scan for
// the grading marker.
struct MockWebScan {
  std::vector<std::string> files;  // sorted, relative to /srv
  std::string scan;
};

MockWebScan scan_mock_web(const std::string& run_id) {
  auto filter = run_filter(run_id);
  filter["label"].push_back(std::string(stack::kLabelService) + "=mock-web");
  auto cs = engine::list_containers(*docker_env().client, filter);
  REQUIRE(cs.has_value());
  REQUIRE(cs->size() == 1);
  // The services image's busybox has sh, grep and test but neither find nor sed.
  engine::ExecOptions o{{"sh", "-c",
                         "walk() { local e; for e in \"$1\"/* \"$1\"/.[!.]*; do [ -e \"$e\" ] || continue; "
                         "if [ -d \"$e\" ]; then walk \"$e\"; else echo \"FILE:$e\"; fi; done; }; walk /srv"}};
  o.user = "0:0";
  o.timeout = Millis(30000);
  auto r = engine::exec_run(*docker_env().client, cs->front().id, o);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  MockWebScan out;
  std::istringstream in(r->out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("FILE:/srv/", 0) == 0) out.files.push_back(line.substr(10));
  std::sort(out.files.begin(), out.files.end());
  out.scan = scan_container(cs->front().id, tf_web::kGradingMarker);
  return out;
}

// mock-web held the task's page files and nothing else, and no file of it names the marker.
void check_mock_web_held_pages_only(const MockWebScan& s) {
  check_scan_clean("mock-web", s.scan);
  std::vector<std::string> want(std::begin(tf_web::kCopiedPages), std::end(tf_web::kCopiedPages));
  std::sort(want.begin(), want.end());
  CHECK(s.files == want);
}

}  // namespace

TEST_CASE(
    "tolokaforge web task: mock-web serves the task's pages at Tolokaforge's paths and never a grading file; "
    "a reader passes, a guesser fails") {
  (void)docker_env().services_image;
  TempDir dir;
  tf_web::write_task(dir.path());
  manifest::TaskConfig task = load_as_run(dir.path());
  REQUIRE(task.environment.compose.find("mock-web") != nullptr);

  SUBCASE("the agent that reads the pages") {
    TempDir traj;
    Rig rig;
    std::optional<MockWebScan> scan;
    rig.env.on_progress = [&](const trial::TrialProgress& p) {
      if (p.phase == "agent" && !scan) scan = scan_mock_web(rig.env.run_id);
    };
    auto r = rig.run(task, replay(write_trajectory(traj, reader())));
    CAPTURE(r.error);
    REQUIRE(r.outcome == results::Outcome::kGraded);

    // During the agent phase mock-web held the task's page files and nothing else.
    REQUIRE(scan.has_value());
    check_mock_web_held_pages_only(*scan);

    // What the agent read, by each route and both names.
    REQUIRE(r.tool_log.size() == 5 + kWithheld.size() + kClimbing.size() + 1);
    auto out = [&](std::size_t i) { return r.tool_log[i].record.content; };
    CHECK(out(0).rfind("Status: 200\n<h1>Order desk</h1>", 0) == 0);
    CHECK(out(1).find(tf_web::kTracking) != std::string::npos);
    CHECK(out(2).find(tf_web::kCarrier) != std::string::npos);
    CHECK(out(3).find("Carrier codes are listed") != std::string::npos);
    CHECK(out(4).rfind("Status: 200\n<h1>Shop</h1>", 0) == 0);
    for (std::size_t i = 0; i < kWithheld.size(); ++i) {
      CAPTURE(kWithheld[i]);
      CHECK(out(5 + i) == "Status: 404\n{\"message\":\"not found\"}");
    }
    for (std::size_t i = 0; i < kClimbing.size(); ++i) {
      CAPTURE(kClimbing[i]);
      CHECK(out(5 + kWithheld.size() + i).rfind("Status: 400\n", 0) == 0);
    }
    for (const auto& e : r.tool_log) CHECK(e.record.content.find(tf_web::kGradingMarker) == std::string::npos);

    // grading.yaml: the file holds the code (0.5) and the transcript fetched the order page and told
    // the code and the carrier (0.5); pass_threshold 1.0.
    CHECK(r.grade.binary_pass);
    CHECK(r.grade.score == doctest::Approx(1.0));
    CHECK(r.grade.components.at("state_checks") == doctest::Approx(1.0));
    CHECK(r.grade.components.at("transcript_rules") == doctest::Approx(1.0));
    CHECK(rig.left_nothing());
  }

  SUBCASE("the agent that guesses") {
    TempDir traj;
    Rig rig;
    auto r = rig.run(task, replay(write_trajectory(traj, guesser())));
    CAPTURE(r.error);
    REQUIRE(r.outcome == results::Outcome::kGraded);
    CHECK_FALSE(r.grade.binary_pass);
    CHECK(r.grade.components.at("state_checks") == doctest::Approx(0.0));
    CHECK(r.grade.components.at("transcript_rules") < 1.0);
    CHECK(r.grade.score < 0.5);
    CHECK(rig.left_nothing());
  }
}

TEST_CASE("tolokaforge web task: forgectl validate and run take it unchanged") {
  (void)docker_env().services_image;
  TempDir dir;
  tf_web::write_task(dir.path());
  auto v = run_forgectl({"validate", dir.path()});
  REQUIRE(v.has_value());
  CAPTURE(v->text());
  CHECK(v->code == 0);

  TempDir traj;
  const std::string reads = write_trajectory(traj, reader());
  auto r =
      run_forgectl({"run", dir.path(), "--agent", "replay:" + reads, "--out", traj.path() + "/run"}, Millis(300000));
  REQUIRE(r.has_value());
  CAPTURE(r->text());
  CHECK(r->code == 0);
  auto trials = results::read_trials_jsonl(traj.path() + "/run/trials.jsonl");
  REQUIRE_MESSAGE(trials.has_value(), (trials ? "" : trials.error().what()));
  REQUIRE(trials->trials.size() == 1);
  CHECK(trials->trials[0].outcome == results::Outcome::kGraded);
  CHECK(trials->trials[0].binary_pass);
  CHECK(trials->trials[0].score == doctest::Approx(1.0));
}

TEST_CASE(
    "tolokaforge web task: a grading file, solution and checks the task keeps under www/ are never served; an agent "
    "that asks for them gets 404 and fails, the site's own pages are served") {
  (void)docker_env().services_image;
  TempDir dir;
  tf_web::write_task(dir.path());
  const std::string m = tf_web::kGradingMarker;
  // The task's inputs, all in www/ under page types: its grading file (which holds the answer),
  // its solution script and its checks directory.
  tf_web::put(fs::path(dir.path()) / "www/grade.json",
      "{\"combine\": {\"method\": \"weighted\", \"weights\": {\"state_checks\": 0.5, \"custom_checks\": 0.5}, \"pass_threshold\": 1.0},\n"
      " \"state_checks\": {\"jsonpaths\": [{\"path_glob\": \"/env/fs/agent-visible/tracking.txt\", \"contains\": \"" +
          m + "\"}]},\n"
          " \"custom_checks\": {\"dir\": \"www/grader\", \"command\": \"sh /tests/check.sh\"}}\n");
  tf_web::put(fs::path(dir.path()) / "www/grader/check.sh", "grep -q " + m + " tracking.txt\n");
  tf_web::put(fs::path(dir.path()) / "www/grader/answer.json", "{\"code\": \"" + m + "\"}");
  tf_web::put(fs::path(dir.path()) / "www/solve.js", "// writes " + m);
  std::string yaml = *read_text(dir.path() + "/task.yaml");
  yaml.replace(yaml.find("grading: grading.yaml"), 21, "grading: www/grade.json\nsolution: {script: www/solve.js}");
  tf_web::put(fs::path(dir.path()) / "task.yaml", yaml);
  manifest::TaskConfig task = load_as_run(dir.path());

  const std::vector<std::string> hidden = {
      "http://mock-web:8080/grade.json",        kTask + "/www/grade.json",
      "http://mock-web:8080/solve.js",          "http://mock-web:8080/grader/answer.json",
      kTask + "/www/grader/answer.json",        "http://tolokaforge-mock-web:8080/grade.json"};
  Turn probes{"Looking for the answer.", {}};
  for (const auto& u : hidden) probes.calls.push_back({"http_request", get(u)});
  probes.calls.push_back({"http_request", get("http://mock-web:8080/carriers.html")});  // the honest control
  std::vector<Turn> turns{probes,
                          {"Recording it.", {{"write_file", write_file("tracking.txt", "not found\n")}}},
                          {"I could not find the code.", {}}};
  TempDir traj;
  Rig rig;
  std::optional<MockWebScan> scan;
  rig.env.on_progress = [&](const trial::TrialProgress& p) {
    if (p.phase == "agent" && !scan) scan = scan_mock_web(rig.env.run_id);
  };
  auto r = rig.run(task, replay(write_trajectory(traj, turns)));
  CAPTURE(r.error);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  REQUIRE(r.tool_log.size() == hidden.size() + 2);
  for (std::size_t i = 0; i < hidden.size(); ++i) {
    CAPTURE(hidden[i]);
    CHECK(r.tool_log[i].record.content == "Status: 404\n{\"message\":\"not found\"}");
  }
  CHECK(r.tool_log[hidden.size()].record.content.rfind("Status: 200\n", 0) == 0);
  CHECK(r.tool_log[hidden.size()].record.content.find(tf_web::kCarrier) != std::string::npos);
  for (const auto& e : r.tool_log) CHECK(e.record.content.find(m) == std::string::npos);
  // mock-web's container held the site's pages and none of the task's inputs.
  REQUIRE(scan.has_value());
  check_mock_web_held_pages_only(*scan);
  CHECK_FALSE(r.grade.binary_pass);
  CHECK(rig.left_nothing());
}
