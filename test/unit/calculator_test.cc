// The calculator built-in: arithmetic, functions, formatting, and the errors the model sees.
#include <doctest/doctest.h>

#include <string>

#include "tools/calculator.h"
#include "tools/executor.h"

using namespace forge;
using namespace forge::tools;

namespace {

std::string calc(std::string_view expr) {
  auto v = evaluate_expression(expr);
  return v ? format_number(*v) : "error: " + v.error().message;
}

}  // namespace

TEST_CASE("calculator: precedence, associativity, unary minus") {
  CHECK(calc("1 + 2 * 3") == "7");
  CHECK(calc("(1 + 2) * 3") == "9");
  CHECK(calc("17 * 23") == "391");
  CHECK(calc("10 - 4 - 3") == "3");
  CHECK(calc("2 ^ 3 ^ 2") == "512");  // right-associative
  CHECK(calc("2 ** 10") == "1024");
  CHECK(calc("-2 ^ 2") == "-4");  // like Python: power binds tighter than the sign
  CHECK(calc("2 ^ -1") == "0.5");
  CHECK(calc("--3") == "3");
  CHECK(calc("-(4 - 10) / 4") == "1.5");
  CHECK(calc("7 % 3") == "1");
  CHECK(calc("-7 % 3") == "2");  // floored, like Python
  CHECK(calc("7.5 % 2") == "1.5");
}

TEST_CASE("calculator: numbers and formatting") {
  CHECK(calc("0.1 + 0.2") == "0.3");
  CHECK(calc(".5 * 4") == "2");
  CHECK(calc("1e3 + 2.5E-1") == "1000.25");
  CHECK(calc("1 / 3") == "0.333333333333333");
  CHECK(calc("10 / 4") == "2.5");
  CHECK(calc("1e20") == "1e+20");
  CHECK(calc("-0") == "0");
  CHECK(calc("123456789 * 1000") == "123456789000");
  CHECK(format_number(-4) == "-4");
}

TEST_CASE("calculator: functions and constants") {
  CHECK(calc("sqrt(16) + abs(-2)") == "6");
  CHECK(calc("floor(2.7) + ceil(2.1)") == "5");
  CHECK(calc("round(2.5) + round(-2.5)") == "0");  // half away from zero
  CHECK(calc("round(3.14159, 2)") == "3.14");
  CHECK(calc("min(3, 1, 2) + max(4, 9)") == "10");
  CHECK(calc("log(1000)") == "3");
  CHECK(calc("log(8, 2)") == "3");
  CHECK(calc("ln(e)") == "1");
  CHECK(calc("exp(0)") == "1");
  CHECK(calc("round(sin(pi / 2) + cos(0) + tan(0), 6)") == "2");
  CHECK(calc("round(pi, 4)") == "3.1416");
  CHECK(calc("SQRT(4)") == "2");
}

TEST_CASE("calculator: errors name what is wrong and where") {
  CHECK(calc("1 / 0") == "error: division by zero");
  CHECK(calc("1 / (2 - 2)") == "error: division by zero");
  CHECK(calc("5 % 0") == "error: modulo by zero");
  CHECK(calc("2 * foo") == "error: unknown identifier 'foo' at position 5");
  CHECK(calc("__import__('os')") == "error: unknown identifier '__import__' at position 1");
  CHECK(calc("1 +") == "error: syntax error at position 4: unexpected end of expression");
  CHECK(calc("(1 + 2") == "error: syntax error at position 7: expected ')'");
  CHECK(calc("1 2") == "error: syntax error at position 3: unexpected '2'");
  CHECK(calc("2 $ 3") == "error: syntax error at position 3: unexpected '$'");
  CHECK(calc("3 × 4") == "error: syntax error at position 3: unexpected '×'");
  CHECK(calc("sqrt 4") == "error: syntax error at position 6: expected '(' after 'sqrt'");
  CHECK(calc("sqrt(1, 2)") == "error: function 'sqrt' takes 1 argument, got 2");
  CHECK(calc("max()") == "error: function 'max' takes at least 1 argument, got 0");
  CHECK(calc("sqrt(-1)") == "error: math domain error: sqrt of a negative number");
  CHECK(calc("ln(0)") == "error: math domain error: ln of a non-positive number");
  CHECK(calc("(-8) ^ (1/3)") == "error: math domain error: a negative number to a fractional power");
  CHECK(calc("10 ^ 400") == "error: the result is too large");
  CHECK(calc("   ") == "error: empty expression");
  CHECK(calc(std::string(200, '(') + "1" + std::string(200, ')')) ==
        "error: the expression nests deeper than 64 levels");
  CHECK(calc(std::string(5000, '1')) == "error: the expression is longer than 4096 characters");
}

TEST_CASE("calculator through the executor") {
  ExecutorConfig c;
  c.tools = {std::make_shared<Calculator>()};
  c.agent_enabled = {"calculator"};
  auto ex = ToolExecutor::create(c);
  REQUIRE(ex.has_value());
  auto& x = **ex;
  CHECK(x.call(Actor::kAgent, "calculator", R"({"expression":"17 * 23"})").content == "391");
  CHECK(x.call(Actor::kAgent, "calculator", R"({"expression":"1/0"})").content == "Error: division by zero");
  CHECK(x.call(Actor::kAgent, "calculator", R"({"expr":"1"})").content ==
        "Error: invalid arguments for 'calculator': unexpected property 'expr'");
  CHECK(x.call(Actor::kAgent, "calculator", R"({"expression":7})").content ==
        "Error: invalid arguments for 'calculator': property 'expression' must be string, got integer");
  CHECK(x.specs(Actor::kAgent).at(0).name == "calculator");
}
