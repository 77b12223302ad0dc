// Scalar twins of the SIMD entry points of the i32-code family (kernels/dispatch.h), and the
// scalar facts of the value and scale formats. The twins are written independently of the SIMD
// formulation (std::nearbyint, explicit case analysis) so that a test comparing the two can catch
// a wrong SIMD trick. Header-only; used by the drivers for per-block work and by
// tests/fast_kernels_test.cpp.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "fast/kernels/dispatch.h"

namespace qscheme::fast::scalar {

// Minifloat value formats. `fmt` numbering is shared with the kernels.
enum Fmt : int { kE4M3 = 0, kE5M2 = 1, kE2M1 = 2 };

struct MiniInfo {
  int m;            // mantissa bits
  int emin;         // exponent of the smallest normal
  double max;       // largest finite magnitude
  int sign;         // sign bit of the code
  int nan_mask;     // (code & nan_mask) == nan_mask is a NaN/inf pattern; 0 = none
  int max_code;     // magnitude code of max
};

inline constexpr MiniInfo kMini[3] = {
    {3, -6, 448.0, 0x80, 0x7F, 0x7E},
    {2, -14, 57344.0, 0x80, 0x7C, 0x7B},
    {1, 0, 6.0, 0x08, 0, 0x7},
};

// 2^e for a normal f64 exponent (-1022 <= e <= 1023), built from its bits: unlike std::ldexp it is
// not a libm call, which a compiler cannot hoist out of a vector loop (it may set errno).
constexpr double pow2(int e) { return std::bit_cast<double>(static_cast<std::uint64_t>(1023 + e) << 52); }

inline std::uint32_t f32_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float f32_from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Value of a minifloat code (with sign) as a double (exact). Precondition: valid code.
inline double mini_value(int code, int fmt) {
  const MiniInfo& mi = kMini[fmt];
  const int mag = code & (mi.sign - 1);
  const int ef = mag >> mi.m;
  const int man = mag & ((1 << mi.m) - 1);
  double v = ef == 0 ? std::ldexp(man, mi.emin - mi.m) : std::ldexp((1 << mi.m) + man, ef - 1 + mi.emin - mi.m);
  return (code & mi.sign) ? -v : v;
}

// Code of the grid value nearest to |y| (ties to the even code), saturating; sign from `neg`.
// Reference-style: find the two neighbouring grid values by walking the codes.
inline int mini_encode(double y, bool neg, int fmt) {
  const MiniInfo& mi = kMini[fmt];
  double a = std::fabs(y);
  int best;
  const int max_code = mi.max_code;
  if (a >= mi.max) {
    best = max_code;
  } else {
    best = 0;
    for (int c = 0; c < max_code; ++c) {
      const double lo = mini_value(c, fmt), hi = mini_value(c + 1, fmt);
      if (a >= lo && a <= hi) {
        const double mid = (lo + hi) / 2;  // exact: grid values have few bits
        if (a < mid) best = c;
        else if (a > mid) best = c + 1;
        else best = (c % 2 == 0) ? c : c + 1;
        break;
      }
    }
  }
  return best | (neg ? mi.sign : 0);
}

// microxcaling's rounding of |t| onto the grid of fmt, as the grid value (beyond max: saturated
// by mini_encode): q = |t| / 2^qe on the quantum of |t|'s binade (the subnormal quantum below the
// normals), floor(f32(q + 0.5)) * 2^qe.
inline double half_away_f32_add(float t, int fmt) {
  const MiniInfo& mi = kMini[fmt];
  const float a = std::fabs(t);
  if (a == 0.0f || std::isinf(a)) return a;
  const int qe = std::max(std::ilogb(a) - mi.m, mi.emin - mi.m);
  const float q = std::ldexp(a, -qe);
  return std::ldexp(static_cast<double>(std::floor(q + 0.5f)), qe);
}

// ---- scalar twins of the kernels -----------------------------------------------------------

inline std::uint32_t max_abs_bits(const float* x, std::size_t n) {
  std::uint32_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t b = f32_bits(x[i]) & 0x7FFFFFFFu;
    if (b > m) m = b;
  }
  return m;
}

// -0 counts as +0; a value's sign decides its place before its magnitude does.
inline void scale_range(const float* s, std::size_t n, std::int32_t* top, std::int32_t* least) {
  *top = 0;
  *least = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = s[i] == 0.0f ? 0.0f : s[i];  // -0 == 0 (NaN compares false and keeps its bits)
    const std::int32_t b = static_cast<std::int32_t>(f32_bits(v));
    if (i == 0 || b > *top) *top = b;
    if (i == 0 || b < *least) *least = b;
  }
}

inline void quantize_exact_int(const float* x, std::size_t n, double e, int lo, int hi, std::int32_t* out) {
  for (std::size_t i = 0; i < n; ++i) {
    double q = std::nearbyint(static_cast<double>(x[i]) / e);
    if (q < lo) q = lo;
    if (q > hi) q = hi;
    out[i] = static_cast<std::int32_t>(q);
  }
}

inline void quantize_exact_float(const float* x, std::size_t n, double e, int fmt, std::int32_t* out) {
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = mini_encode(static_cast<double>(x[i]) / e, std::signbit(x[i]), fmt);
  }
}

