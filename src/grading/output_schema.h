// A JSON Schema for the LLM judge's answer. tools::CompiledSchema insists on strict tool schemas
// ("type": "object", "additionalProperties": false); an author's output_schema need not be strict,
// so grading validates with RapidJSON's SchemaValidator directly.
#pragma once

#include <memory>
#include <string_view>

#include "core/json.h"
#include "core/result.h"

namespace forge::grading {

class OutputSchema {
 public:
  // Any JSON Schema RapidJSON understands (draft-04 keywords). kInvalid when the text is not a
  // JSON object.
  static Result<OutputSchema> compile(std::string_view schema_json);

  // kInvalid with a short explanation: "missing required property 'reasons'",
  // "'score' must be number, got string", "'score' violates maximum 1".
  Status validate(const json::Value& v) const;

 private:
  struct Impl;
  explicit OutputSchema(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace forge::grading
