// Per-target bodies of the fused bytes path (declared in fused.h, dispatched from fused.cc).
// Included once per Highway target by foreach_target.h.
//
// Exactness (docs/SEMANTICS-fast.md section 6). Codes are computed in f32 lanes, twice as many per
// vector as the f64 kernels of kernels-inl.h, from r = f32(x * inv), inv = f32(1 / f32(e)):
//  * |r - x/e| <= |x/e| * 3 * 2^-24 * (1 + 2^-22) whenever e lies in [2^-100, 2^100] (else the
//    block is divided exactly in f64). A code only depends on where x/e lies against the rounding
//    boundaries: half-integers for integers, and for minifloats the half-integers of
//    t = y * 2^(m - E) (y = min(|x/e|, vmax), E = max(floor(log2 y), emin)), with t <= 2^(m+1).
//  * Integers: a result is clamped to [lo, hi] within [-128, 127] whenever |x/e| > 2^8, so only
//    |x/e| <= 2^8 needs the right rounding, where the error is below 2^-14.4. Minifloats: the error
//    of t is below 2^(m+1) * 3 * 2^-24 <= 2^-18.4. When r (or t) lies at least 1.5 * 2^-13
//    (integers) or 1.5 * 2^-16 (minifloats) from every half-integer, x/e rounds the same way; otherwise
//    the vector is redone (codes_f32-inl.h), exact ties included. A binade chosen from r instead of
//    x/e differs only next to a power of two, which is on the grid: both binades give the same
//    code there.
//  * Dequantize, one level: value (f32) * scale (f32) is one IEEE multiplication, correctly rounded.
//    Two levels: value * (s * g) is exact in f64, then demoted once.

#if defined(QSCHEME_FAST_FUSED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_FUSED_INL_H_
#undef QSCHEME_FAST_FUSED_INL_H_
#else
#define QSCHEME_FAST_FUSED_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "fast/codes_f32-inl.h"
#include "fast/fused.h"
#include "fast/prefetch_window.hpp"
#include "fast/simd_common-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---------------------------------------------------------------------------- scales

// Runs one(kG, src, bits, e, inv, tight, lowest, valid) over the nb blocks of ScalesFromMax:
// groups of G whole vectors in place (kG = G as a constant), the whole vectors left one at a
// time, then the padded tail through buffers (tight and lowest may be null).
template <std::size_t G, class One>
HWY_INLINE void ScaleVectors(std::size_t nb, std::size_t N, const std::uint32_t* HWY_RESTRICT amax,
                             std::uint32_t* HWY_RESTRICT bits, double* HWY_RESTRICT e, float* HWY_RESTRICT inv,
                             std::uint32_t* HWY_RESTRICT tight, std::uint32_t* HWY_RESTRICT lowest, const One& one) {
  std::size_t k = 0;
  auto at = [&](auto kG, std::size_t valid) QSCHEME_INLINE_LAMBDA {
    one(kG, amax + k, bits + k, e + k, inv + k, tight ? tight + k : nullptr, lowest ? lowest + k : nullptr, valid);
  };
  if constexpr (G > 1) {
    for (; k + G * N <= nb; k += G * N) at(std::integral_constant<std::size_t, G>(), N);
  }
  for (; k + N <= nb; k += N) at(std::integral_constant<std::size_t, 1>(), N);
  if (k == nb) return;
  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);  // the most lanes of either kernel
  HWY_ALIGN std::uint32_t a[kMax] = {};
  HWY_ALIGN std::uint32_t b[kMax];
  HWY_ALIGN double ev[kMax];
  HWY_ALIGN float iv[kMax];
  HWY_ALIGN std::uint32_t tv[kMax];
  HWY_ALIGN std::uint32_t lv[kMax];
  std::memcpy(a, amax + k, (nb - k) * sizeof(std::uint32_t));
  one(std::integral_constant<std::size_t, 1>(), a, b, ev, iv, tv, lv, nb - k);
  if (tight) std::memcpy(tight + k, tv, (nb - k) * sizeof(std::uint32_t));
  if (lowest) std::memcpy(lowest + k, lv, (nb - k) * sizeof(std::uint32_t));
  std::memcpy(bits + k, b, (nb - k) * sizeof(std::uint32_t));
  std::memcpy(e + k, ev, (nb - k) * sizeof(double));
  std::memcpy(inv + k, iv, (nb - k) * sizeof(float));
}

// Whether ScalesFromMaxF32 below may take spec: a grid whose values and their products with W/2
// are exact f32 numbers (at most 24 bits: the grid's m + 1 plus the odd part of W), and whose
// patterns follow from f32 bits (ue8m0; IEEE-style grids whose subnormal step 2^(emin - m) is a
// normal f32: f16, ue4m3; not bf16, whose step is 2^-133, nor f32). Under a global g (two
// levels) also: an fma (whose one rounding of c * W/2 * g - a keeps its sign), an IEEE-style
// grid within [2^-24, 2^16] (f16, ue4m3) and g an f32 in [2^-70, 2^70], so that every product the
// kernel forms is zero or a normal f32 (c * W/2 * g within [2^-94, 2^110]) and e = c * g is zero
// or in [2^-94, 2^86], never out of the range InvF32 takes.
inline bool ScalesInF32(const ScaleSpec& s) {
  const double W = s.wg / s.g;  // exact: wg = W * g
  if (!(W >= 2 && W < 0x1p24) || W != static_cast<double>(static_cast<std::uint32_t>(W))) return false;
  if (s.g != 1 && (!HWY_NATIVE_FMA || s.ue8m0 || !(s.g >= 0x1p-70 && s.g <= 0x1p70) ||
                   static_cast<double>(static_cast<float>(s.g)) != s.g || s.emin - s.m < -24 || !(s.max <= 65504))) {
    return false;
  }
  std::uint32_t odd = static_cast<std::uint32_t>(W);
  while (odd % 2 == 0) odd /= 2;
  int odd_bits = 0;
  while ((odd >> odd_bits) != 0) ++odd_bits;
  if (s.ue8m0) return odd_bits <= 23;
  return s.has_zero && s.m <= 10 && s.emin >= -100 && s.m + 1 + odd_bits <= 24;
}

