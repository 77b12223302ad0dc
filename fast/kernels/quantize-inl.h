// Per-target quantize kernels: x / e rounded to codes under the exact profile (f32 lanes with an
// exact redo near a boundary, f64 division when a scale is out of range) and the burn profile,
// as i32 codes of a segment or of whole runs of rows (QuantizeRow) and as one-byte codes of a
// unit of the bytes path (QuantizeCodes).
//
// Exactness (details and proofs in docs/SEMANTICS-fast.md):
//  * exact profile: x (f32, 24 bits) is promoted to f64 and divided by e (f64, <= 35 significant
//    bits). IEEE division is correctly rounded, so the f64 quotient is within 2^-53 (relative) of
//    x/e. A rounding boundary (k + 1/2 for integers, a midpoint of the minifloat grid) is either hit
//    exactly by x/e -- then the boundary is an f64 value and the quotient is exact -- or missed by
//    at least 2^-44 relative. Hence rounding the f64 quotient decides exactly as rounding x/e.

#if defined(QSCHEME_FAST_KERNELS_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_QUANTIZE_INL_H_
#undef QSCHEME_FAST_KERNELS_QUANTIZE_INL_H_
#else
#define QSCHEME_FAST_KERNELS_QUANTIZE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "fast/kernels/codes-inl.h"
#include "fast/kernels/dispatch.h"
#include "fast/kernels/pack-inl.h"
#include "fast/kernels/scales-inl.h"
#include "fast/kernels/vector-inl.h"
#include "fast/support/prefetch_window.hpp"
#include "fast/support/run_rows.hpp"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// NearIntCodes of the vector at x (one scale e, vinv = f32(1/e)), out of line.
template <class DF>
HWY_NOINLINE void NearIntCodesI32At(DF df, const float* HWY_RESTRICT x, hn::Vec<DF> vinv, double e,
                                    const FastConsts<DF>& k, std::int32_t* HWY_RESTRICT out) {
  const hn::Rebind<double, hn::Half<DF>> dd;
  hn::StoreU(NearIntCodes(df, hn::LoadU(df, x), vinv, hn::Set(dd, e), hn::Set(dd, e), k),
             hn::Rebind<std::int32_t, DF>(), out);
}

// Code specs of the exact kernels: integers in [lo, hi], or minifloat fmt.
HWY_INLINE CodeSpec IntSpec(int lo, int hi) {
  CodeSpec c;
  c.lo = lo;
  c.hi = hi;
  return c;
}
HWY_INLINE CodeSpec FloatSpec(int fmt) {
  CodeSpec c;
  c.fmt = fmt;
  return c;
}

// i32 codes of the vector at x by the exact f64 division, out of line: the hot loop stays lean.
template <class DF>
HWY_NOINLINE void ExactCodesI32At(DF df, const float* HWY_RESTRICT x, double e, const CodeSpec& c,
                                  std::int32_t* HWY_RESTRICT out) {
  hn::StoreU(ExactCodesF64(df, hn::LoadU(df, x), e, c), hn::Rebind<std::int32_t, DF>(), out);
}

HWY_NOINLINE void QuantizeZeroScaleImpl(const float* HWY_RESTRICT x, std::size_t n, int sign_code,
                                        std::int32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<int32_t> di;
  const std::size_t N = hn::Lanes(df);
  const auto vs = hn::Set(di, sign_code);
  auto one = [&](const float* src, std::int32_t* dst) {
    const auto neg = hn::Lt(hn::BitCast(di, hn::LoadU(df, src)), hn::Zero(di));  // sign bit set
    hn::StoreU(hn::IfThenElseZero(neg, vs), di, dst);
  };
  ForEachVectorPadded(x, out, n, N, one);
}

