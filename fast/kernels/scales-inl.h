// Per-target scale kernels: block maxima to stored scale patterns and effective scales
// (ScalesFromMax; ExponentScales for the MX recipes' rules), stored patterns to values (ScalesFromBytes, ScaleValuesFromBits), and the
// spreading of segment scales to one per lane for rows of narrow blocks.

#if defined(QSCHEME_FAST_KERNELS_SCALES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_SCALES_INL_H_
#undef QSCHEME_FAST_KERNELS_SCALES_INL_H_
#else
#define QSCHEME_FAST_KERNELS_SCALES_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/minifloat-inl.h"
#include "fast/kernels/vector-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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
      abits[t] = hn::And(hn::LoadU(du, src + t * N), hn::Set(du, 0x7FFFFFFFu));
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
      // inv = InvF32(e) (dispatch.h): 1 / f32(e), where f32(e) is c itself for one level and fl(c * g)
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

// ---- f32 values rounded up onto a scale grid
//
// The least grid value >= q for f32 lanes q >= 0 (finite, or +inf), exactly, from q's bits: its
// pattern p and its value c (an f32), saturating at the grid's max (ScaleSpec's m, emin, max,
// ue8m0). IEEE-style grids: a normal q's bits rounded up to m mantissa bits, (bits + 2^(23-m) - 1)
// >> (23 - m), is the pattern of the least f32 >= q whose low 23 - m bits are zero (positive
// patterns order as their values, and a carry moves into the next binade); from 2^emin on those
// are the grid's values, and the grid pattern is those bits less (127 + emin - 1) << 23, shifted.
// f32 and bf16 share f32's exponent range, so the same arithmetic covers their subnormals; f16 and
// ue4m3 count their subnormal steps below 2^emin as ceil(q * 2^(m - emin)), a power-of-two scaling
// (exact) and a ceiling (exact), 2^m being the least normal value's pattern. ue8m0 (the biased
// exponent of a power of two in [2^-127, 2^127]): the bits rounded up to a power of two, 2^-126
// for an f32 subnormal above 2^-127, 2^-127 (pattern 0) at or below it, 0 included.
// With subnormals false the caller knows that no lane of q lies below 2^emin.
template <class DF>
HWY_INLINE void GridRoundUp(DF df, const ScaleSpec& s, hn::Vec<DF> q, hn::Vec<hn::RebindToUnsigned<DF>>* p,
                            hn::Vec<DF>* c, bool subnormals = true) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto qb = hn::BitCast(du, q);
  if (s.ue8m0) {
    const auto normal = hn::Min(hn::ShiftRight<23>(hn::Add(qb, hn::Set(du, 0x7FFFFFu))), hn::Set(du, 254u));
    const auto least = hn::Set(du, 0x00400000u);  // 2^-127
    const auto pv = hn::IfThenElse(hn::Lt(qb, hn::Set(du, 0x00400001u)), hn::Zero(du),
                                   hn::IfThenElse(hn::Lt(qb, hn::Set(du, 0x00800000u)), hn::Set(du, 1u), normal));
    *p = pv;
    *c = hn::BitCast(df, hn::IfThenElse(hn::Eq(pv, hn::Zero(du)), least, hn::ShiftLeft<23>(pv)));
    return;
  }
  const int sh = 23 - s.m;
  const std::uint32_t b = static_cast<std::uint32_t>(127 + s.emin - 1) << 23;
  const auto bias = hn::Set(du, b);
  auto pv = hn::ShiftRightSame(hn::Sub(hn::Add(qb, hn::Set(du, (1u << sh) - 1)), bias), sh);
  const bool sub = subnormals && s.emin > -126;  // subnormals below 2^emin that f32's bits do not share
  const auto min_normal = hn::BitCast(df, hn::Set(du, static_cast<std::uint32_t>(127 + s.emin) << 23));
  if (sub) {
    // (Ceil, not CeilNonNegative: the integer conversion makes EMU128's -0 a 0, and gcc 12 fails
    // on CeilNonNegative's Abs here under EMU128.)
    const auto ps = hn::BitCast(
        du, hn::ConvertTo(di, hn::Ceil(hn::Mul(q, hn::Set(df, static_cast<float>(scalar::pow2(s.m - s.emin)))))));
    pv = hn::IfThenElse(hn::RebindMask(du, hn::Lt(q, min_normal)), ps, pv);
  }
  pv = hn::Min(pv, hn::Set(du, (scalar::f32_bits(static_cast<float>(s.max)) - b) >> sh));
  *p = pv;
  const auto normal = hn::BitCast(df, hn::Add(hn::ShiftLeftSame(pv, sh), bias));
  if (!sub) {
    *c = normal;
    return;
  }
  const auto subv = hn::Mul(hn::ConvertTo(df, hn::BitCast(di, pv)), hn::Set(df, static_cast<float>(scalar::pow2(s.emin - s.m))));
  *c = hn::IfThenElse(hn::RebindMask(df, hn::Lt(pv, hn::Set(du, 1u << s.m))), subv, normal);
}