// ScalesFromMax in f32 lanes, twice as many blocks per vector as in f64, for the specs ScalesInF32
// admits. With hw = W/2 (exact), c is on the grid and at least s* = 2a/(W g) exactly when
// c * hw * g >= a. c * hw is an exact f32 product; for one level (g = 1) that is the comparison.
// Under a global, d = fma(c hw, g, -a) rounds the exact c * hw * g - a once, which keeps its
// sign, and is zero only when that difference is: the difference is a multiple of 2^-149 (c hw
// is an f32 of at least 2^-24, g one of at least 2^-70, a an f32), so it cannot round to zero.
// So d >= 0, d <= 0, d == 0 decide >=, <=, == exactly.
// The scale is found by an estimate and an exact check. est = fl(a * fl(2/(W g))) lies within
// 2^-23 of s* (relative; an absolute 2^-149 when subnormal), far less than the grid's spacing
// (2^-m relative, 2^-24 absolute at least), so the grid value p (as a pattern) that est rounds
// up to is the right one or its neighbour: pattern p + 1 when c(p) falls short of s*, p - 1 when
// c(p - 1) reaches it (one step past); patterns of positive grid values are consecutive
// integers, the binades and the subnormals included. The estimate itself: IEEE-style grids
// round est's f32 bits up to m mantissa bits and rebias (est >= 2^emin), or take
// ceil(est * 2^(m - emin)) (below); ue8m0 rounds the bits up to a power of two. Saturated at the
// grid's max; ue8m0's least value is 2^-127 (pattern 0).
// The check is skipped for a group of vectors when no lane needs it: est within 2^-23 (1.0001
// times that, with the rounding of 2/(W g)) of s* is within 4 f32 patterns of it, a binade
// boundary included, and every grid value of the normal range (vmax too) is an f32 whose low
// 23 - m bits are zero. So an est that is a normal f32 of the grid's normal range and at least
// kNear = 8 patterns from every such value has no grid value between it and s*, and rounds up to
// s*'s. A zero maximum's est is 0 and exact. Any other lane (est below 2^emin or 2^-126, or near
// a grid value: some 16 patterns in 2^(23 - m), so rarely) sends the group through the check.
//
// Blocks go G vectors at a time, each step for all G before the next: one vector's chain of
// dependent operations is some 60 cycles long, and taken one vector at a time the core kept only
// two or three of them in flight (9 ns per vector of 16 blocks, measured).
template <bool kTwo>
HWY_INLINE ScaleFacts ScalesFromMaxF32(const std::uint32_t* HWY_RESTRICT amax, std::size_t nb, const ScaleSpec& s,
                                       std::uint32_t* HWY_RESTRICT bits, double* HWY_RESTRICT e,
                                       float* HWY_RESTRICT inv, std::uint32_t* HWY_RESTRICT tight,
                                       std::uint32_t* HWY_RESTRICT lowest) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Half<decltype(df)> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  using VF = hn::Vec<decltype(df)>;
  using VU = hn::Vec<decltype(du)>;
  using MF = hn::Mask<decltype(df)>;
  const std::size_t N = hn::Lanes(df);
  const auto vhw = hn::Set(df, static_cast<float>(s.wg / s.g / 2));
  const auto vk = hn::Set(df, static_cast<float>(2.0 / s.wg));
  const auto vg = hn::Set(df, static_cast<float>(s.g));
  const auto vgd = hn::Set(dd, s.g);
  const auto vmax = hn::Set(df, static_cast<float>(s.max));
  const int sh = 23 - s.m;
  // IEEE-style: a normal pattern p is f32 bits (p << sh) + bias, bias = (127 + emin - 1) << 23;
  // below 2^m it is a multiple of the step 2^(emin - m). ue8m0: p is the f32 biased exponent.
  const std::uint32_t bias = s.ue8m0 ? 0u : static_cast<std::uint32_t>(127 + s.emin - 1) << 23;
  const auto vbias = hn::Set(du, bias);
  const auto vround = hn::Set(du, (1u << sh) - 1);
  // ue8m0: the normal range of f32 (its grid's least value 2^-127 is handled as below it).
  const auto vmin_normal = hn::BitCast(df, hn::Set(du, static_cast<std::uint32_t>(s.ue8m0 ? 1 : 127 + s.emin) << 23));
  // The near test of the estimate: kNear patterns either side of a multiple of 2^sh.
  constexpr std::uint32_t kNear = 8;
  const auto vnear = hn::Set(du, kNear);
  const auto near_bits = static_cast<std::int32_t>(((1u << sh) - 1) & ~(2 * kNear - 1));
  const auto vsub_scale = hn::Set(df, static_cast<float>(scalar::pow2(s.m - s.emin)));
  const auto vstep = hn::Set(df, static_cast<float>(scalar::pow2(s.emin - s.m)));
  const auto vone_m = hn::Set(du, 1u << s.m);
  const std::uint32_t pmax_bits = (scalar::f32_bits(static_cast<float>(s.max)) - bias) >> sh;
  const auto vpmax = hn::Set(du, pmax_bits);
  const auto lo_e = hn::Set(df, 0x1p-100f), hi_e = hn::Set(df, 0x1p100f);
  const bool may_far = s.ue8m0 || s.emin - s.m < -100 || s.max > 0x1p100;
  const auto zero = hn::Zero(df);
  const auto one_u = hn::Set(du, 1u);
  // The grid value of a normal pattern p (ue8m0: p > 0), exact: its bits moved back.
  auto normal_value = [&](VU p) QSCHEME_INLINE_LAMBDA {
    return hn::BitCast(df, s.ue8m0 ? hn::ShiftLeft<23>(p) : hn::Add(hn::ShiftLeftSame(p, sh), vbias));
  };
  auto value = [&](VU p) QSCHEME_INLINE_LAMBDA {  // the grid value of any pattern p, exact
    if (s.ue8m0) {
      // 2^(p - 127); p == 0 is 2^-127, the f32 subnormal 0x00400000.
      return hn::IfThenElse(hn::RebindMask(df, hn::Eq(p, hn::Zero(du))), hn::BitCast(df, hn::Set(du, 0x00400000u)),
                            normal_value(p));
    }
    const auto sub = hn::Mul(hn::ConvertTo(df, hn::BitCast(di, p)), vstep);
    return hn::IfThenElse(hn::RebindMask(df, hn::Lt(p, vone_m)), sub, normal_value(p));
  };
  // x * g against a for an exact x = c * hw: d has the sign of x * g - a and is zero exactly when
  // it is (see above).
  auto diff = [&](VF x, VF a) QSCHEME_INLINE_LAMBDA {
    if constexpr (kTwo) return hn::MulSub(x, vg, a);
    return hn::Sub(x, a);
  };
  auto ge = [&](VF x, VF a) QSCHEME_INLINE_LAMBDA {
    if constexpr (kTwo) return hn::Ge(diff(x, a), zero);
    return hn::Ge(x, a);
  };
  auto any_far = hn::Lt(zero, zero);
  std::size_t ntight = 0, nbelow = 0;
  auto one = [&](auto kG, auto kCount, const std::uint32_t* src, std::uint32_t* bdst, double* edst, float* idst,
                 std::uint32_t* tdst, std::uint32_t* ldst, std::size_t valid) QSCHEME_INLINE_LAMBDA {
    constexpr std::size_t G = decltype(kG)::value;
    VU abits[G], p[G];
    VF a[G], c[G];
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) {
      abits[t] = hn::LoadU(du, src + t * N);
      a[t] = hn::BitCast(df, abits[t]);
    }
    MF near_grid[G];
    VF est[G];
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) {
      est[t] = hn::Min(hn::Mul(a[t], vk), vmax);
      const auto eb = hn::BitCast(du, est[t]);
      // Near (a > 0 only: a zero maximum's estimate 0 is exact): the low sh bits of eb within kNear
      // of 0 (mod 2^sh), i.e. est within kNear patterns of a grid value or a power of two (vmax,
      // where est saturates, included); or est below the normal range (vmin_normal; 2^-126 for
      // ue8m0).
      const auto off_grid = hn::RebindMask(df, NoBitSet(di, hn::BitCast(di, hn::Add(eb, vnear)), near_bits));
      near_grid[t] = hn::AndNot(hn::Eq(a[t], zero), off_grid);
      // Normal estimates: the pattern from est's bits; the rest below.
      p[t] = s.ue8m0 ? hn::ShiftRight<23>(hn::Add(eb, vround)) : hn::ShiftRightSame(hn::Sub(hn::Add(eb, vround), vbias), sh);
    }
    // The exact check, one step either way (see above), needed only when a lane's estimate lies
    // within kNear f32 patterns of a grid value, or is not a normal f32 of the normal range of the
    // grid (where the pattern arithmetic above is not the rounding up of a relative estimate; a
    // zero maximum's est 0 among them). Otherwise every p is a normal pattern, whose value is its
    // bits moved back (c below): the subnormal arithmetic runs only for groups that need it.
    auto near = hn::Lt(zero, zero);
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) near = hn::Or(near, hn::Or(near_grid[t], hn::Lt(est[t], vmin_normal)));
    const bool slow = !hn::AllFalse(df, near);
    if (HWY_UNLIKELY(slow)) {
      if (!s.ue8m0) {
#pragma GCC unroll 4
        for (std::size_t t = 0; t < G; ++t) {
          const auto ps = hn::BitCast(du, hn::ConvertTo(di, hn::Ceil(hn::Mul(est[t], vsub_scale))));
          p[t] = hn::IfThenElse(hn::RebindMask(du, hn::Lt(est[t], vmin_normal)), ps, p[t]);
        }
      }
      MF short_of[G], past[G];
      VU pm[G];
#pragma GCC unroll 4
      for (std::size_t t = 0; t < G; ++t) {
        short_of[t] = hn::Not(ge(hn::Mul(value(p[t]), vhw), a[t]));
        pm[t] = hn::Sub(p[t], one_u);
      }
#pragma GCC unroll 4
      for (std::size_t t = 0; t < G; ++t) {
        past[t] = hn::And(hn::RebindMask(df, hn::Gt(p[t], hn::Zero(du))), ge(hn::Mul(value(pm[t]), vhw), a[t]));
      }
#pragma GCC unroll 4
      for (std::size_t t = 0; t < G; ++t) {
        p[t] = hn::IfThenElse(hn::RebindMask(du, short_of[t]), hn::Min(hn::Add(p[t], one_u), vpmax), p[t]);
        p[t] = hn::IfThenElse(hn::RebindMask(du, past[t]), pm[t], p[t]);
      }
    }
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) {
      hn::StoreU(p[t], du, bdst + t * N);
      c[t] = HWY_UNLIKELY(slow) ? value(p[t]) : normal_value(p[t]);
    }
    // e = c * g, exact in f64 (at most 11 + 24 bits).
    auto ce = [&](hn::Vec<decltype(dh)> h) QSCHEME_INLINE_LAMBDA {
      if constexpr (kTwo) return hn::Mul(hn::PromoteTo(dd, h), vgd);
      return hn::PromoteTo(dd, h);
    };
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) {
      hn::StoreU(ce(hn::LowerHalf(dh, c[t])), dd, edst + t * N);
      hn::StoreU(ce(hn::UpperHalf(dh, c[t])), dd, edst + t * N + N / 2);
    }
    if (decltype(kCount)::value || tdst || ldst) {
#pragma GCC unroll 4
      for (std::size_t t = 0; t < G; ++t) {
        // Tight: a > 0 and W e <= 2a, i.e. c * hw * g <= a (exact).
        const auto d = diff(hn::Mul(c[t], vhw), a[t]);
        const auto pos = hn::Gt(a[t], zero);
        const auto tt = hn::And(hn::Le(d, zero), pos);
        const auto tie = hn::And(hn::Eq(d, zero), pos);
        if constexpr (decltype(kCount)::value) {
          const auto in = hn::FirstN(df, G == 1 ? valid : N);
          ntight += hn::CountTrue(df, hn::And(in, tt));
          nbelow += hn::CountTrue(df, hn::And(in, hn::AndNot(tie, tt)));
        }
        if (tdst) hn::StoreU(hn::IfThenElseZero(hn::RebindMask(du, tt), one_u), du, tdst + t * N);
        if (ldst) {
          hn::StoreU(hn::IfThenElse(hn::RebindMask(du, tie), hn::Or(abits[t], hn::Set(du, 0x80000000u)), hn::Set(du, 0xFFFFFFFFu)),
                     du, ldst + t * N);
        }
      }
    }
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) {
      // inv = InvF32(e) (fused.h): 1 / f32(e), where f32(e) is c itself for one level and fl(c * g)
      // (one rounding of the exact product) under a global; 0 gives 1/inf = 0, a far e NaN. Under
      // a global e is never far (ScalesInF32), nor on a grid within [2^-100, 2^100] (all but ue8m0).
      const auto is_zero = hn::Eq(c[t], zero);
      auto cs = kTwo ? hn::Mul(c[t], vg) : c[t];
      if (!kTwo && may_far) {
        const auto far = hn::Or(hn::Lt(c[t], lo_e), hn::Gt(c[t], hi_e));
        any_far = hn::Or(any_far, hn::And(hn::FirstN(df, G == 1 ? valid : N), hn::AndNot(is_zero, far)));
        cs = hn::IfThenElse(far, hn::Set(df, std::numeric_limits<float>::quiet_NaN()), cs);
      }
      cs = hn::IfThenElse(is_zero, hn::Set(df, std::numeric_limits<float>::infinity()), cs);
      hn::StoreU(hn::Div(hn::Set(df, 1.0f), cs), df, idst + t * N);
    }
  };
  if (s.count_tight) {
    ScaleVectors<4>(nb, N, amax, bits, e, inv, tight, lowest,
                    [&](auto kG, auto... args) QSCHEME_INLINE_LAMBDA { one(kG, std::true_type(), args...); });
  } else {
    ScaleVectors<4>(nb, N, amax, bits, e, inv, tight, lowest,
                    [&](auto kG, auto... args) QSCHEME_INLINE_LAMBDA { one(kG, std::false_type(), args...); });
  }
  return {!hn::AllFalse(df, any_far), ntight, nbelow};
}