HWY_NOINLINE void QuantizeBurnIntImpl(const float* HWY_RESTRICT x, std::size_t n, float e, int lo, int hi,
                                      std::int32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<int32_t> di;
  const std::size_t N = hn::Lanes(df);
  const auto ve = hn::Set(df, e), vlo = hn::Set(df, static_cast<float>(lo)), vhi = hn::Set(df, static_cast<float>(hi));
  const auto half = hn::Set(df, 0.5f);
  const auto signmask = hn::Set(df, -0.0f);
  const auto onef = hn::Set(df, 1.0f);
  auto one = [&](const float* src, std::int32_t* dst) {
    const auto t = hn::Div(hn::LoadU(df, src), ve);  // f32, may be +-inf
    const auto tr = hn::Trunc(t);
    // t - trunc(t) is exact; round half away from zero (Rust f32::round). For t = +-inf the
    // difference is NaN, the compare false, and the clamp below saturates.
    const auto away = hn::Ge(hn::Abs(hn::Sub(t, tr)), half);
    const auto step = hn::Or(hn::And(t, signmask), onef);  // copysign(1, t)
    auto q = hn::IfThenElse(away, hn::Add(tr, step), tr);
    q = hn::Min(hn::Max(q, vlo), vhi);
    hn::StoreU(hn::ConvertTo(di, q), di, dst);
  };
  ForEachVectorPadded(x, out, n, N, one);
}

HWY_NOINLINE void QuantizeBurnFloatImpl(const float* HWY_RESTRICT x, std::size_t n, float e, int fmt,
                                        std::int32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<double> dd;
  const HalfF32<decltype(dd)> df;
  const HalfI32<decltype(dd)> di;
  const std::size_t N = hn::Lanes(dd);
  const MiniParams mp = Mini(fmt);
  const auto ve = hn::Set(df, e);
  const int sign_shift = mp.sign == 0x80 ? 24 : 28;
  auto one = [&](const float* src, std::int32_t* dst) {
    const auto t = hn::Div(hn::LoadU(df, src), ve);  // f32 quotient, the one Burn rounds
    const auto code = hn::DemoteTo(di, MiniMagCode(dd, hn::PromoteTo(dd, hn::Abs(t)), mp.m, mp.emin, mp.vmax));
    const auto sbit = hn::BitCast(di, hn::ShiftRightSame(hn::BitCast(hn::RebindToUnsigned<decltype(di)>(), t),
                                                         sign_shift));
    hn::StoreU(hn::Or(code, hn::And(sbit, hn::Set(di, mp.sign))), di, dst);
  };
  ForEachVectorPadded(x, out, n, N, one);
}

// ---- the asymmetric kinds' lowest code, put back in the code loops
//
// Codes clamped at -hi are exact wherever x/e > -W/2 (fast/support/lowest_code.hpp). In a tight block
// whose scale did not saturate, the only x at or below -W/2 is x = -a (then x/e == -W/2, a tie
// that rounds to the even lo), so one compare of the bits against that block's pattern puts lo
// back; kNoLowest (a NaN pattern: inputs are finite here) marks the other blocks.
constexpr std::uint32_t kNoLowest = 0xFFFFFFFFu;

template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> PutLowest(DF /*df*/, hn::Vec<DF> x,
                                                           hn::Vec<hn::RebindToUnsigned<DF>> pat,
                                                           hn::Vec<hn::Rebind<std::int32_t, DF>> lowest,
                                                           hn::Vec<hn::Rebind<std::int32_t, DF>> q) {
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<std::int32_t, DF> di;
  return hn::IfThenElse(hn::RebindMask(di, hn::Eq(hn::BitCast(du, x), pat)), lowest, q);
}

// The codes of one vector of QuantizeLanes that FastCodes flagged (or of a chunk with an
// out-of-range reciprocal), lane by lane in f64: NearIntCodes for integers with finite
// reciprocals, else the exact division. e: the lanes' scales (far), or null to look them up as
// ee[(at + j) / bw] (lanes past `left` take the last element's scale).
template <class DF>
HWY_NOINLINE void RedoLanes(const float* HWY_RESTRICT xs, const float* HWY_RESTRICT is, const double* HWY_RESTRICT e,
                            const double* HWY_RESTRICT ee, std::size_t at, std::size_t bw, std::size_t left,
                            const CodeSpec& c, const FastConsts<DF>& k, std::int32_t* HWY_RESTRICT dst) {
  const DF df;
  const hn::Rebind<std::int32_t, DF> di;
  const hn::Rebind<double, hn::Half<DF>> dd;
  const std::size_t N = hn::Lanes(df), H = hn::Lanes(dd);
  HWY_ALIGN double ebuf[HWY_MAX_BYTES / sizeof(float)];
  for (std::size_t j = 0; j < N; ++j) {
    const std::size_t jj = j < left ? j : left - 1;
    ebuf[j] = e ? e[jj] : ee[(at + jj) / bw];
  }
  const auto e_lo = hn::Load(dd, ebuf), e_hi = hn::Load(dd, ebuf + H);
  const auto xv = hn::LoadU(df, xs);
  const auto q = e || c.fmt >= 0 ? ExactCodesF64(df, xv, e_lo, e_hi, c) : NearIntCodes(df, xv, hn::LoadU(df, is), e_lo, e_hi, k);
  hn::StoreU(q, di, dst);
}

