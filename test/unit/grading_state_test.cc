// state_checks: JSONPath assertions on the final state, file checks on the workspace, the state
// score formula, and the faults (config, unreadable evidence) that are errors instead of scores.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/json.h"
#include "grading/state_checks.h"

using namespace forge;
using namespace forge::grading;
using Op = manifest::StateAssertion::Op;

namespace {

const char* kFinalState = R"({"db": {
  "orders": [
    {"id": "O-001", "status": "Shipped", "tags": ["gift", "express"], "total": 42.5,
     "address": {"city": "Paris", "zip": "75001"}},
    {"id": "O-002", "status": "pending", "tags": [], "total": 10}
  ],
  "notes": "Customer asked for a REFUND on Monday"
}})";

manifest::StateAssertion jp(std::string path, Op op = Op::kExists, std::string expected = "", std::string desc = "") {
  return {.path = std::move(path), .op = op, .expected_json = std::move(expected), .description = std::move(desc)};
}

manifest::StateAssertion file(std::string glob, Op op = Op::kExists, std::string expected = "") {
  return {.path_glob = std::move(glob), .op = op, .expected_json = std::move(expected)};
}

CheckOutcome run(const manifest::StateAssertion& a) {
  auto doc = json::parse(kFinalState, "state");
  REQUIRE(doc);
  auto c = check_jsonpath(a, *doc);
  if (!c) FAIL(c.error().what());
  return *c;
}

Result<CheckOutcome> try_run(const manifest::StateAssertion& a) {
  auto doc = json::parse(kFinalState, "state");
  REQUIRE(doc);
  return check_jsonpath(a, *doc);
}

CheckOutcome checked(Result<CheckOutcome> c) {
  if (!c) FAIL(c.error().what());
  return *c;
}

// A workspace of three files; the glob matching is the caller's, so the fake knows two globs.
Evidence workspace() {
  Evidence ev;
  ev.files = [](const std::string& glob) -> Result<std::vector<WorkspaceFile>> {
    if (glob == "/env/fs/agent-visible/out/*")
      return std::vector<WorkspaceFile>{{"/env/fs/agent-visible/out/summary.md", "# Summary\nThe REFUND was issued.\n"},
                                        {"/env/fs/agent-visible/out/data.json", "{\"total\": 3, \"ok\": true}\n"}};
    if (glob == "/broken/*") return fail(Errc::kIo, "archive read failed");
    return std::vector<WorkspaceFile>{};
  };
  return ev;
}

}  // namespace

TEST_CASE("state assertions: each operator passes and fails on the JSON it names") {
  CHECK(run(jp("$.db.orders[0].total", Op::kEquals, "42.5")).passed);
  CHECK(run(jp("$.db.orders[1].total", Op::kEquals, "10.0")).passed);  // numbers compare by value
  CHECK(run(jp("$.db.orders[0].address", Op::kEquals, R"({"zip": "75001", "city": "Paris"})")).passed);
  CHECK(!run(jp("$.db.orders[0].status", Op::kEquals, R"("shipped")")).passed);
  CHECK(run(jp("$.db.orders[0].status", Op::kEqualsCi, R"("SHIPPED")")).passed);
  CHECK(!run(jp("$.db.orders[1].status", Op::kEqualsCi, R"("shipped")")).passed);

  CHECK(run(jp("$.db.notes", Op::kContains, R"("REFUND")")).passed);
  CHECK(!run(jp("$.db.notes", Op::kContains, R"("refund")")).passed);
  CHECK(run(jp("$.db.notes", Op::kContainsCi, R"("refund")")).passed);
  CHECK(run(jp("$.db.orders[0].tags", Op::kContains, R"("gift")")).passed);      // an array element
  CHECK(!run(jp("$.db.orders[0].tags", Op::kContains, R"("gif")")).passed);      // not a substring of one
  CHECK(run(jp("$.db.orders[0].tags", Op::kContainsCi, R"("EXPRESS")")).passed);
  CHECK(run(jp("$.db.orders[0].address", Op::kContains, R"("zip")")).passed);    // an object key
  CHECK(!run(jp("$.db.orders[0].address", Op::kContains, R"("Paris")")).passed); // not a value
  CHECK(run(jp("$.db.orders[0].address", Op::kContainsCi, R"("CITY")")).passed);

  CHECK(run(jp("$.db.orders[1].tags")).passed);  // exists, even empty
  CHECK(!run(jp("$.db.orders[2]")).passed);
}

