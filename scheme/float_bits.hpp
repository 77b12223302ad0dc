// A float and its bit pattern. Engines are held to the same bits, not the same values (-0 and
// NaN payloads count), so every comparison and every hand-made pattern goes through these.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace qscheme {

constexpr std::uint32_t f32_bits(float f) { return std::bit_cast<std::uint32_t>(f); }
constexpr float f32_from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// bf16 is the high half of an f32: the value of a bf16 pattern is exact in f32.
constexpr float bf16_to_f32(std::uint32_t bf16_bits) { return f32_from_bits(bf16_bits << 16); }

// The patterns of a float vector, for element-wise comparisons that print both sides.
inline std::vector<std::uint32_t> f32_bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out;
  out.reserve(v.size());
  for (float f : v) out.push_back(f32_bits(f));
  return out;
}

// Bitwise equality of two float vectors.
inline bool same_f32_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (f32_bits(a[i]) != f32_bits(b[i])) return false;
  }
  return true;
}

}  // namespace qscheme
