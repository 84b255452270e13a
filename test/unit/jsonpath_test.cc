// The JSONPath subset shared by json-db and grading: selectors, recursive descent, filters, errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/json.h"
#include "core/jsonpath.h"

using namespace forge;

namespace {

constexpr const char* kDb = R"({
  "users": [
    {"id": 1, "name": "ann", "age": 31, "active": true, "tags": ["a", "b"], "address": {"city": "Oslo"}},
    {"id": 2, "name": "bob", "age": 25, "active": false, "address": {"city": "Rome"}},
    {"id": 3, "name": "cid", "age": 40, "active": true, "manager": null}
  ],
  "orders": [{"id": "o1", "user_id": 1, "total": 12.5}, {"id": "o2", "user_id": 3, "total": 99}],
  "settings": {"name": "shop", "limits": {"max": 10}},
  "odd key": {"x.y": 7}
})";

const json::Document& db() {
  static json::Document d = [] {
    auto r = json::parse(kDb, "test db");
    REQUIRE(r.has_value());
    return std::move(*r);
  }();
  return d;
}

// The results of `path`, each as compact JSON.
std::vector<std::string> q(const std::string& path) {
  auto r = jsonpath_query(db(), path);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  std::vector<std::string> out;
  for (const auto* v : *r) out.push_back(json::to_string(*v));
  return out;
}

using V = std::vector<std::string>;

std::string error_of(const std::string& path) {
  auto r = jsonpath_query(db(), path);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::kInvalid);
  return r.error().message;
}

}  // namespace

TEST_CASE("jsonpath: root, members, quoted names and indexes") {
  CHECK(q("$") == V{json::to_string(db())});
  CHECK(q("$.settings.name") == V{R"("shop")"});
  CHECK(q("$['settings'][\"limits\"].max") == V{"10"});
  CHECK(q("$['odd key']['x.y']") == V{"7"});
  CHECK(q("$.users[0].name") == V{R"("ann")"});
  CHECK(q("$.users[-1].id") == V{"3"});
  CHECK(q("$.users[7]").empty());
  CHECK(q("$.missing.deeper").empty());
  CHECK(q("users[1].name") == V{R"("bob")"});  // a bare first name, as jsonpath_ng allows
}

TEST_CASE("jsonpath: wildcards and recursive descent, in document order") {
  CHECK(q("$.users[*].id") == V{"1", "2", "3"});
  CHECK(q("$.settings.*") == V{R"("shop")", R"({"max":10})"});
  CHECK(q("$..name") == V{R"("ann")", R"("bob")", R"("cid")", R"("shop")"});
  CHECK(q("$..city") == V{R"("Oslo")", R"("Rome")"});
  CHECK(q("$.users..tags[1]") == V{R"("b")"});
  CHECK(q("$..limits..max") == V{"10"});
  CHECK(q("$.settings..*") == V{R"("shop")", R"({"max":10})", "10"});
  CHECK(q("$..[?(@.total > 50)].id") == V{R"("o2")"});
}

TEST_CASE("jsonpath: filters compare numbers, strings, bools and null") {
  CHECK(q("$.users[?(@.age > 30)].name") == V{R"("ann")", R"("cid")"});
  CHECK(q("$.users[?(@.age >= 31)].id") == V{"1", "3"});
  CHECK(q("$.users[?(@.age < 31)].id") == V{"2"});
  CHECK(q("$.users[?(@.age <= 31)].id") == V{"1", "2"});
  CHECK(q("$.users[?(@.name == 'bob')].age") == V{"25"});
  CHECK(q("$.users[?(@.name != \"bob\")].id") == V{"1", "3"});
  CHECK(q("$.users[?(@.name > 'b')].id") == V{"2", "3"});
  CHECK(q("$.users[?(@.active == true)].id") == V{"1", "3"});
  CHECK(q("$.users[?(@.active != true)].id") == V{"2"});
  CHECK(q("$.users[?(@.manager == null)].id") == V{"3"});
  CHECK(q("$.users[?(@.address.city == 'Rome')].id") == V{"2"});
  CHECK(q("$.users[?(@.tags[0] == 'a')].id") == V{"1"});
  CHECK(q("$.users[?(@.manager)].id") == V{"3"});               // exists, even when null
  CHECK(q("$.orders[?(@.total == 99.0)].id") == V{R"("o2")"});  // 99 == 99.0, as in Python
  CHECK(q("$.orders[?(@.user_id == 1)].total") == V{"12.5"});
  CHECK(q("$.users[?(@.age == '31')]").empty());        // a number never equals a string
  CHECK(q("$.users[?(@.nickname != 'x')]").empty());    // a missing field never matches
  CHECK(q("$.users[?(@.active < true)]").empty());      // bools are not ordered
  CHECK(q("$.users[?@.id==2].name") == V{R"("bob")"});  // RFC 9535 form, no parentheses or spaces
}

TEST_CASE("jsonpath: locate reports each match's parent and position") {
  auto r = jsonpath_locate(db(), "$.users[?(@.active == true)].name");
  REQUIRE(r.has_value());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].member == "name");
  CHECK((*r)[0].parent == &db()["users"][0]);
  auto e = jsonpath_locate(db(), "$.orders[1]");
  REQUIRE(e.has_value());
  REQUIRE(e->size() == 1);
  CHECK((*e)[0].index == 1);
  CHECK((*e)[0].parent == &db()["orders"]);
  auto root = jsonpath_locate(db(), "$");
  REQUIRE(root.has_value());
  CHECK((*root)[0].parent == nullptr);

  auto split = jsonpath_split_member("$.users[0]['nick name']");
  REQUIRE(split.has_value());
  CHECK(split->first == "$.users[0]");
  CHECK(split->second == "nick name");
  CHECK(jsonpath_split_member("users")->first == "$");
  CHECK_FALSE(jsonpath_split_member("$.users[0]").has_value());
}

TEST_CASE("jsonpath: syntax errors name the offset") {
  CHECK(error_of("") == "invalid JSONPath '' at offset 0: the path is empty");
  CHECK(error_of("$.users[") ==
        "invalid JSONPath '$.users[' at offset 8: expected an index, '*', a quoted name or '?'");
  CHECK(error_of("$.users[0") == "invalid JSONPath '$.users[0' at offset 9: expected ']'");
  CHECK(error_of("$.") == "invalid JSONPath '$.' at offset 2: expected a member name");
  CHECK(error_of("$['a") == "invalid JSONPath '$['a' at offset 4: unterminated string, expected '");
  CHECK(error_of("$.a b") == "invalid JSONPath '$.a b' at offset 3: unexpected ' '");
  CHECK(error_of("$.users[?(@.age >> 3)]") ==
        "invalid JSONPath '$.users[?(@.age >> 3)]' at offset 17: expected a number, a quoted string, true, false or "
        "null");
  CHECK(error_of("$.users[?(@.age > 3]") ==
        "invalid JSONPath '$.users[?(@.age > 3]' at offset 19: expected ')' or a comparison (==, !=, <, <=, >, >=)");
  CHECK(error_of("$.users[?(age > 3)]") ==
        "invalid JSONPath '$.users[?(age > 3)]' at offset 10: expected '@' at the start of a filter");
  CHECK(jsonpath_validate("$..users[?(@.a.b == 'x')]").has_value());
  CHECK_FALSE(jsonpath_validate("$[1.5]").has_value());
}
