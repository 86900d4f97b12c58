#pragma once

#include <optional>
#include <utility>
#include <variant>

#include "codec/refusal.h"

namespace aweft::codec {

// Either a T or the Refusal that explains why there is none. Spelled like
// C++23's std::expected<T, Refusal> so it can become an alias later.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}            // NOLINT
  Result(Refusal refusal) : state_(std::move(refusal)) {}  // NOLINT

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& operator*() { return std::get<0>(state_); }
  const T& operator*() const { return std::get<0>(state_); }
  T* operator->() { return &std::get<0>(state_); }
  const T* operator->() const { return &std::get<0>(state_); }
  const Refusal& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Refusal> state_;
};

// Success carries nothing: `return {};` accepts, `return Refusal{...};`
// refuses.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Refusal refusal) : refusal_(std::move(refusal)) {}  // NOLINT

  bool has_value() const { return !refusal_.has_value(); }
  explicit operator bool() const { return has_value(); }
  const Refusal& error() const { return *refusal_; }

 private:
  std::optional<Refusal> refusal_;
};

}  // namespace aweft::codec
