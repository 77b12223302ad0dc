// Per-target helpers shared by the SIMD bodies of kernels-inl.h and fused-inl.h: minifloat
// encode/decode on whole vectors and an overflowing f64 -> f32 demote. Everything here is
// HWY_INLINE, so both translation units may include it.

#if defined(QSCHEME_FAST_SIMD_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_SIMD_COMMON_INL_H_
#undef QSCHEME_FAST_SIMD_COMMON_INL_H_
#else
#define QSCHEME_FAST_SIMD_COMMON_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "fast/scalar.h"
#include "hwy/highway.h"

// For a lambda that must be inlined: GCC otherwise outlines a large one called from several
// places, and its captured constants are then loaded from memory on every call.
#ifndef QSCHEME_INLINE_LAMBDA
#define QSCHEME_INLINE_LAMBDA __attribute__((always_inline))
#endif

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// How far ahead (in floats: 4 KiB) the read-only calibration loops prefetch. They stream input
// that is not in cache (a prepass over the whole tensor), and the hardware streamer stops at every
// 4 KiB page: with the prefetch, the max |x| pass over 64 MiB runs about a third faster here
// (docs/PERFORMANCE.md).
inline constexpr std::size_t kReadAhead = 1024;
// The same for a prepass that takes the block maxima of a whole tensor in one call (2 KiB). On
// page-aligned input the 4 KiB lead left that pass 10-15% slower than a plain max loop with no
// prefetch at all; 2 KiB took it to within 5-10% (3 KiB about the same, 1 KiB and none slower).
// The per-unit calibration of single-pass quantizers keeps 4 KiB: 2 KiB cost quantize q8_0 1-2%.
inline constexpr std::size_t kPrepassAhead = 512;
// How far ahead (in floats: 6 KiB) a code loop prefetches input it reads cold, after a prepass
// took the block maxima (QuantizeCodesT). Measured against 1 to 8 KiB; more lead was slower.
inline constexpr std::size_t kColdLead = 1536;

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
};
HWY_INLINE MiniParams Mini(int fmt) {
  switch (fmt) {
    case 0: return {3, -6, 448.0, 0x80};
    case 1: return {2, -14, 57344.0, 0x80};
    default: return {1, 0, 6.0, 0x08};
  }
}

// Exact f32 value of minifloat codes (i32 lanes): sig * 2^k with sig <= 2^(m+1) and the power
// built from exponent bits; sign applied last (keeps -0).
template <class DI>
HWY_INLINE hn::Vec<hn::Rebind<float, DI>> MiniValue(DI di, hn::Vec<DI> c, const MiniParams& mp) {
  const hn::Rebind<float, DI> df;
  const auto mag = hn::And(c, hn::Set(di, mp.sign - 1));
  const auto ef = hn::ShiftRightSame(mag, mp.m);
  const auto man = hn::And(mag, hn::Set(di, (1 << mp.m) - 1));
  const auto is_sub = hn::Eq(ef, hn::Zero(di));
  const auto sig = hn::IfThenElse(is_sub, man, hn::Or(man, hn::Set(di, 1 << mp.m)));
  // k = max(ef, 1) - 1 + emin - m; f32 bits of 2^k = (k + 127) << 23.
  const auto efc = hn::IfThenElse(is_sub, hn::Set(di, 1), ef);
  const auto k = hn::Add(efc, hn::Set(di, 127 - 1 + mp.emin - mp.m));
  const auto pw = hn::BitCast(df, hn::ShiftLeft<23>(k));
  const auto v = hn::Mul(hn::ConvertTo(df, sig), pw);
  const auto neg = hn::Ne(hn::And(c, hn::Set(di, mp.sign)), hn::Zero(di));
  return hn::IfThenElse(hn::RebindMask(df, neg), hn::Neg(v), v);
}

// Lanes of v (i32) with no bit of `bits` set: one vptestnmd on AVX-512 (gcc does not fuse the
// And and the compare of the generic form).
template <class DI>
HWY_INLINE hn::Mask<DI> NoBitSet(DI di, hn::Vec<DI> v, std::int32_t bits) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (sizeof(v.raw) == 64) {
    return hn::Mask<DI>{_mm512_testn_epi32_mask(v.raw, _mm512_set1_epi32(bits))};
  }
#endif
  return hn::Eq(hn::And(v, hn::Set(di, bits)), hn::Zero(di));
}

// The kC vectors leaf(0), ..., leaf(kC - 1), read as one array of kC * N lanes, reduced to one
// vector whose lane k is the maximum of lanes k * kC .. k * kC + kC - 1 (kC a power of two, at
// most N): each level of ConcatEven/ConcatOdd + Max halves the lanes. Depth first and unrolled by
// the recursion, so at most log2(kC) + 1 vectors are live and none goes through memory: the same
// tree through a stack array made the block maxima of a q8_0 unit take 0.045 ns per element
// instead of 0.025 (docs/PERFORMANCE.md).
template <std::size_t kC, class D, class Leaf>
HWY_INLINE hn::Vec<D> ConcatMaxTree(D d, const Leaf& leaf, std::size_t j0 = 0) {
  if constexpr (kC == 1) {
    return leaf(j0);
  } else {
    const auto a = ConcatMaxTree<kC / 2>(d, leaf, j0);
    const auto b = ConcatMaxTree<kC / 2>(d, leaf, j0 + kC / 2);
    return hn::Max(hn::ConcatEven(d, b, a), hn::ConcatOdd(d, b, a));
  }
}

// Ceil of lanes that are +0 or more. Highway 1.0.3's EMU128 Ceil returns -0 for +0 (for every
// lane of magnitude below 1 that is not above 0), and a scale's sign of zero reaches e = c * g,
// which the scalar twins keep +0; the other targets' Ceil is IEEE's.
template <class V>
HWY_INLINE V CeilNonNegative(V v) {
#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR
  return hn::Abs(hn::Ceil(v));
#else
  return hn::Ceil(v);
#endif
}

// DemoteTo f64 -> f32 with IEEE overflow to infinity. Highway's EMU128 (and SCALAR) DemoteTo
// saturates at +-FLT_MAX instead; round-to-nearest-even overflows from |v| >= 2^128 - 2^103
// (FLT_MAX plus half an ulp), which is where the reference gives +-inf. The mask is carried
// across lane widths as a 0/1 value, since RebindMask needs equal lane sizes.
template <class DF, class DD>
HWY_INLINE hn::Vec<DF> DemoteToF32Overflowing(DF df, DD dd, hn::Vec<DD> v) {
  const auto d = hn::DemoteTo(df, v);
  const auto over = hn::IfThenElseZero(hn::Ge(hn::Abs(v), hn::Set(dd, 0x1.ffffffp+127)), hn::Set(dd, 1.0));
  const auto inf = hn::CopySign(hn::Set(df, std::numeric_limits<float>::infinity()), d);
  return hn::IfThenElse(hn::Gt(hn::DemoteTo(df, over), hn::Zero(df)), inf, d);
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