// Quantizes n <= kLaneChunk elements, elements [c0, c0 + n) of a row cut into segments of bw with
// scales ee: inv = InvF32(e) (exact modes, 0 = zero scale; far: some inv is NaN) or eb (burn) per
// element. e holds the per-element scales only when far; otherwise the rare vector that needs
// them (a redo near a rounding boundary) looks them up in ee.
HWY_INLINE void QuantizeLanes(const float* HWY_RESTRICT x, std::size_t n, const double* HWY_RESTRICT e,
                              const double* HWY_RESTRICT ee, std::size_t c0, std::size_t bw,
                              const float* HWY_RESTRICT inv, bool far, const float* HWY_RESTRICT eb, int mode, int lo,
                              int hi, int fmt, std::int32_t* HWY_RESTRICT out,
                              const std::uint32_t* HWY_RESTRICT pat = nullptr) {
  const MiniParams mp = Mini(fmt);
  const int sign_shift = mp.sign == 0x80 ? 24 : 28;
  if (mode <= 1) {
    // f32 lanes from x * inv, each lane with its own block's inv; a vector near a rounding
    // boundary is redone (NearIntCodes, or the exact f64 division for minifloats and for any
    // chunk with a NaN inv), lane by lane.
    const hn::ScalableTag<float> df;
    const hn::Rebind<std::int32_t, decltype(df)> di;
    const std::size_t N = hn::Lanes(df);
    const CodeSpec c = mode == 0 ? IntSpec(lo, hi) : FloatSpec(fmt);
    const FastConsts<hn::ScalableTag<float>> k(df, c);
    // i: the vector's first element (its lanes past n are padding, with the last element's scale).
    // Small enough to be inlined; the redo is out of line.
    // pat: each lane's kNoLowest or the bits whose code is lo - 1 (mode 0 with lo = -hi).
    const hn::RebindToUnsigned<decltype(df)> du;
    const auto lowest = hn::Set(di, lo - 1);
    auto one = [&](const float* xs, const float* is, const std::uint32_t* ps, std::size_t i, std::int32_t* dst) {
      hn::Vec<decltype(di)> q;
      const bool fast_ok = !far && (mode == 0 ? FastCodes<false, true>(df, hn::LoadU(df, xs), hn::LoadU(df, is), k, &q)
                                              : FastCodes<true, true>(df, hn::LoadU(df, xs), hn::LoadU(df, is), k, &q));
      if (HWY_UNLIKELY(!fast_ok)) {
        RedoLanes<hn::ScalableTag<float>>(xs, is, far ? e + i : nullptr, ee, c0 + i, bw, n - i, c, k, dst);
        if (ps) hn::StoreU(PutLowest(df, hn::LoadU(df, xs), hn::LoadU(du, ps), lowest, hn::LoadU(di, dst)), di, dst);
        return;
      }
      if (ps) q = PutLowest(df, hn::LoadU(df, xs), hn::LoadU(du, ps), lowest, q);
      hn::StoreU(q, di, dst);
    };
    std::size_t i = 0;
    for (; i + N <= n; i += N) one(x + i, inv + i, pat ? pat + i : nullptr, i, out + i);
    if (i < n) {
      HWY_ALIGN float xb[HWY_MAX_BYTES / sizeof(float)] = {};
      HWY_ALIGN float ib[HWY_MAX_BYTES / sizeof(float)] = {};
      HWY_ALIGN std::uint32_t pb[HWY_MAX_BYTES / sizeof(float)];
      HWY_ALIGN std::int32_t o[HWY_MAX_BYTES / sizeof(float)];
      std::memcpy(xb, x + i, (n - i) * sizeof(float));
      std::memcpy(ib, inv + i, (n - i) * sizeof(float));
      if (pat) {
        for (std::size_t j = 0; j < N; ++j) pb[j] = kNoLowest;
        std::memcpy(pb, pat + i, (n - i) * sizeof(std::uint32_t));
      }
      one(xb, ib, pat ? pb : nullptr, i, o);
      std::memcpy(out + i, o, (n - i) * sizeof(std::int32_t));
    }
    return;
  }
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<std::int32_t> di;
  const hn::ScalableTag<double> dd;
  const HalfI32<decltype(dd)> dhi;
  const std::size_t N = hn::Lanes(df);
  auto one = [&](const float* xs, const float* es, std::int32_t* dst) {
    const auto t = hn::Div(hn::LoadU(df, xs), hn::LoadU(df, es));  // the f32 quotient Burn rounds
    if (mode == 2) {
      const auto tr = hn::Trunc(t);
      const auto away = hn::Ge(hn::Abs(hn::Sub(t, tr)), hn::Set(df, 0.5f));
      const auto step = hn::Or(hn::And(t, hn::Set(df, -0.0f)), hn::Set(df, 1.0f));
      auto q = hn::IfThenElse(away, hn::Add(tr, step), tr);
      q = hn::Min(hn::Max(q, hn::Set(df, static_cast<float>(lo))), hn::Set(df, static_cast<float>(hi)));
      hn::StoreU(hn::ConvertTo(di, q), di, dst);
      return;
    }
    // Two halves through the f64 minifloat encoder.
    const hn::Half<decltype(df)> dh;
    auto half_code = [&](hn::Vec<decltype(dh)> th) {
      return hn::DemoteTo(dhi, MiniMagCode(dd, hn::PromoteTo(dd, hn::Abs(th)), mp.m, mp.emin, mp.vmax));
    };
    const auto code = hn::Combine(di, half_code(hn::UpperHalf(dh, t)), half_code(hn::LowerHalf(dh, t)));
    const auto sbit = hn::BitCast(di, hn::ShiftRightSame(hn::BitCast(hn::RebindToUnsigned<decltype(di)>(), t), sign_shift));
    hn::StoreU(hn::Or(code, hn::And(sbit, hn::Set(di, mp.sign))), di, dst);
  };
  std::size_t i = 0;
  for (; i + N <= n; i += N) one(x + i, eb + i, out + i);
  if (i < n) {
    HWY_ALIGN float xb[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float ebuf[HWY_MAX_BYTES / sizeof(float)];
    HWY_ALIGN std::int32_t o[HWY_MAX_BYTES / sizeof(float)];
    for (std::size_t k = 0; k < N; ++k) ebuf[k] = 1.0f;
    std::memcpy(xb, x + i, (n - i) * sizeof(float));
    std::memcpy(ebuf, eb + i, (n - i) * sizeof(float));
    one(xb, ebuf, o);
    std::memcpy(out + i, o, (n - i) * sizeof(std::int32_t));
  }
}

// How often the asymmetric kinds' cheap codes needed the FMA redo so far in a row: with f32
// scales the block maximum lands next to lo + 1/2 in nearly every block, and once a quarter of
// the vectors are flagged the branch costs more than it saves -- IntCodesFma then decides every
// vector without it. Either way the codes are the same.
struct RedoRate {
  std::size_t seen = 0, flagged = 0;
  bool Branchless() const { return seen >= 16 && 4 * flagged > seen; }
};

#if HWY_NATIVE_FMA
// The asymmetric kinds' integer codes of one vector: FastCodesNear, redone by IntCodesFma when a
// lane is flagged, or IntCodesFma alone once `branchless` (rate.Branchless() for this stretch).
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> AsymmetricIntCodes(DF df, hn::Vec<DF> x, hn::Vec<DF> vinv,
                                                                    hn::Vec<DF> s1, hn::Vec<DF> s2,
                                                                    const FastConsts<DF>& k, bool branchless,
                                                                    RedoRate& rate) {
  if (branchless) return IntCodesFma(df, x, vinv, s1, s2, k);
  ++rate.seen;
  hn::Vec<hn::Rebind<std::int32_t, DF>> q;
  if (HWY_UNLIKELY(!hn::AllFalse(df, FastCodesNear<false, true>(df, x, vinv, k, &q)))) {
    ++rate.flagged;
    return IntCodesFma(df, x, vinv, s1, s2, k);
  }
  return q;
}
#endif

// Integer codes of n <= kLaneChunk elements by IntCodesFma, inv and its factor sv per element:
// (s1, s2) = (1, sv) for one level (g == 1), (sv, g) for two. FMA targets only.
HWY_INLINE void QuantizeLanesFma(const float* HWY_RESTRICT x, std::size_t n, const float* HWY_RESTRICT inv,
                                 const float* HWY_RESTRICT sv, double g, int lo, int hi, RedoRate& rate,
                                 std::int32_t* HWY_RESTRICT out) {
#if HWY_NATIVE_FMA
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::int32_t, decltype(df)> di;
  const std::size_t N = hn::Lanes(df);
  const FastConsts<hn::ScalableTag<float>> k(df, IntSpec(lo, hi));
  const bool one_level = g == 1.0;
  const auto vg = hn::Set(df, static_cast<float>(g)), vone = hn::Set(df, 1.0f);
  const bool branchless = rate.Branchless();
  auto one = [&](const float* xs, const float* is, const float* ss, std::int32_t* dst) {
    const auto s = hn::LoadU(df, ss);
    hn::StoreU(AsymmetricIntCodes(df, hn::LoadU(df, xs), hn::LoadU(df, is), one_level ? vone : s, one_level ? s : vg, k,
                                  branchless, rate),
               di, dst);
  };
  std::size_t i = 0;
  for (; i + N <= n; i += N) one(x + i, inv + i, sv + i, out + i);
  if (i < n) {
    HWY_ALIGN float xb[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float ib[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float sb[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN std::int32_t o[HWY_MAX_BYTES / sizeof(float)];
    std::memcpy(xb, x + i, (n - i) * sizeof(float));
    std::memcpy(ib, inv + i, (n - i) * sizeof(float));
    std::memcpy(sb, sv + i, (n - i) * sizeof(float));
    one(xb, ib, sb, o);
    std::memcpy(out + i, o, (n - i) * sizeof(std::int32_t));
  }
#else
  (void)x, (void)n, (void)inv, (void)sv, (void)g, (void)lo, (void)hi, (void)rate, (void)out;
#endif
}

// Exact codes of a row of L elements, segment s of bw (>= one vector) under ee[s], ei[s] =
// InvF32(ee[s]); a zero scale multiplies by inv = 0, giving the zero code with x's sign. The
// constants stay in registers across segments. Asymmetric integer kinds take IntCodesFma on FMA
// targets (ee[s] = s_j * g, g = 1 for one level).
// lowest (integers clamped at lo = -hi only): per segment, kNoLowest or the bits whose code is
// lo - 1.
template <bool kFloat>
HWY_INLINE void QuantizeExactRow(const float* HWY_RESTRICT x, std::size_t L, std::size_t bw, const double* ee,
                                 const float* ei, double g, const CodeSpec& c, std::int32_t* HWY_RESTRICT out,
                                 const std::uint32_t* lowest = nullptr) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::int32_t, decltype(df)> di;
  const hn::RebindToUnsigned<decltype(df)> du;
  const auto vlowest = hn::Set(di, c.lo - 1);
  const std::size_t N = hn::Lanes(df);
  const FastConsts<hn::ScalableTag<float>> k(df, c);
#if HWY_NATIVE_FMA
  RedoRate rate;
#endif
  for (std::size_t off = 0, s = 0; off < L; off += bw, ++s) {
    const std::size_t cnt = L - off < bw ? L - off : bw;
    const double e = ee[s];
    const bool far = std::isnan(ei[s]);
    const auto vinv = hn::Set(df, far ? 0.0f : ei[s]);
#if HWY_NATIVE_FMA
    float s1 = 0, s2 = 0;
    if (!kFloat && c.lo != -c.hi && !far && FmaFactors(e, g, &s1, &s2)) {
      const auto v1 = hn::Set(df, s1), v2 = hn::Set(df, s2);
      const bool branchless = rate.Branchless();
      auto one = [&](const float* src, std::int32_t* dst) {
        hn::StoreU(AsymmetricIntCodes(df, hn::LoadU(df, src), vinv, v1, v2, k, branchless, rate), di, dst);
      };
      ForEachVectorPadded(x + off, out + off, cnt, N, one);
      continue;
    }
#else
    (void)g;
#endif
    const auto vpat = hn::Set(du, lowest ? lowest[s] : kNoLowest);
    auto one = [&](const float* src, std::int32_t* dst) {
      hn::Vec<decltype(di)> q;
      const bool fast_ok = !far && FastCodes<kFloat, true>(df, hn::LoadU(df, src), vinv, k, &q);
      if (HWY_UNLIKELY(!fast_ok)) {
        if (kFloat || far) {
          ExactCodesI32At(df, src, e, c, dst);
        } else {
          NearIntCodesI32At(df, src, vinv, e, k, dst);
        }
        if (lowest) hn::StoreU(PutLowest(df, hn::LoadU(df, src), vpat, vlowest, hn::LoadU(di, dst)), di, dst);
        return;
      }
      if (lowest) q = PutLowest(df, hn::LoadU(df, src), vpat, vlowest, q);
      hn::StoreU(q, di, dst);
    };
    ForEachVectorPadded(x + off, out + off, cnt, N, one);
  }
}

// One segment: the entry points with scalar twins of their own.
HWY_NOINLINE void QuantizeExactIntImpl(const float* HWY_RESTRICT x, std::size_t n, double e, int lo, int hi,
                                       std::int32_t* HWY_RESTRICT out) {
  const float inv = InvF32(e);
  QuantizeExactRow<false>(x, n, n, &e, &inv, 1.0, IntSpec(lo, hi), out);
}

HWY_NOINLINE void QuantizeExactFloatImpl(const float* HWY_RESTRICT x, std::size_t n, double e, int fmt,
                                         std::int32_t* HWY_RESTRICT out) {
  const float inv = InvF32(e);
  QuantizeExactRow<true>(x, n, n, &e, &inv, 1.0, FloatSpec(fmt), out);
}

// groups of `rows` consecutive rows of L elements (x + gi * gstride + r * L), each crossing the
// same ceil(L / bw) blocks:
// segment s uses scale ee[s] and ei[s] = InvF32(ee[s]) (exact) or eb[s] (burn): mode 0 exact
// int, 1 exact float, 2 burn int, 3 burn float. Saves a dispatch per block, and narrow blocks
// spread their scales once for all rows.
HWY_NOINLINE void QuantizeRowImpl(const float* HWY_RESTRICT x, std::size_t L, std::size_t bw, const double* ee,
                                  const float* ei, double g, const float* eb, int mode, int lo, int hi, int fmt,
                                  std::int32_t* HWY_RESTRICT out, std::size_t rows, std::size_t groups,
                                  std::size_t gstride, const std::uint32_t* lowest) {
  if (NarrowBlocks(bw)) {
    const bool fma = HWY_NATIVE_FMA && mode == 0 && lo != -hi;
    RedoRate rate;
    HWY_ALIGN std::uint32_t pat[kLaneChunk + HWY_MAX_BYTES / sizeof(float)];  // SpreadRuns' spill
    ForLaneChunks(
        L, bw, ee, ei, eb, mode,
        [&](std::size_t c0, std::size_t n, const double* e, const float* inv, bool far, const float* b, bool fma_ok) {
          if (lowest) SpreadRuns(hn::ScalableTag<std::uint32_t>(), c0, n, bw, lowest, pat);
          detail::for_run_rows(rows, groups, gstride, L, [&](std::size_t r0) {
            const std::size_t o = r0 + c0;
            if (fma_ok) {
              QuantizeLanesFma(x + o, n, inv, b, g, lo, hi, rate, out + o);
            } else {
              QuantizeLanes(x + o, n, e, ee, c0, bw, inv, far, b, mode, lo, hi, fmt, out + o, lowest ? pat : nullptr);
            }
          });
        },
        fma ? &g : nullptr);
    return;
  }
  detail::for_run_rows(rows, groups, gstride, L, [&](std::size_t r0) {
    const float* xr = x + r0;
    std::int32_t* o = out + r0;
    switch (mode) {
      case 0: return QuantizeExactRow<false>(xr, L, bw, ee, ei, g, IntSpec(lo, hi), o, lowest);
      case 1: return QuantizeExactRow<true>(xr, L, bw, ee, ei, g, FloatSpec(fmt), o);
      default: break;
    }
    for (std::size_t off = 0, s = 0; off < L; off += bw, ++s) {
      const std::size_t cnt = L - off < bw ? L - off : bw;
      if (mode == 2) QuantizeBurnIntImpl(xr + off, cnt, eb[s], lo, hi, o + off);
      else QuantizeBurnFloatImpl(xr + off, cnt, eb[s], fmt, o + off);
    }
  });
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

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
