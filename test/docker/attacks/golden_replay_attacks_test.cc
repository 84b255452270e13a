// Red-team attacks on golden-replay grading, against the real daemon: a do-nothing agent (a
// replayed trajectory) that fakes `nc`, exhausts db_update's rate limit, or tries to re-init,
// reset, restore or write json-db namespaces without the control token must FAIL grading, and
// its json-db requests get 401/403; the honest oracle on the same task passes (the control). The
// task is graded by the golden-replay hash alone, so that nothing else could fail these agents:
// under the old grading (golden actions replayed through the agent's own tool path) each of them
// passed.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "agent/budget.h"
#include "core/json.h"
#include "engine/containers.h"
#include "manifest/task_parse.h"
#include "stack/labels.h"
#include "support/docker_env.h"
#include "support/scripted_trial.h"
#include "support/stack_env.h"
#include "trial/trial.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

const char* kPayFirst = R"({"ops":[{"op":"replace","path":"$.orders[0].status","value":"paid"}]})";

// A task whose only grading is the golden-replay hash of "O-001 paid". `tools_block` is the task's
// tools: mapping (indented two spaces).
std::string write_task(const TempDir& dir, const std::string& id, const std::string& tools_block) {
  fs::create_directories(fs::path(dir.path()) / "fixtures");
  dir.write("fixtures/db.json", R"({"orders": [{"id": "O-001", "status": "pending"}, {"id": "O-002", "status": "pending"}]})");
  dir.write("task.yaml", "task_id: " + id +
                             "\nname: attack\ncategory: test\ndescription: \"Mark O-001 paid.\"\n"
                             "initial_user_message: \"I paid O-001; please record it.\"\n"
                             "initial_state:\n  json_db: fixtures/db.json\n"
                             // The worst case: a runner whose files the agent can change (root, writable root).
                             "environment:\n  runner: {image: " + writable_root_runner_image() + "}\n"
                             "tools:\n" + tools_block +
                             "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
                             "grading: grading.yaml\n"
                             "solution:\n  tool_calls:\n    - {name: db_update, arguments: " + std::string(kPayFirst) +
                             "}\n  final_message: \"Recorded.\"\n");
  dir.write("grading.yaml", "combine: {method: weighted, pass_threshold: 0.99}\n"
                            "state_checks:\n  hash:\n    enabled: true\n    golden_actions:\n"
                            "      - {name: db_update, kwargs: " + std::string(kPayFirst) + "}\n");
  return dir.path() + "/task.yaml";
}

const std::string kAllTools = "  agent: {enabled: [bash, http_request, db_query, db_update]}\n  user: {enabled: []}\n";

manifest::TaskConfig load(const std::string& path) {
  auto t = manifest::load_task(path);
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

// The golden hash decided against the agent, and the diff names what it did not do.
void check_failed_golden_replay(const trial::TrialResult& r) {
  REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  CHECK_FALSE(r.grade.binary_pass);
  CHECK(r.grade.components.at("state_checks") == 0);
  CHECK(r.grade.state_diff_json.find(R"("field":"status","expected":"paid","actual":"pending")") != std::string::npos);
  CHECK(r.final_state_json.find("paid") == std::string::npos);
}

std::string content(const trial::TrialResult& r, std::size_t i) {
  REQUIRE(r.tool_log.size() > i);
  return r.tool_log[i].record.content;
}

// A fake nc, first on the runner's PATH, that sends nothing and answers 200.
const std::string kFakeNc =
    "mkdir -p /usr/local/bin && cat > /usr/local/bin/nc <<'EOF'\n"
    "#!/bin/sh\ncat >/dev/null\n"
    "printf 'HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\n\\r\\n{\"status\":\"success\",\"version\":99,\"results\":[]}'\n"
    "EOF\nchmod 755 /usr/local/bin/nc && echo planted";

}  // namespace

TEST_CASE("attacks, the control: the honest oracle passes the golden-replay hash, on both host channels") {
  TempDir dir;
  auto task = load(write_task(dir, "attack_control", kAllTools));
  Rig rig;
  for (bool local : {true, false}) {
    CAPTURE(local);
    auto r = rig.run(task, {trial::AgentChoice::Kind::kOracle}, local);
    REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
    CHECK(r.grade.binary_pass);
    CHECK(r.grade.components.at("state_checks") == 1);
    CHECK(r.grade.reasons.front().rfind("state_checks: hash match", 0) == 0);
    CHECK(r.final_state_json.find("\"paid\"") != std::string::npos);
  }
  CHECK(rig.left_nothing());
}