// Rust f32::round: half away from zero.
inline float round_half_away(float t) {
  const float tr = std::trunc(t);
  if (std::fabs(t - tr) >= 0.5f) return tr + std::copysign(1.0f, t);
  return tr;
}

inline void quantize_burn_int(const float* x, std::size_t n, float e, int lo, int hi, std::int32_t* out) {
  for (std::size_t i = 0; i < n; ++i) {
    float q = round_half_away(x[i] / e);
    if (q < static_cast<float>(lo)) q = static_cast<float>(lo);
    if (q > static_cast<float>(hi)) q = static_cast<float>(hi);
    out[i] = static_cast<std::int32_t>(q);
  }
}

inline void quantize_burn_float(const float* x, std::size_t n, float e, int fmt, std::int32_t* out) {
  for (std::size_t i = 0; i < n; ++i) {
    const float t = x[i] / e;
    out[i] = mini_encode(static_cast<double>(t), std::signbit(t), fmt);
  }
}

// The f32 steps of one element (kernels::StepSpec), case by case on host f32 arithmetic
// (round-to-nearest-even, as the drivers' FpEnvGuard sets it).
inline std::int32_t step_code(float x, float r, const kernels::StepSpec& s) {
  const float t = s.op == kernels::StepOp::divide ? x / r : x * r;
  if (s.fmt >= 0) {
    if (s.zero_plus && t == 0.0f) return 0;
    if (s.tie == kernels::StepTie::away) return mini_encode(half_away_f32_add(t, s.fmt), std::signbit(t), s.fmt);
    return mini_encode(static_cast<double>(t), std::signbit(t), s.fmt);
  }
  const float q = s.tie == kernels::StepTie::even ? std::nearbyint(t) : round_half_away(t);
  if (s.saturation == kernels::StepSaturation::int64_min_then_clamp && (std::isnan(q) || q >= 0x1p63f)) return s.lo;
  if (q <= static_cast<float>(s.lo)) return s.lo;
  if (q >= static_cast<float>(s.hi)) return s.hi;
  return static_cast<std::int32_t>(q);
}

inline void quantize_steps(const float* x, std::size_t len, std::size_t start, std::size_t bw, const float* r,
                           const kernels::StepSpec& s, std::int32_t* out32, std::uint8_t* out8) {
  for (std::size_t i = 0; i < len; ++i) {
    const std::int32_t c = step_code(x[i], r[bw == 0 ? 0 : (start + i) / bw - start / bw], s);
    if (out32) out32[i] = c;
    else out8[i] = static_cast<std::uint8_t>(c & 0xFF);
  }
}

inline void dequant_exact_int(const std::int32_t* c, std::size_t n, double e, float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<double>(c[i]) * e);
}
inline void dequant_exact_float(const std::int32_t* c, std::size_t n, double e, int fmt, float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(mini_value(c[i], fmt) * e);
}
inline void dequant_burn_int(const std::int32_t* c, std::size_t n, float e, float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = e * static_cast<float>(c[i]);
}
inline void dequant_burn_float(const std::int32_t* c, std::size_t n, float e, int fmt, float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = e * static_cast<float>(mini_value(c[i], fmt));
}

inline void codes_to_bytes(const std::int32_t* c, std::size_t n, std::uint8_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(c[i] & 0xFF);
}
// Native bytes back to codes: sign-extended for integer kinds, zero-extended for floats.
inline void bytes_to_codes(const std::uint8_t* b, std::size_t n, bool is_signed, std::int32_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = is_signed ? static_cast<std::int8_t>(b[i]) : b[i];
}

// out[j] = OR_i (codes[i*stride + j] & mask) << (i*bits), i < count, j < inner.
inline void pack_words(const std::int32_t* codes, std::size_t inner, std::size_t count, std::size_t stride,
                       int bits, std::uint32_t* out) {
  const std::uint32_t mask = bits == 32 ? 0xFFFFFFFFu : ((1u << bits) - 1);
  for (std::size_t j = 0; j < inner; ++j) {
    std::uint32_t w = 0;
    for (std::size_t i = 0; i < count; ++i) w |= (static_cast<std::uint32_t>(codes[i * stride + j]) & mask) << (i * bits);
    out[j] = w;
  }
}
// Inverse: codes[i*stride + j] = field i of words[j] (sign-extended if is_signed), i < count.
inline void unpack_words(const std::uint32_t* words, std::size_t inner, std::size_t count, std::size_t stride,
                         int bits, bool is_signed, std::int32_t* codes) {
  const std::uint32_t mask = (1u << bits) - 1;
  for (std::size_t j = 0; j < inner; ++j) {
    for (std::size_t i = 0; i < count; ++i) {
      std::uint32_t f = (words[j] >> (i * bits)) & mask;
      std::int32_t v = static_cast<std::int32_t>(f);
      if (is_signed && (f >> (bits - 1))) v -= (1 << bits);
      codes[i * stride + j] = v;
    }
  }
}

// Index of the first code outside [lo, hi] or matching the NaN mask, or n.
inline std::size_t first_invalid_code(const std::int32_t* c, std::size_t n, int lo, int hi, int nan_mask) {
  for (std::size_t i = 0; i < n; ++i) {
    if (c[i] < lo || c[i] > hi) return i;
    if (nan_mask != 0 && (c[i] & nan_mask) == nan_mask) return i;
  }
  return n;
}

}  // namespace qscheme::fast::scalar
