// Stored scale patterns as the f32 numbers a text format writes, and back, exactly and fast:
// every value of every scale dtype is an f32 value, so a pattern and its f32 determine each
// other. The text readers and writers convert millions of scales; these do it with bit
// operations and small tables instead of the reference's exact rationals
// (reference::scale_value), which tests/io_test.cpp checks them against pattern by pattern.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "scheme/scheme.hpp"

namespace qscheme::io {

class ScaleNumbers {
 public:
  explicit ScaleNumbers(ScaleDtype d);

  // Whether bits is a storable scale of the dtype (reference::is_valid_scale).
  bool valid(std::uint32_t bits) const;
  // The f32 value of a valid pattern. Precondition: valid(bits).
  float value(std::uint32_t bits) const;
  // The valid pattern whose value is exactly v; none when v is not on the dtype's grid, beyond
  // its range, negative, -0, NaN or infinite.
  std::optional<std::uint32_t> pattern(float v) const;

 private:
  ScaleDtype d_;
  // ue4m3 and ue8m0: the value of every valid pattern, and (f32 bits, pattern) sorted by value.
  std::array<float, 256> values_{};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_value_;
};

}  // namespace qscheme::io