// ScalesFromMax where wg = 2 (given scales: their values as a; also a calibrated q2s, W = 2, under
// g = 1), so that c = roundup(2a / 2) is a itself rounded up: GridRoundUp's exact arithmetic on a's
// bits, for any global g that is an f32 (a given one is), with no estimate and no check. e = c * g
// is exact in f64 (at most 24 + 24 bits), and the f32 product cs = c * g is f32(e), IEEE's one
// rounding of the exact product (cs = c for one level), so inv = InvF32(e) = 1 / cs; 0 for e == 0
// (c or g zero). Far (NaN): e outside [2^-100, 2^100], decided on cs: rounding is monotonic and
// both ends are f32 values, so cs < 2^-100 or cs > 2^100 is far and a cs strictly between is not;
// a cs on an end (rare) is decided on e in f64 for its group. No tight blocks are counted.
template <bool kTwo>
HWY_INLINE ScaleFacts ScalesOfValues(const std::uint32_t* HWY_RESTRICT amax, std::size_t nb, const ScaleSpec& s,
                                     std::uint32_t* HWY_RESTRICT bits, double* HWY_RESTRICT e,
                                     float* HWY_RESTRICT inv) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::Half<decltype(df)> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  using VF = hn::Vec<decltype(df)>;
  const std::size_t N = hn::Lanes(df), H = N / 2;
  const auto vg = hn::Set(df, static_cast<float>(s.g));
  const auto vgd = hn::Set(dd, s.g);
  const auto lo_e = hn::Set(df, 0x1p-100f), hi_e = hn::Set(df, 0x1p100f);
  const auto zero = hn::Zero(df);
  const auto inf = hn::Set(df, std::numeric_limits<float>::infinity());
  const auto nan = hn::Set(df, std::numeric_limits<float>::quiet_NaN());
  const auto magnitude = hn::Set(du, 0x7FFFFFFFu);
  const bool g_zero = kTwo && s.g == 0;
  const auto min_normal = hn::Set(df, s.ue8m0 ? 0.0f : static_cast<float>(scalar::pow2(s.emin)));
  auto any_far = hn::Lt(zero, zero);
  auto one = [&](auto kG, const std::uint32_t* src, std::uint32_t* bdst, double* edst, float* idst, std::uint32_t*,
                 std::uint32_t*, std::size_t valid) QSCHEME_INLINE_LAMBDA {
    constexpr std::size_t G = decltype(kG)::value;
    VF q[G], c[G], cs[G];
    hn::Vec<decltype(du)> p[G];
    // Whether some lane needs the grid's subnormal steps (f16, ue4m3 below 2^emin): seldom.
    auto sub = hn::Lt(zero, zero);
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) {
      q[t] = hn::BitCast(df, hn::And(hn::LoadU(du, src + t * N), magnitude));
      sub = hn::Or(sub, hn::Lt(q[t], min_normal));
    }
    const bool any_sub = !hn::AllFalse(df, sub);
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) {
      GridRoundUp(df, s, q[t], &p[t], &c[t], any_sub);
      hn::StoreU(p[t], du, bdst + t * N);
      cs[t] = kTwo ? hn::Mul(c[t], vg) : c[t];
    }
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) {
      auto ce = [&](hn::Vec<decltype(dh)> h) QSCHEME_INLINE_LAMBDA {
        return kTwo ? hn::Mul(hn::PromoteTo(dd, h), vgd) : hn::PromoteTo(dd, h);
      };
      hn::StoreU(ce(hn::LowerHalf(dh, c[t])), dd, edst + t * N);
      hn::StoreU(ce(hn::UpperHalf(dh, c[t])), dd, edst + t * N + H);
    }
    auto edge = hn::Lt(zero, zero);
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) edge = hn::Or(edge, hn::Or(hn::Eq(cs[t], lo_e), hn::Eq(cs[t], hi_e)));
    const bool exact_far = HWY_UNLIKELY(!hn::AllFalse(df, edge));
#pragma GCC unroll 4
    for (std::size_t t = 0; t < G; ++t) {
      const auto is_zero = g_zero ? hn::Eq(zero, zero) : hn::Eq(c[t], zero);
      auto far = hn::AndNot(is_zero, hn::Or(hn::Lt(cs[t], lo_e), hn::Gt(cs[t], hi_e)));
      if (exact_far) {
        // The f64 comparisons of e itself, lane by lane from what was stored.
        HWY_ALIGN float flags[HWY_MAX_BYTES / sizeof(float)];
        for (std::size_t j = 0; j < N; ++j) {
          const double ej = edst[t * N + j];
          flags[j] = ej != 0 && (ej < 0x1p-100 || ej > 0x1p100) ? 1.0f : 0.0f;
        }
        far = hn::Gt(hn::Load(df, flags), zero);
      }
      any_far = hn::Or(any_far, hn::And(hn::FirstN(df, G == 1 ? valid : N), far));
      const auto den = hn::IfThenElse(far, nan, hn::IfThenElse(is_zero, inf, cs[t]));
      hn::StoreU(hn::Div(hn::Set(df, 1.0f), den), df, idst + t * N);
    }
  };
  ScaleVectors<4>(nb, N, amax, bits, e, inv, nullptr, nullptr, one);
  return {!hn::AllFalse(df, any_far), 0, 0};
}

HWY_NOINLINE ScaleFacts ScalesFromMaxImpl(const std::uint32_t* HWY_RESTRICT amax, std::size_t nb, const ScaleSpec& spec,
                                          std::uint32_t* HWY_RESTRICT bits, double* HWY_RESTRICT e,
                                          float* HWY_RESTRICT inv, std::uint32_t* HWY_RESTRICT tight,
                                          std::uint32_t* HWY_RESTRICT lowest) {
  // A copy the stores below cannot alias: otherwise its fields are loaded again per vector.
  const ScaleSpec s = spec;
  if (s.wg == 2 && !s.count_tight && !tight && !lowest && static_cast<double>(static_cast<float>(s.g)) == s.g) {
    return s.g == 1 ? ScalesOfValues<false>(amax, nb, s, bits, e, inv) : ScalesOfValues<true>(amax, nb, s, bits, e, inv);
  }
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
    const auto a = hn::PromoteTo(dd, hn::BitCast(df, hn::And(hn::LoadU(du32, src), hn::Set(du32, 0x7FFFFFFFu))));
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
      const auto neg_a = hn::Sub(hn::PromoteTo(dd, hn::BitCast(di32, hn::And(hn::LoadU(du32, src), hn::Set(du32, 0x7FFFFFFFu)))),
                                 hn::Set(dd, 2147483648.0));
      const auto pat = hn::IfThenElse(hn::And(hn::Eq(wev, a2), pos), neg_a, hn::Set(dd, -1.0));
      hn::StoreU(hn::BitCast(du32, hn::DemoteTo(di32, pat)), du32, ldst);
    }
    // inv = InvF32(e) (dispatch.h): RN32(1 / RN32(e)), a division of half as many bytes as in f64;
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

