// Result<T>: a value or an Error{code, message, context}; forgectl's one error contract.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace forge {

// Few codes, mapped once from HTTP status / curl codes / errno, so that callers retry only
// what is transient (Unavailable, Timeout).
enum class Errc {
  kNotFound,     // 404, missing file
  kConflict,     // 409: name in use, wrong state
  kBadRequest,   // 400: the daemon refused our input
  kForbidden,    // 403: not allowed in this state
  kUnavailable,  // cannot connect, connection dropped: transient
  kTimeout,      // a deadline passed: transient
  kServer,       // >= 500 from the daemon
  kProtocol,     // a response we cannot understand
  kInvalid,      // bad user input (arguments, files)
  kUnsupported,  // the daemon or host lacks something we need
  kIo,           // local I/O
  kCancelled,    // stopped on request (signal)
  kExceeded,     // what the sandbox holds passed a limit of ours: the agent's doing, not a fault
  kBroken,       // forgectl's own helper in the sandbox cannot run at all: never the agent's doing
};

const char* errc_name(Errc code);
inline bool is_transient(Errc code) { return code == Errc::kUnavailable || code == Errc::kTimeout; }

struct Error {
  Errc code = Errc::kIo;
  std::string message;  // lower-case, names the object
  std::string context;  // "while …" chain, outermost first, added as the error travels up

  // "context: message", the form printed to users.
  std::string what() const { return context.empty() ? message : context + ": " + message; }
  // Returns a copy with `ctx` prepended to the context chain.
  Error with_context(std::string_view ctx) const {
    Error e = *this;
    e.context = e.context.empty() ? std::string(ctx) : std::string(ctx) + ": " + e.context;
    return e;
  }
};

inline Error make_error(Errc code, std::string message) { return Error{code, std::move(message), {}}; }

// Tag type so that `return fail(...)` converts to any Result<T>.
struct Unexpected {
  Error error;
};
inline Unexpected fail(Error e) { return Unexpected{std::move(e)}; }
inline Unexpected fail(Errc code, std::string message) { return Unexpected{make_error(code, std::move(message))}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}
  template <typename U>
    requires std::is_constructible_v<T, U&&> && (!std::is_same_v<std::decay_t<U>, Result>) &&
             (!std::is_same_v<std::decay_t<U>, Unexpected>) && (!std::is_same_v<std::decay_t<U>, T>)
  Result(U&& value) : v_(std::in_place_index<0>, T(std::forward<U>(value))) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { assert(has_value()); return std::get<0>(v_); }
  const T& value() const& { assert(has_value()); return std::get<0>(v_); }
  T&& value() && { assert(has_value()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!has_value()); return std::get<1>(v_); }
  // The error with `ctx` prepended, to propagate: `if (!r) return r.fail_with("creating x");`
  Unexpected fail_with(std::string_view ctx) const { return Unexpected{error().with_context(ctx)}; }
  Unexpected fail() const { return Unexpected{error()}; }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Unexpected u) : error_(std::move(u.error)), ok_(false) {}
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { assert(!ok_); return error_; }
  Unexpected fail_with(std::string_view ctx) const { return Unexpected{error_.with_context(ctx)}; }
  Unexpected fail() const { return Unexpected{error_}; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace forge