HWY_NOINLINE ScaleFacts ScalesFromMaxImpl(const std::uint32_t* HWY_RESTRICT amax, std::size_t nb, const ScaleSpec& spec,
                                          std::uint32_t* HWY_RESTRICT bits, double* HWY_RESTRICT e,
                                          float* HWY_RESTRICT inv, std::uint32_t* HWY_RESTRICT tight,
                                          std::uint32_t* HWY_RESTRICT lowest) {
  // A copy the stores below cannot alias: otherwise its fields are loaded again per vector.
  const ScaleSpec s = spec;
  if (ScalesInF32(s)) {
    return s.g == 1 ? ScalesFromMaxF32<false>(amax, nb, s, bits, e, inv, tight, lowest)
                    : ScalesFromMaxF32<true>(amax, nb, s, bits, e, inv, tight, lowest);
  }
  const hn::ScalableTag<double> dd;
  const hn::RebindToUnsigned<decltype(dd)> du;
  const hn::Rebind<float, decltype(dd)> df;
  const hn::Rebind<std::uint32_t, decltype(dd)> du32;
  const hn::Rebind<std::int32_t, decltype(dd)> di32;
  const std::size_t N = hn::Lanes(dd);
  const auto vwg = hn::Set(dd, s.wg), vmax = hn::Set(dd, s.max), vg = hn::Set(dd, s.g);
  const auto vmin_normal = hn::Set(dd, scalar::pow2(s.emin));
  const auto lo_e = hn::Set(dd, 0x1p-100), hi_e = hn::Set(dd, 0x1p100);
  const auto vtwo_m = hn::Set(dd, scalar::pow2(s.m));
#if HWY_NATIVE_FMA
  const auto vrwg = hn::Set(dd, 1.0 / s.wg);  // y = RN(1 / wg)
#endif
  auto any_far = hn::Lt(hn::Zero(dd), hn::Zero(dd));  // none yet
  std::size_t ntight = 0, nbelow = 0;
  // valid: lanes that are blocks (the padded tail has fewer; a padding lane may well be far, as a
  // zero maximum is on ue8m0's grid 2^-127).
  const auto vW = hn::Set(dd, s.wg / s.g);  // W: wg = W * g is exact, so is the quotient
  // kCount: s.count_tight as a constant, so that the loop without counts carries none of them.
  auto one = [&](auto kCount, const std::uint32_t* src, std::uint32_t* bdst, double* edst, float* idst,
                 std::uint32_t* tdst, std::uint32_t* ldst, std::size_t valid) {
    const auto a = hn::PromoteTo(dd, hn::BitCast(df, hn::LoadU(du32, src)));
    const auto a2 = hn::Add(a, a);
    // q = RN(2a / wg), the correctly rounded f64 quotient; it lies on the same side of every grid
    // value as the exact one (SEMANTICS-fast.md section 5), so rounding it up decides exactly.
#if HWY_NATIVE_FMA
    // Without a division (a vdivpd is most of this loop): q0 = RN(2a * y) is within 2 ulps of the
    // quotient; q1 = RN(q0 + r0 * y) with r0 = RN(2a - q0 * wg) (one fma) is within 1 ulp; then
    // r1 = 2a - q1 * wg is exact and RN(q1 + r1 * y) is RN(2a / wg) (Markstein's theorem: y is
    // the correctly rounded reciprocal, q1 within 1 ulp). No step under- or overflows: a is a
    // finite f32, wg = W * g with g in [2^-126, 2^128).
    auto q = hn::Mul(a2, vrwg);
    q = hn::MulAdd(hn::NegMulAdd(q, vwg, a2), vrwg, q);
    q = hn::MulAdd(hn::NegMulAdd(q, vwg, a2), vrwg, q);
#else
    const auto q = hn::Div(a2, vwg);
#endif
    const auto v = hn::Min(q, vmax);
    // E = max(floor(log2 v), emin); c = ceil(v * 2^(m - E)) * 2^(E - m): both scalings are exact.
    const auto eb = hn::ShiftRight<52>(hn::BitCast(du, hn::Max(v, vmin_normal)));  // E + 1023
    const auto p = hn::BitCast(dd, hn::ShiftLeft<52>(hn::Sub(hn::Set(du, static_cast<std::uint64_t>(2046 + s.m)), eb)));
    const auto pinv = hn::BitCast(dd, hn::ShiftLeft<52>(hn::Sub(eb, hn::Set(du, static_cast<std::uint64_t>(s.m)))));
    const auto n = CeilNonNegative(hn::Mul(v, p));
    auto c = hn::Mul(n, pinv);
    hn::Vec<decltype(dd)> code;
    if (s.ue8m0) {
      c = hn::Max(c, vmin_normal);  // no zero on the grid: its least value is 2^-127
      // Biased exponent of c (a power of two, normal in f64): f64 exponent - 1023 + 127.
      const auto ce = hn::ShiftRight<52>(hn::BitCast(du, c));
      code = hn::ConvertTo(dd, hn::BitCast(hn::RebindToSigned<decltype(du)>(), hn::Sub(ce, hn::Set(du, 896))));
    } else {
      // (E - emin) * 2^m + n: the IEEE-style pattern, subnormals and a carry into the next binade
      // included (as MiniMagCode).
      const auto two52 = hn::Set(dd, 4503599627370496.0);
      const auto ebf = hn::Sub(hn::BitCast(dd, hn::Or(eb, hn::BitCast(du, two52))), two52);
      code = hn::Add(hn::Mul(hn::Sub(ebf, hn::Set(dd, 1023.0 + s.emin)), vtwo_m), n);
    }
    hn::StoreU(hn::BitCast(du32, hn::DemoteTo(di32, code)), du32, bdst);
    const auto ev = hn::Mul(c, vg);
    hn::StoreU(ev, dd, edst);
    // Tight: a > 0 and W e <= 2a, both sides exact (ScaleFacts).
    const auto wev = hn::Mul(vW, ev);
    const auto pos = hn::Gt(a2, hn::Zero(dd));
    const auto t = hn::AndNot(hn::Gt(wev, a2), pos);
    if constexpr (decltype(kCount)::value) {
      ntight += hn::CountTrue(dd, hn::And(hn::FirstN(dd, valid), t));
      nbelow += hn::CountTrue(dd, hn::And(hn::FirstN(dd, valid), hn::And(hn::Lt(wev, a2), pos)));
    }
    if (tdst) hn::StoreU(hn::BitCast(du32, hn::DemoteTo(di32, hn::IfThenElseZero(t, hn::Set(dd, 1.0)))), du32, tdst);
    if (ldst) {
      // The bits of -a are amax - 2^31 as an i32; 0xFFFFFFFF is -1.
      const auto neg_a = hn::Sub(hn::PromoteTo(dd, hn::BitCast(di32, hn::LoadU(du32, src))), hn::Set(dd, 2147483648.0));
      const auto pat = hn::IfThenElse(hn::And(hn::Eq(wev, a2), pos), neg_a, hn::Set(dd, -1.0));
      hn::StoreU(hn::BitCast(du32, hn::DemoteTo(di32, pat)), du32, ldst);
    }
    // inv = InvF32(e) (fused.h): RN32(1 / RN32(e)), a division of half as many bytes as in f64;
    // e == 0 becomes +inf (1/inf = 0), a far e NaN.
    const auto far = hn::Or(hn::Lt(ev, lo_e), hn::Gt(ev, hi_e));
    // e == 0 gives inv 0, not far.
    any_far = hn::Or(any_far, hn::And(hn::FirstN(dd, valid), hn::AndNot(hn::Eq(ev, hn::Zero(dd)), far)));
    auto es = hn::IfThenElse(far, hn::Set(dd, std::numeric_limits<double>::quiet_NaN()), ev);
    es = hn::IfThenElse(hn::Eq(ev, hn::Zero(dd)), hn::Set(dd, std::numeric_limits<double>::infinity()), es);
#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR  // their DemoteTo takes inf to FLT_MAX
    hn::StoreU(hn::Div(hn::Set(df, 1.0f), DemoteToF32Overflowing(df, dd, es)), df, idst);
#else
    hn::StoreU(hn::Div(hn::Set(df, 1.0f), hn::DemoteTo(df, es)), df, idst);
#endif
  };
  if (s.count_tight) {
    ScaleVectors<1>(nb, N, amax, bits, e, inv, tight, lowest, [&](auto, auto... args) { one(std::true_type(), args...); });
  } else {
    ScaleVectors<1>(nb, N, amax, bits, e, inv, tight, lowest, [&](auto, auto... args) { one(std::false_type(), args...); });
  }
  return {!hn::AllFalse(dd, any_far), ntight, nbelow};
}