TEST_CASE("state assertions: some matched value must satisfy the operator; reasons say what was seen") {
  CheckOutcome any = run(jp("$.db.orders[*].status", Op::kEquals, R"("pending")"));
  CHECK(any.passed);
  CHECK(any.reason == R"(state_checks: PASS $.db.orders[*].status equals "pending": got "pending")");

  CheckOutcome none = run(jp("$.db.orders[*].status", Op::kEquals, R"("cancelled")", "order cancelled"));
  CHECK(!none.passed);
  CHECK(none.reason ==
        R"(state_checks: FAIL $.db.orders[*].status equals "cancelled" (order cancelled): got "Shipped" and 1 more)");

  CHECK(run(jp("$.db.orders[?(@.id == 'O-002')].status", Op::kEquals, R"("pending")")).passed);

  CheckOutcome missing = run(jp("$.db.refunds[0]"));
  CHECK(missing.reason == "state_checks: FAIL $.db.refunds[0] exists: path not found");

  auto bad_path = try_run(jp("$.db.orders[", Op::kEquals, "1"));
  REQUIRE(!bad_path);
  CHECK(bad_path.error().code == Errc::kInvalid);
  CHECK(bad_path.error().what().find("grading config error: $.db.orders[ equals 1: invalid JSONPath") == 0);

  auto bad_operand = try_run(jp("$.db.notes", Op::kEquals, "not json"));
  REQUIRE(!bad_operand);
  CHECK(bad_operand.error().code == Errc::kInvalid);
  CHECK(bad_operand.error().what() ==
        "grading config error: $.db.notes equals not json: the operand of equals is not valid JSON");

  manifest::StateAssertion neither;
  neither.where.line = 12;
  CHECK(check_assertion_config(neither).error().what() ==
        "(no path) exists (line 12): the assertion has neither path nor path_glob");
  CHECK(check_assertion_config(jp("$.db.orders[*].status", Op::kEquals, R"("x")")));
}