// Kernels::blocks_within: f64 lanes, the comparison exact (dispatch.h); the tail's padding (a 0
// against an e of 0) is within.
HWY_NOINLINE bool BlocksWithinImpl(const std::uint32_t* HWY_RESTRICT amax, const double* HWY_RESTRICT e,
                                   std::size_t nb, double W) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const hn::Rebind<std::uint32_t, decltype(dd)> du;
  const std::size_t N = hn::Lanes(dd);
  const auto vW = hn::Set(dd, W);
  auto out = hn::Lt(hn::Zero(dd), hn::Zero(dd));
  auto one = [&](const std::uint32_t* a, const double* ev) QSCHEME_INLINE_LAMBDA {
    const auto av = hn::PromoteTo(dd, hn::BitCast(df, hn::LoadU(du, a)));
    out = hn::Or(out, hn::Gt(hn::Add(av, av), hn::Mul(vW, hn::LoadU(dd, ev))));
  };
  std::size_t k = 0;
  for (; k + N <= nb; k += N) one(amax + k, e + k);
  if (k < nb) {
    HWY_ALIGN std::uint32_t ab[HWY_MAX_BYTES / sizeof(double)] = {};
    HWY_ALIGN double eb[HWY_MAX_BYTES / sizeof(double)] = {};
    std::memcpy(ab, amax + k, (nb - k) * sizeof(std::uint32_t));
    std::memcpy(eb, e + k, (nb - k) * sizeof(double));
    one(ab, eb);
  }
  return hn::AllFalse(dd, out);
}

// ---- the exponent rules of the MX recipes
//
// Every block at once, 16 per AVX-512 vector, where a loop over the blocks of a unit cost the MX
// recipes a third of their time in L1. The rules are integer work on a's pattern; only rceil
// multiplies in f32 (IEEE defaults: the drivers' FpEnvGuard), and the clamp test compares 2a
// with W e in f64, where both are exact (a has 24 bits, W at most 17, e is a power of two).
template <ExponentRuleKind kRule>
HWY_INLINE ExponentFacts ExponentScalesT(const std::uint32_t* HWY_RESTRICT amax, std::size_t nb, const ExponentSpec& s,
                                         std::uint32_t* HWY_RESTRICT bits, double* HWY_RESTRICT e,
                                         float* HWY_RESTRICT inv) {
  const hn::ScalableTag<std::int32_t> di;
  const hn::RebindToFloat<decltype(di)> df;
  const hn::Half<decltype(di)> dhi;
  const hn::Rebind<std::int64_t, decltype(dhi)> di64;
  const hn::Rebind<double, decltype(dhi)> dd;
  const std::size_t N = hn::Lanes(di);
  const auto v127 = hn::Set(di, 127), vneg127 = hn::Set(di, -127);
  const auto emax = hn::Set(di, s.emax);
  const auto mant_mask = hn::Set(di, 0x7FFFFF);
  const auto zero = hn::Zero(di), one_i = hn::Set(di, 1);
  const auto ff = hn::Set(di, 0xFF);
  const auto W = hn::Set(dd, s.W);
  auto biased = [&](hn::Vec<decltype(di)> k) { return hn::Add(hn::Min(hn::Max(k, vneg127), v127), v127); };
  auto any_mant = [&](hn::Vec<decltype(di)> x) {
    return hn::IfThenElseZero(hn::Ne(hn::And(x, mant_mask), zero), one_i);
  };
  auto nan_m = hn::FirstN(di, 0), far_m = hn::FirstN(di, 0);
  auto out_m = hn::FirstN(dd, 0);
  auto one = [&](const std::uint32_t* src, std::uint32_t* pb, double* pe, float* pi) {
    const auto a = hn::BitCast(di, hn::LoadU(hn::RebindToUnsigned<decltype(di)>(), src));
    const auto field = hn::ShiftRight<23>(a);
    hn::Vec<decltype(di)> p;
    if constexpr (kRule == ExponentRuleKind::ocp_floor) {
      // floor(log2 a): the exponent field of a normal a; of a subnormal, that of the f32 value
      // of its integer pattern (exact below 2^23), less 149.
      const auto sub = hn::Sub(hn::ShiftRight<23>(hn::BitCast(di, hn::ConvertTo(df, a))), hn::Set(di, 127 + 149));
      const auto fl = hn::IfThenElse(hn::Gt(field, zero), hn::Sub(field, v127), sub);
      p = hn::IfThenZeroElse(hn::Eq(a, zero), biased(hn::Sub(fl, emax)));
    } else if constexpr (kRule == ExponentRuleKind::torchao_ceil) {
      p = biased(hn::Sub(hn::Add(hn::Sub(field, v127), any_mant(a)), emax));
    } else if constexpr (kRule == ExponentRuleKind::torchao_even) {
      const auto rf = hn::ShiftRight<23>(hn::Add(a, hn::Set(di, static_cast<std::int32_t>(s.half_unit))));
      const auto is_inf = hn::Eq(rf, ff);
      nan_m = hn::Or(nan_m, is_inf);
      p = hn::IfThenElse(is_inf, ff, biased(hn::Sub(hn::Sub(rf, v127), emax)));
    } else if constexpr (kRule == ExponentRuleKind::log2f_floor) {
      // A zero or subnormal a lies below 2^-126, where every kind's scale clamps to 2^-127.
      const auto thr = hn::GatherIndex(di, reinterpret_cast<const std::int32_t*>(s.log2_thresholds), field);
      const auto up = hn::IfThenZeroElse(hn::Gt(thr, hn::And(a, mant_mask)), one_i);
      p = hn::IfThenZeroElse(hn::Eq(field, zero), biased(hn::Sub(hn::Add(hn::Sub(field, v127), up), emax)));
    } else {
      const auto u = hn::BitCast(di, hn::Mul(hn::BitCast(df, a), hn::Set(df, s.rcp_m)));
      const auto up = biased(hn::Add(hn::Sub(hn::ShiftRight<23>(u), v127), any_mant(u)));
      // u <= 2^-127 (pattern 0x00400000) takes 2^-127; a subnormal above it, 2^-126.
      p = hn::IfThenElse(hn::Lt(u, hn::Set(di, 0x00400001)), zero,
                         hn::IfThenElse(hn::Lt(u, hn::Set(di, 0x00800000)), one_i, up));
    }
    hn::StoreU(hn::BitCast(hn::RebindToUnsigned<decltype(di)>(), p), hn::RebindToUnsigned<decltype(di)>(), pb);
    // inv = 2^(127 - p) for 27 <= p <= 227, NaN beyond (InvF32's range).
    const auto far = hn::Or(hn::Lt(p, hn::Set(di, 27)), hn::Gt(p, hn::Set(di, 227)));
    far_m = hn::Or(far_m, far);
    const auto iv = hn::IfThenElse(far, hn::Set(di, 0x7FC00000), hn::ShiftLeft<23>(hn::Sub(hn::Set(di, 254), p)));
    hn::StoreU(hn::BitCast(df, iv), df, pi);
    // e = 2^(p - 127) as f64: exponent field p + 896; and 2a > W e, per half.
    auto half = [&](hn::Vec<decltype(dhi)> ph, hn::Vec<decltype(dhi)> ah, double* dst) {
      const auto eh = hn::BitCast(dd, hn::ShiftLeft<52>(hn::PromoteTo(di64, hn::Add(ph, hn::Set(dhi, 896)))));
      hn::StoreU(eh, dd, dst);
      const auto a2 = hn::Add(hn::PromoteTo(dd, hn::BitCast(hn::Rebind<float, decltype(dhi)>(), ah)),
                              hn::PromoteTo(dd, hn::BitCast(hn::Rebind<float, decltype(dhi)>(), ah)));
      out_m = hn::Or(out_m, hn::Gt(a2, hn::Mul(W, eh)));
    };
    half(hn::LowerHalf(dhi, p), hn::LowerHalf(dhi, a), pe);
    half(hn::UpperHalf(dhi, p), hn::UpperHalf(dhi, a), pe + N / 2);
  };
  std::size_t k = 0;
  for (; k + N <= nb; k += N) one(amax + k, bits + k, e + k, inv + k);
  if (k < nb) {
    HWY_ALIGN std::uint32_t ab[HWY_MAX_BYTES / sizeof(std::uint32_t)];
    HWY_ALIGN std::uint32_t bb[HWY_MAX_BYTES / sizeof(std::uint32_t)];
    HWY_ALIGN double eb[HWY_MAX_BYTES / sizeof(std::uint32_t)];
    HWY_ALIGN float ib[HWY_MAX_BYTES / sizeof(std::uint32_t)];
    // Padding repeats the last block, which changes none of the facts.
    for (std::size_t j = 0; j < N; ++j) ab[j] = amax[std::min(k + j, nb - 1)];
    one(ab, bb, eb, ib);
    std::memcpy(bits + k, bb, (nb - k) * sizeof(std::uint32_t));
    std::memcpy(e + k, eb, (nb - k) * sizeof(double));
    std::memcpy(inv + k, ib, (nb - k) * sizeof(float));
  }
  ExponentFacts f;
  f.nan_scale = !hn::AllFalse(di, nan_m);
  f.any_far = !hn::AllFalse(di, far_m);
  f.out_of_range = !hn::AllFalse(dd, out_m);
  return f;
}

