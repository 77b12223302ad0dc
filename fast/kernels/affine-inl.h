// Per-target integer codes with a zero point, q = clamp(round(t) + z, lo, hi), and their values
// f32((q - z) * s): affine mode (docs/SEMANTICS.md section 14) and the extension kinds (u8, u4,
// u2, i16, u16; z = 0 in sym mode) under every point the fast engine runs for them.
//
// Exactness (docs/SEMANTICS-fast.md section 11). Clamping and rounding commute for integer
// bounds, and z is an integer in [lo, hi], so
//   clamp(round(t) + z, lo, hi) = clamp(round(clamp(t, lo - hi, hi - lo)) + z, lo, hi):
// outside the window [lo - hi, hi - lo] both sides clamp to the same end. The window is the same
// for every block, so a kernel call needs one set of constants whatever its zero points.
//  * exact, kinds of at most 8 bits (a window within [-255, 255]): the f32-lane codes of
//    codes-inl.h with the window as their range (|x/e| <= 2^8 is all that needs the right
//    rounding, as there), redone exactly near a half-integer (NearIntCodes) and divided in f64
//    where 1/e is out of f32 range.
//  * exact, 16-bit kinds (a window within [-65535, 65535]): the correctly rounded f64 division of
//    every lane: every rounding boundary that matters has |K/2| < 2^16, and a non-tie lies at
//    least 2^-52 (relative) from it, beyond the division's 2^-53.
//  * divide (onnx: ties to even; burn: ties away) and multiply (torch): the f32 quotient t of the
//    rule's one IEEE operation, rounded in f32 (an integer of at most 17 bits there is exact).
// Values: q - z is an integer of at most 17 bits, exact in f32, and f32(q - z) * s one IEEE
// multiplication: the one rounding of (q - z) * s. Two levels (sym only): q * s_j * g is exact
// in f64 (16 + 11 + 24 bits) and rounded once by the demotion.

#if defined(QSCHEME_FAST_KERNELS_AFFINE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_AFFINE_INL_H_
#undef QSCHEME_FAST_KERNELS_AFFINE_INL_H_
#else
#define QSCHEME_FAST_KERNELS_AFFINE_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fast/kernels/codes-inl.h"
#include "fast/kernels/dispatch.h"
#include "fast/kernels/pack-inl.h"
#include "fast/kernels/vector-inl.h"
#include "fast/support/prefetch_window.hpp"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs over the vectors of a call's elements [0, len), element i in block (start + i) / bw -
// start / bw (bw == 0: block 0 for all): whole(k, i0, i1) for the whole vectors [i0, i1) that
// lie in block k, one call per block, so that a block's parameters are set once and stay in
// registers; lanes(i, valid) for a vector whose lanes lie in several blocks (narrow blocks, a
// boundary inside the vector), and for the tail (valid < N), whose callee looks each lane up
// (LaneBlocks). A block per element (bw == 1) is the callers' own loop.
template <class Whole, class Lanes>
HWY_INLINE void ForBlockVectors(std::size_t len, std::size_t start, std::size_t bw, std::size_t N, Whole whole,
                                Lanes lanes) {
  std::size_t i = 0;
  if (bw == 0) {
    if (len >= N) whole(std::size_t{0}, std::size_t{0}, len / N * N);
    i = len / N * N;
  } else {
    std::size_t k = 0, end = bw - start % bw;  // block k covers elements [end - bw, end)
    while (i + N <= len) {
      if (i + N <= end) {
        const std::size_t stop = (end < len ? end : len) - i;
        const std::size_t i1 = i + stop / N * N;
        whole(k, i, i1);
        i = i1;
      } else {
        lanes(i, N);
        i += N;
      }
      while (i >= end) {
        ++k;
        end += bw;
      }
    }
  }
  if (i < len) lanes(i, len - i);
}

// The block of each lane of the vector at element i: idx[j] for lane j < valid; the lanes past
// valid repeat the last valid lane's block.
HWY_INLINE void LaneBlocks(std::size_t i, std::size_t valid, std::size_t start, std::size_t bw, std::size_t N,
                           std::size_t* idx) {
  for (std::size_t j = 0; j < N; ++j) {
    const std::size_t p = start + i + (j < valid ? j : valid - 1);
    idx[j] = bw == 0 ? 0 : p / bw - start / bw;
  }
}

// The per-lane parameters of one vector of codes: the f32 operand r (exact: InvF32(e)), the
// scale e in two f64 halves (exact only), the zero point z, and whether some lane's r is NaN
// (exact: e out of [2^-100, 2^100], divided in f64).
template <class DF>
struct AffineLanes {
  using DD = hn::Rebind<double, hn::Half<DF>>;
  using DI = hn::Rebind<std::int32_t, DF>;
  hn::Vec<DF> r;
  hn::Vec<DD> e_lo, e_hi;
  hn::Vec<DI> z;
  bool far = false;
};

