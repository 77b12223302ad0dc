// Per-target codes of the f32-step recipes (StepSpec in kernels/dispatch.h): per block one f32
// operand r, per element t = f32(x / r) or f32(x * r) in one IEEE f32 operation, then t rounded by
// the spec's tie rule (q4_0's: one more f32 addition) and saturated by its rule (integers: x86's
// conversion where ggml's rules go through it), or cast onto the minifloat grid by
// round-to-nearest-even with saturation (minifloats). Every step is an IEEE f32 operation or an
// exact one (docs/SEMANTICS-fast.md section 7), so the lanes compute what a scalar loop on host
// f32 arithmetic does.

#if defined(QSCHEME_FAST_KERNELS_STEPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_STEPS_INL_H_
#undef QSCHEME_FAST_KERNELS_STEPS_INL_H_
#else
#define QSCHEME_FAST_KERNELS_STEPS_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/minifloat-inl.h"
#include "fast/kernels/pack-inl.h"
#include "fast/kernels/vector-inl.h"
#include "fast/support/prefetch_window.hpp"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The f32 quotient or product of one vector.
template <StepOp kOp, class DF>
HWY_INLINE hn::Vec<DF> StepT(hn::Vec<DF> x, hn::Vec<DF> r) {
  if constexpr (kOp == StepOp::divide) {
    return hn::Div(x, r);
  } else {
    return hn::Mul(x, r);
  }
}

// x86's truncating conversion of f32 lanes v (cvttps2dq): trunc(v) inside int32, else (NaN, +-inf,
// |v| >= 2^31) INT32_MIN, the "integer indefinite"; -2^31 is that pattern either way. On integral
// lanes it is also cvtps2dq's result. The x86 targets run the instruction itself; Highway's
// ConvertTo saturates instead (and fixes its lanes up for that), so elsewhere the lanes outside
// are replaced.
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> X86Trunc(DF df, hn::Vec<DF> v) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR
  using VI = hn::Vec<hn::Rebind<std::int32_t, DF>>;
  (void)df;
  if constexpr (sizeof(v.raw) == 16) {
    return VI{_mm_cvttps_epi32(v.raw)};
  } else {
#if HWY_TARGET <= HWY_AVX3
    if constexpr (sizeof(v.raw) == 64) return VI{_mm512_cvttps_epi32(v.raw)};
#endif
#if HWY_TARGET <= HWY_AVX2
    if constexpr (sizeof(v.raw) == 32) return VI{_mm256_cvttps_epi32(v.raw)};
#endif
  }
#else
  const hn::Rebind<std::int32_t, DF> di;
  const auto inside = hn::Lt(hn::Abs(v), hn::Set(df, 0x1p31f));  // false for NaN
  return hn::IfThenElse(hn::RebindMask(di, inside), hn::ConvertTo(di, hn::IfThenElseZero(inside, v)),
                        hn::Set(di, std::numeric_limits<std::int32_t>::min()));
#endif
}