// ---------------------------------------------------------------------------- calibration

// Max |x| bits of whole blocks, N blocks at a time: each block's vectors fold into one vector,
// and ConcatMaxTree reduces the N of them so that lane k holds block k's maximum -- no per-block
// horizontal reduction. kAhead: the prefetch distance in floats (kReadAhead, kPrepassAhead).
template <std::size_t kAhead>
HWY_INLINE std::uint32_t BlockMaxAbsBitsT(const float* HWY_RESTRICT x, std::size_t len, std::size_t bw,
                                          std::uint32_t* HWY_RESTRICT amax) {
  const hn::ScalableTag<std::int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  constexpr std::size_t kN = hn::MaxLanes(decltype(di)());  // == Lanes(di) on every x86 target
  const std::size_t N = hn::Lanes(di);
  const auto mask = hn::Set(di, 0x7FFFFFFF);
  // n: a multiple of N; inlined with a constant n below, so that a group's leaves are straight-line
  // code (a loop per leaf costs address arithmetic that spills). One prefetch per 64-byte line.
  auto fold = [&](const float* b, std::size_t n) {
    hwy::Prefetch(b + kAhead);
    auto m0 = hn::And(hn::BitCast(di, hn::LoadU(df, b)), mask);
    for (std::size_t i = N; i < n; i += N) {
      if (i % 16 == 0) hwy::Prefetch(b + i + kAhead);
      m0 = hn::Max(m0, hn::And(hn::BitCast(di, hn::LoadU(df, b + i)), mask));
    }
    return m0;
  };
  const std::size_t nfull = len / bw;
  auto all = hn::Zero(di);  // the maximum over every block, returned
  std::size_t k = 0;
  // kV: vectors per block as a constant (1, 2, 4), or 0 for bw / N.
  auto groups = [&](auto kV) {
    constexpr std::size_t V = decltype(kV)::value;
    const std::size_t n = V ? V * kN : bw;
    for (; k + kN <= nfull; k += kN) {
      const float* xk = x + k * bw;
      const auto m = ConcatMaxTree<kN>(di, [&](std::size_t j) { return fold(xk + j * n, n); });
      all = hn::Max(all, m);  // the N blocks' maxima: one Max for all of them
      hn::StoreU(hn::BitCast(hn::RebindToUnsigned<decltype(di)>(), m), hn::RebindToUnsigned<decltype(di)>(), amax + k);
    }
  };
  if (bw == kN) {
    groups(std::integral_constant<std::size_t, 1>());
  } else if (bw == 2 * kN) {
    groups(std::integral_constant<std::size_t, 2>());
  } else if (bw == 4 * kN) {
    groups(std::integral_constant<std::size_t, 4>());
  } else {
    groups(std::integral_constant<std::size_t, 0>());
  }
  for (; k < nfull; ++k) {
    const auto m = fold(x + k * bw, bw);
    all = hn::Max(all, m);
    amax[k] = static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(di, m)));
  }
  if (nfull * bw < len) {  // a partial last block: zero padding leaves its maximum unchanged
    const std::size_t rest = len - nfull * bw, whole = rest / N * N;
    auto m = whole ? fold(x + nfull * bw, whole) : hn::Zero(di);
    if (whole < rest) {
      HWY_ALIGN float b[HWY_MAX_BYTES / sizeof(float)] = {};
      std::memcpy(b, x + nfull * bw + whole, (rest - whole) * sizeof(float));
      m = hn::Max(m, hn::And(hn::BitCast(di, hn::Load(df, b)), mask));
    }
    all = hn::Max(all, m);
    amax[nfull] = static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(di, m)));
  }
  return static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(di, all)));
}

HWY_NOINLINE std::uint32_t BlockMaxAbsBitsImpl(const float* HWY_RESTRICT x, std::size_t len, std::size_t bw,
                                               std::uint32_t* HWY_RESTRICT amax) {
  return BlockMaxAbsBitsT<kReadAhead>(x, len, bw, amax);
}
HWY_NOINLINE std::uint32_t PrepassBlockMaxAbsBitsImpl(const float* HWY_RESTRICT x, std::size_t len, std::size_t bw,
                                                      std::uint32_t* HWY_RESTRICT amax) {
  return BlockMaxAbsBitsT<kPrepassAhead>(x, len, bw, amax);
}

// ---------------------------------------------------------------------------- codes

// Stores the low byte of each i32 code (two's complement for integers, the pattern for minifloats).
template <class DI>
HWY_INLINE void StoreCodeBytes(DI di, hn::Vec<DI> codes, std::uint8_t* HWY_RESTRICT out) {
  const hn::Rebind<std::uint8_t, DI> d8;
#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR  // no TruncateTo there in Highway 1.0.3
  hn::StoreU(hn::DemoteTo(d8, hn::And(codes, hn::Set(di, 0xFF))), d8, out);
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  (void)di;
  (void)d8;
  if constexpr (sizeof(codes.raw) == 64) {
    // vpmovdb: Highway 1.0.3's TruncateTo takes a shuffle and a permute here.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(codes.raw));
  } else {
    hn::StoreU(hn::TruncateTo(d8, hn::BitCast(hn::RebindToUnsigned<DI>(), codes)), d8, out);
  }
#else
  (void)di;
  hn::StoreU(hn::TruncateTo(d8, hn::BitCast(hn::RebindToUnsigned<DI>(), codes)), d8, out);
#endif
}

// Codes of the vector at x by the exact f64 division, out of line: the hot loop stays lean.
template <class DF>
HWY_NOINLINE void ExactCodesAt(DF df, const float* HWY_RESTRICT x, double e, const CodeSpec& c,
                               std::uint8_t* HWY_RESTRICT codes) {
  const hn::Rebind<std::int32_t, DF> di;
  StoreCodeBytes(di, ExactCodesF64(df, hn::LoadU(df, x), e, c), codes);
}

// Integer codes of the vector at x with a lane near a half-integer (NearIntCodes), out of line.
template <class DF>
HWY_NOINLINE void NearIntCodesAt(DF df, const float* HWY_RESTRICT x, hn::Vec<DF> vinv, double e,
                                 const FastConsts<DF>& k, std::uint8_t* HWY_RESTRICT codes) {
  const hn::Rebind<double, hn::Half<DF>> dd;
  StoreCodeBytes(hn::Rebind<std::int32_t, DF>(), NearIntCodes(df, hn::LoadU(df, x), vinv, hn::Set(dd, e), hn::Set(dd, e), k),
                 codes);
}