// Codes of one vector under op kOp (kWide: a 16-bit kind's exact codes), before the store.
template <AffineOp kOp, bool kWide, class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> AffineVector(DF df, hn::Vec<DF> x, const AffineLanes<DF>& p,
                                                              const AffineSpec& s, const CodeSpec& window,
                                                              const FastConsts<DF>& k) {
  const hn::Rebind<std::int32_t, DF> di;
  hn::Vec<decltype(di)> q;
  if constexpr (kOp == AffineOp::exact) {
    if (kWide || p.far) {
      q = ExactCodesF64(df, x, p.e_lo, p.e_hi, window);
    } else if (HWY_UNLIKELY(!hn::AllFalse(df, FastCodesNear<false, true>(df, x, p.r, k, &q)))) {
      q = NearIntCodes(df, x, p.r, p.e_lo, p.e_hi, k);
    }
  } else {
    const auto t = kOp == AffineOp::divide ? hn::Div(x, p.r) : hn::Mul(x, p.r);
    hn::Vec<DF> qf;
    if (kOp == AffineOp::divide && s.away) {
      // Rust's f32::round; t - trunc(t) is exact, and an infinite t keeps trunc(t) = t.
      const auto tr = hn::Trunc(t);
      const auto step = hn::Or(hn::And(t, hn::Set(df, -0.0f)), hn::Set(df, 1.0f));
      qf = hn::IfThenElse(hn::Ge(hn::Abs(hn::Sub(t, tr)), hn::Set(df, 0.5f)), hn::Add(tr, step), tr);
    } else {
      qf = hn::Round(t);  // ties to even
    }
    if constexpr (kOp == AffineOp::multiply) {
      // torch's cast to int64: NaN (0 * inf) and |t| >= 2^63 become INT64_MIN, then lo.
      const auto bad = hn::Or(hn::IsNaN(t), hn::Ge(hn::Abs(t), hn::Set(df, 0x1p63f)));
      qf = hn::IfThenZeroElse(bad, hn::Min(hn::Max(qf, k.flo), k.fhi));
      q = hn::Add(hn::ConvertTo(di, qf), p.z);
      q = hn::Min(hn::Max(q, hn::Set(di, s.lo)), hn::Set(di, s.hi));
      return hn::IfThenElse(hn::RebindMask(di, bad), hn::Set(di, s.lo), q);
    }
    q = hn::ConvertTo(di, hn::Min(hn::Max(qf, k.flo), k.fhi));
  }
  return hn::Min(hn::Max(hn::Add(q, p.z), hn::Set(di, s.lo)), hn::Set(di, s.hi));
}

// The code loop over the whole vectors [i0, i1): lanes_at(i) gives the vector's parameters. The
// arguments are values, not references to the caller's objects: a byte store may alias any object
// whose address escaped, and each would be loaded again after every store (some 40% of a
// given-scale call's time in cache).
template <AffineOp kOp, bool kWide, class DF, class LanesAt>
HWY_INLINE void AffineCodeLoop(DF df, const float* HWY_RESTRICT x, std::size_t i0, std::size_t i1,
                               const float* pf, LanesAt lanes_at, const AffineSpec s, const CodeSpec window,
                               const FastConsts<DF> k, std::int32_t* HWY_RESTRICT out32,
                               std::uint8_t* HWY_RESTRICT out8) {
  const hn::Rebind<std::int32_t, DF> di;
  const std::size_t N = hn::Lanes(df);
  if (out32) {
    for (std::size_t i = i0; i < i1; i += N) {
      if (i % 16 == 0) hwy::Prefetch(pf + i);
      hn::StoreU(AffineVector<kOp, kWide>(df, hn::LoadU(df, x + i), lanes_at(i), s, window, k), di, out32 + i);
    }
  } else {
    for (std::size_t i = i0; i < i1; i += N) {
      if (i % 16 == 0) hwy::Prefetch(pf + i);
      StoreCodeBytes(di, AffineVector<kOp, kWide>(df, hn::LoadU(df, x + i), lanes_at(i), s, window, k), out8 + i);
    }
  }
}

