// Per-target minifloat encode and decode on whole vectors (e4m3, e5m2, e2m1: the formats of
// kernels/scalar.h).

#if defined(QSCHEME_FAST_KERNELS_MINIFLOAT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_MINIFLOAT_INL_H_
#undef QSCHEME_FAST_KERNELS_MINIFLOAT_INL_H_
#else
#define QSCHEME_FAST_KERNELS_MINIFLOAT_INL_H_
#endif

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "fast/kernels/scalar.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---------------------------------------------------------------------------- minifloat encode

// Magnitude code of y (f64 lanes, 0 <= y, finite or +inf) on a grid with m mantissa bits, smallest
// normal exponent emin, largest value vmax: round to nearest-even, saturate.
//   y' = min(y, vmax); Eeff = max(floor(log2 y'), emin); n = round_even(y' * 2^(m - Eeff));
//   code = (Eeff - emin) * 2^m + n.
// n lies in [0, 2^(m+1)]; n == 2^(m+1) (a carry into the next binade) and n == 2^m in the subnormal
// binade both give the right code by this same formula. y' * 2^(m-Eeff) is a power-of-two scaling,
// exact; Round is round-half-even on every target. Since vmax is on the grid and the largest
// value, clamping before rounding equals rounding with saturation.
template <class DF64>
HWY_INLINE hn::Vec<DF64> MiniMagCode(DF64 d, hn::Vec<DF64> y, int m, int emin, double vmax) {
  const hn::RebindToUnsigned<DF64> du;
  y = hn::Min(y, hn::Set(d, vmax));
  const auto yn = hn::Max(y, hn::Set(d, scalar::pow2(emin)));  // normal f64, exponent = Eeff
  const auto eb = hn::ShiftRight<52>(hn::BitCast(du, yn));      // Eeff + 1023
  // 2^(m - Eeff) has biased exponent 1023 + m - Eeff = (2046 + m) - eb.
  const auto p = hn::BitCast(d, hn::ShiftLeft<52>(hn::Sub(hn::Set(du, static_cast<uint64_t>(2046 + m)), eb)));
  const auto n = hn::Round(hn::Mul(y, p));
  // eb as an exact f64: OR it under the exponent of 2^52, subtract 2^52.
  const auto two52 = hn::Set(d, 4503599627370496.0);
  const auto ebf = hn::Sub(hn::BitCast(d, hn::Or(eb, hn::BitCast(du, two52))), two52);
  const auto base = hn::Mul(hn::Sub(ebf, hn::Set(d, 1023.0 + emin)), hn::Set(d, static_cast<double>(1 << m)));
  return hn::Add(base, n);
}

struct MiniParams {
  int m, emin;
  double vmax;
  int sign;
  int max_code = 0;  // the magnitude code of vmax
};
HWY_INLINE MiniParams Mini(int fmt) {
  switch (fmt) {
    case 0: return {3, -6, 448.0, 0x80, 0x7E};
    case 1: return {2, -14, 57344.0, 0x80, 0x7B};
    default: return {1, 0, 6.0, 0x08, 0x07};
  }
}

// Exact f32 value of minifloat codes (i32 lanes; f16 and ue4m3 scale patterns too): the magnitude
// bits moved under f32's mantissa and exponent fields and read as an f32, then scaled by
// 2^(126 + emin), the difference of the two exponent biases. A subnormal code becomes an f32
// subnormal (man * 2^-149 * 2^(23 - m)) and a normal one a normal f32; the power of two then puts
// each on its value exactly, as every minifloat value is a normal f32. The sign bit is moved to
// f32's before the product, so -0 stays -0. (An f32 subnormal operand needs IEEE defaults, no
// DAZ: every driver runs under scheme/fp_env.hpp's FpEnvGuard.)
template <class DI>
HWY_INLINE hn::Vec<hn::Rebind<float, DI>> MiniValue(DI di, hn::Vec<DI> c, const MiniParams& mp) {
  const hn::Rebind<float, DI> df;
  const int sign_shift = 31 - std::countr_zero(static_cast<unsigned>(mp.sign));
  const auto mag = hn::ShiftLeftSame(hn::And(c, hn::Set(di, mp.sign - 1)), 23 - mp.m);
  const auto sign = hn::ShiftLeftSame(hn::And(c, hn::Set(di, mp.sign)), sign_shift);
  const float bias = std::bit_cast<float>(static_cast<std::uint32_t>(253 + mp.emin) << 23);  // 2^(126 + emin)
  return hn::Mul(hn::BitCast(df, hn::Or(mag, sign)), hn::Set(df, bias));
}

// Whether e2m1's codes take its table (below: E2M1CodesNear, E2M1StepCode) on this target and
// vector: AVX-512's 16 f32 lanes.
template <class DF>
constexpr bool kE2M1Table =
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    hn::MaxLanes(DF()) == 16;
#else
    false;
#endif

// The lower clamp of the table's magnitudes (E2M1Clamped), 0.2f: below 0.25 every code is 0.
inline constexpr std::int32_t kE2M1FloorBits = 0x3E4CCCCD;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// e2m1's code table on 16 lanes (E2M1CodesNear, E2M1StepCode). Every rounding boundary of e2m1
// (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5) is 2^E * (1 + j/4), so the magnitudes a in [0.2, 6.5]
// fall into buckets of their exponent and top two mantissa bits that each hold one code: entry
// bits(a) >> 21 mod 32, that is 4 * (biased E mod 8) + j. Binades 2^1 (entries 0-3), 2^2 (4-7),
// 2^-3 (16-19), 2^-2 (20-23), 2^-1 (24-27), 2^0 (28-31); 8-15 never occur. A bucket starting on a
// boundary holds the code above it, as half away from zero rounds a tie.
inline constexpr std::int32_t kE2M1BucketCode[32] = {4, 5, 5, 6, 6, 7, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0,
                                                     0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4};
// The buckets that start on a boundary whose code above is odd (0.25, 1.25, 2.5, 5): a tie there
// rounds down under ties to even.
inline constexpr std::uint32_t kE2M1OddTieBuckets = (1u << 20) | (1u << 29) | (1u << 1) | (1u << 5);

// |v| clamped to [0.2, 6.5], as bits: min(|v|, 6.5) in one vrangeps (the operand of the lesser
// magnitude, sign cleared), then the lower clamp on the bits (floor: kE2M1FloorBits, set once by
// the caller's loop). bits >> 21 indexes the table.
template <class DI>
HWY_INLINE hn::Vec<DI> E2M1Clamped(DI /*di*/, __m512 v, hn::Vec<DI> floor) {
  const hn::Vec<DI> y{_mm512_castps_si512(_mm512_range_ps(v, _mm512_set1_ps(6.5f), 0x0A))};
  return hn::Max(y, floor);
}

// Entries [kFrom, kFrom + 16) of the table, with kE2M1OddTieBuckets as bit 3 when kTieFlags (a
// code is at most 7): the two halves that vpermi2d indexes.
template <std::size_t kFrom, bool kTieFlags, std::size_t... I>
HWY_INLINE __m512i E2M1TableHalf(std::index_sequence<I...>) {
  alignas(64) static constexpr std::int32_t kHalf[] = {
      (kE2M1BucketCode[kFrom + I] | (kTieFlags && ((kE2M1OddTieBuckets >> (kFrom + I)) & 1u) ? 8 : 0))...};
  return _mm512_load_si512(kHalf);
}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