HWY_NOINLINE ExponentFacts ExponentScalesImpl(const std::uint32_t* HWY_RESTRICT amax, std::size_t nb,
                                              const ExponentSpec& s, std::uint32_t* HWY_RESTRICT bits,
                                              double* HWY_RESTRICT e, float* HWY_RESTRICT inv) {
  if (nb == 0) return {};
  switch (s.rule) {
    case ExponentRuleKind::ocp_floor: return ExponentScalesT<ExponentRuleKind::ocp_floor>(amax, nb, s, bits, e, inv);
    case ExponentRuleKind::torchao_ceil: return ExponentScalesT<ExponentRuleKind::torchao_ceil>(amax, nb, s, bits, e, inv);
    case ExponentRuleKind::torchao_even: return ExponentScalesT<ExponentRuleKind::torchao_even>(amax, nb, s, bits, e, inv);
    case ExponentRuleKind::log2f_floor: return ExponentScalesT<ExponentRuleKind::log2f_floor>(amax, nb, s, bits, e, inv);
    default: return ExponentScalesT<ExponentRuleKind::rceil>(amax, nb, s, bits, e, inv);
  }
}

// Values of stored scale patterns, as lanes of i32 (a pattern >= 2^31 is negative there and
// invalid for every dtype); returns the first invalid index or nb. load(k) gives the patterns of
// scales k .. k + N - 1; tail(k, buf) copies the remaining ones into a zero-filled buffer.
// kDt: the dtype as a constant, and the invalid lanes gathered over kScaleChunk vectors and looked
// for again only when there is one: with the dtype's switch and a test per vector in the loop,
// 2048 f16 scales took about 8% of an in-cache q8_0 dequantize. (Over the whole array instead of a
// chunk, a call costs the whole array however early its invalid pattern: the scalar-twin test,
// which calls once per invalid pattern, went from under a second to a minute under ASan.)
inline constexpr std::size_t kScaleChunk = 16;  // vectors of scales per test of their patterns