// Integer codes of t (f32 lanes). Round is round-half-even on every target; the half-away rule is
// Rust's f32::round (t - trunc(t) is exact). The standard clamp requires t not NaN; the torch rule
// sends NaN (no compare holds) and everything at or beyond 2^63 to lo, as torch's cast to int64
// (INT64_MIN) followed by its clamp does; what lies at or below -2^63 the clamp sends to lo too.
// ggml's rules convert as x86 does (X86Trunc), then wrap to `shift` = 32 - bits bits (x86_wrap;
// left out, kWrap false, for a caller that keeps only the code's low `bits` bits) or clamp to
// [lo, hi] (x86_full_range); their half-away rule is the truncation of t + (t - trunc(t)), exact,
// whose NaN for an infinite t converts as the infinity does (docs/SEMANTICS-fast.md section 7).
// q4_0's (upper_only) adds 0.5 - lo to t in one f32 addition (half_lo: that constant), truncates
// and converts, wraps to int8 and clamps above at hi - lo.
template <StepTie kTie, StepSaturation kSat, bool kWrap, class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> StepIntCodes(DF df, hn::Vec<DF> t, hn::Vec<DF> vlo, hn::Vec<DF> vhi,
                                                              hn::Vec<DF> half_lo, int shift) {
  const hn::Rebind<std::int32_t, DF> di;
  if constexpr (kSat == StepSaturation::upper_only) {
    static_assert(kTie == StepTie::half_up_offset, "upper_only takes the offset code");
    const auto offset = X86Trunc(df, hn::Add(t, half_lo));
    const auto lo = hn::ConvertTo(di, vlo);
    return hn::Add(hn::Min(hn::ShiftRight<24>(hn::ShiftLeft<24>(offset)), hn::Sub(hn::ConvertTo(di, vhi), lo)), lo);
  }
  if constexpr (kSat == StepSaturation::x86_wrap || kSat == StepSaturation::x86_full_range) {
    const auto c = kTie == StepTie::even ? X86Trunc(df, hn::Round(t)) : X86Trunc(df, hn::Add(t, hn::Sub(t, hn::Trunc(t))));
    if constexpr (kSat == StepSaturation::x86_full_range) {
      return hn::Min(hn::Max(c, hn::ConvertTo(di, vlo)), hn::ConvertTo(di, vhi));
    } else if constexpr (kWrap) {
      return hn::ShiftRightSame(hn::ShiftLeftSame(c, shift), shift);
    } else {
      return c;
    }
  }
  hn::Vec<DF> q;
  if constexpr (kTie == StepTie::even) {
    q = hn::Round(t);
  } else {
    const auto tr = hn::Trunc(t);
    const auto away = hn::Ge(hn::Abs(hn::Sub(t, tr)), hn::Set(df, 0.5f));
    const auto step = hn::Or(hn::And(t, hn::Set(df, -0.0f)), hn::Set(df, 1.0f));  // copysign(1, t)
    q = hn::IfThenElse(away, hn::Add(tr, step), tr);
  }
  auto c = hn::Min(hn::Max(q, vlo), vhi);
  if constexpr (kSat == StepSaturation::int64_min_then_clamp) {
    c = hn::IfThenElse(hn::Lt(q, hn::Set(df, 0x1p63f)), c, vlo);
  }
  return hn::ConvertTo(di, c);
}

// microxcaling's rounding of a = |t| (f32 lanes, not NaN) onto a minifloat's grid, as the
// magnitude code: q = a / 2^qe on the quantum of a's binade (the subnormal quantum 2^(emin-m)
// below 2^emin), then floor(f32(q + 0.5)). The f32 addition is the rule's one rounding, and it
// matters only in the subnormal binade: there, for q just below a half, it rounds up. From 2^emin
// on, q lies in [2^m, 2^(m+1)) on a grid of 2^(m-23), so q + 0.5 is exact below 2^(m+1) and
// rounds only within [2^(m+1), 2^(m+1) + 0.5): floor(f32(q + 0.5)) is q rounded half away from
// zero, i.e. half a unit of the code's last mantissa bit added to a's pattern, the bits below it
// dropped. The carry into the exponent is the next binade's code,
// and codes grow with values, so the saturation is a min (an inf a included).
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> HalfAwayF32AddCode(DF df, hn::Vec<DF> a, const MiniParams& mp) {
  const hn::RebindToSigned<DF> di;
  const int shift = 23 - mp.m;
  // Normal binades: a's pattern rounded to m mantissa bits, less the bias difference.
  const auto rounded = hn::ShiftRightSame(hn::Add(hn::BitCast(di, a), hn::Set(di, 1 << (shift - 1))), shift);
  const auto normal = hn::Sub(rounded, hn::Set(di, (127 + mp.emin - 1) << mp.m));
  const auto code = hn::Min(normal, hn::Set(di, mp.max_code));
  // The subnormal binade: q = a * 2^(m - emin), exact; its code is floor(f32(q + 0.5)). Calibrated
  // blocks of ordinary data seldom reach it in e4m3 and e5m2, so a vector without such lanes skips
  // it; e2m1's lies below 1, where most codes do, and the branch would be mispredicted.
  const auto in_sub = hn::RebindMask(di, hn::Lt(a, hn::Set(df, static_cast<float>(scalar::pow2(mp.emin)))));
  if (mp.emin < 0 && HWY_LIKELY(hn::AllFalse(di, in_sub))) return code;
  const auto q = hn::Mul(a, hn::Set(df, static_cast<float>(scalar::pow2(mp.m - mp.emin))));
  return hn::IfThenElse(in_sub, hn::ConvertTo(di, hn::Floor(hn::Add(q, hn::Set(df, 0.5f)))), code);
}

