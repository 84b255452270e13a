// The calculator tool: a safe evaluator (no names but its own functions and constants, bounded depth).
#include "tools/calculator.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <optional>
#include <vector>

namespace forge::tools {

namespace {

constexpr const char* kSchema = R"({"type":"object","properties":{"expression":{"type":"string","description":)"
                                R"("An arithmetic expression, e.g. \"(2 + 3) * 4 ^ 2 / sqrt(16)\""}},)"
                                R"("required":["expression"],"additionalProperties":false})";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Result<double> run() {
    if (s_.find_first_not_of(" \t\r\n") == std::string_view::npos) return fail(Errc::kInvalid, "empty expression");
    double v = expr();
    skip();
    if (!err_ && pos_ < s_.size()) unexpected();
    if (!err_ && std::isnan(v)) error("math domain error");
    if (!err_ && std::isinf(v)) error("the result is too large");
    if (err_) return fail(Errc::kInvalid, *err_);
    return v;
  }

 private:
  // The first error wins; afterwards every rule returns 0 at once.
  double error(std::string msg) {
    if (!err_) err_ = std::move(msg);
    return 0;
  }
  double syntax(std::size_t at, const std::string& what) {
    return error("syntax error at position " + std::to_string(at + 1) + ": " + what);
  }
  double unexpected() {
    if (pos_ >= s_.size()) return syntax(pos_, "unexpected end of expression");
    // Quote the whole UTF-8 character, not one byte of it.
    const unsigned char lead = static_cast<unsigned char>(s_[pos_]);
    const std::size_t len = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    return syntax(pos_, "unexpected '" + std::string(s_.substr(pos_, len)) + "'");
  }

  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(std::string_view tok) {
    skip();
    return s_.substr(pos_, tok.size()) == tok;
  }

  // Consumes `tok` if it comes next (after white space).
  bool eat(std::string_view tok) {
    if (!peek(tok)) return false;
    pos_ += tok.size();
    return true;
  }

  double expr() {
    double v = term();
    while (!err_) {
      if (eat("+"))
        v += term();
      else if (eat("-"))
        v -= term();
      else
        break;
    }
    return v;
  }

  double term() {
    double v = unary();
    while (!err_) {
      if (eat("*")) {
        v *= unary();
      } else if (eat("/")) {
        const double d = unary();
        if (d == 0 && !err_) return error("division by zero");
        v /= d;
      } else if (eat("%")) {
        const double d = unary();
        if (d == 0 && !err_) return error("modulo by zero");
        // Floored like Python: the result takes the divisor's sign (-7 % 3 = 2).
        const double r = std::fmod(v, d);
        v = (r != 0 && (r < 0) != (d < 0)) ? r + d : r;
      } else {
        break;
      }
    }
    return v;
  }

  // Every nesting (parenthesis, sign, exponent, call) passes here, so the depth is bounded here.
  double unary() {
    if (++depth_ > kMaxExpressionDepth) {
      --depth_;
      return error("the expression nests deeper than " + std::to_string(kMaxExpressionDepth) + " levels");
    }
    double v;
    if (eat("-"))
      v = -unary();
    else if (eat("+"))
      v = unary();
    else
      v = power();
    --depth_;
    return v;
  }

  double power() {
    double base = primary();
    if (err_) return 0;
    if (!eat("^") && !eat("**")) return base;
    double exponent = unary();  // right-associative, and 2^-1 works
    double v = std::pow(base, exponent);
    if (std::isnan(v) && !std::isnan(base) && !std::isnan(exponent))
      return error("math domain error: a negative number to a fractional power");
    return v;
  }

  double primary() {
    skip();
    if (pos_ >= s_.size()) return unexpected();
    const char c = s_[pos_];
    if (is_digit(c) || c == '.') return number();
    if (ident_start(c)) return identifier();
    if (c == '(') {
      ++pos_;
      double v = expr();
      if (err_) return 0;
      if (!eat(")")) return syntax(pos_, "expected ')'");
      return v;
    }
    return unexpected();
  }

  double number() {
    const std::size_t start = pos_;
    std::size_t digits = 0;
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_, ++digits;
    if (pos_ < s_.size() && s_[pos_] == '.')
      for (++pos_; pos_ < s_.size() && is_digit(s_[pos_]); ++pos_) ++digits;
    if (digits == 0) return syntax(start, "malformed number");
    // An exponent only when digits follow: "2e" leaves 'e' to be reported.
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      std::size_t q = pos_ + 1;
      if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
      if (q < s_.size() && is_digit(s_[q]))
        for (pos_ = q; pos_ < s_.size() && is_digit(s_[pos_]);) ++pos_;
    }
    double v = 0;
    auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, v);
    if (ec == std::errc::result_out_of_range) return syntax(start, "number out of range");
    if (ec != std::errc() || end != s_.data() + pos_) return syntax(start, "malformed number");
    return v;
  }

  double identifier() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
    std::string name(s_.substr(start, pos_ - start));
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (name == "pi") return std::numbers::pi;
    if (name == "e") return std::numbers::e;
    static constexpr std::string_view kFunctions[] = {"sqrt", "abs", "floor", "ceil", "round", "min", "max",
                                                      "log",  "ln",  "exp",   "sin",  "cos",   "tan"};
    bool known = false;
    for (auto f : kFunctions) known = known || f == name;
    if (!known)
      return error("unknown identifier '" + std::string(s_.substr(start, pos_ - start)) + "' at position " +
                   std::to_string(start + 1));
    if (!eat("(")) return syntax(pos_, "expected '(' after '" + name + "'");
    std::vector<double> args;
    if (!peek(")")) {
      do {
        args.push_back(expr());
        if (err_) return 0;
      } while (eat(","));
    }
    if (!eat(")")) return syntax(pos_, "expected ',' or ')'");
    return apply(name, args);
  }

  double arity(const std::string& name, std::size_t n, std::size_t min, std::size_t max) {
    const std::string want = min == max ? std::to_string(min) : std::to_string(min) + " or " + std::to_string(max);
    return error("function '" + name + "' takes " + want + " argument" + (max == 1 ? "" : "s") + ", got " +
                 std::to_string(n));
  }

  double apply(const std::string& f, const std::vector<double>& a) {
    const std::size_t n = a.size();
    if (f == "min" || f == "max") {
      if (n == 0) return error("function '" + f + "' takes at least 1 argument, got 0");
      double v = a[0];
      for (double x : a) v = f == "min" ? std::fmin(v, x) : std::fmax(v, x);
      return v;
    }
    if (f == "round" || f == "log") {
      if (n < 1 || n > 2) return arity(f, n, 1, 2);
    } else if (n != 1) {
      return arity(f, n, 1, 1);
    }
    const double x = a[0];
    if (f == "sqrt") return x < 0 ? error("math domain error: sqrt of a negative number") : std::sqrt(x);
    if (f == "abs") return std::fabs(x);
    if (f == "floor") return std::floor(x);
    if (f == "ceil") return std::ceil(x);
    if (f == "exp") return std::exp(x);
    if (f == "sin") return std::sin(x);
    if (f == "cos") return std::cos(x);
    if (f == "tan") return std::tan(x);
    if (f == "ln" || f == "log") {
      if (x <= 0) return error("math domain error: " + f + " of a non-positive number");
      if (f == "ln") return std::log(x);
      if (n == 1) return std::log10(x);
      if (a[1] <= 0 || a[1] == 1) return error("math domain error: log base must be positive and not 1");
      return std::log(x) / std::log(a[1]);
    }
    // round: half away from zero, optionally to `digits` decimals.
    if (n == 1) return std::round(x);
    if (a[1] != std::trunc(a[1]) || std::fabs(a[1]) > 15)
      return error("round() digits must be an integer between -15 and 15");
    const double scale = std::pow(10.0, a[1]);
    return std::round(x * scale) / scale;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::optional<std::string> err_;
};

}  // namespace