// The start of the first chunk (kScaleChunk vectors of Lanes(d) scales) of [0, whole) that holds
// an invalid pattern, else whole. step(k) writes the values of scales k .. k + Lanes(d) - 1 and
// returns a vector of d, nonzero in the lanes of invalid patterns.
template <class D, class Step>
HWY_INLINE std::size_t FirstInvalidChunk(D d, std::size_t whole, Step step) {
  const std::size_t N = hn::Lanes(d);
  for (std::size_t k0 = 0; k0 < whole; k0 += kScaleChunk * N) {
    const std::size_t k1 = std::min(whole, k0 + kScaleChunk * N);
    auto bad = hn::Zero(d);
    for (std::size_t k = k0; k < k1; k += N) bad = hn::Or(bad, step(k));
    if (!hn::AllFalse(d, hn::Ne(bad, hn::Zero(d)))) return k0;
  }
  return whole;
}

template <int kDt, class Load, class Tail>
HWY_INLINE std::size_t ScaleValuesT(std::size_t nb, float* HWY_RESTRICT value, Load load, Tail tail) {
  const hn::ScalableTag<std::int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const std::size_t N = hn::Lanes(di);
  // valid: finite, non-negative patterns (detail::scale_from_bits); value: exact f32.
  // Returns all ones in the lanes of invalid patterns.
  auto one = [&](hn::Vec<decltype(di)> b, float* dst) {
    hn::Mask<decltype(di)> ok;
    hn::Vec<decltype(df)> v;
    if constexpr (kDt == 0) {
      ok = hn::Lt(b, hn::Set(di, 0x7F800000));
      v = hn::BitCast(df, b);
    } else if constexpr (kDt == 1) {
      ok = hn::Lt(b, hn::Set(di, 0x7C00));
      v = MiniValue(di, b, MiniParams{10, -14, 65504.0, 0x8000});
    } else if constexpr (kDt == 2) {
      ok = hn::Lt(b, hn::Set(di, 0x7F80));
      v = hn::BitCast(df, hn::ShiftLeft<16>(b));
    } else if constexpr (kDt == 3) {
      ok = hn::Lt(b, hn::Set(di, 0xFF));
      v = hn::BitCast(df, hn::IfThenElse(hn::Eq(b, hn::Zero(di)), hn::Set(di, 0x00400000), hn::ShiftLeft<23>(b)));
    } else {
      ok = hn::Lt(b, hn::Set(di, 0x7F));
      v = MiniValue(di, b, MiniParams{3, -6, 448.0, 0x80});
    }
    ok = hn::AndNot(hn::Lt(b, hn::Zero(di)), ok);
    hn::StoreU(v, df, dst);
    return hn::VecFromMask(di, hn::Not(ok));
  };
  HWY_ALIGN std::int32_t tb[HWY_MAX_BYTES / sizeof(std::int32_t)] = {};  // pattern 0 is valid for every dtype
  HWY_ALIGN float tv[HWY_MAX_BYTES / sizeof(float)];
  const std::size_t whole = nb / N * N;
  const std::size_t k0 = FirstInvalidChunk(di, whole, [&](std::size_t k) { return one(load(k), value + k); });
  for (std::size_t k = k0; k < std::min(whole, k0 + kScaleChunk * N); k += N) {
    const auto m = hn::MaskFromVec(one(load(k), value + k));
    if (!hn::AllFalse(di, m)) return k + static_cast<std::size_t>(hn::FindFirstTrue(di, m));
  }
  if (whole < nb) {
    tail(whole, tb);
    const auto m = hn::MaskFromVec(one(hn::Load(di, tb), tv));
    std::memcpy(value + whole, tv, (nb - whole) * sizeof(float));
    if (!hn::AllFalse(di, m)) return whole + static_cast<std::size_t>(hn::FindFirstTrue(di, m));
  }
  return nb;
}

template <class Load, class Tail>
HWY_INLINE std::size_t ScaleValues(std::size_t nb, int dt, float* HWY_RESTRICT value, Load load, Tail tail) {
  switch (dt) {
    case 0: return ScaleValuesT<0>(nb, value, load, tail);
    case 1: return ScaleValuesT<1>(nb, value, load, tail);
    case 2: return ScaleValuesT<2>(nb, value, load, tail);
    case 3: return ScaleValuesT<3>(nb, value, load, tail);
    default: return ScaleValuesT<4>(nb, value, load, tail);
  }
}

// ScalesFromBytesImpl by the arithmetic of ScaleValues on every dtype.
HWY_INLINE std::size_t ScaleValuesFrom(const std::uint8_t* HWY_RESTRICT in, std::size_t nb, int dt,
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

HWY_NOINLINE std::size_t ScalesFromBytesImpl(const std::uint8_t* HWY_RESTRICT in, std::size_t nb, int dt,
                                             float* HWY_RESTRICT value) {
  const hn::ScalableTag<float> df;
  const std::size_t N = hn::Lanes(df);
  const std::size_t whole = nb / N * N;
  // The two dtypes below have a path of their own up to the first chunk with an invalid pattern;
  // from there (or for the last fewer than N) the arithmetic of ScaleValues, which finds it.
  if (dt == 3) {
    // ue8m0: the value's bits are the pattern p shifted to f32's exponent, except p = 0, 2^-127,
    // whose bits 0x00400000 the max gives (p << 23 is 0 there and at least 2^23 elsewhere); valid
    // below 0xFF. The generic arithmetic (a select for p = 0, a test for the sign) took twice as
    // long, some 6% of an in-cache mxfp8 dequantize.
    const hn::RebindToSigned<decltype(df)> di;
    const hn::Rebind<std::uint8_t, decltype(df)> d8;
    const auto least = hn::Set(di, 0x00400000), ff = hn::Set(di, 0xFF);
    const std::size_t k0 = FirstInvalidChunk(di, whole, [&](std::size_t k) {
      const auto p = hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<decltype(di)>(), hn::LoadU(d8, in + k)));
      hn::StoreU(hn::BitCast(df, hn::Max(hn::ShiftLeft<23>(p), least)), df, value + k);
      return hn::VecFromMask(di, hn::Eq(p, ff));
    });
    return k0 == nb ? nb : k0 + ScaleValuesFrom(in + k0, nb - k0, dt, value + k0);
  }
