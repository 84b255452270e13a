// Golden replay against an in-memory StateStore whose golden states apply shop operations apart
// from the agent's state, the structured state diff it reports on a mismatch, and a store that
// fails (a grading fault).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/state_hash.h"
#include "grading/diff.h"
#include "grading/grader.h"
#include "grading/replay.h"
#include "grading/state_checks.h"
#include "support/paths.h"

using namespace forge;
using namespace forge::grading;

namespace {

std::string read_fixture(const std::string& name) {
  std::ifstream in(forge::test::test_data_dir() + "/grading/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The shop's tables and the three shop tools (create_order, ship_order, cancel_order) that both
// the agent and golden replay apply.
class Shop {
 public:
  explicit Shop(const std::string& text) { load(text); }

  void load(const std::string& text) {
    doc_.Parse(text.c_str());
    REQUIRE(!doc_.HasParseError());
  }
  std::string text() const { return json::to_string(doc_); }
  std::string hash() const { return state_hash(doc_); }

  Status apply(const std::string& tool, const json::Document& args) {
    auto& a = doc_.GetAllocator();
    if (tool == "create_order") {
      auto& orders = doc_["orders"];
      char id[16];
      std::snprintf(id, sizeof id, "O-%03u", orders.Size() + 1);  // deterministic ids, like the json-db
      json::Value o(rapidjson::kObjectType);
      o.AddMember("id", json::Value(id, a), a);
      o.AddMember("customer_id", json::Value(json::get_string(args, "customer_id").c_str(), a), a);
      o.AddMember("item", json::Value(json::get_string(args, "item").c_str(), a), a);
      o.AddMember("qty", json::Value(static_cast<int>(json::get_int(args, "qty", 1))), a);
      o.AddMember("status", "pending", a);
      orders.PushBack(o, a);
      return {};
    }
    if (tool == "ship_order") return set_status(args, "shipped");
    if (tool == "cancel_order") return set_status(args, "cancelled");
    return fail(Errc::kNotFound, "unknown tool '" + tool + "'");
  }

 private:
  json::Value* find_order(const std::string& id) {
    for (auto& o : doc_["orders"].GetArray())
      if (json::get_string(o, "id") == id) return &o;
    return nullptr;
  }

  Status set_status(const json::Document& args, const char* status) {
    json::Value* o = find_order(json::get_string(args, "order_id"));
    if (!o) return fail(Errc::kNotFound, "no order '" + json::get_string(args, "order_id") + "'");
    (*o)["status"].SetString(status, doc_.GetAllocator());
    return {};
  }

  json::Document doc_;
};

// A json-db in memory: the agent's namespace, and golden namespaces made from the same initial
// tables, where golden actions apply. Records every call it gets.
class FakeStore : public StateStore {
 public:
  explicit FakeStore(std::string initial) : initial_(std::move(initial)), agent_(initial_) {}

  Result<std::string> state_json() override { return agent_.text(); }
  Result<std::string> stable_hash() override {
    if (auto f = fault("stable_hash " + std::to_string(++hash_calls))) return fail(*f);
    return agent_.hash();
  }
  Result<std::unique_ptr<GoldenState>> golden_from_initial() override {
    log.push_back("golden");
    if (auto f = fault("golden")) return fail(*f);
    return std::unique_ptr<GoldenState>(new Golden(*this));
  }

  // What the agent does during its trial: the same tools, outside any replay.
  void agent(const std::string& tool, const std::string& arguments_json) {
    json::Document args;
    args.Parse(arguments_json.c_str());
    REQUIRE(agent_.apply(tool, args));
  }

  std::vector<std::string> log;
  // Errors to answer instead of working: "golden", "replay <tool>", and "stable_hash <n>" for the
  // n-th hash (1: the agent's, 2: the golden state's).
  std::map<std::string, Error> faults;
  int hash_calls = 0;
  bool throw_on_apply = false;  // a replay client that crashes

 private:
  class Golden : public GoldenState {
   public:
    explicit Golden(FakeStore& store) : store_(store), shop_(store.initial_) {}
    ~Golden() override { store_.log.push_back("discard golden"); }
    Status apply(const std::string& tool, const std::string& arguments_json) override {
      store_.log.push_back("replay " + tool);
      if (store_.throw_on_apply) throw std::runtime_error("replay client crashed");
      if (auto f = store_.fault("replay " + tool)) return fail(*f);
      json::Document args;
      args.Parse(arguments_json.c_str());
      if (args.HasParseError() || !args.IsObject()) return fail(Errc::kInvalid, "arguments are not an object");
      return shop_.apply(tool, args);
    }
    Result<std::string> stable_hash() override {
      if (auto f = store_.fault("stable_hash " + std::to_string(++store_.hash_calls))) return fail(*f);
      return shop_.hash();
    }
    Result<std::string> stable_state_json() override { return shop_.text(); }

   private:
    FakeStore& store_;
    Shop shop_;
  };

  std::optional<Error> fault(const std::string& op) const {
    auto it = faults.find(op);
    if (it == faults.end()) return std::nullopt;
    return it->second;
  }

  std::string initial_;
  Shop agent_;
};

manifest::HashCheck golden(std::vector<manifest::GoldenAction> actions) {
  manifest::HashCheck h;
  h.enabled = true;
  h.golden_actions = std::move(actions);
  return h;
}

const std::vector<manifest::GoldenAction> kShipAndReorder = {
    {"ship_order", R"({"order_id": "O-001"})"},
    {"create_order", R"({"customer_id": "C-2", "item": "chair", "qty": 4})"},
};

// check_state_hash on a store that works: the outcome, which must be a verdict.
HashOutcome verdict(const manifest::HashCheck& hash, StateStore* store) {
  auto h = check_state_hash(hash, store);
  if (!h) FAIL(h.error().what());
  return std::move(*h);
}

}  // namespace

TEST_CASE("golden replay: the agent reached the golden state; its own state is never touched") {
  FakeStore store(read_fixture("shop_state.json"));
  store.agent("create_order", R"({"customer_id": "C-2", "item": "chair", "qty": 4})");
  store.agent("ship_order", R"({"order_id": "O-001"})");  // another order than golden, same state
  const std::string agent_state = *store.state_json();

  HashOutcome h = verdict(golden(kShipAndReorder), &store);
  CHECK(h.score == 1);
  CHECK(h.state_diff_json.empty());
  REQUIRE(h.reasons.size() == 1);
  CHECK(h.reasons[0] == "state_checks: hash match (" + state_hash(*json::parse(agent_state, "s")).substr(0, 12) + ")");
  CHECK(store.log == std::vector<std::string>{"golden", "replay ship_order", "replay create_order", "discard golden"});
  CHECK(*store.state_json() == agent_state);
}

TEST_CASE("golden replay: a wrong final state scores 0 and the diff names the record and field") {
  FakeStore store(read_fixture("shop_state.json"));
  store.agent("cancel_order", R"({"order_id": "O-001"})");  // cancelled instead of shipped
  store.agent("create_order", R"({"customer_id": "C-2", "item": "chair", "qty": 4})");
  const std::string agent_state = *store.state_json();

  HashOutcome h = verdict(golden(kShipAndReorder), &store);
  CHECK(h.score == 0);
  REQUIRE(h.reasons.size() == 1);
  CHECK(h.reasons[0].find("state_checks: hash mismatch (agent ") == 0);
  CHECK(h.reasons[0].find("): State mismatch: orders: 0 missing, 0 extra, 1 different") != std::string::npos);

  auto diff = json::parse(h.state_diff_json, "diff");
  REQUIRE(diff);
  CHECK(json::get_string(*diff, "summary") == "State mismatch: orders: 0 missing, 0 extra, 1 different");
  const json::Value& tables = (*diff)["tables"];
  CHECK(tables.MemberCount() == 1);  // customers did not change
  const json::Value& orders = tables["orders"];
  CHECK(orders["missing"].Empty());
  CHECK(orders["extra"].Empty());
  REQUIRE(orders["different"].Size() == 1);
  const json::Value& d = orders["different"][0];
  CHECK(json::get_string(d["expected"], "id") == "O-001");
  CHECK(json::get_string(d["expected"], "status") == "shipped");
  CHECK(json::get_string(d["actual"], "status") == "cancelled");
  CHECK(json::to_string(d["field_diffs"]) == R"([{"field":"status","expected":"shipped","actual":"cancelled"}])");

  CHECK(*store.state_json() == agent_state);  // the replay ran elsewhere
}

TEST_CASE("golden replay: errors are collected, the replay goes on, and the hash still decides") {
  FakeStore store(read_fixture("shop_state.json"));
  store.agent("ship_order", R"({"order_id": "O-001"})");
  store.agent("create_order", R"({"customer_id": "C-2", "item": "chair", "qty": 4})");
  auto actions = kShipAndReorder;
  actions.insert(actions.begin() + 1, {"refund_order", R"({"order_id": "O-001"})"});
  actions.push_back({"ship_order", R"({"order_id": "O-999"})"});

  HashOutcome h = verdict(golden(actions), &store);
  CHECK(h.score == 1);
  REQUIRE(h.reasons.size() == 3);
  CHECK(h.reasons[0] == "state_checks: golden replay error: action 2/4 \"refund_order\": unknown tool 'refund_order'");
  CHECK(h.reasons[1] == "state_checks: golden replay error: action 4/4 \"ship_order\": no order 'O-999'");
  CHECK(h.reasons[2].find("state_checks: hash match") == 0);
  CHECK(store.log.size() == 6);  // golden, 4 replays, discard
}

TEST_CASE("golden replay: no golden actions means the initial state is expected (refusal tasks)") {
  FakeStore refused(read_fixture("shop_state.json"));
  CHECK(verdict(golden({}), &refused).score == 1);

  FakeStore acted(read_fixture("shop_state.json"));
  acted.agent("create_order", R"({"customer_id": "C-1", "item": "rug"})");
  HashOutcome h = verdict(golden({}), &acted);
  CHECK(h.score == 0);
  auto diff = json::parse(h.state_diff_json, "diff");
  REQUIRE(diff);
  CHECK(json::get_string(*diff, "summary") == "State mismatch: orders: 0 missing, 1 extra, 0 different");
  CHECK(json::get_string((*diff)["tables"]["orders"]["extra"][0], "item") == "rug");
}

TEST_CASE("golden replay: expected_state_hash alone is compared without replaying") {
  FakeStore store(read_fixture("shop_state.json"));
  manifest::HashCheck h;
  h.enabled = true;
  h.expected_state_hash = *store.stable_hash();
  CHECK(verdict(h, &store).score == 1);
  CHECK(store.log.empty());

  h.expected_state_hash = std::string(64, '0');
  HashOutcome miss = verdict(h, &store);
  CHECK(miss.score == 0);
  CHECK(miss.reasons.back() ==
        "state_checks: hash mismatch (agent " + store.stable_hash()->substr(0, 12) +
            ", expected 000000000000); no diff: no golden state to compare with");
}

TEST_CASE("golden replay: expected_state_hash decides over the replay, which still gives the diff") {
  FakeStore store(read_fixture("shop_state.json"));
  manifest::HashCheck h = golden(kShipAndReorder);
  h.expected_state_hash = *store.stable_hash();  // the untouched state; golden replay differs
  HashOutcome out = verdict(h, &store);
  CHECK(out.score == 1);
  REQUIRE(out.reasons.size() == 2);
  CHECK(out.reasons[0].find("state_checks: hash note: the golden replay hash ") == 0);
  CHECK(out.reasons[0].find("; expected_state_hash decides") != std::string::npos);
}

TEST_CASE("golden replay: no store, or a store that cannot make the golden state, is an error") {
  auto none = check_state_hash(golden(kShipAndReorder), nullptr);
  REQUIRE(!none);
  CHECK(none.error().code == Errc::kUnsupported);
  CHECK(none.error().what() == "golden replay: hash.enabled but the trial has no state store (json-db)");

  FakeStore store(read_fixture("shop_state.json"));
  store.agent("ship_order", R"({"order_id": "O-002"})");
  const std::string agent_state = *store.state_json();
  store.faults["golden"] = make_error(Errc::kServer, "json-db storage is full");
  auto h = check_state_hash(golden(kShipAndReorder), &store);
  REQUIRE(!h);
  CHECK(h.error().code == Errc::kServer);
  CHECK(h.error().what() == "golden replay: making the golden state from the initial fixtures: json-db storage is full");
  CHECK(store.log == std::vector<std::string>{"golden"});
  CHECK(*store.state_json() == agent_state);
}

TEST_CASE("golden replay: the state score blends the hash with the assertions by hash.weight") {
  FakeStore store(read_fixture("shop_state.json"));
  store.agent("cancel_order", R"({"order_id": "O-001"})");  // golden ships it: hash 0
  Evidence ev;
  ev.state = &store;
  ev.final_state_json = R"({"db": )" + *store.state_json() + "}";
  manifest::StateChecks sc;
  sc.present = true;
  sc.hash = golden({{"ship_order", R"({"order_id": "O-001"})"}});
  sc.jsonpaths.push_back({.path = "$.db.orders[0].customer_id", .op = manifest::StateAssertion::Op::kEquals,
                          .expected_json = R"("C-1")"});
  sc.jsonpaths.push_back({.path = "$.db.orders[0].status", .op = manifest::StateAssertion::Op::kEquals,
                          .expected_json = R"("shipped")"});

  sc.hash.weight = 0.5;  // A = 1/2, H = 0: 0.5 × (1 - 0.5 + 0) = 0.25
  auto r = evaluate_state_checks(sc, ev);
  REQUIRE(r);
  CHECK(r->score == doctest::Approx(0.25));
  CHECK(r->reasons.back() == "state_checks: score 0.25 (assertions 1/2, hash 0, hash weight 0.5)");
  CHECK(!r->state_diff_json.empty());

  sc.hash.weight = 1;  // the default: the product A × H
  CHECK(evaluate_state_checks(sc, ev)->score == 0);
  sc.hash.weight = 0;  // the hash is reported but does not count
  CHECK(evaluate_state_checks(sc, ev)->score == doctest::Approx(0.5));
}

namespace {

// grading.yaml with only the golden-replay hash, against `store`.
Result<Grade> grade_hash(FakeStore* store, std::vector<manifest::GoldenAction> actions = kShipAndReorder) {
  manifest::GradingConfig c;
  c.state_checks.present = true;
  c.state_checks.hash = golden(std::move(actions));
  Evidence ev;
  ev.state = store;
  return grade(c, ev);
}

// What a grade that failed says: its code and message.
std::pair<Errc, std::string> fault(const Result<Grade>& g) {
  REQUIRE(!g);
  return {g.error().code, g.error().what()};
}

}  // namespace

TEST_CASE("grade, golden replay: a store that works and a mismatching hash score 0 (the control)") {
  FakeStore store(read_fixture("shop_state.json"));
  store.agent("cancel_order", R"({"order_id": "O-001"})");
  auto g = grade_hash(&store);
  REQUIRE(g);
  CHECK(g->components.at("state_checks") == 0);
  CHECK(!g->state_diff_json.empty());
  // A golden action the store refuses is reported and the replay goes on: the tool said no.
  store.faults["replay ship_order"] = make_error(Errc::kNotFound, "no order 'O-001'");
  auto refused = grade_hash(&store);
  REQUIRE(refused);
  CHECK(refused->reasons[0] == R"(state_checks: golden replay error: action 1/2 "ship_order": no order 'O-001')");
}

TEST_CASE("grade, golden replay: the store failing to make the golden state is an error; the agent's state stays") {
  FakeStore store(read_fixture("shop_state.json"));
  store.agent("cancel_order", R"({"order_id": "O-001"})");
  const std::string agent_state = *store.state_json();
  store.faults["golden"] = make_error(Errc::kUnavailable, "json-db unreachable");
  CHECK(fault(grade_hash(&store)) ==
        std::pair{Errc::kUnavailable,
                  std::string("state_checks: golden replay: making the golden state from the initial fixtures: "
                              "json-db unreachable")});
  CHECK(store.log == std::vector<std::string>{"golden"});
  CHECK(*store.state_json() == agent_state);
}

TEST_CASE("grade, golden replay: a golden action forgectl cannot replay is an error, never a refusal") {
  FakeStore store(read_fixture("shop_state.json"));
  store.agent("ship_order", R"({"order_id": "O-001"})");
  store.agent("create_order", R"({"customer_id": "C-2", "item": "chair", "qty": 4})");  // the golden state
  store.faults["replay ship_order"] =
      make_error(Errc::kUnsupported, "golden action names tool 'ship_order', which forgectl cannot replay host-side");
  CHECK(fault(grade_hash(&store)) ==
        std::pair{Errc::kUnsupported,
                  std::string("state_checks: golden replay: replaying action 1/2 \"ship_order\": golden action names "
                              "tool 'ship_order', which forgectl cannot replay host-side")});
  CHECK(store.log == std::vector<std::string>{"golden", "replay ship_order", "discard golden"});
  CHECK(!golden_action_refused(Errc::kUnsupported));
}

TEST_CASE("grade, golden replay: the store failing to hash either state is an error") {
  FakeStore agent(read_fixture("shop_state.json"));
  agent.faults["stable_hash 1"] = make_error(Errc::kTimeout, "json-db did not answer in 10 s");
  CHECK(fault(grade_hash(&agent)) ==
        std::pair{Errc::kTimeout,
                  std::string(
                      "state_checks: golden replay: hashing the agent's final state: json-db did not answer in 10 s")});
  CHECK(agent.log.empty());  // no golden state made

  FakeStore gold(read_fixture("shop_state.json"));
  gold.faults["stable_hash 2"] = make_error(Errc::kProtocol, "malformed JSON from json-db");
  CHECK(fault(grade_hash(&gold)) ==
        std::pair{Errc::kProtocol,
                  std::string("state_checks: golden replay: hashing the golden state: malformed JSON from json-db")});
  CHECK(gold.log.back() == "discard golden");
}

TEST_CASE("grade, golden replay: a golden action the store fails (not refuses) is an error") {
  FakeStore store(read_fixture("shop_state.json"));
  store.faults["replay create_order"] = make_error(Errc::kUnavailable, "connection reset by json-db");
  CHECK(fault(grade_hash(&store)) ==
        std::pair{
            Errc::kUnavailable,
            std::string(
                "state_checks: golden replay: replaying action 2/2 \"create_order\": connection reset by json-db")});
  CHECK(store.log.back() == "discard golden");
  CHECK(golden_action_refused(Errc::kInvalid));
  CHECK(!golden_action_refused(Errc::kServer));
}

TEST_CASE("grade, golden replay: no store is an error; an exception is an error and the golden state is discarded") {
  CHECK(fault(grade_hash(nullptr)) ==
        std::pair{Errc::kUnsupported,
                  std::string("state_checks: golden replay: hash.enabled but the trial has no state store (json-db)")});

  FakeStore store(read_fixture("shop_state.json"));
  const std::string agent_state = *store.state_json();
  store.throw_on_apply = true;
  CHECK(fault(grade_hash(&store)) ==
        std::pair{Errc::kIo, std::string("state_checks: grading failed: replay client crashed")});
  CHECK(store.log == std::vector<std::string>{"golden", "replay ship_order", "discard golden"});
  CHECK(*store.state_json() == agent_state);
}

TEST_CASE("state diff: records pair by id-like fields, then by half of their common fields") {
  auto d = diff_states(
      R"({"users": [{"user_id": "u1", "name": "Ada", "age": 36}, {"user_id": "u2", "name": "Bob", "age": 40}],
          "notes": [{"text": "a", "pinned": true, "colour": "red"}]})",
      R"({"users": [{"user_id": "u2", "name": "Bob", "age": 41}, {"user_id": "u3", "name": "Ada", "age": 36}],
          "notes": [{"text": "a", "pinned": false, "colour": "red"}], "audit": [{"id": 1}]})");
  REQUIRE(d);
  CHECK(!d->empty);
  CHECK(d->summary ==
        "State mismatch: audit: 0 missing, 1 extra, 0 different; notes: 0 missing, 0 extra, 1 different; "
        "users: 1 missing, 1 extra, 1 different");
  auto doc = json::parse(d->json, "diff");
  REQUIRE(doc);
  const json::Value& users = (*doc)["tables"]["users"];
  // u1 and u3 share an id field with different values, so they are not the same record.
  CHECK(json::get_string(users["missing"][0], "user_id") == "u1");
  CHECK(json::get_string(users["extra"][0], "user_id") == "u3");
  CHECK(json::to_string(users["different"][0]["field_diffs"]) == R"([{"field":"age","expected":40,"actual":41}])");
  // No id field: 2 of 3 common fields equal pairs the notes.
  CHECK(json::to_string((*doc)["tables"]["notes"]["different"][0]["field_diffs"]) ==
        R"([{"field":"pinned","expected":true,"actual":false}])");
}

