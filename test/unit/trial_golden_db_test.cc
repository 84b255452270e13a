// The host's side of json-db: every request carries the control token, json-db's statuses become
// codes the trial classifies right, golden replay applies db_update's ops host-side in a namespace
// of its own (never the agent's, never through the agent's tools), and the agent's db tools carry
// only agent tokens. json-db itself answers (in-process, or on 127.0.0.1): the transport is fake,
// the service is not.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/service_token.h"
#include "grading/replay.h"
#include "services/http_server.h"
#include "services/json_db.h"
#include "services/json_db_auth.h"
#include "services/json_db_http.h"
#include "services/local_client.h"
#include "tools/builtin_tools.h"
#include "trial/db_client.h"
#include "trial/fault.h"
#include "trial/golden_replay.h"
#include "trial/preflight.h"

using namespace forge;
using namespace forge::trial;

namespace {

const std::string kControl(64, 'b');
const std::string kInit = R"({"tables":{"orders":[{"id":"O-001","status":"pending","updated_at":1},)"
                          R"({"id":"O-002","status":"pending","updated_at":2}]},"unstable_fields":["updated_at"]})";

// A json-db with the control token kControl, reached through a fake transport that hands each
// request to its handler in-process, records it, and may answer a forced status instead.
struct FakeJsonDb {
  services::JsonDb db;
  services::Handler handler = services::json_db_handler(db, *services::JsonDbAuth::with_control_token(kControl));
  std::vector<DbRequest> requests;
  std::map<std::string, long> forced;  // "METHOD path" → status answered instead (body {"message":"forced"})

  DbTransport transport() {
    return [this](const DbRequest& r) -> Result<DbReply> {
      requests.push_back(r);
      if (auto it = forced.find(r.method + " " + r.path); it != forced.end())
        return DbReply{it->second, R"({"message":"forced"})"};
      services::Request q;
      q.method = r.method;
      q.target = r.path;
      auto qm = r.path.find('?');
      q.path = r.path.substr(0, qm);
      q.query = qm == std::string::npos ? "" : r.path.substr(qm + 1);
      q.body = r.body;
      if (!r.bearer.empty()) q.headers.emplace_back("Authorization", "Bearer " + r.bearer);
      auto resp = handler(q);
      return DbReply{resp.status, resp.body};
    };
  }
  DbClient client(const std::string& ns, const std::string& token = kControl) { return DbClient(transport(), token, ns); }

  // What the agent's db_update does: the same endpoint, with its write token.
  long agent_update(const std::string& ns, const std::string& ops) {
    services::Request q;
    q.method = "POST";
    q.target = q.path = "/trials/" + ns + "/update";
    q.body = ops;
    q.headers.emplace_back("Authorization", "Bearer " + agent_token(kControl, ns, TokenPermission::kWrite));
    return handler(q).status;
  }
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const auto& r : requests) out.push_back(r.method + " " + r.path);
    return out;
  }
};

manifest::HashCheck golden(std::vector<manifest::GoldenAction> actions) {
  manifest::HashCheck h;
  h.enabled = true;
  h.golden_actions = std::move(actions);
  return h;
}

const manifest::GoldenAction kPayFirst{"db_update", R"({"ops":[{"op":"replace","path":"$.orders[0].status","value":"paid"}]})"};

}  // namespace

