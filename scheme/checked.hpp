// Overflow-checked size arithmetic: every size qscheme derives from a user's shape goes through
// these, so an overflowing shape becomes a shape-overflow error instead of a wrapped size.
#pragma once

#include <cstdint>
#include <optional>

namespace qscheme {

// The largest extent, element, storage, scale or byte count qscheme accepts: 2^63 - 1, so that
// every size also fits a signed 64-bit index, ptrdiff_t and off_t. Past it: shape-overflow.
inline constexpr std::uint64_t kMaxSize = 0x7FFF'FFFF'FFFF'FFFFull;

inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// ceil(a / b) for b > 0, without the a + b - 1 overflow.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

}  // namespace qscheme