Result<double> evaluate_expression(std::string_view expression) {
  if (expression.size() > kMaxExpressionLength)
    return fail(Errc::kInvalid,
                "the expression is longer than " + std::to_string(kMaxExpressionLength) + " characters");
  return Parser(expression).run();
}

std::string format_number(double v) {
  char buf[64];
  if (v == 0) return "0";  // also -0
  // Below 1e15 every integral double prints exactly; above, %.15g keeps to the reliable digits.
  const bool integral = std::fabs(v) < 1e15 && v == std::trunc(v);
  std::snprintf(buf, sizeof buf, integral ? "%.0f" : "%.15g", v);
  return buf;
}

Calculator::Calculator()
    : spec_{"calculator",
            "Evaluates an arithmetic expression and returns the number. Supports + - * / % (modulo), ^ or ** "
            "(power), parentheses, sqrt abs floor ceil round(x[, digits]) min max log(x[, base]) (base 10 by "
            "default) ln exp sin cos tan (radians), and the constants pi and e.",
            kSchema} {}

Result<std::string> Calculator::call(const json::Value& args, const CallContext&) {
  // The executor validated the arguments already; this guards direct callers.
  if (!args.IsObject() || !args.HasMember("expression") || !args["expression"].IsString())
    return fail(Errc::kInvalid, "'expression' must be a string");
  auto v = evaluate_expression(json::get_string(args, "expression"));
  if (!v) return v.fail();
  return format_number(*v);
}

}  // namespace forge::tools