// Round-to-nearest-even of a = |t| (f32 lanes, not NaN) onto a minifloat's grid, as the magnitude
// code. From 2^emin on, a's pattern rounded to m mantissa bits: half a unit of the last kept bit
// less one, plus that bit, added below it (ties to even), the bits below dropped; a carry into
// the exponent is the next binade's code, and codes grow with values, so the saturation is a min
// (an inf a included). Below, q = a 2^(m - emin) is exact (a power-of-two scaling up) and Round
// rounds it half to even: the subnormal code, 2^m (the least normal's) for a q that reaches it.
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> HalfEvenCode(DF df, hn::Vec<DF> a, const MiniParams& mp) {
  const hn::RebindToSigned<DF> di;
  const int shift = 23 - mp.m;
  const auto b = hn::BitCast(di, a);
  const auto kept = hn::And(hn::ShiftRightSame(b, shift), hn::Set(di, 1));
  const auto rounded = hn::ShiftRightSame(hn::Add(b, hn::Add(hn::Set(di, (1 << (shift - 1)) - 1), kept)), shift);
  const auto code = hn::Min(hn::Sub(rounded, hn::Set(di, (127 + mp.emin - 1) << mp.m)), hn::Set(di, mp.max_code));
  // No branch on the subnormal lanes: e2m1's lie below 1, where most calibrated codes do.
  const auto in_sub = hn::RebindMask(di, hn::Lt(a, hn::Set(df, static_cast<float>(scalar::pow2(mp.emin)))));
  const auto q = hn::Mul(a, hn::Set(df, static_cast<float>(scalar::pow2(mp.m - mp.emin))));
  return hn::IfThenElse(in_sub, hn::ConvertTo(di, hn::Round(q)), code);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// e2m1's magnitude code of |t| (16 f32 lanes, not NaN) by one table lookup, the same codes as
// HalfEvenCode (ties to even) or, kAway, HalfAwayF32AddCode. Every rounding boundary of e2m1
// starts a bucket of kE2M1BucketCode (a = |t| clamped to [0.2, 6.5]), and every value of a bucket
// rounds alike: the table gives the code above a boundary, as half away from zero does. Ties to
// even take the code below at the four boundaries whose code above is odd (kE2M1OddTieBuckets,
// bit 3 of an entry) when a is one exactly (its low 21 bits zero). microxcaling's f32 addition also rounds
// up the one f32 value below 0.25 (q = 2a = 0.5 - 2^-25, f32(q + 0.5) = 1); no other a moves
// (section 7 of docs/SEMANTICS-fast.md). The code is in the low three bits; bit 3 is left as the
// table has it (the caller puts the sign there, which saves masking it off).
template <bool kAway, class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> E2M1StepCode(DF df, hn::Vec<DF> t) {
  const hn::Rebind<std::int32_t, DF> di;
  const __m512i lo = E2M1TableHalf<0, true>(std::make_index_sequence<16>());
  const __m512i hi = E2M1TableHalf<16, true>(std::make_index_sequence<16>());
  const auto a = E2M1Clamped(di, t.raw, hn::Set(di, kE2M1FloorBits));
  const hn::Vec<decltype(di)> entry{_mm512_permutex2var_epi32(lo, hn::ShiftRight<21>(a).raw, hi)};
  if constexpr (kAway) {
    return hn::IfThenElse(hn::Eq(a, hn::Set(di, 0x3E7FFFFF)), hn::Set(di, 1), entry);
  } else {
    // A tie has a's low 21 bits zero, which a lane of scaled data seldom has (so does a bucket
    // start that is no boundary, such as 1.0, whose flag is clear): the vector takes the tie
    // test only when some lane is one. Testing every vector cost about a quarter of the loop's
    // instructions.
    const __mmask16 exact = _mm512_testn_epi32_mask(a.raw, _mm512_set1_epi32(0x1FFFFF));
    if (HWY_LIKELY(exact == 0)) return entry;
    // A flagged entry is 8 + its odd code c >= 1, so entry - 1 holds c - 1 in its low three bits.
    const __mmask16 down = _mm512_mask_test_epi32_mask(exact, entry.raw, _mm512_set1_epi32(8));
    return hn::Vec<decltype(di)>{_mm512_mask_sub_epi32(entry.raw, down, entry.raw, _mm512_set1_epi32(1))};
  }
}
#endif

// Minifloat codes of t (f32 lanes, not NaN): the magnitude's code rounded to even (HalfEvenCode)
// or, kAway, microxcaling's way (HalfAwayF32AddCode), or e2m1's by the table (kTable), and t's
// sign; with kPlusZero a zero t (either sign) gives +0.
template <bool kPlusZero, bool kAway, bool kTable, class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> StepFloatCodes(DF df, hn::Vec<DF> t, const MiniParams& mp) {
  const hn::Rebind<std::int32_t, DF> di;
  hn::Vec<decltype(di)> code;
  if constexpr (kTable) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    code = E2M1StepCode<kAway>(df, t);
#endif
  } else if constexpr (kAway) {
    code = HalfAwayF32AddCode(df, hn::Abs(t), mp);
  } else {
    code = HalfEvenCode(df, hn::Abs(t), mp);
  }
  // t's sign bit as the code's, spread over the lane and masked (three operations where a compare,
  // a mask operation and a masked move took five); adding +0 first turns a -0 into +0 and leaves
  // every other t as it is. Every magnitude code lies below the sign bit.
  const auto signed_t = kPlusZero ? hn::Add(t, hn::Zero(df)) : t;
  const auto spread = hn::BroadcastSignBit(hn::BitCast(di, signed_t));
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // A bitwise select, which also replaces bit 3 of a table entry (an And took that off before):
  // one vpternlogd (0xD8: sign ? spread : code) that overwrites code. Highway's IfVecThenElse
  // overwrites its mask operand, a constant, which costs a copy per vector (mxfp8 microxcaling
  // 11.4 -> 12.1 us per 64K in cache); below AVX-512 it selects whole lanes.
  return hn::Vec<decltype(di)>{_mm512_ternarylogic_epi32(code.raw, spread.raw, _mm512_set1_epi32(mp.sign), 0xD8)};
#else
  return hn::Or(code, hn::And(spread, hn::Set(di, mp.sign)));
#endif
}

