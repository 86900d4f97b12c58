#pragma once

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "codec/refusal.h"

namespace aweft::codec {

// Either a T or the E that explains why there is none: the project's one
// result shape. E is a Refusal unless said otherwise (a request's error,
// sync::AskResult; an HTTP problem, admin::Answer). Spelled like C++23's
// std::expected<T, E> so it can become an alias later.
template <typename T, typename E = Refusal>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(E error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT
  // From what makes a T (a JSON object for a JSON value, text for a
  // string), as the T itself would be.
  template <typename U>
  requires(std::is_constructible_v<T, U&&> && !std::is_constructible_v<E, U&&> &&
           !std::is_same_v<std::remove_cvref_t<U>, T> &&
           !std::is_same_v<std::remove_cvref_t<U>, Result>) Result(U&& value)
      : state_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& operator*() { return std::get<0>(state_); }
  const T& operator*() const { return std::get<0>(state_); }
  T* operator->() { return &std::get<0>(state_); }
  const T* operator->() const { return &std::get<0>(state_); }
  const E& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, E> state_;
};

// Success carries nothing: `return {};` accepts, `return Refusal{...};`
// refuses.
template <typename E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : error_(std::move(error)) {}  // NOLINT

  bool has_value() const { return !error_.has_value(); }
  explicit operator bool() const { return has_value(); }
  const E& error() const { return *error_; }

 private:
  std::optional<E> error_;
};

}  // namespace aweft::codec
