// Expected<T>: a value or the Status that explains why there is none.
//
// `Expected<T>` is returned where a call produces a value and can fail. It
// holds exactly one of a T or a non-OK Status; constructing it from an OK
// Status is a programming error and becomes an INTERNAL status instead.
// Reading the value of an error (value(), *, ->) is a programming error too:
// it prints the Status to stderr and aborts, in every build type.
#pragma once

#include <cassert>  // kept for the files that relied on it through this header
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "taskring/base/status.hpp"

namespace taskring {

namespace detail {
// Out of line of value() so the check stays one predictable branch there.
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] inline void expected_value_of_error(const Status& s) {
  const std::string line = "taskring: Expected::value() called on an error: " + s.to_string() + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail

template <typename T>
class [[nodiscard]] Expected {
  static_assert(!std::is_same_v<T, Status>, "use Status directly");

 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}        // NOLINT: implicit by design
  Expected(Status status) : v_(std::in_place_index<1>, std::move(status)) {  // NOLINT
    if (std::get<1>(v_).ok()) v_ = Status(StatusCode::kInternal, "Expected built from an OK status");
  }

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // The value. Precondition: ok(); otherwise prints the Status and aborts.
  T& value() & {
    check();
    return *std::get_if<0>(&v_);
  }
  const T& value() const& {
    check();
    return *std::get_if<0>(&v_);
  }
  T&& value() && {
    check();
    return std::move(*std::get_if<0>(&v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The error; OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<1>(v_); }

  T value_or(T fallback) const { return ok() ? std::get<0>(v_) : fallback; }

 private:
  void check() const {
    if (!ok()) [[unlikely]]
      detail::expected_value_of_error(*std::get_if<1>(&v_));
  }

  std::variant<T, Status> v_;
};

}  // namespace taskring

// Evaluates `expr` (an Expected<T>); on error returns its Status, otherwise
// moves the value into `lhs` (a declaration or an lvalue).
#define TASKRING_ASSIGN_OR_RETURN(lhs, expr) \
  TASKRING_ASSIGN_OR_RETURN_IMPL_(TASKRING_CONCAT_(_tr_expected_, __LINE__), lhs, expr)
#define TASKRING_CONCAT_INNER_(a, b) a##b
#define TASKRING_CONCAT_(a, b) TASKRING_CONCAT_INNER_(a, b)
#define TASKRING_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()