TEST_CASE("golden replay on the host: db_update's ops apply in a golden namespace; the agent's is only read") {
  FakeJsonDb j;
  auto agent = j.client("orders_0");
  REQUIRE(agent.init(kInit));
  // The agent paid the right order (and its update touched an unstable field, which does not count).
  CHECK(j.agent_update("orders_0", R"({"ops":[{"op":"replace","path":"$.orders[0].status","value":"paid"},)"
                                   R"({"op":"replace","path":"$.orders[0].updated_at","value":99}]})") == 200);
  j.requests.clear();

  DbStateStore store(agent, kInit, builtin_golden_replayers());
  auto h = grading::check_state_hash(golden({{"db_query", R"({"jsonpath":"$.orders[0]"})"}, kPayFirst}), &store);
  REQUIRE_MESSAGE(h.has_value(), (h ? "" : h.error().what()));
  CHECK(h->score == 1);
  CHECK(h->reasons.back().rfind("state_checks: hash match", 0) == 0);
  // Every request is the host's, with the control token; the agent's namespace is only read.
  CHECK(j.paths() == std::vector<std::string>{"GET /trials/orders_0/state/stable", "POST /trials/orders_0__golden/init",
                                              "POST /trials/orders_0__golden/update",
                                              "GET /trials/orders_0__golden/state/stable",
                                              "DELETE /trials/orders_0__golden"});
  for (const auto& r : j.requests) CHECK(r.bearer == kControl);
  CHECK(j.requests[2].body == R"({"ops":[{"op":"replace","path":"$.orders[0].status","value":"paid"}]})");
  CHECK(j.db.trial_count() == 1);  // the golden namespace is gone again
  CHECK(agent.state_json()->find("\"updated_at\":99") != std::string::npos);
}

TEST_CASE("golden replay on the host: a do-nothing agent fails, with the diff, whatever its tools did") {
  FakeJsonDb j;
  auto agent = j.client("orders_0");
  REQUIRE(agent.init(kInit));
  // Nothing reached the agent's namespace (its db_update refused by a rate limit, or a fake nc):
  // the golden namespace gets the golden update anyway, from forgectl.
  DbStateStore store(agent, kInit, builtin_golden_replayers());
  auto h = grading::check_state_hash(golden({kPayFirst}), &store);
  REQUIRE(h.has_value());
  CHECK(h->score == 0);
  auto diff = json::parse(h->state_diff_json, "diff");
  REQUIRE(diff.has_value());
  CHECK(json::get_string(*diff, "summary") == "State mismatch: orders: 0 missing, 0 extra, 1 different");
  // The diff compares stable states: the unstable field is not in it.
  CHECK(h->state_diff_json.find("updated_at") == std::string::npos);
  CHECK(json::to_string((*diff)["tables"]["orders"]["different"][0]["field_diffs"]) ==
        R"([{"field":"status","expected":"paid","actual":"pending"}])");
}

TEST_CASE("golden replay on the host: what db_update refuses is reported and replayed past; json-db failing is an error") {
  FakeJsonDb j;
  auto agent = j.client("orders_0");
  REQUIRE(agent.init(kInit));
  DbStateStore store(agent, kInit, builtin_golden_replayers());
  auto h = grading::check_state_hash(
      golden({{"db_update", R"({"ops":[{"op":"replace","path":"$.nothing","value":1}]})"},  // json-db: 400
              {"db_update", R"({"ops":[{"op":"rename","path":"$.orders"}]})"},             // the schema: kInvalid
              {"db_update", "[1]"}}),
      &store);
  REQUIRE(h.has_value());
  REQUIRE(h->reasons.size() == 4);
  CHECK(h->reasons[0].find("golden replay error: action 1/3 \"db_update\": json-db POST /trials/orders_0__golden/update: HTTP 400") !=
        std::string::npos);
  CHECK(h->reasons[1].find("action 2/3 \"db_update\": db_update arguments: ") != std::string::npos);
  CHECK(h->reasons[2].find("action 3/3 \"db_update\": the arguments are not a JSON object") != std::string::npos);
  CHECK(h->score == 1);  // nothing applied: the untouched agent state is the golden one

  // The golden update answered 507: the golden actions outgrew json-db's allowance, a refusal.
  j.forced["POST /trials/orders_0__golden/update"] = 507;
  auto full = grading::check_state_hash(golden({kPayFirst}), &store);
  REQUIRE(full.has_value());
  CHECK(full->reasons[0].find("HTTP 507: forced (json-db's storage is used up)") != std::string::npos);
  // 401 or 500 on a golden update is json-db or forgectl failing: no verdict.
  for (long status : {401L, 403L, 500L}) {
    CAPTURE(status);
    j.forced["POST /trials/orders_0__golden/update"] = status;
    auto failed = grading::check_state_hash(golden({kPayFirst}), &store);
    REQUIRE(!failed);
    CHECK(failed.error().code == (status == 500 ? Errc::kServer : Errc::kProtocol));
    CHECK(failed.error().what().find("golden replay: replaying action 1/1 \"db_update\": json-db POST") == 0);
  }
  CHECK(j.db.trial_count() == 1);  // dropped on every path
}