// Which codes a StepCoder makes: integers, or minifloats (StepFloatCodes) with their options.
struct StepKind {
  bool mini = false;       // minifloat codes, else integers
  bool plus_zero = false;  // a zero t (either sign) gives +0
  bool away = false;       // the magnitude rounded microxcaling's way, else to even
  bool table = false;      // e2m1 by its table (E2M1StepCode)
};

// One vector's codes under the spec's rules, given as template arguments so that the hot loops
// carry no branch on them; the constants are set once per call.
template <StepOp kOp, StepTie kTie, StepSaturation kSat, StepKind kKind, class DF, bool kWrap = true>
struct StepCoder {
  DF df;
  hn::Vec<DF> vlo, vhi, half_lo;
  int shift;
  MiniParams mp;
  explicit StepCoder(const StepSpec& s)
      : vlo(hn::Set(df, static_cast<float>(s.lo))),
        vhi(hn::Set(df, static_cast<float>(s.hi))),
        half_lo(hn::Set(df, 0.5f - static_cast<float>(s.lo))),  // exact: |lo| <= 128
        shift(32 - s.bits),
        mp(Mini(s.fmt < 0 ? 0 : s.fmt)) {}
  HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> operator()(hn::Vec<DF> xv, hn::Vec<DF> vr) const {
    const auto t = StepT<kOp, DF>(xv, vr);
    if constexpr (!kKind.mini) {
      return StepIntCodes<kTie, kSat, kWrap>(df, t, vlo, vhi, half_lo, shift);
    } else {
      return StepFloatCodes<kKind.plus_zero, kKind.away, kKind.table>(df, t, mp);
    }
  }
};