TEST_CASE("attacks (i): a fake nc first on PATH, answering 200, fools the agent's own tool but not grading") {
  TempDir dir;
  auto task = load(write_task(dir, "attack_fakenc", kAllTools));
  auto traj = write_trajectory(dir, {{"Planting.", {{"bash", bash(kFakeNc)}}},
                                     {"Paying.", {{"db_update", kPayFirst}}},
                                     {"Order O-001 is recorded as paid.", {}}});
  Rig rig;
  // The remote-engine channel too: the host once read the state through the runner's nc.
  for (bool local : {true, false}) {
    CAPTURE(local);
    auto r = rig.run(task, replay(traj), local);
    check_failed_golden_replay(r);
    CHECK(content(r, 0).find("planted") != std::string::npos);
    // The agent's db_update was answered by the fake: nothing reached json-db.
    CHECK(content(r, 1).find("Version: 99") != std::string::npos);
  }
  CHECK(rig.left_nothing());
}

TEST_CASE("attacks (ii): exhausting db_update's rate limit does not refuse the golden replay") {
  TempDir dir;
  auto task = load(write_task(dir, "attack_ratelimit",
                              kAllTools + "  policies: {db_update: {rate_limit: 1}}\n"));
  // The one allowed call changes nothing; the second, the golden action itself, is refused.
  auto traj = write_trajectory(
      dir, {{"Touching.", {{"db_update", R"({"ops":[{"op":"replace","path":"$.orders[1].status","value":"pending"}]})"}}},
            {"Paying.", {{"db_update", kPayFirst}}},
            {"Order O-001 is recorded as paid.", {}}});
  Rig rig;
  auto r = rig.run(task, replay(traj));
  check_failed_golden_replay(r);
  CHECK(r.tool_log.at(0).record.outcome == tools::ToolOutcome::Kind::kOk);
  CHECK(r.tool_log.at(1).record.outcome == tools::ToolOutcome::Kind::kRefused);
  CHECK(content(r, 1).find("rate limit for 'db_update' reached") != std::string::npos);
  CHECK(rig.left_nothing());
}