#if (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2) && !defined(HWY_DISABLE_F16C)
  if (dt == 1) {
    // f16 by F16C's conversion (exact, subnormals included), the patterns checked as u16: valid
    // below 0x7C00 (finite, sign clear). Arithmetic on widened patterns took three times as long,
    // some 7% of an in-cache q8_0 dequantize.
    const hn::Rebind<std::uint16_t, decltype(df)> d16;
    const hn::Rebind<hwy::float16_t, decltype(df)> dh;
    const auto limit = hn::Set(d16, 0x7C00);
    const std::size_t k0 = FirstInvalidChunk(d16, whole, [&](std::size_t k) {
      const auto p = hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(in + 2 * k));
      hn::StoreU(hn::PromoteTo(df, hn::BitCast(dh, p)), df, value + k);
      return hn::VecFromMask(d16, hn::Not(hn::Lt(p, limit)));
    });
    return k0 == nb ? nb : k0 + ScaleValuesFrom(in + 2 * k0, nb - k0, dt, value + k0);
  }
#endif
  return ScaleValuesFrom(in, nb, dt, value);
}

HWY_NOINLINE std::size_t ScaleValuesFromBitsImpl(const std::uint32_t* HWY_RESTRICT bits, std::size_t nb, int dt,
                                                 float* HWY_RESTRICT value) {
  const hn::ScalableTag<std::int32_t> di;
  const hn::RebindToUnsigned<decltype(di)> du;
  auto load = [&](std::size_t k) { return hn::BitCast(di, hn::LoadU(du, bits + k)); };
  auto tail = [&](std::size_t k, std::int32_t* buf) { std::memcpy(buf, bits + k, (nb - k) * sizeof(std::uint32_t)); };
  return ScaleValues(nb, dt, value, load, tail);
}

// ---- the f32-step recipes' calibrated scales (StepScaleSpec)

// The f16 or bf16 pattern (dt 1 or 2) of the magnitudes in mag (i32 lanes holding the patterns of
// finite f32 values >= 0), nearest-even, subnormals kept, past the largest finite value +inf.
// bf16: the pattern plus 0x7FFF plus its lowest kept bit, truncated (a carry into the exponent
// field is the rounding up, into 0xFF inf). f16: the same at bit 13 after rebiasing (the carry past
// 65504 gives 0x7C00 from 65520 on); below f16's least normal 2^-14 the IEEE addition of 0.5, whose
// unit in the last place is f16's subnormal quantum 2^-24, rounds |d| onto that grid and leaves
// the quantum count in the low bits (F. Giesen's float_to_half_fast3_rtne).
template <class DI>
HWY_INLINE hn::Vec<DI> NarrowScalePatterns(DI di, hn::Vec<DI> mag, int dt) {
  const hn::Rebind<float, DI> df;
  const auto one = hn::Set(di, 1);
  if (dt == 2) return hn::ShiftRight<16>(hn::Add(mag, hn::Add(hn::Set(di, 0x7FFF), hn::And(hn::ShiftRight<16>(mag), one))));
  const auto normal = hn::ShiftRight<13>(
      hn::Add(hn::Sub(mag, hn::Set(di, 0x38000000)), hn::Add(hn::Set(di, 0xFFF), hn::And(hn::ShiftRight<13>(mag), one))));
  const auto sub = hn::Sub(hn::BitCast(di, hn::Add(hn::BitCast(df, mag), hn::Set(df, 0.5f))), hn::Set(di, 0x3F000000));
  const auto finite = hn::IfThenElse(hn::Lt(mag, hn::Set(di, 0x38800000)), sub, normal);
  return hn::IfThenElse(hn::Lt(mag, hn::Set(di, 0x47800000)), finite, hn::Set(di, 0x7C00));
}

// The walk of the per-block scale kernels below: one(src, bits, out, k) for the vectors of entries
// [k, k + N) of the nb, whole vectors in place, then the tail through padded buffers (sources past
// nb read 0, a block of zeros, and only the nb - k results are copied out).
template <class Out, class One>
HWY_INLINE void ForScaleVectors(const std::uint32_t* HWY_RESTRICT src, std::size_t nb, std::size_t N,
                                std::uint32_t* HWY_RESTRICT bits, Out* HWY_RESTRICT out, One one) {
  static_assert(sizeof(Out) == sizeof(std::uint32_t), "one lane per entry");
  std::size_t k = 0;
  for (; k + N <= nb; k += N) one(src + k, bits + k, out + k, k);
  if (k < nb) {
    HWY_ALIGN std::uint32_t sb[HWY_MAX_BYTES / sizeof(std::uint32_t)] = {};
    HWY_ALIGN std::uint32_t bb[HWY_MAX_BYTES / sizeof(std::uint32_t)];
    HWY_ALIGN Out ob[HWY_MAX_BYTES / sizeof(std::uint32_t)];
    std::memcpy(sb, src + k, (nb - k) * sizeof(std::uint32_t));
    one(sb, bb, ob, k);
    std::memcpy(bits + k, bb, (nb - k) * sizeof(std::uint32_t));
    std::memcpy(out + k, ob, (nb - k) * sizeof(Out));
  }
}