template <StepOp kOp, StepTie kTie, StepSaturation kSat, StepKind kKind>
HWY_INLINE void QuantizeStepsT(const float* HWY_RESTRICT x, std::size_t len, std::size_t start, std::size_t bw,
                               const float* HWY_RESTRICT r, const StepSpec& s, std::int32_t* HWY_RESTRICT out32,
                               std::uint8_t* HWY_RESTRICT out8, std::uint8_t* HWY_RESTRICT nibbles) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::int32_t, decltype(df)> di;
  const std::size_t N = hn::Lanes(df);
  const StepCoder<kOp, kTie, kSat, kKind, decltype(df)> code_of(s);
  // The general walk below takes one segment per block, [i, i + cnt) under r[k]. Only its first
  // block may start inside, so the one division by bw is here: one per block was a third of a
  // narrow-block call.
  std::size_t first = bw == 0 ? len : bw - start % bw;
  // Prefetches as QuantizeCodesT's loop does (one line per 16 floats, quantize-inl.h): without
  // them the next unit's check met its input cold.
  const float* pf = s.x_just_read ? x + len + WindowLead(x + len, kReadAhead) : x + kColdLead;
  std::size_t at = 0;  // the element the next vector of the block starts at
  std::size_t i = 0, k = 0;
  if (bw != 0 && start % bw == 0 && bw % N == 0 && ((bw / N) & (bw / N - 1)) == 0) {
    // Whole blocks of 2^lg vectors from the first column (every unit of the bytes path): vector v
    // lies in block v >> lg, with no loop per block (2 vectors per q8_0-style block, whose own
    // setup cost as much as their codes).
    const unsigned lg = static_cast<unsigned>(hwy::Num0BitsBelowLS1Bit_Nonzero64(bw / N));
    const std::size_t nv = len / N;
    std::size_t v = 0;
    auto code_at = [&](std::size_t w) QSCHEME_INLINE_LAMBDA {
      if (w * N % 16 == 0) hwy::Prefetch(pf + w * N);
      return code_of(hn::LoadU(df, x + w * N), hn::Set(df, r[w >> lg]));
    };
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if constexpr (kKind.mini && hn::MaxLanes(df) == 16) {
      // e2m1's nibbles four vectors at a time (StoreNibbles4: one shuffle pair for 32 bytes).
      using VI = decltype(hn::Zero(di));
      struct {
        VI nib_bytes, nib_words;
      } k;
      NibbleShuffles(k.nib_bytes, k.nib_words);
      for (; nibbles && v + 4 <= nv; v += 4) {
        const VI q[4] = {code_at(v), code_at(v + 1), code_at(v + 2), code_at(v + 3)};
        StoreNibbles4(q, k, nibbles + v * N / 2);
      }
    }
#endif
    for (; v < nv; ++v) {
      const auto c = code_at(v);
      if (out32) {
        hn::StoreU(c, di, out32 + v * N);
      } else if (nibbles) {
        StoreNibbles(di, c, out8 + v * N, nibbles + v * N / 2);
      } else {
        StoreCodeBytes(di, c, out8 + v * N);
      }
    }
    i = nv * N;
    k = i / bw;
    first = bw - i % bw;  // what is left of block k
  }
  const std::size_t packed = nibbles ? i : len;  // every x86 target's N is even
  for (bool head = true; i < len; head = false) {
    const std::size_t cnt = std::min(len - i, head ? first : bw);
    const auto vr = hn::Set(df, r[k]);
    at = i;
    auto codes = [&](const float* src) QSCHEME_INLINE_LAMBDA {
      if (at % 16 == 0) hwy::Prefetch(pf + at);
      at += N;
      return code_of(hn::LoadU(df, src), vr);
    };
    if (out32) {
      ForEachVectorPadded(x + i, out32 + i, cnt, N, [&](const float* src, std::int32_t* dst) QSCHEME_INLINE_LAMBDA { hn::StoreU(codes(src), di, dst); });
    } else {
      ForEachVectorPadded(x + i, out8 + i, cnt, N, [&](const float* src, std::uint8_t* dst) QSCHEME_INLINE_LAMBDA { StoreCodeBytes(di, codes(src), dst); });
    }
    i += cnt;
    ++k;
  }
  if (packed < len) PackNibbles(out8 + packed, len - packed, nibbles + packed / 2);
}