TEST_CASE("golden replay on the host: a tool without a host-side replayer is a setup error, never a pass") {
  auto replayers = builtin_golden_replayers();
  CHECK(replayers.names() == std::vector<std::string>{"calculator", "db_query", "db_update", "grep_workspace",
                                                      "list_dir", "read_file", "search_kb"});
  auto st = check_golden_actions(golden({kPayFirst, {"refund_order", R"({"order_id":"O-1"})"}}), replayers);
  REQUIRE(!st);
  CHECK(st.error().code == Errc::kUnsupported);
  CHECK(st.error().message.rfind("golden action 2/2 names tool 'refund_order', which forgectl cannot replay on the host "
                                 "(it replays: calculator, db_query, db_update, grep_workspace, list_dir, read_file, "
                                 "search_kb)",
                                 0) == 0);
  CHECK(classify(st.error(), results::InfraKind::kGrader).outcome == results::Outcome::kSetupError);
  // bash acts in the agent's sandbox: forgectl never runs it for golden replay.
  CHECK(!check_golden_actions(golden({{"bash", R"({"command":"true"})"}}), replayers));
  // An MCP tool that shadows db_update has no replayer either.
  replayers.remove("db_update");
  CHECK(check_golden_actions(golden({kPayFirst}), replayers).error().code == Errc::kUnsupported);
  // Limits of its own: count and size.
  GoldenLimits small{2, 64};
  CHECK(check_golden_actions(golden({kPayFirst, kPayFirst, kPayFirst}), builtin_golden_replayers(), small).error().code ==
        Errc::kInvalid);
  CHECK(check_golden_actions(golden({kPayFirst}), builtin_golden_replayers(), small).error().message.find("at most 64") !=
        std::string::npos);
  CHECK(check_golden_actions(golden({kPayFirst}), builtin_golden_replayers(), {}));
  CHECK(check_golden_actions(manifest::HashCheck{}, GoldenReplayers{}));  // not enabled: nothing to replay

  // And inside grading, should it get there: kUnsupported, not a refusal.
  FakeJsonDb j;
  auto agent = j.client("t_0");
  REQUIRE(agent.init(kInit));
  DbStateStore store(agent, kInit, builtin_golden_replayers());
  auto h = grading::check_state_hash(golden({{"bash", "{}"}}), &store);
  REQUIRE(!h);
  CHECK(h.error().code == Errc::kUnsupported);

  // Preflight (forgectl validate and run) lists it with the grading file.
  manifest::TaskConfig task;
  task.task_id = "t";
  task.grading.path = "/tasks/t/grading.yaml";
  task.grading.state_checks.present = true;
  task.grading.state_checks.hash = golden({{"refund_order", "{}"}});
  auto problems = check_task(task, PreflightInput{});
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].where == "/tasks/t/grading.yaml");
  CHECK(problems[0].message.find("state_checks.hash: golden action 1/1 names tool 'refund_order'") == 0);
}

TEST_CASE("golden replay on the host: a leftover golden namespace is replaced; long names are hashed") {
  FakeJsonDb j;
  auto agent = j.client("t_0");
  REQUIRE(agent.init(kInit));
  REQUIRE(agent.in_namespace("t_0__golden").init(R"({"tables":{"orders":[]}})"));
  DbStateStore store(agent, kInit, builtin_golden_replayers());
  auto h = grading::check_state_hash(golden({}), &store);
  REQUIRE(h.has_value());
  CHECK(h->score == 1);  // the golden state is the fixtures, not the leftover

  CHECK(golden_namespace("t_0") == "t_0__golden");
  std::string long_ns(250, 'x');
  std::string g = golden_namespace(long_ns);
  CHECK(g.size() == 7 + 32);
  CHECK(g.rfind("golden_", 0) == 0);
  CHECK(services::check_name("trial", golden_namespace(std::string(256, 'y'))));
}

