// The state_checks operators on matched values and file contents (state_operators.h).
#include "grading/state_operators.h"

#include <string_view>

#include "core/strings.h"
#include "grading/component.h"
#include "manifest/state_ops.h"

namespace forge::grading {

namespace {

using Op = manifest::StateAssertion::Op;

std::string_view sv(const json::Value& v) { return {v.GetString(), v.GetStringLength()}; }

using manifest::json_kind;

// x against y by the ordering of `op`: the greater, at least, less or at most of its family.
template <class T>
bool in_order(Op op, Op gt, Op gte, Op lt, const T& x, const T& y) {
  if (op == gt) return x > y;
  if (op == gte) return x >= y;
  if (op == lt) return x < y;
  return x <= y;
}

// The failing verdict of an ordering whose value is not of the kind it compares.
Verdict not_comparable(Op op, const char* compares, const json::Value& value) {
  return {false, std::string(manifest::state_op_name(op)) + " compares " + compares + ", and this is " +
                     (value.IsString() ? "a string that is not one" : json_kind(value))};
}

bool values_equal(const json::Value& a, const json::Value& b, bool ci) {
  if (ci && a.IsString() && b.IsString()) return equals_ci(sv(a), sv(b));
  return a == b;
}

// Tolokaforge's StateChecker "contains": a substring of a string, an element of a list, a key of
// a mapping (forgectl's reading; docs/task.md), a scalar only itself.
bool contains_value(const json::Value& value, const json::Value& expected, bool ci) {
  if (value.IsString()) {
    if (!expected.IsString()) return false;
    return ci ? contains_ci(sv(value), sv(expected)) : sv(value).find(sv(expected)) != std::string_view::npos;
  }
  if (value.IsArray()) {
    for (const auto& e : value.GetArray())
      if (values_equal(e, expected, ci)) return true;
    return false;
  }
  if (value.IsObject()) {
    if (!expected.IsString()) return false;
    for (const auto& m : value.GetObject())
      if (ci ? equals_ci(sv(m.name), sv(expected)) : sv(m.name) == sv(expected)) return true;
    return false;
  }
  return value == expected;
}

// A number, or a string that reads as one; booleans are not numbers (as in Tolokaforge).
std::optional<double> as_number(const json::Value& v) {
  if (v.IsNumber()) return v.GetDouble();
  if (v.IsString()) return manifest::number_in_text(sv(v));
  return std::nullopt;
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The length len_gt / len_gte measure: characters of text, elements, or keys.
std::optional<std::size_t> length_of(const json::Value& v) {
  if (v.IsString()) return utf8_length(sv(v));
  if (v.IsArray()) return v.Size();
  if (v.IsObject()) return v.MemberCount();
  return std::nullopt;
}

Verdict compare_numbers(Op op, const json::Value& value, const json::Value& expected) {
  auto x = as_number(value);
  auto y = as_number(expected);  // checked when grading.yaml was read
  if (!x || !y) return not_comparable(op, "numbers", value);
  return {in_order(op, Op::kGt, Op::kGte, Op::kLt, *x, *y), {}};
}

// Two ISO-8601 instants compared in UTC (Tolokaforge's date_* trace operators).
Verdict compare_dates(Op op, const json::Value& value, const json::Value& expected) {
  auto x = value.IsString() ? manifest::instant_in_text(sv(value)) : std::nullopt;
  auto y = manifest::instant_in_text(sv(expected));  // checked when grading.yaml was read
  if (!x || !y) return not_comparable(op, "ISO-8601 dates", value);
  return {in_order(op, Op::kDateGt, Op::kDateGte, Op::kDateLt, *x, *y), {}};
}

}  // namespace

Result<StateOperator> StateOperator::make(const manifest::StateAssertion& a) {
  StateOperator o;
  o.op_ = a.op;
  if (manifest::operand_of(a.op) == manifest::Operand::kNone) return o;
  if (auto problem = manifest::operand_problem(a.op, a.expected_json))
    return fail(Errc::kInvalid, std::string("the operand of ") + manifest::state_op_name(a.op) + " " + *problem);
  auto doc = std::make_shared<json::Document>();
  (void)json::parse_document(*doc, a.expected_json);  // operand_problem parsed it
  if (manifest::operand_of(a.op) == manifest::Operand::kPattern) {
    auto re = manifest::PythonRegex::compile(sv(*doc));
    if (!re) return fail(re.error());
    o.pattern_ = std::move(*re);
  }
  o.expected_ = std::move(doc);
  return o;
}

Verdict StateOperator::on_value(const json::Value& v) const {
  const json::Value* e = expected_.get();
  const char* name = manifest::state_op_name(op_);
  switch (op_) {
    case Op::kExists:
      return {true, {}};
    case Op::kNotExists:
      return {false, {}};
    case Op::kEquals:
    case Op::kEqualsCi:
      return {values_equal(v, *e, op_ == Op::kEqualsCi), {}};
    case Op::kNotEquals:
      return {!values_equal(v, *e, false), {}};
    case Op::kContains:
    case Op::kContainsCi:
      return {contains_value(v, *e, op_ == Op::kContainsCi), {}};
    case Op::kNotContains:
      return {!contains_value(v, *e, false), {}};
    case Op::kGt:
    case Op::kGte:
    case Op::kLt:
    case Op::kLte:
      return compare_numbers(op_, v, *e);
    case Op::kIn:
    case Op::kNotIn: {
      bool found = false;
      for (const auto& item : e->GetArray()) found = found || values_equal(v, item, false);
      return {found == (op_ == Op::kIn), {}};
    }
    case Op::kRegex:
    case Op::kNotRegex:
      if (!v.IsString()) return {false, std::string(name) + " matches text, and this is " + json_kind(v)};
      return {pattern_->search(sv(v)) == (op_ == Op::kRegex), {}};
    case Op::kDateGt:
    case Op::kDateGte:
    case Op::kDateLt:
    case Op::kDateLte:
      return compare_dates(op_, v, *e);
    case Op::kLenGt:
    case Op::kLenGte: {
      auto n = length_of(v);
      if (!n) return {false, std::string(name) + " measures text, a list or a mapping, and this is " + json_kind(v)};
      const double bound = e->GetDouble();
      return {op_ == Op::kLenGt ? double(*n) > bound : double(*n) >= bound, {}};
    }
  }
  return {false, "unknown operator"};
}

Verdict StateOperator::on_file(const std::string& content) const {
  const json::Value* e = expected_.get();
  const std::string text = e && e->IsString() ? std::string(sv(*e)) : (e ? json::to_string(*e) : "");
  switch (op_) {
    case Op::kExists:
      return {true, {}};
    case Op::kNotExists:
      return {false, {}};
    case Op::kEquals:
    case Op::kEqualsCi:
    case Op::kNotEquals: {
      bool same = false;
      if (e->IsString()) {
        same = op_ == Op::kEqualsCi ? equals_ci(trim(content), trim(text)) : trim(content) == trim(text);
      } else {
        json::Document doc;
        same = !json::parse_document(doc, content) && doc == *e;
      }
      return {same == (op_ != Op::kNotEquals), {}};
    }
    case Op::kContains:
      return {content.find(text) != std::string::npos, {}};
    case Op::kContainsCi:
      return {contains_ci(content, text), {}};
    case Op::kNotContains:
      return {content.find(text) == std::string::npos, {}};
    case Op::kRegex:
    case Op::kNotRegex:
      return {pattern_->search(content) == (op_ == Op::kRegex), {}};
    default:
      break;
  }
  // Numbers, lists and lengths: the content as JSON, else as one string.
  json::Document doc;
  if (json::parse_document(doc, content)) {
    const std::string t = trim(content);
    doc.SetString(t.data(), static_cast<rapidjson::SizeType>(t.size()), doc.GetAllocator());
  }
  return on_value(doc);
}

}  // namespace forge::grading