TEST_CASE("file checks: path_glob over the workspace with text and JSON operands") {
  Evidence ev = workspace();
  auto check = [&](const manifest::StateAssertion& a) { return checked(check_file(a, ev)); };
  CheckOutcome ci = check(file("/env/fs/agent-visible/out/*", Op::kContainsCi, R"("refund was issued")"));
  CHECK(ci.passed);
  CHECK(ci.reason == R"(state_checks: PASS /env/fs/agent-visible/out/* contains_ci "refund was issued": )"
                     "matched /env/fs/agent-visible/out/summary.md");
  CHECK(!check(file("/env/fs/agent-visible/out/*", Op::kContains, R"("refund was issued")")).passed);
  // equals: text ignores surrounding white space; a JSON operand compares the parsed content.
  CHECK(check(file("/env/fs/agent-visible/out/*", Op::kEquals, R"("# Summary\nThe REFUND was issued.")")).passed);
  CHECK(check(file("/env/fs/agent-visible/out/*", Op::kEquals, R"({"ok": true, "total": 3})")).passed);
  CHECK(!check(file("/env/fs/agent-visible/out/*", Op::kEquals, R"({"ok": false, "total": 3})")).passed);
  CHECK(check(file("/env/fs/agent-visible/out/*")).reason ==
        "state_checks: PASS /env/fs/agent-visible/out/* exists: 2 file(s) match");

  CheckOutcome nothing = check(file("/env/fs/agent-visible/none/*", Op::kContainsCi, R"("x")"));
  CHECK(nothing.reason == R"(state_checks: FAIL /env/fs/agent-visible/none/* contains_ci "x": no file matches)");
  CheckOutcome unsatisfied = check(file("/env/fs/agent-visible/out/*", Op::kContainsCi, R"("chargeback")"));
  CHECK(unsatisfied.reason ==
        R"(state_checks: FAIL /env/fs/agent-visible/out/* contains_ci "chargeback": no matching file satisfies it (2 checked); )"
        R"(/env/fs/agent-visible/out/summary.md: got "# Summary\nThe REFUND was issued.\n")");
}

TEST_CASE("file checks: an unreadable workspace or none at all is an error, not a failed check") {
  Evidence ev = workspace();
  auto broken = check_file(file("/broken/*"), ev);
  REQUIRE(!broken);
  CHECK(broken.error().code == Errc::kIo);
  CHECK(broken.error().what() == "/broken/* exists: reading the workspace files: archive read failed");

  Evidence blind;
  auto none = check_file(file("/env/fs/agent-visible/out/*"), blind);
  REQUIRE(!none);
  CHECK(none.error().code == Errc::kUnsupported);
  CHECK(none.error().what() ==
        "/env/fs/agent-visible/out/* exists: reading the workspace files: this trial has no workspace to read files "
        "from");
}

TEST_CASE("state_checks: the score is passed / total over path and path_glob assertions") {
  Evidence ev = workspace();
  ev.final_state_json = kFinalState;
  manifest::StateChecks sc;
  sc.present = true;
  sc.jsonpaths = {jp("$.db.orders[0].status", Op::kEqualsCi, R"("shipped")"),
                  jp("$.db.orders[1].status", Op::kEquals, R"("shipped")"),
                  file("/env/fs/agent-visible/out/*", Op::kContainsCi, R"("refund")"),
                  jp("$.db.notes", Op::kContainsCi, R"("monday")")};
  auto r = evaluate_state_checks(sc, ev);
  REQUIRE(r);
  CHECK(r->score == doctest::Approx(0.75));
  REQUIRE(r->reasons.size() == 5);
  CHECK(r->reasons[1] == R"(state_checks: FAIL $.db.orders[1].status equals "shipped": got "pending")");
  CHECK(r->reasons[4] == "state_checks: score 0.75 (assertions 3/4)");
  CHECK(r->state_diff_json.empty());

  sc.jsonpaths.push_back({.path = "$.db.notes", .path_glob = "/x/*"});
  auto both = evaluate_state_checks(sc, ev);
  REQUIRE(!both);
  CHECK(both.error().code == Errc::kInvalid);
  CHECK(both.error().what() == "grading config error: $.db.notes exists: the assertion has both path and path_glob");
  sc.jsonpaths.pop_back();

  // A final state that does not parse came from the json-db, not from the model: no verdict.
  ev.final_state_json = "{not json";
  auto garbage = evaluate_state_checks(sc, ev);
  REQUIRE(!garbage);
  CHECK(garbage.error().code == Errc::kProtocol);
  CHECK(garbage.error().what() ==
        R"($.db.orders[0].status equals_ci "shipped": the final state is not valid JSON: offset 1 of 9 bytes)");

  // A state nested past the limit is the agent's doing: its path checks fail.
  ev.final_state_json = R"({"db": )" + std::string(300, '[') + std::string(300, ']') + "}";
  auto deep = evaluate_state_checks(sc, ev);
  REQUIRE(deep);
  CHECK(deep->score == doctest::Approx(0.25));  // only the file check passes
  CHECK(
      deep->reasons[0] ==
      R"(state_checks: FAIL $.db.orders[0].status equals_ci "shipped": the final state nests deeper than 128 levels)");
}

TEST_CASE("state_checks: the hash without a state store is an error; an empty section scores 1") {
  Evidence ev;
  ev.final_state_json = kFinalState;
  manifest::StateChecks sc;
  sc.present = true;
  sc.hash.enabled = true;
  sc.jsonpaths = {jp("$.db.notes")};
  auto r = evaluate_state_checks(sc, ev);
  REQUIRE(!r);
  CHECK(r.error().code == Errc::kUnsupported);
  CHECK(r.error().what() == "golden replay: hash.enabled but the trial has no state store (json-db)");

  manifest::StateChecks empty;
  empty.present = true;
  auto e = evaluate_state_checks(empty, ev);
  REQUIRE(e);
  CHECK(e->score == 1);
  CHECK(e->reasons ==
        std::vector<std::string>{"state_checks: score 1 (nothing to check: no assertions and hash disabled)"});
}

TEST_CASE("state score formula: A × (1 - w + w·H), or whichever source exists") {
  CHECK(blend_state_score(0.5, 1.0, 1.0) == doctest::Approx(0.5));
  CHECK(blend_state_score(0.5, 0.0, 1.0) == doctest::Approx(0.0));
  CHECK(blend_state_score(0.5, 0.0, 0.25) == doctest::Approx(0.375));
  CHECK(blend_state_score(0.5, 0.0, 0.0) == doctest::Approx(0.5));
  CHECK(blend_state_score(1.0, 0.0, 7.0) == doctest::Approx(0.0));   // w clamped to 1
  CHECK(blend_state_score(1.0, 0.0, -3.0) == doctest::Approx(1.0));  // w clamped to 0
  CHECK(blend_state_score(std::nullopt, 0.0, 0.5) == 0);
  CHECK(blend_state_score(0.25, std::nullopt, 0.5) == doctest::Approx(0.25));
  CHECK(blend_state_score(std::nullopt, std::nullopt, 1.0) == 1);
}