TEST_CASE("DbClient: json-db's statuses become codes that classify as docs/services.md says") {
  FakeJsonDb j;
  auto c = j.client("t_0");
  struct Case {
    long status;
    Errc code;
    results::Outcome outcome;
  };
  for (const Case& k : {Case{401, Errc::kProtocol, results::Outcome::kInfraError},   // forgectl misconfigured
                        Case{403, Errc::kProtocol, results::Outcome::kInfraError},   // a bug
                        Case{507, Errc::kServer, results::Outcome::kInfraError},     // storage used up on init
                        Case{500, Errc::kServer, results::Outcome::kInfraError},
                        Case{413, Errc::kInvalid, results::Outcome::kSetupError},    // fixtures too large, every time
                        Case{400, Errc::kBadRequest, results::Outcome::kSetupError},  // fixtures json-db refuses
                        Case{409, Errc::kConflict, results::Outcome::kInfraError}}) {
    CAPTURE(k.status);
    j.forced["POST /trials/t_0/init"] = k.status;
    auto st = c.init(kInit);
    REQUIRE(!st);
    CHECK(st.error().code == k.code);
    CHECK(classify_running(st.error(), results::InfraKind::kSandbox).outcome == k.outcome);
    CHECK(st.error().message.find("json-db POST /trials/t_0/init: HTTP " + std::to_string(k.status) + ": forced") == 0);
    CHECK(st.error().what().find(kControl) == std::string::npos);
  }
  j.forced.clear();
  // The real thing: a token json-db does not know is a 401, an agent token on a control route a 403.
  auto wrong = j.client("t_0", std::string(64, 'a'));
  auto st = wrong.init(kInit);
  REQUIRE(!st);
  CHECK(st.error().code == Errc::kProtocol);
  CHECK(st.error().message.find("HTTP 401") != std::string::npos);
  CHECK(st.error().message.find("does not accept forgectl's control token") != std::string::npos);
  auto agentish = j.client("t_0", agent_token(kControl, "t_0", TokenPermission::kWrite));
  CHECK(agentish.init(kInit).error().message.find("HTTP 403") != std::string::npos);
  CHECK(db_status_code(404) == Errc::kNotFound);
  CHECK(trial_path("a b/c") == "/trials/a%20b%2Fc");
}

TEST_CASE("the host's channels: libcurl and forgectl serve http-request send the control token to a real json-db") {
  services::JsonDb db;
  auto server = services::HttpServer::start({.host = "127.0.0.1"},
                                            services::json_db_handler(db, *services::JsonDbAuth::with_control_token(kControl)));
  REQUIRE(server.has_value());
  std::uint16_t port = (*server)->port();

  DbClient direct(direct_db_transport("http://127.0.0.1:" + std::to_string(port)), kControl, "t_0");
  REQUIRE(direct.init(kInit));
  auto stable = direct.stable_state();
  REQUIRE(stable.has_value());
  CHECK(stable->data_json.find("updated_at") == std::string::npos);
  CHECK(stable->hash.size() == 64);
  DbClient no_token(direct_db_transport("http://127.0.0.1:" + std::to_string(port)), "", "t_0");
  CHECK(no_token.state_json().error().message.find("HTTP 401") != std::string::npos);

  // The client mode that runs in json-db's container: token and body from stdin, the reply on stdout.
  services::LocalRequest req;
  req.method = "POST";
  req.target = "/trials/t_0/query";
  req.port = port;
  REQUIRE(services::read_local_input(kControl + "\n" + R"({"jsonpath":"$.orders[1].id"})", req));
  CHECK(req.bearer == kControl);
  auto reply = services::local_request(req);
  REQUIRE_MESSAGE(reply.has_value(), (reply ? "" : reply.error().what()));
  CHECK(services::format_local_reply(*reply) == "200\n" R"({"results":["O-002"],"count":1})");
  REQUIRE(services::read_local_input("\n{}", req));  // no token
  CHECK(services::local_request(req)->status == 401);
  CHECK(!services::read_local_input("no newline", req));
  req.target = "relative";
  CHECK(services::local_request(req).error().code == Errc::kInvalid);
  req.target = "/health";
  req.method = "BREW";
  CHECK(services::local_request(req).error().code == Errc::kInvalid);
}