TEST_CASE("state diff: duplicates count, absent fields read as null, equal states match") {
  auto dup = diff_states(R"({"t": [{"a": 1}, {"a": 1}]})", R"({"t": [{"a": 1}]})");
  REQUIRE(dup);
  CHECK(dup->summary == "State mismatch: t: 1 missing, 0 extra, 0 different");

  auto absent = diff_states(R"({"t": [{"id": 7, "x": 1, "y": null}]})", R"({"t": [{"id": 7, "x": 1, "z": 2}]})");
  REQUIRE(absent);
  auto doc = json::parse(absent->json, "diff");
  CHECK(json::to_string((*doc)["tables"]["t"]["different"][0]["field_diffs"]) ==
        R"([{"field":"y","expected":null,"actual":null},{"field":"z","expected":null,"actual":2}])");

  auto same = diff_states(R"({"t": [{"b": 2, "a": 1}, {"c": 3}]})", R"({"t": [{"c": 3}, {"a": 1, "b": 2}]})");
  REQUIRE(same);
  CHECK(same->empty);
  CHECK(same->summary == "States match");
  CHECK(same->json == R"({"tables":{},"summary":"States match"})");

  auto scalar = diff_states(R"({"settings": {"mode": "a", "level": 1}})", R"({"settings": {"mode": "b", "level": 1}})");
  REQUIRE(scalar);
  CHECK(scalar->summary == "State mismatch: settings: 0 missing, 0 extra, 1 different");

  CHECK(!diff_states("[]", "{}"));
  CHECK(!diff_states("{", "{}"));
}

TEST_CASE("state diff: long lists are cut at kMaxDiffRecords and say so") {
  std::string actual = R"({"t": [)";
  for (std::size_t i = 0; i < kMaxDiffRecords + 5; ++i) actual += (i ? "," : "") + std::to_string(i);
  actual += "]}";
  auto d = diff_states(R"({"t": []})", actual);
  REQUIRE(d);
  CHECK(d->summary == "State mismatch: t: 0 missing, " + std::to_string(kMaxDiffRecords + 5) + " extra, 0 different");
  auto doc = json::parse(d->json, "diff");
  CHECK((*doc)["tables"]["t"]["extra"].Size() == kMaxDiffRecords);
  CHECK((*doc)["tables"]["t"]["truncated"].GetBool());
}
