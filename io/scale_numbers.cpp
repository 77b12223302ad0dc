#include "io/scale_numbers.hpp"

#include <algorithm>
#include <bit>

#include "reference/values.hpp"

namespace qscheme::io {
namespace {

constexpr std::uint32_t kF32Exp = 0x7F800000u;

bool finite_non_negative_f32(std::uint32_t u) { return (u & kF32Exp) != kF32Exp && (u >> 31) == 0; }

}  // namespace

ScaleNumbers::ScaleNumbers(ScaleDtype d) : d_(d) {
  if (d == ScaleDtype::ue4m3 || d == ScaleDtype::ue8m0) {
    // 256 patterns, once per reader or writer: the reference's exact values.
    for (std::uint32_t b = 0; b < 256; ++b) {
      auto v = reference::scale_value(d, b);
      if (!v) continue;
      values_[b] = v->f32;
      by_value_.emplace_back(std::bit_cast<std::uint32_t>(v->f32), b);
    }
    std::sort(by_value_.begin(), by_value_.end());
  }
}

bool ScaleNumbers::valid(std::uint32_t bits) const { return reference::is_valid_scale(d_, bits); }

float ScaleNumbers::value(std::uint32_t bits) const {
  switch (d_) {
    case ScaleDtype::f32: return std::bit_cast<float>(bits);
    case ScaleDtype::bf16: return std::bit_cast<float>(bits << 16);
    case ScaleDtype::f16: {
      const std::uint32_t exp = bits >> 10 & 31;
      const std::uint32_t mant = bits & 1023;
      if (exp == 0) {
        // A subnormal m * 2^-24: an f32 normal (or 0), built from its bits to stay clear of
        // the caller's floating-point environment.
        if (mant == 0) return 0.0f;
        const int lead = std::bit_width(mant) - 1;  // m = 2^lead * 1.f
        const std::uint32_t e = static_cast<std::uint32_t>(lead - 24 + 127);
        return std::bit_cast<float>(e << 23 | (mant << (23 - lead) & 0x7FFFFF));
      }
      return std::bit_cast<float>((exp + 112) << 23 | mant << 13);
    }
    case ScaleDtype::ue4m3:
    case ScaleDtype::ue8m0: return values_[bits & 255];
  }
  return 0.0f;
}

std::optional<std::uint32_t> ScaleNumbers::pattern(float v) const {
  const auto u = std::bit_cast<std::uint32_t>(v);
  if (!finite_non_negative_f32(u)) return std::nullopt;
  switch (d_) {
    case ScaleDtype::f32: return u;
    case ScaleDtype::bf16:
      if (u & 0xFFFF) return std::nullopt;
      return u >> 16;
    case ScaleDtype::f16: {
      if (u == 0) return 0u;
      const int biased = static_cast<int>(u >> 23);
      if (biased == 0) return std::nullopt;  // f32 subnormals are far below f16's smallest value
      const int e = biased - 127;
      const std::uint32_t mant = u & 0x7FFFFF;
      if (e > 15) return std::nullopt;
      if (e >= -14) {
        if (mant & 0x1FFF) return std::nullopt;
        return static_cast<std::uint32_t>(e + 15) << 10 | mant >> 13;
      }
      if (e < -24) return std::nullopt;
      // A subnormal f16 m * 2^-24 with m = significand * 2^(e + 1).
      const std::uint32_t sig = mant | 0x800000;
      const int shift = -(e + 1);  // 14..23
      if (sig & ((1u << shift) - 1)) return std::nullopt;
      return sig >> shift;
    }
    case ScaleDtype::ue4m3:
    case ScaleDtype::ue8m0: {
      const auto it = std::lower_bound(by_value_.begin(), by_value_.end(), std::pair<std::uint32_t, std::uint32_t>{u, 0});
      if (it == by_value_.end() || it->first != u) return std::nullopt;
      return it->second;
    }
  }
  return std::nullopt;
}

}  // namespace qscheme::io
