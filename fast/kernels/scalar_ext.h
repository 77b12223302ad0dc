// Scalar twins of the extension's entry points (kernels/dispatch.h: min_max_keys,
// segment_min_max_keys, quantize_affine, dequant_affine, narrow_f32), written from the
// definitions (std::nearbyint on the f64 quotient, the clamp after the zero point, no window;
// rounding on the bits of the f32 pattern) rather than from the SIMD formulation, so that a test
// comparing the two can catch a wrong trick. Used by tests/fast_affine_kernels_test.cpp.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/scalar.h"

namespace qscheme::fast::scalar {

inline kernels::MinMaxKeys min_max_keys(const float* x, std::size_t n) {
  kernels::MinMaxKeys m;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t k = kernels::OrderedKey(f32_bits(x[i]));
    if (k < m.lo) m.lo = k;
    if (k > m.hi) m.hi = k;
  }
  return m;
}

inline void segment_min_max_keys(const float* x, std::size_t len, std::size_t w, std::int32_t* lo, std::int32_t* hi) {
  for (std::size_t i = 0; i < len; ++i) {
    const std::int32_t k = kernels::OrderedKey(f32_bits(x[i]));
    std::int32_t& l = lo[i / w];
    std::int32_t& h = hi[i / w];
    if (k < l) l = k;
    if (k > h) h = k;
  }
}

// The code of x against block parameters r, e, z under s.
inline std::int32_t affine_code(float x, float r, double e, std::int32_t z, const kernels::AffineSpec& s) {
  double q = 0;  // the rounded quotient, exact in f64 whatever its size
  switch (s.op) {
    case kernels::AffineOp::exact:
      // IEEE x / 0 has no code; a zero scale holds only zeros (a precondition), whose code is z.
      q = e == 0 ? 0.0 : std::nearbyint(static_cast<double>(x) / e);
      break;
    case kernels::AffineOp::divide: {
      const float t = x / r;
      q = s.away ? round_half_away(t) : std::nearbyint(t);
      break;
    }
    case kernels::AffineOp::multiply: {
      const float t = x * r;
      if (std::isnan(t) || std::fabs(t) >= 0x1p63f) return s.lo;
      q = std::nearbyint(t);
      break;
    }
  }
  const double c = q + z;
  if (c <= s.lo) return s.lo;
  if (c >= s.hi) return s.hi;
  return static_cast<std::int32_t>(c);
}

inline void quantize_affine(const float* x, std::size_t len, std::size_t start, std::size_t bw, const float* r,
                            const double* e, const std::int32_t* z, const kernels::AffineSpec& s, std::int32_t* out32,
                            std::uint8_t* out8) {
  for (std::size_t i = 0; i < len; ++i) {
    const std::size_t k = bw == 0 ? 0 : (start + i) / bw - start / bw;
    const std::int32_t c = affine_code(x[i], r[k], s.op == kernels::AffineOp::exact ? e[k] : 0.0, z ? z[k] : 0, s);
    if (out32) {
      out32[i] = c;
    } else {
      out8[i] = static_cast<std::uint8_t>(c & 0xFF);
    }
  }
}

inline void dequant_affine(const std::int32_t* c32, const std::uint8_t* c8, bool c8_signed, std::size_t len,
                           std::size_t start, std::size_t bw, const float* s, const std::int32_t* z, double g,
                           float* out) {
  for (std::size_t i = 0; i < len; ++i) {
    const std::size_t k = bw == 0 ? 0 : (start + i) / bw - start / bw;
    const std::int32_t q = c32 ? c32[i] : c8_signed ? static_cast<std::int8_t>(c8[i]) : c8[i];
    const std::int32_t d = q - (z ? z[k] : 0);
    out[i] = g == 1.0 ? static_cast<float>(d) * s[k] : static_cast<float>(static_cast<double>(d) * s[k] * g);
  }
}

// y rounded to nearest-even f16 (bf16 false) or bf16: the bits of the f32 significand below the
// target's last one decide, compared with half of it; subnormal f16 results shift the significand
// further right first. NaN gives the quiet NaN of its sign, overflow infinity.
inline std::uint16_t narrow_f32(float y, bool bf16) {
  const std::uint32_t b = f32_bits(y);
  const std::uint32_t sign = (b >> 16) & 0x8000u, mag = b & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return static_cast<std::uint16_t>(sign | (bf16 ? 0x7FC0u : 0x7E00u));
  // Drops `shift` low bits of v with round-half-to-even.
  auto round_off = [](std::uint32_t v, int shift) -> std::uint32_t {
    if (shift >= 32) return 0;
    const std::uint32_t q = v >> shift, rem = v & ((1u << shift) - 1), half = 1u << (shift - 1);
    return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
  };
  if (bf16) return static_cast<std::uint16_t>(sign | round_off(mag, 16));  // a carry into the exponent is right
  const int e = static_cast<int>(mag >> 23);
  if (e >= 143) return static_cast<std::uint16_t>(sign | 0x7C00u);  // 2^16 and beyond (inf too)
  if (e >= 113) {
    // f16 normal range [2^-14, 2^16): rebias, keep 10 mantissa bits; a carry reaches inf at 65520.
    const std::uint32_t r = round_off(mag - (112u << 23), 13);
    return static_cast<std::uint16_t>(sign | (r > 0x7C00u ? 0x7C00u : r));
  }
  // f16 subnormal: the significand (with its hidden bit) in units of 2^-24.
  if (e == 0) return static_cast<std::uint16_t>(sign);  // an f32 subnormal is far below 2^-25
  const std::uint32_t m = (mag & 0x7FFFFFu) | 0x800000u;
  return static_cast<std::uint16_t>(sign | round_off(m, 126 - e));
}

inline void narrow_f32(const float* y, std::size_t n, bool bf16, std::uint16_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = narrow_f32(y[i], bf16);
}

}  // namespace qscheme::fast::scalar