template <StepOp kOp, StepTie kTie, StepSaturation kSat>
HWY_INLINE void QuantizeStepsKind(const float* HWY_RESTRICT x, std::size_t len, std::size_t start, std::size_t bw,
                                  const float* HWY_RESTRICT r, const StepSpec& s, std::int32_t* HWY_RESTRICT out32,
                                  std::uint8_t* HWY_RESTRICT out8, std::uint8_t* HWY_RESTRICT nibbles) {
  if (s.fmt < 0) return QuantizeStepsT<kOp, kTie, kSat, StepKind{}>(x, len, start, bw, r, s, out32, out8, nibbles);
  constexpr bool kAway = kTie == StepTie::away;
  auto mini = [&](auto table) {
    constexpr bool kTable = decltype(table)::value;
    if (s.zero_plus) {
      return QuantizeStepsT<kOp, kTie, kSat, StepKind{.mini = true, .plus_zero = true, .away = kAway, .table = kTable}>(
          x, len, start, bw, r, s, out32, out8, nibbles);
    }
    QuantizeStepsT<kOp, kTie, kSat, StepKind{.mini = true, .plus_zero = false, .away = kAway, .table = kTable}>(
        x, len, start, bw, r, s, out32, out8, nibbles);
  };
  if constexpr (kSat == StepSaturation::clamp && kE2M1Table<hn::ScalableTag<float>>) {
    if (s.fmt == 2) return mini(std::true_type());
  }
  mini(std::false_type());
}

template <StepOp kOp>
HWY_INLINE void QuantizeStepsOp(const float* HWY_RESTRICT x, std::size_t len, std::size_t start, std::size_t bw,
                                const float* HWY_RESTRICT r, const StepSpec& s, std::int32_t* HWY_RESTRICT out32,
                                std::uint8_t* HWY_RESTRICT out8, std::uint8_t* HWY_RESTRICT nibbles) {
  // Minifloats saturate by the grid alone: one instance per rounding.
  if (s.fmt >= 0) {
    if (s.tie == StepTie::away) return QuantizeStepsKind<kOp, StepTie::away, StepSaturation::clamp>(x, len, start, bw, r, s, out32, out8, nibbles);
    return QuantizeStepsKind<kOp, StepTie::even, StepSaturation::clamp>(x, len, start, bw, r, s, out32, out8, nibbles);
  }
  // ggml's rules (integers only).
  switch (s.saturation) {
    case StepSaturation::upper_only:
      return QuantizeStepsT<kOp, StepTie::half_up_offset, StepSaturation::upper_only, StepKind{}>(x, len, start, bw, r, s, out32, out8, nibbles);
    case StepSaturation::x86_wrap:
      if (s.tie == StepTie::even) return QuantizeStepsT<kOp, StepTie::even, StepSaturation::x86_wrap, StepKind{}>(x, len, start, bw, r, s, out32, out8, nibbles);
      return QuantizeStepsT<kOp, StepTie::away, StepSaturation::x86_wrap, StepKind{}>(x, len, start, bw, r, s, out32, out8, nibbles);
    case StepSaturation::x86_full_range:
      if (s.tie == StepTie::even) return QuantizeStepsT<kOp, StepTie::even, StepSaturation::x86_full_range, StepKind{}>(x, len, start, bw, r, s, out32, out8, nibbles);
      return QuantizeStepsT<kOp, StepTie::away, StepSaturation::x86_full_range, StepKind{}>(x, len, start, bw, r, s, out32, out8, nibbles);
    default: break;
  }
  const bool torch_sat = s.saturation == StepSaturation::int64_min_then_clamp;
  if (s.tie == StepTie::even) {
    if (torch_sat) return QuantizeStepsKind<kOp, StepTie::even, StepSaturation::int64_min_then_clamp>(x, len, start, bw, r, s, out32, out8, nibbles);
    return QuantizeStepsKind<kOp, StepTie::even, StepSaturation::clamp>(x, len, start, bw, r, s, out32, out8, nibbles);
  }
  if (torch_sat) return QuantizeStepsKind<kOp, StepTie::away, StepSaturation::int64_min_then_clamp>(x, len, start, bw, r, s, out32, out8, nibbles);
  QuantizeStepsKind<kOp, StepTie::away, StepSaturation::clamp>(x, len, start, bw, r, s, out32, out8, nibbles);
}

HWY_NOINLINE void QuantizeStepsImpl(const float* HWY_RESTRICT x, std::size_t len, std::size_t start, std::size_t bw,
                                    const float* HWY_RESTRICT r, const StepSpec& s, std::int32_t* HWY_RESTRICT out32,
                                    std::uint8_t* HWY_RESTRICT out8, std::uint8_t* HWY_RESTRICT nibbles) {
  if (s.op == StepOp::divide) return QuantizeStepsOp<StepOp::divide>(x, len, start, bw, r, s, out32, out8, nibbles);
  QuantizeStepsOp<StepOp::multiply>(x, len, start, bw, r, s, out32, out8, nibbles);
}

