// state_checks comparison operators (gt … not_exists): for each, one assertion that holds and one
// that does not, on a final state written here; the reasons name the operator, the operand and the
// value seen, and a value that cannot be compared is a failure that says why, never an error.
#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

#include "core/json.h"
#include "grading/state_checks.h"
#include "grading/state_operators.h"

using namespace forge;
using namespace forge::grading;
using Op = manifest::StateAssertion::Op;

namespace {

const char* kTickets = R"({"db": {"tickets": [
  {"id": "T-7", "priority": 3, "score": "12.5", "state": "open", "labels": ["billing", "urgent"],
   "owner": null, "email": "ana@shop.test", "opened": "2026-03-01T09:30:00+02:00"},
  {"id": "T-8", "priority": 1, "score": "n/a", "state": "closed", "labels": [], "email": "bob", "opened": "2026-02-28"}
]}})";

CheckOutcome run(const std::string& path, Op op, const std::string& operand = "") {
  auto doc = json::parse(kTickets, "state");
  REQUIRE(doc);
  auto c = check_jsonpath({.path = path, .op = op, .expected_json = operand}, *doc);
  REQUIRE_MESSAGE(c, (c ? "" : c.error().what()));
  return *c;
}

struct Case {
  Op op;
  std::string operand;
  std::string holds_path, fails_path;
  std::string fail_reason;  // the whole FAIL reason
};

}  // namespace

TEST_CASE("state operators: each passes on one value and fails on another, the reason showing both") {
  const std::vector<Case> cases = {
      {Op::kGt, "2", "$.db.tickets[0].priority", "$.db.tickets[1].priority",
       "state_checks: FAIL $.db.tickets[1].priority gt 2: got 1"},
      {Op::kGte, "3", "$.db.tickets[0].priority", "$.db.tickets[1].priority",
       "state_checks: FAIL $.db.tickets[1].priority gte 3: got 1"},
      {Op::kLt, "2", "$.db.tickets[1].priority", "$.db.tickets[0].priority",
       "state_checks: FAIL $.db.tickets[0].priority lt 2: got 3"},
      {Op::kLte, "1", "$.db.tickets[1].priority", "$.db.tickets[0].priority",
       "state_checks: FAIL $.db.tickets[0].priority lte 1: got 3"},
      {Op::kNotEquals, R"("closed")", "$.db.tickets[0].state", "$.db.tickets[1].state",
       R"(state_checks: FAIL $.db.tickets[1].state not_equals "closed": got "closed")"},
      {Op::kIn, R"(["open","pending"])", "$.db.tickets[0].state", "$.db.tickets[1].state",
       R"(state_checks: FAIL $.db.tickets[1].state in ["open","pending"]: got "closed")"},
      {Op::kNotIn, R"(["closed"])", "$.db.tickets[0].state", "$.db.tickets[1].state",
       R"(state_checks: FAIL $.db.tickets[1].state not_in ["closed"]: got "closed")"},
      {Op::kRegex, R"("^[^@]+@shop\\.test$")", "$.db.tickets[0].email", "$.db.tickets[1].email",
       R"(state_checks: FAIL $.db.tickets[1].email regex "^[^@]+@shop\\.test$": got "bob")"},
      {Op::kNotRegex, R"("@")", "$.db.tickets[1].email", "$.db.tickets[0].email",
       R"(state_checks: FAIL $.db.tickets[0].email not_regex "@": got "ana@shop.test")"},
      {Op::kNotContains, R"("urgent")", "$.db.tickets[1].labels", "$.db.tickets[0].labels",
       R"(state_checks: FAIL $.db.tickets[0].labels not_contains "urgent": got ["billing","urgent"])"},
      {Op::kLenGt, "1", "$.db.tickets[0].labels", "$.db.tickets[1].labels",
       "state_checks: FAIL $.db.tickets[1].labels len_gt 1: got []"},
      {Op::kLenGte, "2", "$.db.tickets[0].labels", "$.db.tickets[1].labels",
       "state_checks: FAIL $.db.tickets[1].labels len_gte 2: got []"},
      {Op::kDateGt, R"("2026-03-01")", "$.db.tickets[0].opened", "$.db.tickets[1].opened",
       R"(state_checks: FAIL $.db.tickets[1].opened date_gt "2026-03-01": got "2026-02-28")"},
      {Op::kDateGte, R"("2026-03-01T07:30:00Z")", "$.db.tickets[0].opened",
       "$.db.tickets[1].opened",  // the same instant
       R"(state_checks: FAIL $.db.tickets[1].opened date_gte "2026-03-01T07:30:00Z": got "2026-02-28")"},
      {Op::kDateLt, R"("2026-03-01")", "$.db.tickets[1].opened", "$.db.tickets[0].opened",
       R"(state_checks: FAIL $.db.tickets[0].opened date_lt "2026-03-01": got "2026-03-01T09:30:00+02:00")"},
      {Op::kDateLte, R"("2026-02-28T23:59:59.5Z")", "$.db.tickets[1].opened", "$.db.tickets[0].opened",
       R"(state_checks: FAIL $.db.tickets[0].opened date_lte "2026-02-28T23:59:59.5Z": got "2026-03-01T09:30:00+02:00")"},
      {Op::kExists, "", "$.db.tickets[0].owner", "$.db.tickets[1].owner",
       "state_checks: FAIL $.db.tickets[1].owner exists: path not found"},
      {Op::kNotExists, "", "$.db.tickets[1].owner", "$.db.tickets[0].owner",
       "state_checks: FAIL $.db.tickets[0].owner not_exists: got null"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.fail_reason);
    CheckOutcome yes = run(c.holds_path, c.op, c.operand);
    CHECK(yes.passed);
    CHECK(yes.reason.rfind("state_checks: PASS " + c.holds_path, 0) == 0);
    if (c.op != Op::kNotExists) CHECK(yes.reason.find(": got ") != std::string::npos);
    CheckOutcome no = run(c.fails_path, c.op, c.operand);
    CHECK_FALSE(no.passed);
    CHECK(no.reason == c.fail_reason);
  }
}