// Codes of a vector FastCodes flagged near a boundary: the exact f64 division (minifloats) or the
// division-free integer redo.
template <bool kFloat, class DF>
HWY_INLINE void RedoCodesAt(DF df, const float* HWY_RESTRICT x, hn::Vec<DF> vinv, double e, const CodeSpec& c,
                            const FastConsts<DF>& k, std::uint8_t* HWY_RESTRICT codes) {
  if constexpr (kFloat) {
    (void)vinv;
    (void)k;
    ExactCodesAt(df, x, e, c, codes);
  } else {
    NearIntCodesAt(df, x, vinv, e, k, codes);
  }
}

// Two codes per byte (low nibble first) of n one-byte codes (n even): a u16 lane holds two codes
// (little-endian), the low nibble of each, the second moved up by 4.
HWY_INLINE void PackNibbles(const std::uint8_t* HWY_RESTRICT codes, std::size_t n, std::uint8_t* HWY_RESTRICT out) {
  const hn::ScalableTag<std::uint16_t> d16;
  const hn::Rebind<std::uint8_t, decltype(d16)> d8;
  const hn::RebindToSigned<decltype(d16)> di16;
  const std::size_t N = hn::Lanes(d16);
  std::size_t b = 0;
  for (; b + N <= n / 2; b += N) {
    const auto w = hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(codes + 2 * b));
    const auto v = hn::Or(hn::And(w, hn::Set(d16, 0x000F)), hn::ShiftRight<4>(hn::And(w, hn::Set(d16, 0x0F00))));
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di16, v)), d8, out + b);
  }
  for (; b < n / 2; ++b) out[b] = static_cast<std::uint8_t>((codes[2 * b] & 0xF) | (codes[2 * b + 1] << 4));
}

// Two codes per byte (low nibble first) of one vector of i32 codes, straight from the register: a
// reload of just-stored code bytes waits for the stores (no forwarding across four of them).
// Targets with fewer than two lanes go through code_bytes.
template <class DI>
HWY_INLINE void StoreNibbles(DI di, hn::Vec<DI> q, std::uint8_t* HWY_RESTRICT code_bytes, std::uint8_t* HWY_RESTRICT out) {
#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR
  StoreCodeBytes(di, q, code_bytes);
  PackNibbles(code_bytes, hn::Lanes(di), out);
#else
  (void)di;
  (void)code_bytes;
  // Lane pairs as u64: the low code's nibble from bits 0-3, the high one's from bits 32-35.
  const hn::Repartition<std::uint64_t, DI> d64;
  const auto w = hn::BitCast(d64, q);
  const auto v = hn::Or(hn::And(w, hn::Set(d64, 0xF)), hn::And(hn::ShiftRight<28>(w), hn::Set(d64, 0xF0)));
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (sizeof(v.raw) == 64) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm512_cvtepi64_epi8(v.raw));  // vpmovqb
    return;
  }
#endif
  const hn::Rebind<std::uint8_t, decltype(d64)> d8;
  hn::StoreU(hn::TruncateTo(d8, v), d8, out);
#endif
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// StoreNibbles of four consecutive 16-lane vectors of codes in 0..15 (E2M1CodesNear's, whose lanes
// hold nothing else): 32 bytes from one gather of the four into bytes of each lane, one pairing
// of lanes and two shuffles, instead of four truncations (two uops each) and four stores.
template <class DF>
HWY_INLINE void StoreNibbles4(const hn::Vec<hn::Rebind<std::int32_t, DF>>* q, const FastConsts<DF>& k,
                              std::uint8_t* HWY_RESTRICT out) {
  // Lane i: the codes of lane i of q[0..3] in bytes 0..3.
  const __m512i b = _mm512_ternarylogic_epi32(q[0].raw, _mm512_slli_epi32(q[1].raw, 8), _mm512_slli_epi32(q[2].raw, 16), 0xFE);
  const __m512i c = _mm512_or_si512(b, _mm512_slli_epi32(q[3].raw, 24));
  // Lane pairs (2p, 2p + 1) as u64: byte t of the low lane becomes code(t, 2p) | code(t, 2p + 1) << 4,
  // the nibble byte p of vector t (bits 28-31 of each lane are zero).
  const __m512i d = _mm512_or_si512(c, _mm512_srli_epi64(c, 28));
  // Byte 8p + t -> byte 8t + p: pairs of p within each 16-byte lane, then words across lanes.
  const __m512i e = _mm512_permutexvar_epi16(k.nib_words.raw, _mm512_shuffle_epi8(d, k.nib_bytes.raw));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_castsi512_si256(e));
}
#endif

// Vectors of x in groups of four, as many as fit in nvec (returned), vector v in block v >> lg
// (whole blocks of 2^lg vectors from x), every block with an f32 1/e: one branch for the four,
// so that the loop is the arithmetic of FastCodesNear plus a broadcast load per vector; the
// caller's vector loop takes the rest. pf: where to prefetch the data that follows x (see
// QuantizeCodesT).
template <bool kFloat, bool kClamp, int kFmt, class DF>
HWY_INLINE std::size_t QuantizeWholeVectors(DF df, const float* HWY_RESTRICT x, std::size_t nvec, unsigned lg,
                                     const float* HWY_RESTRICT pf, const float* HWY_RESTRICT inv,
                                     const double* HWY_RESTRICT e, const CodeSpec& c, const FastConsts<DF>& k,
                                     std::uint8_t* HWY_RESTRICT codes, std::uint8_t* HWY_RESTRICT nibbles) {
  const hn::Rebind<std::int32_t, DF> di;
  constexpr std::size_t G = 4;
  constexpr std::size_t kN = hn::MaxLanes(DF());  // == Lanes(df) on every x86 target
  const std::size_t N = hn::Lanes(df);
  auto redo = [&](std::size_t v) {
    RedoCodesAt<kFloat>(df, x + v * N, hn::Set(df, inv[v >> lg]), e[v >> lg], c, k, codes + v * N);
  };
  std::size_t v = 0;
  for (; v + G <= nvec; v += G) {
    hn::Vec<decltype(di)> q[G];
    hn::Mask<DF> near[G];
    for (std::size_t t = 0; t < G; ++t) {
      // One prefetch per 64-byte line (16 floats).
      if (G * kN >= 16 ? (t * kN) % 16 == 0 : ((v + t) * kN) % 16 == 0) hwy::Prefetch(pf + (v + t) * N);
      near[t] = FastCodesNear<kFloat, kClamp, true, kFmt>(df, hn::LoadU(df, x + (v + t) * N), hn::Set(df, inv[(v + t) >> lg]),
                                                    k, &q[t]);
    }
    const auto any = hn::Or(hn::Or(near[0], near[1]), hn::Or(near[2], near[3]));
    if (HWY_UNLIKELY(!hn::AllFalse(df, any))) {
      for (std::size_t t = 0; t < G; ++t) {
        if (hn::AllFalse(df, near[t])) {
          StoreCodeBytes(di, q[t], codes + (v + t) * N);
        } else {
          redo(v + t);
        }
      }
      if (nibbles) PackNibbles(codes + v * N, G * N, nibbles + v * N / 2);
      continue;
    }
    if (nibbles) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
      if constexpr (kFmt == scalar::kE2M1 && kN == 16) {
        StoreNibbles4(q, k, nibbles + v * N / 2);
        continue;
      }
#endif
      for (std::size_t t = 0; t < G; ++t) StoreNibbles(di, q[t], codes + (v + t) * N, nibbles + (v + t) * N / 2);
    } else {
      for (std::size_t t = 0; t < G; ++t) StoreCodeBytes(di, q[t], codes + (v + t) * N);
    }
  }
  return v;
}