// ggml's blocks straight from the input: block k's 32 codes into the bytes after its 2-byte scale,
// as they are (block_q8_0) or as block_q4_0's nibbles, code i + 8 in byte i's low nibble and code
// i + 16 + 8 in its high one. Staging a unit's codes in scratch and copying them into the blocks
// afterwards took a third of a 64 MiB call.
template <StepOp kOp, StepTie kTie, StepSaturation kSat, bool kNibbles>
HWY_INLINE void QuantizeStepsGgmlT(const float* HWY_RESTRICT x, std::size_t nb, const float* HWY_RESTRICT r,
                                   const StepSpec& s, std::uint8_t* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::int32_t, decltype(df)> di;
  static_assert(hn::MaxLanes(decltype(df)()) <= 16, "a vector of codes lies in one half of a block");
  const std::size_t N = hn::Lanes(df);
  constexpr std::size_t kBytes = kNibbles ? 18 : 34;
  // Only a code's low 8 bits (block_q8_0, kind q8) or 4 (nibbles, kind q4) are stored: x86_wrap's
  // sign extension to the kind's bits would not change them.
  const StepCoder<kOp, kTie, kSat, StepKind{}, decltype(df), false> code_of(s);
  const std::size_t len = nb * 32;
  // Prefetches as QuantizeStepsT's loop does: one line per 16 floats.
  const float* pf = s.x_just_read ? x + len + WindowLead(x + len, kReadAhead) : x + kColdLead;
  const auto eight = hn::Set(di, 8), nibble = hn::Set(di, 0xF);
  for (std::size_t k = 0; k < nb; ++k) {
    const float* HWY_RESTRICT xb = x + k * 32;
    std::uint8_t* HWY_RESTRICT dst = out + k * kBytes + 2;
    const auto vr = hn::Set(df, r[k]);
    hwy::Prefetch(pf + k * 32);
    hwy::Prefetch(pf + k * 32 + 16);
    if constexpr (kNibbles) {
      for (std::size_t j = 0; j < 16; j += N) {
        const auto lo = hn::And(hn::Add(code_of(hn::LoadU(df, xb + j), vr), eight), nibble);
        const auto hi = hn::And(hn::Add(code_of(hn::LoadU(df, xb + 16 + j), vr), eight), nibble);
        StoreCodeBytes(di, hn::Or(lo, hn::ShiftLeft<4>(hi)), dst + j);
      }
    } else {
      for (std::size_t j = 0; j < 32; j += N) StoreCodeBytes(di, code_of(hn::LoadU(df, xb + j), vr), dst + j);
    }
  }
}

template <StepTie kTie, StepSaturation kSat>
HWY_INLINE void QuantizeStepsGgmlNibbles(const float* HWY_RESTRICT x, std::size_t nb, const float* HWY_RESTRICT r,
                                         const StepSpec& s, bool nibbles, std::uint8_t* HWY_RESTRICT out) {
  if (nibbles) return QuantizeStepsGgmlT<StepOp::multiply, kTie, kSat, true>(x, nb, r, s, out);
  QuantizeStepsGgmlT<StepOp::multiply, kTie, kSat, false>(x, nb, r, s, out);
}

HWY_NOINLINE void QuantizeStepsGgmlImpl(const float* HWY_RESTRICT x, std::size_t nb, const float* HWY_RESTRICT r,
                                        const StepSpec& s, bool nibbles, std::uint8_t* HWY_RESTRICT out) {
  if (s.saturation == StepSaturation::upper_only) {
    return QuantizeStepsGgmlNibbles<StepTie::half_up_offset, StepSaturation::upper_only>(x, nb, r, s, nibbles, out);
  }
  if (s.saturation == StepSaturation::x86_wrap) {
    if (s.tie == StepTie::even) return QuantizeStepsGgmlNibbles<StepTie::even, StepSaturation::x86_wrap>(x, nb, r, s, nibbles, out);
    return QuantizeStepsGgmlNibbles<StepTie::away, StepSaturation::x86_wrap>(x, nb, r, s, nibbles, out);
  }
  if (s.tie == StepTie::even) return QuantizeStepsGgmlNibbles<StepTie::even, StepSaturation::x86_full_range>(x, nb, r, s, nibbles, out);
  QuantizeStepsGgmlNibbles<StepTie::away, StepSaturation::x86_full_range>(x, nb, r, s, nibbles, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
