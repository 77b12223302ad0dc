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

// The x86 float-to-int32 conversion of an integral value (cvtss2si): v itself when int32 holds
// it, else (NaN, +-inf, out of range) INT32_MIN.
inline std::int32_t x86_int32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(v);
}
// v's low `bits` bits as a two's complement number.
inline std::int32_t wrap_bits(std::int32_t v, int bits) {
  const std::uint32_t field = static_cast<std::uint32_t>(v) & ((bits == 32 ? 0u : (1u << bits)) - 1u);
  const std::uint32_t sign = 1u << (bits - 1);
  return static_cast<std::int32_t>(field ^ sign) - static_cast<std::int32_t>(sign);
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
  if (s.saturation == kernels::StepSaturation::upper_only) {
    // ggml q4_0: MIN(hi - lo, (int8_t)(t + (0.5f - lo))) + lo, the int8 cast as x86 makes it.
    const float sum = t + (0.5f - static_cast<float>(s.lo));
    const std::int32_t offset = wrap_bits(x86_int32(std::trunc(sum)), 8);
    return std::min(offset, s.hi - s.lo) + s.lo;
  }
  const float q = s.tie == kernels::StepTie::even ? std::nearbyint(t) : round_half_away(t);
  if (s.saturation == kernels::StepSaturation::x86_wrap) return wrap_bits(x86_int32(q), s.bits);
  if (s.saturation == kernels::StepSaturation::x86_full_range) return std::clamp(x86_int32(q), s.lo, s.hi);
  if (s.saturation == kernels::StepSaturation::int64_min_then_clamp && (std::isnan(q) || q >= 0x1p63f)) return s.lo;
  if (q <= static_cast<float>(s.lo)) return s.lo;
  if (q >= static_cast<float>(s.hi)) return s.hi;
  return static_cast<std::int32_t>(q);
}

inline void quantize_steps(const float* x, std::size_t len, std::size_t start, std::size_t bw, const float* r,
                           const kernels::StepSpec& s, std::int32_t* out32, std::uint8_t* out8,
                           std::uint8_t* nibbles = nullptr) {
  for (std::size_t i = 0; i < len; ++i) {
    const std::int32_t c = step_code(x[i], r[bw == 0 ? 0 : (start + i) / bw - start / bw], s);
    if (out32) out32[i] = c;
    else out8[i] = static_cast<std::uint8_t>(c & 0xFF);
  }
  for (std::size_t i = 0; nibbles && i + 1 < len; i += 2) {
    nibbles[i / 2] = static_cast<std::uint8_t>((out8[i] & 0xF) | (out8[i + 1] << 4));
  }
}

inline void quantize_steps_ggml(const float* x, std::size_t nb, const float* r, const kernels::StepSpec& s,
                                bool nibbles, std::uint8_t* out) {
  for (std::size_t k = 0; k < nb; ++k) {
    std::uint8_t* dst = out + k * (nibbles ? 18 : 34) + 2;
    std::uint8_t c[32];
    quantize_steps(x + k * 32, 32, 0, 32, r + k, s, nullptr, c);
    for (std::size_t i = 0; i < 32; ++i) {
      if (!nibbles) {
        dst[i] = c[i];
      } else if (i < 16) {
        dst[i] = static_cast<std::uint8_t>(((c[i] + 8) & 0xF) | ((c[i + 16] + 8) & 0xF) << 4);
      }
    }
  }
}

// ggml q4_0's statistic of each block, as quantize_row_q4_0_ref scans it: the first element of
// largest |x| by a strict comparison starting from +0, |x| compared as f32 patterns.
inline std::uint32_t block_signed_max_bits(const float* x, std::size_t len, std::size_t bw, std::uint32_t* m) {
  std::uint32_t all = 0;
  for (std::size_t k = 0; k * bw < len; ++k) {
    std::uint32_t best = 0, first = 0;
    for (std::size_t i = k * bw; i < len && i < (k + 1) * bw; ++i) {
      const std::uint32_t b = f32_bits(x[i]);
      if ((b & 0x7FFFFFFFu) > best) {
        best = b & 0x7FFFFFFFu;
        first = b;
      }
    }
    m[k] = first;
    all = best > all ? best : all;
  }
  return all;
}

// The f16 (dt 1) or bf16 (dt 2) pattern of an f32 value d, or its own (dt 0): d's significand at
// the format's precision in its binade (the least normal binade's quantum below it), rounded by
// nearbyint in f64 (exact: d has 24 bits), and +-inf from the midpoint above the largest finite
// value on, where the tie goes to the even pattern: up.
inline std::uint32_t narrow_scale_bits(float d, int dt) {
  if (dt == 0) return f32_bits(d);
  const int man = dt == 1 ? 10 : 7, emin = dt == 1 ? -14 : -126, emax = dt == 1 ? 15 : 127;
  const std::uint32_t sign = std::signbit(d) ? 0x8000u : 0u;
  const std::uint32_t inf = dt == 1 ? 0x7C00u : 0x7F80u;
  const double a = std::fabs(static_cast<double>(d));
  const double past_max = std::ldexp(2.0 - std::ldexp(1.0, -man - 1), emax);  // max + half a unit
  if (a >= past_max) return sign | inf;
  int e = a == 0 ? emin : std::max(std::ilogb(a), emin);
  double m = std::nearbyint(std::ldexp(a, man - e));
  if (m == std::ldexp(1.0, man + 1)) {
    m /= 2;
    ++e;
  }
  const auto mi = static_cast<std::uint32_t>(m);
  if (mi < (1u << man)) return sign | mi;  // subnormal (or zero), e == emin
  return sign | (static_cast<std::uint32_t>(e - emin + 1) << man) | (mi - (1u << man));
}