// kFmt: the minifloat format (fmt) as a constant, or -1 for integers.
template <bool kFloat, bool kClamp, int kFmt = -1>
HWY_INLINE void QuantizeCodesT(const float* HWY_RESTRICT x, std::size_t len, std::size_t start, std::size_t bw,
                               const float* HWY_RESTRICT inv, const double* HWY_RESTRICT e, bool any_far,
                               const CodeSpec& c, std::uint8_t* HWY_RESTRICT codes, std::uint8_t* HWY_RESTRICT nibbles) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::int32_t, decltype(df)> di;
  const std::size_t N = hn::Lanes(df);
  const FastConsts<hn::ScalableTag<float>> k(df, c);
  // Blocks are whole vectors and start at a vector: block b covers vpb vectors (the first one
  // fewer when x starts inside it). One scale for all when bw == 0.
  const std::size_t nv = (len + N - 1) / N;
  const std::size_t vpb = bw ? bw / N : nv + 1;
  // any_far: a block whose 1/e is out of f32 range (NaN inv): all its vectors divide exactly.
  // x was just read by the calibration and sits in L1; meanwhile ask for what follows it, one
  // 64-byte line per 16 floats, spread over this compute-heavy loop. The window starts kReadAhead
  // past the next unit's first column, not at it: the lines before that were asked for by the
  // previous unit's loop, and every line gets about a unit and a half of lead instead of a few
  // dozen ns for the last ones, which then stalled the next calibration. Measured at 64 MiB with
  // 2048-column units (docs/PERFORMANCE.md): q8_0 0.178 -> 0.157 ns per element.
  // The window's start is then moved by up to a page so that it begins 1 KiB into one
  // (prefetch_window.hpp): at a fixed lead, q8_0 ran up to 12% slower for some page offsets of x.
  // When x comes cold (maxima from a prepass: nvfp4, untouched-on-error) the loop's own lines are
  // the ones to ask for, kColdLead floats ahead: nvfp4 0.266 -> 0.252 ns per element against the
  // window above (docs/PERFORMANCE.md).
  const float* pf = c.x_just_read ? x + len + WindowLead(x + len, kReadAhead) : x + kColdLead;
  std::size_t i = 0, b = 0, left = bw ? vpb - (start % bw) / N : vpb;
  std::size_t packed = 0;  // nibbles: codes before this one are packed
  if (!any_far && bw != 0 && start % bw == 0 && len >= bw && (vpb & (vpb - 1)) == 0) {
    // The usual unit: whole blocks from its first column, 2^lg vectors each; the loop below takes
    // what is left (under four vectors, and a partial last block).
    const std::size_t done = QuantizeWholeVectors<kFloat, kClamp, kFmt>(
        df, x, len / bw * vpb, static_cast<unsigned>(hwy::Num0BitsBelowLS1Bit_Nonzero64(vpb)), pf, inv, e, c, k, codes,
        nibbles);
    i = done * N;
    b = done / vpb;
    left = vpb - done % vpb;
    if (i == len) return;
    packed = i;
  }
  auto vinv = hn::Set(df, inv[b]);
  auto one = [&](const float* src, std::uint8_t* dst) {
    if (left == 0) {
      ++b;
      left = vpb;
      vinv = hn::Set(df, inv[b]);
    }
    --left;
    if (HWY_UNLIKELY(any_far) && std::isnan(inv[b])) return ExactCodesAt(df, src, e[b], c, dst);
    hn::Vec<decltype(di)> q;
    const bool fast_ok = FastCodes<kFloat, kClamp, kFmt>(df, hn::LoadU(df, src), vinv, k, &q);
    if (HWY_UNLIKELY(!fast_ok)) return RedoCodesAt<kFloat>(df, src, vinv, e[b], c, k, dst);
    StoreCodeBytes(di, q, dst);
  };
  const std::size_t whole = len / N * N;
  for (; i < whole; i += N) {
    if (i % 16 == 0) hwy::Prefetch(pf + i);
    one(x + i, codes + i);
  }
  if (whole < len) {  // the partial last vector, zero-padded
    HWY_ALIGN float xb[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN std::uint8_t o[HWY_MAX_BYTES / sizeof(float)];
    std::memcpy(xb, x + whole, (len - whole) * sizeof(float));
    one(xb, o);
    std::memcpy(codes + whole, o, len - whole);
  }
  if (nibbles) PackNibbles(codes + packed, len - packed, nibbles + packed / 2);
}

HWY_NOINLINE void QuantizeCodesImpl(const float* HWY_RESTRICT x, std::size_t len, std::size_t start, std::size_t bw,
                                    const float* HWY_RESTRICT inv, const double* HWY_RESTRICT e, bool any_far,
                                    const CodeSpec& c, std::uint8_t* HWY_RESTRICT codes,
                                    std::uint8_t* HWY_RESTRICT nibbles) {
  if (c.fmt == scalar::kE4M3) {
    QuantizeCodesT<true, true, scalar::kE4M3>(x, len, start, bw, inv, e, any_far, c, codes, nibbles);
  } else if (c.fmt == scalar::kE5M2) {
    QuantizeCodesT<true, true, scalar::kE5M2>(x, len, start, bw, inv, e, any_far, c, codes, nibbles);
  } else if (c.fmt == scalar::kE2M1) {
    if (c.clamp) {
      QuantizeCodesT<true, true, scalar::kE2M1>(x, len, start, bw, inv, e, any_far, c, codes, nibbles);
    } else {
      QuantizeCodesT<true, false, scalar::kE2M1>(x, len, start, bw, inv, e, any_far, c, codes, nibbles);
    }
  } else if (c.clamp || c.lo != -c.hi) {
    QuantizeCodesT<false, true>(x, len, start, bw, inv, e, any_far, c, codes, nibbles);
  } else {
    QuantizeCodesT<false, false>(x, len, start, bw, inv, e, any_far, c, codes, nibbles);
  }
}

// ---------------------------------------------------------------------------- packing

HWY_NOINLINE void PackRowImpl(const std::uint8_t* HWY_RESTRICT codes, std::size_t len, int bits, std::size_t nq,
                              int ebytes, std::uint8_t* HWY_RESTRICT out) {
  const std::size_t total = (len + nq - 1) / nq * static_cast<std::size_t>(ebytes);
  if (bits == 8) {
    std::memcpy(out, codes, len);
    std::memset(out + len, 0, total - len);
    return;
  }
  const std::size_t per_byte = static_cast<std::size_t>(8 / bits);
  const std::size_t full = len / per_byte;  // output bytes made of whole groups of input
  std::size_t b = 0;
  if (bits == 4) {
    PackNibbles(codes, 2 * full, out);
    b = full;
  } else {
    const hn::ScalableTag<std::uint32_t> d32;
    const hn::Rebind<std::uint8_t, decltype(d32)> d8;
    const hn::RebindToSigned<decltype(d32)> di32;
    const std::size_t N = hn::Lanes(d32);
    for (; b + N <= full; b += N) {
      const auto w = hn::LoadU(d32, reinterpret_cast<const std::uint32_t*>(codes + 4 * b));
      auto v = hn::And(w, hn::Set(d32, 0x3));
      v = hn::Or(v, hn::And(hn::ShiftRight<6>(w), hn::Set(d32, 0xC)));
      v = hn::Or(v, hn::And(hn::ShiftRight<12>(w), hn::Set(d32, 0x30)));
      v = hn::Or(v, hn::And(hn::ShiftRight<18>(w), hn::Set(d32, 0xC0)));
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di32, v)), d8, out + b);
    }
  }
  const std::uint32_t mask = (1u << bits) - 1;
  for (; b < total; ++b) {  // the last few bytes, and zero padding up to the storage element
    std::uint32_t v = 0;
    for (std::size_t f = 0; f < per_byte; ++f) {
      const std::size_t j = b * per_byte + f;
      if (j < len) v |= (codes[j] & mask) << (f * static_cast<std::size_t>(bits));
    }
    out[b] = static_cast<std::uint8_t>(v);
  }
}

HWY_NOINLINE void PackColumnsImpl(const std::uint8_t* const* rows, std::size_t count, std::size_t len, int bits,
                                  int ebytes, std::uint8_t* HWY_RESTRICT out) {
  const hn::ScalableTag<std::uint32_t> d32;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8;
  const hn::RebindToSigned<decltype(d32)> di32;
  const std::size_t N = hn::Lanes(d32);
  const std::uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1);
  const auto vmask = hn::Set(d32, mask);
  std::size_t j = 0;
  for (; j + N <= len; j += N) {
    auto acc = hn::Zero(d32);
    for (std::size_t i = 0; i < count; ++i) {
      const auto v = hn::And(hn::PromoteTo(d32, hn::LoadU(d8, rows[i] + j)), vmask);
      acc = hn::Or(acc, hn::ShiftLeftSame(v, static_cast<int>(i) * bits));
    }
    if (ebytes == 4) {
      hn::StoreU(acc, d32, reinterpret_cast<std::uint32_t*>(out + 4 * j));
    } else {
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di32, acc)), d8, out + j);
    }
  }
  for (; j < len; ++j) {
    std::uint32_t w = 0;
    for (std::size_t i = 0; i < count; ++i) w |= (rows[i][j] & mask) << (i * static_cast<std::size_t>(bits));
    for (int b = 0; b < ebytes; ++b) out[j * static_cast<std::size_t>(ebytes) + b] = static_cast<std::uint8_t>(w >> (8 * b));
  }
}