TEST_CASE("state operators: strings that read as numbers compare as numbers; other values fail saying why") {
  CheckOutcome text_number = run("$.db.tickets[0].score", Op::kGte, "12");
  CHECK(text_number.passed);
  CHECK(text_number.reason == R"(state_checks: PASS $.db.tickets[0].score gte 12: got "12.5")");
  CHECK(run("$.db.tickets[0].priority", Op::kLt, R"("3.5")").passed);  // the operand may be text too

  CheckOutcome not_number = run("$.db.tickets[1].score", Op::kGt, "1");
  CHECK_FALSE(not_number.passed);
  CHECK(
      not_number.reason ==
      R"(state_checks: FAIL $.db.tickets[1].score gt 1: gt compares numbers, and this is a string that is not one: got "n/a")");
  CHECK(
      run("$.db.tickets[0].labels", Op::kLte, "5").reason ==
      R"(state_checks: FAIL $.db.tickets[0].labels lte 5: lte compares numbers, and this is a list: got ["billing","urgent"])");
  CHECK(run("$.db.tickets[0].priority", Op::kRegex, R"("3")").reason ==
        R"(state_checks: FAIL $.db.tickets[0].priority regex "3": regex matches text, and this is a number: got 3)");
  CHECK(
      run("$.db.tickets[1].score", Op::kDateLt, R"("2026-01-01")").reason ==
      R"(state_checks: FAIL $.db.tickets[1].score date_lt "2026-01-01": date_lt compares ISO-8601 dates, and this is a string that is not one: got "n/a")");
  CHECK_FALSE(run("$.db.tickets[0].opened", Op::kDateGt, R"("2026-03-01T07:30:00Z")").passed);  // equal is not after
  CHECK(run("$.db.tickets[0].owner", Op::kLenGt, "0").reason ==
        "state_checks: FAIL $.db.tickets[0].owner len_gt 0: len_gt measures text, a list or a mapping, and this is "
        "null: got null");
}

TEST_CASE("state operators: a negated operator must hold for every matched value, the others for one") {
  CHECK(run("$.db.tickets[*].state", Op::kIn, R"(["closed"])").passed);
  CheckOutcome every = run("$.db.tickets[*].state", Op::kNotEquals, R"("closed")");
  CHECK_FALSE(every.passed);
  CHECK(every.reason == R"(state_checks: FAIL $.db.tickets[*].state not_equals "closed": got "closed")");
  CHECK(run("$.db.tickets[*].state", Op::kNotIn, R"(["merged"])").reason ==
        R"(state_checks: PASS $.db.tickets[*].state not_in ["merged"]: got "open" and 1 more)");
  CHECK(run("$.db.tickets[*].nothing", Op::kNotExists).passed);
}

TEST_CASE("state operators: on files, text operators read the text and the others the value it holds") {
  Evidence ev;
  ev.files = [](const std::string&) -> Result<std::vector<WorkspaceFile>> {
    return std::vector<WorkspaceFile>{{"/work/count.txt", "42\n"}};
  };
  auto check = [&](Op op, const std::string& operand) {
    auto c = check_file({.path_glob = "/work/*.txt", .op = op, .expected_json = operand}, ev);
    REQUIRE(c);
    return *c;
  };
  CHECK(check(Op::kGte, "40").passed);
  CHECK_FALSE(check(Op::kLt, "10").passed);
  CHECK(check(Op::kIn, "[41, 42]").passed);
  CHECK(check(Op::kRegex, R"("^4\\d$")").passed);  // Python's $ matches before a final newline
  CHECK_FALSE(check(Op::kNotContains, R"("4")").passed);
  CHECK(check(Op::kNotContains, R"("7")").reason ==
        R"(state_checks: PASS /work/*.txt not_contains "7": 1 file(s) checked)");
  CHECK(check(Op::kNotEquals, "42").reason ==
        R"(state_checks: FAIL /work/*.txt not_equals 42: /work/count.txt: got "42\n")");
  CHECK_FALSE(check(Op::kNotExists, "").passed);
}

TEST_CASE("state operators: an operand that does not fit is a config error naming the assertion") {
  auto doc = json::parse(kTickets, "state");
  REQUIRE(doc);
  for (auto [op, operand, message] : std::vector<std::tuple<Op, std::string, std::string>>{
           {Op::kIn, R"("open")", "needs a list"},
           {Op::kRegex, R"("(?<=a)b")", "is not a regular expression that compiles"},
           {Op::kGt, R"("soon")", "compares numbers"},
           {Op::kLenGte, "-1", "compares a length"},
           {Op::kDateGt, R"("2026-02-30")", "compares dates"},
           {Op::kDateLte, R"("next week")", "compares dates"}}) {
    auto c = check_jsonpath({.path = "$.db.tickets[0].state", .op = op, .expected_json = operand}, *doc);
    REQUIRE_FALSE(c);
    CHECK(c.error().code == Errc::kInvalid);
    CHECK(std::string(c.error().what()).find(message) != std::string::npos);
  }
}