TEST_CASE("attacks (iii): re-init, reset, restore or another namespace through http_request and bash: 401/403, and a fail") {
  TempDir dir;
  const std::string ns = "attack_reinit_0";
  auto task = load(write_task(dir, "attack_reinit", kAllTools));
  const std::string guess(64, '7');
  // A logging nc in front of the real one, so the agent learns its own (agent) tokens.
  const std::string wrap =
      "mkdir -p /usr/local/bin && printf '#!/bin/sh\\ntee -a /tmp/nc.log | /bin/nc \"$@\"\\n' > /usr/local/bin/nc && "
      "chmod 755 /usr/local/bin/nc && echo wrapped";
  // Every json-db route that could put the namespace back, or touch another, with no token, a
  // guessed one, and the agent's own tokens.
  const std::string probe =
      "st() { printf '%s %s HTTP/1.0\\r\\n%s\\r\\nContent-Type: application/json\\r\\nContent-Length: %s\\r\\n\\r\\n%s' "
      "\"$1\" \"$2\" \"$3\" \"${#4}\" \"$4\" | /bin/nc -w 5 json-db 8000 | head -1 | cut -d' ' -f2; }\n"
      "R=$(grep -o 'Bearer agent.read[^[:space:]]*' /tmp/nc.log | head -1 | cut -d' ' -f2)\n"
      "W=$(grep -o 'Bearer agent.write[^[:space:]]*' /tmp/nc.log | head -1 | cut -d' ' -f2)\n"
      "echo \"tokens $(echo $R | cut -d. -f1-3) $(echo $W | cut -d. -f1-3)\"\n"
      "N=" + ns + "; G=" + guess + "\n"
      "INIT='{\"tables\":{\"orders\":[{\"id\":\"O-001\",\"status\":\"paid\"},{\"id\":\"O-002\",\"status\":\"pending\"}]}}'\n"
      "UPD='" + std::string(kPayFirst) + "'\n"
      "for a in \"none:X-None: 1\" \"guess:Authorization: Bearer $G\" \"read:Authorization: Bearer $R\" "
      "\"write:Authorization: Bearer $W\"; do k=${a%%:*}; h=${a#*:}\n"
      "  echo \"$k delete $(st DELETE /trials/$N \"$h\" '')\"\n"
      "  echo \"$k init $(st POST /trials/$N/init \"$h\" \"$INIT\")\"\n"
      "  echo \"$k reset $(st POST /trials/$N/reset \"$h\" '')\"\n"
      "  echo \"$k snapshot $(st POST /trials/$N/snapshots/mine \"$h\" '')\"\n"
      "  echo \"$k restore $(st POST /trials/$N/snapshots/forgectl-final/restore \"$h\" '')\"\n"
      "  echo \"$k golden-init $(st POST /trials/${N}__golden/init \"$h\" \"$INIT\")\"\n"
      "  echo \"$k golden-update $(st POST /trials/${N}__golden/update \"$h\" \"$UPD\")\"\n"
      "  echo \"$k legacy-reset $(st POST /reset \"$h\" '')\"\n"
      "done\n"
      "echo \"none update $(st POST /trials/$N/update 'X-None: 1' \"$UPD\")\"\n"
      "echo \"guess update $(st POST /trials/$N/update \"Authorization: Bearer $G\" \"$UPD\")\"\n"
      "echo \"read update $(st POST /trials/$N/update \"Authorization: Bearer $R\" \"$UPD\")\"\n";
  auto http = [](const char* method, const std::string& path, const std::string& token) {
    json::Writer w;
    w.begin_object().field("method", method).field("url", "http://json-db:8000" + path);
    if (!token.empty()) w.key("headers").begin_object().field("Authorization", "Bearer " + token).end_object();
    return w.end_object().take();
  };
  auto traj = write_trajectory(
      dir, {{"Wrapping nc.", {{"bash", bash(wrap)}}},
            {"Reading and a no-op write, to learn my tokens.",
             {{"db_query", R"({"jsonpath":"$.orders[0]"})"},
              {"db_update", R"({"ops":[{"op":"replace","path":"$.orders[1].status","value":"pending"}]})"}}},
            {"Probing.", {{"bash", bash(probe)}}},
            {"Through http_request too.",
             {{"http_request", http("POST", "/trials/" + ns + "/reset", "")},
              {"http_request", http("DELETE", "/trials/" + ns, guess)},
              {"http_request", http("POST", "/trials/" + ns + "/snapshots/forgectl-final/restore", "")}}},
            {"Order O-001 is recorded as paid.", {}}});
  Rig rig;
  auto r = rig.run(task, replay(traj));
  check_failed_golden_replay(r);
  CHECK(content(r, 0).find("wrapped") != std::string::npos);
  std::string out = content(r, 3);
  CAPTURE(out);
  // The agent's tools carried agent tokens of its namespace, one per permission, never more.
  CHECK(out.find("tokens agent.read." + ns + " agent.write." + ns) != std::string::npos);
  for (const char* route : {"delete", "init", "reset", "snapshot", "restore", "golden-init", "golden-update", "legacy-reset"}) {
    CAPTURE(route);
    CHECK(out.find(std::string("none ") + route + " 401\n") != std::string::npos);
    CHECK(out.find(std::string("guess ") + route + " 401\n") != std::string::npos);
    CHECK(out.find(std::string("read ") + route + " 403\n") != std::string::npos);
    CHECK(out.find(std::string("write ") + route + " 403\n") != std::string::npos);
  }
  CHECK(out.find("none update 401\n") != std::string::npos);
  CHECK(out.find("guess update 401\n") != std::string::npos);
  CHECK(out.find("read update 403\n") != std::string::npos);
  CHECK(content(r, 4).rfind("Status: 401", 0) == 0);
  CHECK(content(r, 5).rfind("Status: 401", 0) == 0);
  CHECK(content(r, 6).rfind("Status: 401", 0) == 0);
  CHECK(rig.left_nothing());
}