HWY_NOINLINE bool UnpackRowImpl(const std::uint8_t* HWY_RESTRICT in, std::size_t len, int bits, std::size_t nq,
                                int ebytes, std::uint8_t* HWY_RESTRICT codes) {
  const std::size_t total = (len + nq - 1) / nq * static_cast<std::size_t>(ebytes);
  const std::size_t per_byte = static_cast<std::size_t>(8 / bits);
  const std::uint32_t mask = (1u << bits) - 1;
  std::size_t b = 0;
  const std::size_t full = len / per_byte;
  if (bits == 8) {
    std::memcpy(codes, in, len);
    b = len;
  } else if (bits == 4) {
    const hn::ScalableTag<std::uint16_t> d16;
    const hn::Rebind<std::uint8_t, decltype(d16)> d8;
    const std::size_t N = hn::Lanes(d16);
    for (; b + N <= full; b += N) {
      const auto w = hn::PromoteTo(d16, hn::LoadU(d8, in + b));
      const auto v = hn::Or(hn::And(w, hn::Set(d16, 0x000F)), hn::ShiftLeft<4>(hn::And(w, hn::Set(d16, 0x00F0))));
      hn::StoreU(v, d16, reinterpret_cast<std::uint16_t*>(codes + 2 * b));
    }
  } else {
    const hn::ScalableTag<std::uint32_t> d32;
    const hn::Rebind<std::uint8_t, decltype(d32)> d8;
    const std::size_t N = hn::Lanes(d32);
    for (; b + N <= full; b += N) {
      const auto w = hn::PromoteTo(d32, hn::LoadU(d8, in + b));
      auto v = hn::And(w, hn::Set(d32, 0x3));
      v = hn::Or(v, hn::ShiftLeft<6>(hn::And(w, hn::Set(d32, 0xC))));
      v = hn::Or(v, hn::ShiftLeft<12>(hn::And(w, hn::Set(d32, 0x30))));
      v = hn::Or(v, hn::ShiftLeft<18>(hn::And(w, hn::Set(d32, 0xC0))));
      hn::StoreU(v, d32, reinterpret_cast<std::uint32_t*>(codes + 4 * b));
    }
  }
  bool padding_zero = true;
  for (; b < total; ++b) {
    for (std::size_t f = 0; f < per_byte; ++f) {
      const std::size_t j = b * per_byte + f;
      const std::uint8_t v = static_cast<std::uint8_t>((in[b] >> (f * static_cast<std::size_t>(bits))) & mask);
      if (j < len) {
        codes[j] = v;
      } else if (v != 0) {
        padding_zero = false;
      }
    }
  }
  return padding_zero;
}

HWY_NOINLINE bool UnpackColumnsImpl(const std::uint8_t* HWY_RESTRICT in, std::size_t count, std::size_t len, int bits,
                                    int ebytes, std::uint8_t* const* rows) {
  const hn::ScalableTag<std::uint32_t> d32;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8;
  const hn::RebindToSigned<decltype(d32)> di32;
  const std::size_t N = hn::Lanes(d32);
  const std::uint32_t mask = (1u << bits) - 1;
  const std::size_t used = count * static_cast<std::size_t>(bits);  // bits of a storage element in use
  const std::uint32_t unused = used >= 32 ? 0u : ~((1u << used) - 1) & (ebytes == 4 ? 0xFFFFFFFFu : 0xFFu);
  const auto vmask = hn::Set(d32, mask), vunused = hn::Set(d32, unused);
  auto bad = hn::Zero(d32);
  std::size_t j = 0;
  for (; j + N <= len; j += N) {
    const auto w = ebytes == 4 ? hn::LoadU(d32, reinterpret_cast<const std::uint32_t*>(in + 4 * j))
                               : hn::PromoteTo(d32, hn::LoadU(d8, in + j));
    bad = hn::Or(bad, hn::And(w, vunused));
    for (std::size_t i = 0; i < count; ++i) {
      const auto v = hn::And(hn::ShiftRightSame(w, static_cast<int>(i) * bits), vmask);
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di32, v)), d8, rows[i] + j);
    }
  }
  bool ok = hn::AllTrue(d32, hn::Eq(bad, hn::Zero(d32)));
  for (; j < len; ++j) {
    std::uint32_t w = 0;
    for (int b = 0; b < ebytes; ++b) w |= static_cast<std::uint32_t>(in[j * static_cast<std::size_t>(ebytes) + b]) << (8 * b);
    if (w & unused) ok = false;
    for (std::size_t i = 0; i < count; ++i) rows[i][j] = static_cast<std::uint8_t>((w >> (i * static_cast<std::size_t>(bits))) & mask);
  }
  return ok;
}

// ---------------------------------------------------------------------------- dequantize

// On byte lanes (a full vector of codes per compare): a raw field is bad when, sign-extended from
// its width, it lies outside [lo, hi] (integers), or when it is wider than the format or a NaN/inf
// pattern (minifloats).
HWY_NOINLINE std::size_t FirstBadCodeImpl(const std::uint8_t* HWY_RESTRICT codes, std::size_t len, const CodeSpec& c) {
  const hn::ScalableTag<std::uint8_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const std::size_t N = hn::Lanes(du);
  const int nm = c.fmt < 0 ? 0 : c.nan_mask;
  const auto vnm = hn::Set(du, static_cast<std::uint8_t>(nm));
  const auto vhi_u = hn::Set(du, static_cast<std::uint8_t>(c.fmt < 0 ? 0 : c.hi));
  const auto vlo = hn::Set(di, static_cast<std::int8_t>(c.fmt < 0 ? c.lo : 0));
  const auto vhi = hn::Set(di, static_cast<std::int8_t>(c.fmt < 0 ? c.hi : 0));
  const int sh = 8 - c.bits;
  auto bad = [&](hn::Vec<decltype(du)> raw) {
    if (c.fmt >= 0) {
      auto m = hn::Gt(raw, vhi_u);  // never for 8-bit formats (hi = 255)
      if (nm) m = hn::Or(m, hn::Eq(hn::And(raw, vnm), vnm));
      return m;
    }
    // Sign-extend a bits-wide field: move it to the top of the byte, shift back arithmetically.
    const auto v = sh ? hn::ShiftRightSame(hn::BitCast(di, hn::ShiftLeftSame(raw, sh)), sh) : hn::BitCast(di, raw);
    return hn::RebindMask(du, hn::Or(hn::Lt(v, vlo), hn::Gt(v, vhi)));
  };
  std::size_t i = 0;
  for (; i + N <= len; i += N) {
    const auto m = bad(hn::LoadU(du, codes + i));
    if (HWY_UNLIKELY(!hn::AllFalse(du, m))) return i + static_cast<std::size_t>(hn::FindFirstTrue(du, m));
  }
  if (i < len) {
    HWY_ALIGN std::uint8_t b[HWY_MAX_BYTES] = {};  // field 0 is a code of every kind
    std::memcpy(b, codes + i, len - i);
    const auto m = bad(hn::Load(du, b));
    if (!hn::AllFalse(du, m)) return i + static_cast<std::size_t>(hn::FindFirstTrue(du, m));
  }
  return len;
}

// Values of stored scale patterns, as lanes of i32 (a pattern >= 2^31 is negative there and
// invalid for every dtype); returns the first invalid index or nb. load(k) gives the patterns of
// scales k .. k + N - 1; tail(k, buf) copies the remaining ones into a zero-filled buffer.
template <class Load, class Tail>
HWY_INLINE std::size_t ScaleValues(std::size_t nb, int dt, float* HWY_RESTRICT value, Load load, Tail tail) {
  const hn::ScalableTag<std::int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const std::size_t N = hn::Lanes(di);
  // valid: finite, non-negative patterns (detail::scale_from_bits); value: exact f32.
  auto one = [&](hn::Vec<decltype(di)> b, float* dst) {
    hn::Mask<decltype(di)> ok;
    hn::Vec<decltype(df)> v;
    switch (dt) {
      case 0:
        ok = hn::Lt(b, hn::Set(di, 0x7F800000));
        v = hn::BitCast(df, b);
        break;
      case 1:
        ok = hn::Lt(b, hn::Set(di, 0x7C00));
        v = MiniValue(di, b, MiniParams{10, -14, 65504.0, 0x8000});
        break;
      case 2:
        ok = hn::Lt(b, hn::Set(di, 0x7F80));
        v = hn::BitCast(df, hn::ShiftLeft<16>(b));
        break;
      case 3:
        ok = hn::Lt(b, hn::Set(di, 0xFF));
        v = hn::BitCast(df, hn::IfThenElse(hn::Eq(b, hn::Zero(di)), hn::Set(di, 0x00400000), hn::ShiftLeft<23>(b)));
        break;
      default:
        ok = hn::Lt(b, hn::Set(di, 0x7F));
        v = MiniValue(di, b, MiniParams{3, -6, 448.0, 0x80});
        break;
    }
    ok = hn::AndNot(hn::Lt(b, hn::Zero(di)), ok);
    hn::StoreU(v, df, dst);
    return hn::Not(ok);
  };
  std::size_t k = 0;
  for (; k + N <= nb; k += N) {
    const auto bad = one(load(k), value + k);
    if (HWY_UNLIKELY(!hn::AllFalse(di, bad))) return k + static_cast<std::size_t>(hn::FindFirstTrue(di, bad));
  }
  if (k < nb) {
    HWY_ALIGN std::int32_t b[HWY_MAX_BYTES / sizeof(std::int32_t)] = {};  // pattern 0 is valid for every dtype
    HWY_ALIGN float v[HWY_MAX_BYTES / sizeof(float)];
    tail(k, b);
    const auto bad = one(hn::Load(di, b), v);
    std::memcpy(value + k, v, (nb - k) * sizeof(float));
    if (!hn::AllFalse(di, bad)) return k + static_cast<std::size_t>(hn::FindFirstTrue(di, bad));
  }
  return nb;
}