// Whether 2a <= W e[k] for every block (kernels::blocks_within), one f64 comparison each.
inline bool blocks_within(const std::uint32_t* amax, const double* e, std::size_t nb, double W) {
  for (std::size_t k = 0; k < nb; ++k) {
    if (2.0 * static_cast<double>(f32_from_bits(amax[k])) > W * e[k]) return false;
  }
  return true;
}

// StepScaleSpec's steps for one block statistic (kernels::step_scales), on host f32 arithmetic.
inline void step_scale(std::uint32_t stat, const kernels::StepScaleSpec& s, std::uint32_t* bits, float* operand) {
  const float a = f32_from_bits(stat);
  const float d = a / s.divisor;
  *bits = narrow_scale_bits(d, s.dt);
  if (s.operand == kernels::StepOperand::reciprocal_or_zero) {
    *operand = d != 0.0f ? 1.0f / d : 0.0f;
  } else {
    *operand = a != 0.0f ? s.hi / a : 0.0f;
  }
}

// TeScaleSpec's steps for one block (kernels::te_scales), on host f32 arithmetic and
// mini_encode's grid walk; true where e overflowed.
inline bool te_scale(std::uint32_t a, const kernels::TeScaleSpec& s, std::uint32_t* bits, float* r) {
  const float v = std::min(f32_from_bits(a) * s.mult, std::numeric_limits<float>::max());
  *bits = static_cast<std::uint32_t>(mini_encode(static_cast<double>(v), false, kE4M3));
  const float e = static_cast<float>(mini_value(static_cast<int>(*bits), kE4M3)) * s.g;
  *r = e == 0.0f ? std::numeric_limits<float>::max() : std::min(1.0f / e, std::numeric_limits<float>::max());
  return std::isinf(e);
}

// ggml's blocks to values (kernels::dequant_ggml), block by block: the f16 scale's value by its
// fields in f64 (exact), the codes unpacked one by one, each product on host f32 arithmetic.
inline bool dequant_ggml(const std::uint8_t* in, std::size_t nb, const kernels::GgmlSpec& s, float* out) {
  bool ok = true;
  const std::size_t bytes = s.nibbles ? 18 : 34;
  for (std::size_t k = 0; k < nb; ++k) {
    const std::uint8_t* b = in + k * bytes;
    const std::uint32_t h = b[0] | (static_cast<std::uint32_t>(b[1]) << 8);
    const std::uint32_t e = (h >> 10) & 0x1F, f = h & 0x3FF;
    const bool negative = (h & 0x8000) != 0;
    if ((e == 0x1F && f != 0) || (e == 0x1F && !s.inf_scales) || (negative && !s.signed_scales)) ok = false;
    const double mag = e == 0x1F ? std::numeric_limits<double>::infinity()
                       : e == 0  ? std::ldexp(static_cast<double>(f), -24)
                                 : std::ldexp(static_cast<double>(f | 0x400), static_cast<int>(e) - 25);
    const float d = static_cast<float>(negative ? -mag : mag);
    for (std::size_t i = 0; i < 32; ++i) {
      const int code = s.nibbles ? ((i < 16 ? b[2 + i] & 0xF : b[2 + i - 16] >> 4) - 8) : static_cast<std::int8_t>(b[2 + i]);
      if (code < s.lo) ok = false;
      if (out) out[k * 32 + i] = static_cast<float>(code) * d;
    }
  }
  return ok;
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

// dequant_unit's rule, code by code: field i (byte i, or the low then the high nibble of byte
// i / 2 for c.bits 4), false at a field first_bad_code rejects, else its value times its block's
// scale s[(start + i) / bw - start / bw] (s[0] for bw 0), then times g unless g is 1, each product
// on host f32 arithmetic.
inline bool dequant_unit(const std::uint8_t* bytes, std::size_t len, std::size_t start, std::size_t bw, const float* s,
                         float g, const kernels::CodeSpec& c, float* out) {
  for (std::size_t i = 0; i < len; ++i) {
    const int raw = c.bits == 4 ? (bytes[i / 2] >> (4 * (i % 2))) & 0xF : bytes[i];
    float v = 0;
    if (c.fmt >= 0) {
      if (raw > c.hi || (c.nan_mask != 0 && (raw & c.nan_mask) == c.nan_mask)) return false;
      v = static_cast<float>(mini_value(raw, c.fmt));
    } else {
      const int q = raw >= (1 << (c.bits - 1)) ? raw - (1 << c.bits) : raw;
      if (q < c.lo || q > c.hi) return false;
      v = static_cast<float>(q);
    }
    const float p = v * s[bw ? (start + i) / bw - start / bw : 0];
    out[i] = g != 1.0f ? p * g : p;
  }
  return true;
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