// StepScaleSpec's steps, N blocks at a time; the tail through a padded buffer.
HWY_NOINLINE void StepScalesImpl(const std::uint32_t* HWY_RESTRICT stat, std::size_t nb, const StepScaleSpec& s,
                                 std::uint32_t* HWY_RESTRICT bits, float* HWY_RESTRICT operand) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::RebindToUnsigned<decltype(df)> du;
  const std::size_t N = hn::Lanes(df);
  const auto divisor = hn::Set(df, s.divisor);
  const auto fzero = hn::Zero(df);
  auto one = [&](const std::uint32_t* src, std::uint32_t* pb, float* po, std::size_t) {
    const auto a = hn::BitCast(df, hn::LoadU(du, src));
    const auto d = hn::Div(a, divisor);
    const auto db = hn::BitCast(di, d);
    hn::Vec<decltype(di)> p = db;
    if (s.dt != 0) {
      const auto sign = hn::BitCast(di, hn::ShiftRight<16>(hn::BitCast(du, hn::And(db, hn::Set(di, std::numeric_limits<std::int32_t>::min())))));
      p = hn::Or(NarrowScalePatterns(di, hn::And(db, hn::Set(di, 0x7FFFFFFF)), s.dt), sign);
    }
    hn::StoreU(hn::BitCast(du, p), du, pb);
    const auto r = s.operand == StepOperand::reciprocal_or_zero ? hn::IfThenZeroElse(hn::Eq(d, fzero), hn::Div(hn::Set(df, 1.0f), d))
                                                                : hn::IfThenZeroElse(hn::Eq(a, fzero), hn::Div(hn::Set(df, s.hi), a));
    hn::StoreU(r, df, po);
  };
  ForScaleVectors(stat, nb, N, bits, operand, one);
}

// ---- nvidia-nvfp4's scales (TeScaleSpec)

// The e4m3 magnitude code of v (f32 lanes, finite, >= 0), nearest with ties to even, saturating
// at 448 (0x7E). From 2^-6 on, v's pattern rounded to 3 mantissa bits (plus half a unit less one,
// plus the kept bit: ties to even; a carry into the exponent is the next binade's code, and codes
// grow with values, so the saturation is a min), less the bias difference; below, q = v 2^9
// (exact) rounded half to even is the subnormal code, 8 for a q that reaches 2^-6.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> E4m3EvenCode(DF df, hn::Vec<DF> v) {
  const hn::RebindToSigned<DF> di;
  const auto b = hn::BitCast(di, v);
  const auto rounded = hn::ShiftRight<20>(hn::Add(b, hn::Add(hn::Set(di, (1 << 19) - 1), hn::And(hn::ShiftRight<20>(b), hn::Set(di, 1)))));
  const auto normal = hn::Min(hn::Sub(rounded, hn::Set(di, 120 << 3)), hn::Set(di, 0x7E));
  const auto sub = hn::ConvertTo(di, hn::Round(hn::Mul(v, hn::Set(df, 512.0f))));
  return hn::IfThenElse(hn::RebindMask(di, hn::Lt(v, hn::Set(df, 0x1p-6f))), sub, normal);
}

// TeScaleSpec's steps, N blocks at a time; the tail through a padded buffer.
HWY_NOINLINE std::size_t TeScalesImpl(const std::uint32_t* HWY_RESTRICT a, std::size_t nb, const TeScaleSpec& s,
                                      std::uint32_t* HWY_RESTRICT bits, float* HWY_RESTRICT r) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::RebindToUnsigned<decltype(df)> du;
  const std::size_t N = hn::Lanes(df);
  const auto mult = hn::Set(df, s.mult), g = hn::Set(df, s.g), fmax = hn::Set(df, std::numeric_limits<float>::max());
  const auto one_f = hn::Set(df, 1.0f), inf = hn::Set(df, std::numeric_limits<float>::infinity());
  const MiniParams e4m3 = Mini(0);
  std::size_t first = nb;  // the first block whose e is infinite
  auto one = [&](const std::uint32_t* src, std::uint32_t* pb, float* pr, std::size_t k) {
    const auto v = hn::Min(hn::Mul(hn::BitCast(df, hn::LoadU(du, src)), mult), fmax);
    const auto code = E4m3EvenCode(df, v);
    hn::StoreU(hn::BitCast(du, code), du, pb);
    const auto e = hn::Mul(MiniValue(di, code, e4m3), g);
    hn::StoreU(hn::IfThenElse(hn::Eq(e, hn::Zero(df)), fmax, hn::Min(hn::Div(one_f, e), fmax)), df, pr);
    const intptr_t at = hn::FindFirstTrue(df, hn::Eq(e, inf));
    if (at >= 0 && first == nb && k + static_cast<std::size_t>(at) < nb) first = k + static_cast<std::size_t>(at);
  };
  ForScaleVectors(a, nb, N, bits, r, one);
  return first;
}

// ---- Burn's block scales (BurnScaleSpec)
//
// Each of Burn's steps is the one IEEE f32 operation it names (2a is exact below its overflow;
// divps and mulps round once), the grid's round-up is GridRoundUp's exact arithmetic on q's bits, and the
// divisor is one f32 product: N blocks at a time, the tail through a padded buffer.
HWY_NOINLINE bool BurnScalesImpl(const std::uint32_t* HWY_RESTRICT a, std::size_t nb, const BurnScaleSpec& spec,
                                 std::uint32_t* HWY_RESTRICT bits, float* HWY_RESTRICT divisor) {
  const BurnScaleSpec s = spec;  // a copy the stores below cannot alias
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const std::size_t N = hn::Lanes(df);
  const auto vW = hn::Set(df, s.W), vg = hn::Set(df, s.g);
  const auto point_one = hn::Set(df, 0.1f);
  const auto zero = hn::Zero(df);
  const auto magnitude = hn::Set(du, 0x7FFFFFFFu);
  // The largest 2a and g * c seen: +inf exactly when one overflowed (all are >= 0).
  auto top = zero;
  auto one = [&](const std::uint32_t* src, std::uint32_t* pb, float* pd, std::size_t) QSCHEME_INLINE_LAMBDA {
    hn::Vec<decltype(df)> q;
    if (s.given) {
      q = hn::BitCast(df, hn::And(hn::LoadU(du, src), magnitude));
    } else {
      const auto av = hn::BitCast(df, hn::LoadU(du, src));
      const auto two_a = hn::Add(av, av);
      top = hn::Max(top, two_a);
      q = hn::Div(two_a, vW);
      if (s.two) q = hn::Div(q, vg);
    }
    hn::Vec<decltype(du)> p;
    hn::Vec<decltype(df)> c;
    GridRoundUp(df, s.grid, q, &p, &c);
    hn::StoreU(p, du, pb);
    const auto ev = s.two ? hn::Mul(vg, c) : c;
    top = hn::Max(top, ev);
    hn::StoreU(hn::IfThenElse(hn::Eq(ev, zero), point_one, ev), df, pd);
  };
  ForScaleVectors(a, nb, N, bits, divisor, one);  // the tail's zero blocks overflow nothing
  return hn::GetLane(hn::MaxOfLanes(df, top)) == std::numeric_limits<float>::infinity();
}