HWY_NOINLINE std::size_t ScalesFromBytesImpl(const std::uint8_t* HWY_RESTRICT in, std::size_t nb, int dt,
                                             float* HWY_RESTRICT value) {
  const hn::ScalableTag<std::int32_t> di;
  const hn::RebindToUnsigned<decltype(di)> du;
  const int sb = dt == 0 ? 4 : (dt == 1 || dt == 2) ? 2 : 1;
  auto load = [&](std::size_t k) -> hn::Vec<decltype(di)> {
    const std::uint8_t* p = in + k * sb;
    if (sb == 4) return hn::BitCast(di, hn::LoadU(du, reinterpret_cast<const std::uint32_t*>(p)));
    if (sb == 2) {
      return hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(hn::Rebind<std::uint16_t, decltype(du)>(),
                                                        reinterpret_cast<const std::uint16_t*>(p))));
    }
    return hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(hn::Rebind<std::uint8_t, decltype(du)>(), p)));
  };
  auto tail = [&](std::size_t k, std::int32_t* buf) {
    for (std::size_t j = k; j < nb; ++j) {
      std::uint32_t v = 0;
      for (int i = 0; i < sb; ++i) v |= static_cast<std::uint32_t>(in[j * sb + i]) << (8 * i);
      buf[j - k] = static_cast<std::int32_t>(v);
    }
  };
  return ScaleValues(nb, dt, value, load, tail);
}

HWY_NOINLINE std::size_t ScaleValuesFromBitsImpl(const std::uint32_t* HWY_RESTRICT bits, std::size_t nb, int dt,
                                                 float* HWY_RESTRICT value) {
  const hn::ScalableTag<std::int32_t> di;
  const hn::RebindToUnsigned<decltype(di)> du;
  auto load = [&](std::size_t k) { return hn::BitCast(di, hn::LoadU(du, bits + k)); };
  auto tail = [&](std::size_t k, std::int32_t* buf) { std::memcpy(buf, bits + k, (nb - k) * sizeof(std::uint32_t)); };
  return ScaleValues(nb, dt, value, load, tail);
}

// Values of one vector of one-byte codes: the signed value of integer fields (sign-extended from
// c.bits) or the f32 value of minifloat patterns. kKind: 0 = 8-bit integers, 1 = narrower
// integers, 2 + fmt = a minifloat, as a constant so that the loops of DequantCodesT carry no test
// of the kind.
template <int kKind, class DF>
HWY_INLINE hn::Vec<DF> CodeValuesOf(DF df, const std::uint8_t* HWY_RESTRICT src, const CodeSpec& c) {
  const hn::Rebind<std::int32_t, DF> di;
  if constexpr (kKind == 0) {
    return hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(hn::Rebind<std::int8_t, DF>(), reinterpret_cast<const std::int8_t*>(src))));
  } else {
    const auto raw = hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<decltype(di)>(), hn::LoadU(hn::Rebind<std::uint8_t, DF>(), src)));
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if constexpr (kKind == 2 + scalar::kE2M1 && sizeof(raw.raw) == 64) {
      // The sixteen e2m1 values (-0 included), one vpermps: an e2m1 code is its table index.
      const __m512 t = _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f, -1.0f, -1.5f,
                                      -2.0f, -3.0f, -4.0f, -6.0f);
      return hn::Vec<DF>{_mm512_permutexvar_ps(raw.raw, t)};
    }
#endif
    if constexpr (kKind >= 2) return MiniValue(di, raw, Mini(kKind - 2));
    return hn::ConvertTo(df, hn::ShiftRightSame(hn::ShiftLeftSame(raw, 32 - c.bits), 32 - c.bits));
  }
}

template <int kKind, bool kTwo>
HWY_INLINE void DequantCodesT(const std::uint8_t* HWY_RESTRICT codes, std::size_t len, std::size_t start,
                              std::size_t bw, const float* HWY_RESTRICT s, float g, const CodeSpec& c,
                              float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const auto vg = hn::Set(df, g);
  const std::size_t N = hn::Lanes(df);
  // One level: value * s is the one rounding; two: exact, then times g.
  auto one = [&](const std::uint8_t* src, hn::Vec<decltype(df)> vs, float* dst) {
    const auto p = hn::Mul(CodeValuesOf<kKind>(df, src, c), vs);
    hn::StoreU(kTwo ? hn::Mul(p, vg) : p, df, dst);
  };
  std::size_t i = 0, k = 0;
  std::size_t next = bw ? (start / bw + 1) * bw - start : len;
  if (bw != 0 && bw % N == 0 && start % bw == 0 && len >= bw) {
    // Whole blocks from the first column, V vectors each, with no per-block bookkeeping (q8_0's
    // blocks are two vectors: the general loop below spends more on that than on the values).
    const std::size_t nfull = len / bw;
    auto blocks = [&](auto kV) {
      constexpr std::size_t V = decltype(kV)::value;  // 0: bw / N at run time
      const std::size_t vpb = V ? V : bw / N;
      for (std::size_t b = 0; b < nfull; ++b) {
        const auto vs = hn::Set(df, s[b]);
        for (std::size_t j = 0; j < vpb; ++j) one(codes + (b * vpb + j) * N, vs, out + (b * vpb + j) * N);
      }
    };
    switch (bw / N) {
      case 1: blocks(std::integral_constant<std::size_t, 1>()); break;
      case 2: blocks(std::integral_constant<std::size_t, 2>()); break;
      case 4: blocks(std::integral_constant<std::size_t, 4>()); break;
      default: blocks(std::integral_constant<std::size_t, 0>()); break;
    }
    k = nfull;
    i = nfull * bw;
    next = i + bw;
  }
  while (i < len) {
    const std::size_t end = next < len ? next : len;
    const auto vs = hn::Set(df, s[k]);
    for (; i + N <= end; i += N) one(codes + i, vs, out + i);
    if (i < end) {
      HWY_ALIGN std::uint8_t b[HWY_MAX_BYTES / sizeof(float)] = {};
      HWY_ALIGN float o[HWY_MAX_BYTES / sizeof(float)];
      std::memcpy(b, codes + i, end - i);
      one(b, vs, o);
      std::memcpy(out + i, o, (end - i) * sizeof(float));
      i = end;
    }
    ++k;
    next += bw;
  }
}

HWY_NOINLINE void DequantCodesImpl(const std::uint8_t* HWY_RESTRICT codes, std::size_t len, std::size_t start,
                                   std::size_t bw, const float* HWY_RESTRICT s, float g, const CodeSpec& c,
                                   float* HWY_RESTRICT out) {
  const int kind = c.fmt >= 0 ? 2 + c.fmt : c.bits == 8 ? 0 : 1;
  const bool two = g != 1.0f;  // g == 1: the product is the same without it
  auto run = [&](auto kKind) {
    constexpr int K = decltype(kKind)::value;
    if (two) return DequantCodesT<K, true>(codes, len, start, bw, s, g, c, out);
    DequantCodesT<K, false>(codes, len, start, bw, s, g, c, out);
  };
  switch (kind) {
    case 0: return run(std::integral_constant<int, 0>());
    case 1: return run(std::integral_constant<int, 1>());
    case 2: return run(std::integral_constant<int, 2>());
    case 3: return run(std::integral_constant<int, 3>());
    default: return run(std::integral_constant<int, 4>());
  }
}

HWY_NOINLINE std::size_t FusedLanesImpl() { return hn::Lanes(hn::ScalableTag<float>()); }

// ---------------------------------------------------------------------------- streaming stores

HWY_NOINLINE void StreamCopyImpl(std::uint8_t* HWY_RESTRICT dst, const std::uint8_t* HWY_RESTRICT src, std::size_t n) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t N = hn::Lanes(d);
  const std::size_t head = std::min(n, (N - reinterpret_cast<std::uintptr_t>(dst) % N) % N);
  std::memcpy(dst, src, head);
  std::size_t i = head;
  for (; i + N <= n; i += N) hn::Stream(hn::LoadU(d, src + i), d, dst + i);
  std::memcpy(dst + i, src + i, n - i);
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
