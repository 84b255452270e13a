// The `calculator` built-in: arithmetic evaluated on the host by a small recursive-descent parser.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "tools/tool.h"

namespace forge::tools {

inline constexpr int kMaxExpressionDepth = 64;  // parentheses, unary signs, function calls
inline constexpr std::size_t kMaxExpressionLength = 4096;

// Evaluates `expression`: numbers (1, 2.5, .5, 1e-3), + - * / % (floored, like Python), ^ or **
// (power, right-associative, binds tighter than unary minus: -2^2 = -4), parentheses, the
// functions sqrt abs floor ceil round(x[, digits]) min max log(x[, base]) (base 10 by default)
// ln exp sin cos tan (radians), and the constants pi and e. Errors are Errc::kInvalid:
// "division by zero", "unknown identifier 'foo' at position 3", "syntax error at position 5: …"
// (positions count characters from 1).
Result<double> evaluate_expression(std::string_view expression);

// Integral values print as integers ("391", "-4"); others with up to 15 significant digits ("0.3").
std::string format_number(double v);

class Calculator final : public Tool {
 public:
  Calculator();
  const ToolSpec& spec() const override { return spec_; }
  Result<std::string> call(const json::Value& args, const CallContext& ctx) override;

 private:
  ToolSpec spec_;
};

}  // namespace forge::tools