// ---- narrow blocks: one scale per lane
//
// A row whose blocks are narrower than two vectors (N-D blocks cut rows into short segments) is
// processed in chunks with the scales spread out to one per element, so each vector takes any
// mix of blocks. Exact modes divide every lane by its own e in f64 (correctly rounded, hence exact
// by SEMANTICS-fast.md sections 2 and 3); burn modes divide in f32 as Burn does.

constexpr std::size_t kLaneChunk = 256;  // elements per chunk of spread-out scales (stack arrays)

// Stores seg[s] over the run of elements of segment s, for the segments that cover elements
// [c0, c0 + n) of a row (segment s = elements [s*bw, (s+1)*bw)): a broadcast store per vector of
// a run, each next run overwriting the previous one's spill. out has room for n + lanes values.
template <class D, class T>
HWY_INLINE void SpreadRuns(D d, std::size_t c0, std::size_t n, std::size_t bw, const T* HWY_RESTRICT seg,
                           T* HWY_RESTRICT out) {
  const std::size_t N = hn::Lanes(d);
  std::size_t s = c0 / bw, i = 0, run = bw - c0 % bw;  // run: elements left in segment s
  while (i < n) {
    const auto v = hn::Set(d, seg[s]);
    for (std::size_t j = 0; j < run; j += N) hn::StoreU(v, d, out + i + j);
    i += run;
    ++s;
    run = bw;
  }
}

// The FMA operands (s1, s2) of IntCodesFma for e = ee (g: the global, 1 for one level), or false
// when e is not of the form it needs.
HWY_INLINE bool FmaFactors(double e, double g, float* s1, float* s2) {
  if (g == 1.0) {
    *s1 = 1.0f;
    *s2 = static_cast<float>(e);
    return static_cast<double>(*s2) == e;
  }
  *s1 = static_cast<float>(e / g);
  *s2 = static_cast<float>(g);
  std::uint32_t bits;
  std::memcpy(&bits, s1, 4);
  return static_cast<double>(*s2) == g && static_cast<double>(*s1) * g == e && (bits & 0xFFF) == 0;
}

// Spreads segment scales over elements [c0, c0 + n) of a row: burn ones into eb; exact ones into e
// (dequantize: ei null) or their reciprocals ei into inv (quantize), and then e too only when some
// reciprocal is NaN (a scale outside [2^-100, 2^100]), which it returns.
HWY_INLINE bool SpreadScales(std::size_t c0, std::size_t n, std::size_t bw, const double* ee, const float* ei,
                             const float* eb, int mode, double* e_out, float* inv_out, float* eb_out,
                             const double* fma_g = nullptr, bool* fma_ok = nullptr) {
  const hn::ScalableTag<float> df;
  if (mode >= 2) {
    SpreadRuns(df, c0, n, bw, eb, eb_out);
    return false;
  }
  if (!ei) {  // dequantize, f64 scales
    SpreadRuns(hn::ScalableTag<double>(), c0, n, bw, ee, e_out);
    return false;
  }
  SpreadRuns(df, c0, n, bw, ei, inv_out);
  bool far = false;
  const std::size_t first = c0 / bw, last = (c0 + n - 1) / bw;
  for (std::size_t s = first; s <= last; ++s) far |= std::isnan(ei[s]);
  // Every vector divides by e when some 1/e is out of range; otherwise only a redo needs e, and
  // QuantizeLanes looks it up then.
  if (far) SpreadRuns(hn::ScalableTag<double>(), c0, n, bw, ee, e_out);
  if (fma_g) {
    // IntCodesFma's per-lane factor into eb_out: e (one level, s1 = 1) or s_j = e / g (s2 = g).
    HWY_ALIGN float sv[kLaneChunk + 1];
    bool ok = !far;
    for (std::size_t s = first; ok && s <= last; ++s) {
      float s1, s2;
      ok = FmaFactors(ee[s], *fma_g, &s1, &s2);
      sv[s - first] = *fma_g == 1.0 ? s2 : s1;
    }
    *fma_ok = ok;
    if (ok) SpreadRuns(df, c0 - first * bw, n, bw, sv, eb_out);
  }
  return far;
}

HWY_INLINE bool NarrowBlocks(std::size_t bw) { return bw < 2 * hn::Lanes(hn::ScalableTag<double>()); }

// Calls fn(c0, n, e, inv, far, eb) for chunks [c0, c0 + n) of a row of L elements, the chunk's
// segment scales spread to one per element.
// With fma_g (quantize, an asymmetric integer kind on an FMA target), b gets IntCodesFma's
// per-lane factor instead and fn's last argument says whether every segment had the form it needs.
template <class Fn>
HWY_INLINE void ForLaneChunks(std::size_t L, std::size_t bw, const double* ee, const float* ei, const float* eb,
                              int mode, Fn fn, const double* fma_g = nullptr) {
  constexpr std::size_t kPad = HWY_MAX_BYTES / sizeof(float);  // SpreadRuns' spill
  HWY_ALIGN double e[kLaneChunk + kPad];
  HWY_ALIGN float inv[kLaneChunk + kPad];
  HWY_ALIGN float b[kLaneChunk + kPad];
  for (std::size_t c0 = 0; c0 < L; c0 += kLaneChunk) {
    const std::size_t n = L - c0 < kLaneChunk ? L - c0 : kLaneChunk;
    bool fma_ok = false;
    const bool far = SpreadScales(c0, n, bw, ee, ei, eb, mode, e, inv, b, fma_g, &fma_ok);
    fn(c0, n, e, inv, far, b, fma_ok);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
