// Scalar twins of the affine family's entry points (kernels/dispatch.h: min_max_keys,
// segment_min_max_keys, quantize_affine, dequant_affine), written from the definitions
// (std::nearbyint on the f64 quotient, the clamp after the zero point, no window) rather than
// from the SIMD formulation, so that a test comparing the two can catch a wrong trick. Used by
// tests/fast_kernels_test.cpp.
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

}  // namespace qscheme::fast::scalar