namespace {

// A runner whose nc records what it was sent and answers a canned reply.
class RecordingSandbox : public tools::Sandbox {
 public:
  std::vector<tools::RunRequest> runs;
  std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"results\":[],\"count\":0,\"version\":2}";
  std::string describe() const override { return "recording"; }
  std::string workspace() const override { return "/work"; }
  Result<tools::RunResult> run(const tools::RunRequest& req) override {
    runs.push_back(req);
    tools::RunResult r;
    r.exit_code = 0;
    r.out = answer;
    return r;
  }
  Result<tools::FileChunk> read_file(const std::string&, std::int64_t, std::int64_t) override { return unsupported(); }
  Status write_file(const std::string&, std::string_view, bool) override { return unsupported(); }
  Result<std::vector<tools::DirEntry>> list_dir(const std::string&) override { return unsupported(); }
  Result<tools::DirEntry> stat(const std::string&) override { return unsupported(); }
  Status move(const std::string&, const std::string&) override { return unsupported(); }
  Status copy(const std::string&, const std::string&) override { return unsupported(); }
  Status remove(const std::string&, bool) override { return unsupported(); }
  Result<std::vector<tools::GrepMatch>> grep(const std::string&, const std::string&, int) override { return unsupported(); }

 private:
  static Unexpected unsupported() { return fail(Errc::kUnsupported, "not in this test"); }
};

}  // namespace

TEST_CASE("the agent's db tools send only their own agent token, and none when the task did not grant it") {
  auto sb = std::make_shared<RecordingSandbox>();
  tools::BuiltinOptions o;
  o.sandbox = sb;
  o.db.trial = "orders_0";
  o.db.read_token = agent_token(kControl, "orders_0", TokenPermission::kRead);
  auto db = tools::db_tools(o);
  REQUIRE(db.size() == 2);
  auto q = json::parse(R"({"jsonpath":"$.orders"})", "args");
  auto u = json::parse(R"({"ops":[{"op":"remove","path":"$.orders[0]"}]})", "args");
  REQUIRE(db[0]->call(*q, {}).has_value());
  (void)db[1]->call(*u, {});
  REQUIRE(sb->runs.size() == 2);
  const std::string& query = *sb->runs[0].stdin_data;
  const std::string& update = *sb->runs[1].stdin_data;
  CHECK(query.find("POST /trials/orders_0/query HTTP/1.1\r\n") == 0);
  CHECK(query.find("\r\nAuthorization: Bearer " + o.db.read_token + "\r\n") != std::string::npos);
  CHECK(update.find("POST /trials/orders_0/update HTTP/1.1\r\n") == 0);
  CHECK(update.find("Authorization") == std::string::npos);  // db_update not granted: no token at all
  for (const auto& r : sb->runs) {
    CHECK(r.stdin_data->find(kControl) == std::string::npos);
    CHECK(r.argv.front() == "nc");
  }
  // A write token is only ever a write token of this namespace, derived from the control token.
  auto claim = parse_agent_token(agent_token(kControl, "orders_0", TokenPermission::kWrite));
  REQUIRE(claim.has_value());
  CHECK(claim->ns == "orders_0");
  CHECK(claim->perm == TokenPermission::kWrite);
}
