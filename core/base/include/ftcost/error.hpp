// Errors as values: one catalogue of error codes (X-macro), a small Result<T>.
// Works without exceptions so that the same code runs natively and in the browser.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ftcost {

// code, exit class, default text. Exit class: 2 = bad input (user can fix), 1 = internal.
#define FTCOST_ERROR_CODES(X)                                      \
  X(invalid_value, 2, "invalid value")                             \
  X(missing_field, 2, "missing required field")                    \
  X(wrong_type, 2, "wrong type")                                   \
  X(out_of_range, 2, "value out of range")                         \
  X(unknown_id, 2, "unknown id")                                   \
  X(unknown_key, 2, "unknown key")                                 \
  X(unsupported_architecture, 2, "unsupported model architecture") \
  X(malformed_json, 2, "malformed JSON")                           \
  X(io_error, 2, "cannot read or write file")                      \
  X(does_not_fit, 2, "does not fit in GPU memory")                 \
  X(schema_mismatch, 2, "unsupported schema version")              \
  X(too_large, 2, "input too large")                               \
  X(fit_failed, 2, "fit failed")                                   \
  X(internal, 1, "internal error")

enum class Errc {
#define FTCOST_X(name, exit_class, text) name,
  FTCOST_ERROR_CODES(FTCOST_X)
#undef FTCOST_X
};

const char* errc_name(Errc c);
const char* errc_text(Errc c);
int errc_exit_code(Errc c);

struct Error {
  Errc code = Errc::internal;
  std::string field;  // the flag / JSON path / file the problem is in, e.g. "--batch" or "config.hidden_size"
  std::string message;  // what is wrong and what is allowed

  // "field: message" (or just message when no field).
  std::string to_string() const;
  int exit_code() const { return errc_exit_code(code); }
};

inline Error make_error(Errc code, std::string field, std::string message) {
  return Error{code, std::move(field), std::move(message)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

// Result<void> equivalent.
struct Ok {};
using Status = Result<Ok>;

// Propagate an error from an expression returning Result<...>. `var` names the variable it declares, so it
// cannot be parenthesized (bugprone-macro-parentheses: a false positive here).
#define FTCOST_TRY(var, expr)                            \
  auto var##_result_ = (expr);                           \
  if (!var##_result_.ok()) return var##_result_.error(); \
  auto var = std::move(var##_result_).value()  // NOLINT(bugprone-macro-parentheses)

// The same for a check whose value is not needed (a Status, or a Result read only for its error): returns
// the error, else goes on.
#define FTCOST_CHECK(expr)                                               \
  do {                                                                   \
    auto ftcost_check_result_ = (expr);                                  \
    if (!ftcost_check_result_.ok()) return ftcost_check_result_.error(); \
  } while (false)

}  // namespace ftcost
