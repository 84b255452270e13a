// A state_checks operator applied to one matched value or one file's content: equals, gt, in,
// regex … (manifest/state_ops.h names them), with the reason a value could not be compared.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/json.h"
#include "core/result.h"
#include "manifest/grading_config.h"
#include "manifest/python_regex.h"

namespace forge::grading {

struct Verdict {
  bool holds = false;
  std::string why;  // when the value cannot be compared: "gte compares numbers, not a string"
};

class StateOperator {
 public:
  // The assertion's operator with its operand parsed and its pattern compiled; kInvalid when the
  // operand does not fit (manifest::operand_problem).
  static Result<StateOperator> make(const manifest::StateAssertion& a);

  manifest::StateAssertion::Op op() const { return op_; }

  // On one value a JSONPath matched. Numbers compare as numbers, and so do strings that read as
  // one ("12.5"); anything else makes gt/gte/lt/lte not hold, saying why. equals and in compare
  // JSON values (1 equals 1.0; "1" does not equal 1).
  Verdict on_value(const json::Value& v) const;

  // On one file's content: text operators read the text; the others read the content parsed as
  // JSON, or, when it is not JSON, the trimmed text as a string.
  Verdict on_file(const std::string& content) const;

 private:
  StateOperator() = default;

  manifest::StateAssertion::Op op_ = manifest::StateAssertion::Op::kExists;
  std::shared_ptr<const json::Document> expected_;
  std::optional<manifest::PythonRegex> pattern_;
};

}  // namespace forge::grading