template <AffineOp kOp, bool kWide>
HWY_INLINE void QuantizeAffineT(const float* HWY_RESTRICT x, std::size_t len, std::size_t start, std::size_t bw,
                                const float* HWY_RESTRICT r, const double* HWY_RESTRICT e,
                                const std::int32_t* HWY_RESTRICT z, const AffineSpec& s,
                                std::int32_t* HWY_RESTRICT out32, std::uint8_t* HWY_RESTRICT out8) {
  using DF = hn::ScalableTag<float>;
  const DF df;
  const hn::Rebind<std::int32_t, DF> di;
  const hn::Rebind<double, hn::Half<DF>> dd;
  const std::size_t N = hn::Lanes(df), H = hn::Lanes(dd);
  CodeSpec window;
  window.lo = s.lo - s.hi;
  window.hi = s.hi - s.lo;
  const FastConsts<DF> k(df, window);
  constexpr bool kExact = kOp == AffineOp::exact;
  // x sits in L1 (a unit just calibrated it): ask for what follows it; else for its own lines.
  const float* pf = s.x_just_read ? x + len + WindowLead(x + len, kReadAhead) : x + kColdLead;
  // Whole vectors of block b: its parameters broadcast once.
  auto whole = [&](std::size_t b, std::size_t i0, std::size_t i1) {
    AffineLanes<DF> p;
    p.r = hn::Set(df, r[b]);
    p.e_lo = p.e_hi = hn::Set(dd, kExact ? e[b] : 0.0);
    p.far = kExact && std::isnan(r[b]);
    p.z = hn::Set(di, z ? z[b] : 0);
    AffineCodeLoop<kOp, kWide>(df, x, i0, i1, pf, [p](std::size_t) { return p; }, s, window, k, out32, out8);
  };
  // One vector whose lanes each look their block up (through the stack), valid of them real.
  auto lanes = [&](std::size_t i, std::size_t valid) {
    HWY_ALIGN float rb[HWY_MAX_BYTES / sizeof(float)];
    HWY_ALIGN double eb[HWY_MAX_BYTES / sizeof(float)];
    HWY_ALIGN std::int32_t zb[HWY_MAX_BYTES / sizeof(float)];
    HWY_ALIGN float xb[HWY_MAX_BYTES / sizeof(float)] = {};
    std::size_t idx[HWY_MAX_BYTES / sizeof(float)];
    LaneBlocks(i, valid, start, bw, N, idx);
    for (std::size_t j = 0; j < N; ++j) {
      rb[j] = r[idx[j]];
      eb[j] = kExact ? e[idx[j]] : 0.0;
      zb[j] = z ? z[idx[j]] : 0;
    }
    AffineLanes<DF> p;
    p.r = hn::Load(df, rb);
    p.e_lo = hn::Load(dd, eb);
    p.e_hi = hn::Load(dd, eb + H);
    p.far = kExact && !hn::AllTrue(df, hn::Eq(p.r, p.r));
    p.z = hn::Load(di, zb);
    std::memcpy(xb, x + i, valid * sizeof(float));
    const auto q = AffineVector<kOp, kWide>(df, hn::Load(df, xb), p, s, window, k);
    if (valid == N) {
      if (out32) return hn::StoreU(q, di, out32 + i);
      return StoreCodeBytes(di, q, out8 + i);
    }
    HWY_ALIGN std::int32_t o[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(q, di, o);
    for (std::size_t j = 0; j < valid; ++j) {
      if (out32) {
        out32[i + j] = o[j];
      } else {
        out8[i + j] = static_cast<std::uint8_t>(o[j] & 0xFF);
      }
    }
  };
  if (bw == 1) {
    // A block per element (a scale per column of a row): the parameters are vectors themselves.
    auto lanes_at = [df, dd, di, H, r, e, z](std::size_t i) {
      AffineLanes<DF> p;
      p.r = hn::LoadU(df, r + i);
      p.e_lo = kExact ? hn::LoadU(dd, e + i) : hn::Zero(dd);
      p.e_hi = kExact ? hn::LoadU(dd, e + i + H) : hn::Zero(dd);
      p.far = kExact && !hn::AllTrue(df, hn::Eq(p.r, p.r));
      p.z = z ? hn::LoadU(di, z + i) : hn::Zero(di);
      return p;
    };
    const std::size_t i = len / N * N;
    AffineCodeLoop<kOp, kWide>(df, x, 0, i, pf, lanes_at, s, window, k, out32, out8);
    if (i < len) lanes(i, len - i);
    return;
  }
  ForBlockVectors(len, start, bw, N, whole, lanes);
}

HWY_NOINLINE void QuantizeAffineImpl(const float* HWY_RESTRICT x, std::size_t len, std::size_t start, std::size_t bw,
                                     const float* HWY_RESTRICT r, const double* HWY_RESTRICT e,
                                     const std::int32_t* HWY_RESTRICT z, const AffineSpec& s,
                                     std::int32_t* HWY_RESTRICT out32, std::uint8_t* HWY_RESTRICT out8) {
  switch (s.op) {
    case AffineOp::exact:
      if (s.hi - s.lo > 255) return QuantizeAffineT<AffineOp::exact, true>(x, len, start, bw, r, e, z, s, out32, out8);
      return QuantizeAffineT<AffineOp::exact, false>(x, len, start, bw, r, e, z, s, out32, out8);
    case AffineOp::divide:
      return QuantizeAffineT<AffineOp::divide, false>(x, len, start, bw, r, e, z, s, out32, out8);
    case AffineOp::multiply:
      return QuantizeAffineT<AffineOp::multiply, false>(x, len, start, bw, r, e, z, s, out32, out8);
  }
}

HWY_NOINLINE void DequantAffineImpl(const std::int32_t* HWY_RESTRICT c32, const std::uint8_t* HWY_RESTRICT c8,
                                    bool c8_signed, std::size_t len, std::size_t start, std::size_t bw,
                                    const float* HWY_RESTRICT sv, const std::int32_t* HWY_RESTRICT z, double g,
                                    float* HWY_RESTRICT out) {
  using DF = hn::ScalableTag<float>;
  const DF df;
  const hn::Rebind<std::int32_t, DF> di;
  const hn::Rebind<std::uint8_t, DF> du8;
  const hn::Rebind<std::int8_t, DF> di8;
  const hn::Half<DF> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const std::size_t N = hn::Lanes(df);
  const bool two = g != 1.0;
  const auto vg = hn::Set(dd, g);
  auto value = [&](hn::Vec<decltype(di)> q, hn::Vec<DF> vs, hn::Vec<decltype(di)> vz) QSCHEME_INLINE_LAMBDA {
    const auto d = hn::ConvertTo(df, hn::Sub(q, vz));  // exact: at most 17 bits
    if (!two) return hn::Mul(d, vs);
    auto half = [&](hn::Vec<decltype(dh)> dv, hn::Vec<decltype(dh)> sh) {
      return DemoteToF32Overflowing(dh, dd, hn::Mul(hn::Mul(hn::PromoteTo(dd, dv), hn::PromoteTo(dd, sh)), vg));
    };
    return hn::Combine(df, half(hn::UpperHalf(dh, d), hn::UpperHalf(dh, vs)), half(hn::LowerHalf(dh, d), hn::LowerHalf(dh, vs)));
  };
  auto load = [&](std::size_t i) QSCHEME_INLINE_LAMBDA {
    if (c32) return hn::LoadU(di, c32 + i);
    return c8_signed ? hn::PromoteTo(di, hn::LoadU(di8, reinterpret_cast<const std::int8_t*>(c8) + i))
                     : hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<decltype(di)>(), hn::LoadU(du8, c8 + i)));
  };
  auto whole = [&](std::size_t b, std::size_t i0, std::size_t i1) {
    const auto vs = hn::Set(df, sv[b]);
    const auto vz = hn::Set(di, z ? z[b] : 0);
    for (std::size_t i = i0; i < i1; i += N) hn::StoreU(value(load(i), vs, vz), df, out + i);
  };
  auto lanes = [&](std::size_t i, std::size_t valid) {
    HWY_ALIGN float sb[HWY_MAX_BYTES / sizeof(float)];
    HWY_ALIGN std::int32_t zb[HWY_MAX_BYTES / sizeof(float)];
    HWY_ALIGN std::int32_t qb[HWY_MAX_BYTES / sizeof(float)] = {};
    std::size_t idx[HWY_MAX_BYTES / sizeof(float)];
    LaneBlocks(i, valid, start, bw, N, idx);
    for (std::size_t j = 0; j < N; ++j) {
      sb[j] = sv[idx[j]];
      zb[j] = z ? z[idx[j]] : 0;
    }
    for (std::size_t j = 0; j < valid; ++j) {
      qb[j] = c32 ? c32[i + j] : c8_signed ? static_cast<std::int8_t>(c8[i + j]) : c8[i + j];
    }
    const auto y = value(hn::Load(di, qb), hn::Load(df, sb), hn::Load(di, zb));
    if (valid == N) return hn::StoreU(y, df, out + i);
    HWY_ALIGN float o[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(y, df, o);
    std::memcpy(out + i, o, valid * sizeof(float));
  };
  if (bw == 1) {
    std::size_t i = 0;
    for (; i + N <= len; i += N) hn::StoreU(value(load(i), hn::LoadU(df, sv + i), z ? hn::LoadU(di, z + i) : hn::Zero(di)), df, out + i);
    if (i < len) lanes(i, len - i);
    return;
  }
  ForBlockVectors(len, start, bw, N, whole, lanes);
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
