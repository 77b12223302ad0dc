// Per-target codes of one vector in f32 lanes, for the i32 codes of QuantizedTensor and the byte
// codes of the bytes path alike (quantize-inl.h): r = f32(x * f32(1/e)) rounded by the f32 adder,
// with a flag for vectors near a rounding boundary, and the exact f64 division that redoes those.
//
// Exactness (docs/SEMANTICS-fast.md section 6). Codes are computed in f32 lanes, twice as many per
// vector as in f64 lanes, from r = f32(x * inv), inv = f32(1 / f32(e)):
//  * |r - x/e| <= |x/e| * 3 * 2^-24 * (1 + 2^-22) whenever e lies in [2^-100, 2^100] (else the
//    block is divided exactly in f64). A code only depends on where x/e lies against the rounding
//    boundaries: half-integers for integers, and for minifloats the half-integers of
//    t = y * 2^(m - E) (y = min(|x/e|, vmax), E = max(floor(log2 y), emin)), with t <= 2^(m+1).
//  * Integers: a result is clamped to [lo, hi] within [-128, 127] whenever |x/e| > 2^8, so only
//    |x/e| <= 2^8 needs the right rounding, where the error is below 2^-14.4. Minifloats: the
//    error of t is below 2^(m+1) * 3 * 2^-24 <= 2^-18.4. When r (or t) lies at least 1.5 * 2^-13
//    (integers) or 1.5 * 2^-16 (minifloats) from every half-integer, x/e rounds the same way;
//    otherwise the vector is redone, exact ties included. A binade chosen from r instead of x/e
//    differs only next to a power of two, which is on the grid: both binades give the same code
//    there.

#if defined(QSCHEME_FAST_KERNELS_CODES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_CODES_INL_H_
#undef QSCHEME_FAST_KERNELS_CODES_INL_H_
#else
#define QSCHEME_FAST_KERNELS_CODES_INL_H_
#endif

#include <cstdint>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/minifloat-inl.h"
#include "fast/kernels/vector-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// i32 codes of one f32 vector by the correctly rounded f64 division (the slow, always exact way),
// lane i divided by lane i of (e_lo, e_hi), the f64 scales of the lower and upper half. A zero
// scale gives the zero code (sign of x kept for minifloats), as a multiply by inv = 0 does.
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> ExactCodesF64(
    DF /*df*/, hn::Vec<DF> x, hn::Vec<hn::Rebind<double, hn::Half<DF>>> e_lo,
    hn::Vec<hn::Rebind<double, hn::Half<DF>>> e_hi, const CodeSpec& c) {
  const hn::Half<DF> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const hn::Rebind<std::int32_t, decltype(dd)> dhi;
  const hn::Rebind<std::int32_t, DF> di;
  auto half_codes = [&](hn::Vec<decltype(dh)> xh, hn::Vec<decltype(dd)> ve) {
    const auto xd = hn::PromoteTo(dd, xh);
    const auto zero = hn::Eq(ve, hn::Zero(dd));
    if (c.fmt < 0) {
      const auto r = hn::IfThenZeroElse(zero, hn::Div(xd, ve));
      const auto q = hn::Min(hn::Max(hn::Round(r), hn::Set(dd, static_cast<double>(c.lo))), hn::Set(dd, static_cast<double>(c.hi)));
      return hn::DemoteTo(dhi, q);
    }
    const MiniParams mp = Mini(c.fmt);
    const auto y = hn::IfThenZeroElse(zero, hn::Div(hn::Abs(xd), ve));
    return hn::DemoteTo(dhi, MiniMagCode(dd, y, mp.m, mp.emin, mp.vmax));
  };
  auto codes = hn::Combine(di, half_codes(hn::UpperHalf(dh, x), e_hi), half_codes(hn::LowerHalf(dh, x), e_lo));
  if (c.fmt >= 0) {
    const MiniParams mp = Mini(c.fmt);
    const hn::RebindToUnsigned<decltype(di)> du;
    const auto sbit = hn::ShiftRightSame(hn::BitCast(du, x), mp.sign == 0x80 ? 24 : 28);
    codes = hn::Or(codes, hn::And(hn::BitCast(di, sbit), hn::Set(di, mp.sign)));
  }
  return codes;
}

// The same with one scale e for every lane.
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> ExactCodesF64(DF df, hn::Vec<DF> x, double e, const CodeSpec& c) {
  const hn::Rebind<double, hn::Half<DF>> dd;
  return ExactCodesF64(df, x, hn::Set(dd, e), hn::Set(dd, e), c);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// The two shuffles of StoreNibbles4 (pack-inl.h), set once per call (i32 vectors).
template <class V>
HWY_INLINE void NibbleShuffles(V& nib_bytes, V& nib_words) {
  if constexpr (sizeof(nib_bytes.raw) == 64) {
    // The multipliers of each byte pair: 1 for the low code, 16 for the high one.
    nib_bytes.raw = _mm512_set1_epi16(0x1001);
    // Word 4t + l <- word t of lane l (word 8l + t), t, l < 4.
    nib_words.raw = _mm512_setr_epi32(0 | 8 << 16, 16 | 24 << 16, 1 | 9 << 16, 17 | 25 << 16, 2 | 10 << 16, 18 | 26 << 16,
                                      3 | 11 << 16, 19 | 27 << 16, 0, 0, 0, 0, 0, 0, 0, 0);
  }
}
#endif

// Constants of FastCodes, built once per kernel call so that they stay in registers.
template <class DF>
struct FastConsts {
  using DI = hn::Rebind<std::int32_t, DF>;
  hn::Vec<DF> flo, fhi;                      // integers: the range
  hn::Vec<DF> near_int;                      // |r - round(r)| above this: near a boundary (redos)
  hn::Vec<DF> vmax, min_normal;              // minifloats: largest value, 2^emin
  hn::Vec<DF> m_code, m_byte;                // the fixed-point constants of FastCodesNear
  hn::Vec<hn::RebindToUnsigned<DI>> pbias;   // (254 + m) << 23
  hn::Vec<DI> code_bias, sign;               // -((127 + emin) << m) - 0x4340; the code's sign bit
  hn::Vec<DI> e2m1_floor, e2m1_eight, e2m1_near;  // E2M1CodesNear's constants, kept out of its loop
  hn::Vec<DI> nib_bytes, nib_words;          // StoreNibbles4's shuffles (AVX-512 only)
  int m = 0, sign_shift = 24;
  FastConsts(DF df, const CodeSpec& c) {
    const DI di;
    flo = hn::Set(df, static_cast<float>(c.lo));
    fhi = hn::Set(df, static_cast<float>(c.hi));
    near_int = hn::Set(df, 0.5f - 0x1p-13f);
    const MiniParams mp = Mini(c.fmt < 0 ? 0 : c.fmt);
    vmax = hn::Set(df, static_cast<float>(mp.vmax));
    min_normal = hn::BitCast(df, hn::Set(di, (127 + mp.emin) << 23));
    m_code = hn::BitCast(df, hn::Set(di, 0x43408002));  // 192 + 32770 * 2^-16
    // The same in [2^7, 2^8) with the low byte of its pattern >> 16 equal to (127 + emin) << m
    // negated mod 2^8: the code's low byte without the bias (see FastCodesNear). 0x38, 0x3C or 0x02.
    m_byte = hn::BitCast(df, hn::Set(di, 0x43008002 | ((-((127 + mp.emin) << mp.m) & 0xFF) << 16)));
    pbias = hn::Set(hn::RebindToUnsigned<DI>(), static_cast<std::uint32_t>(254 + mp.m) << 23);
    code_bias = hn::Set(di, -((127 + mp.emin) << mp.m) - 0x4340);
    sign = hn::Set(di, mp.sign);
    e2m1_floor = hn::Set(di, kE2M1FloorBits);
    e2m1_eight = hn::Set(di, 8);
    e2m1_near = hn::Set(di, 0x1FFFF0);
    nib_bytes = hn::Zero(di);
    nib_words = hn::Zero(di);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    NibbleShuffles(nib_bytes, nib_words);
#endif
    m = mp.m;
    sign_shift = mp.sign == 0x80 ? 24 : 28;
  }
};

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// e2m1 codes of a 16-lane vector from r = x * inv by one table lookup, and the lanes near a
// rounding boundary (FastCodesNear's contract, five vector operations fewer than its minifloat
// arithmetic: nvfp4 and mxfp4 spend most of their time here).
// The code of a magnitude y away from e2m1's boundaries is its bucket's (kE2M1BucketCode): y is
// clamped to [0.2, 6.5] (below 0.25 the code is 0, above 5 it is 7), and the low five bits of
// bits(y) >> 21 index the 32-entry table (vpermi2d). A lane is flagged when the
// low 21 bits of bits(y) are within 8 of a multiple of 2^21, i.e. y within 8 ulps of some
// 2^E * (1 + j/4), boundaries and exact ties included: |r - x/e| <= 3.000001 * 2^-24 |x/e| (section
// 6) is at most 3 ulps of y there, so an unflagged y lies on the same side of every boundary as
// |x/e|. 0.2 and 6.5 are no such points. The sign is x's, as the general path.
template <bool kClamp, class DF>
HWY_INLINE hn::Mask<DF> E2M1CodesNear(DF df, hn::Vec<DF> x, hn::Vec<DF> r, const FastConsts<DF>& k,
                                      hn::Vec<hn::Rebind<std::int32_t, DF>>* out) {
  const hn::Rebind<std::int32_t, DF> di;
  const hn::RebindToUnsigned<decltype(di)> du;
  const __m512i lo = E2M1TableHalf<0, false>(std::make_index_sequence<16>());
  const __m512i hi = E2M1TableHalf<16, false>(std::make_index_sequence<16>());
  hn::Vec<decltype(di)> a;
  if constexpr (kClamp) {
    a = E2M1Clamped(di, r.raw, k.e2m1_floor);
  } else {
    // No scale saturated (the caller's clamp flag): |x/e| <= 6, so |r| < 8 and max(|r|, 0.2) in
    // one vrangeps (the operand of the greater magnitude, sign cleared) stays within the table
    // (binade 2^2 gives 7 from 5 on). A lane at 6 or 7 is flagged and redone: not a boundary,
    // only a point of the flag's grid.
    a = hn::BitCast(di, hn::Vec<DF>{_mm512_range_ps(r.raw, hn::BitCast(df, k.e2m1_floor).raw, 0x0B)});
  }
  const hn::Vec<decltype(di)> mag{_mm512_permutex2var_epi32(lo, hn::ShiftRight<21>(a).raw, hi)};
  const auto sbit = hn::BitCast(di, hn::ShiftRight<28>(hn::BitCast(du, x)));
  *out = hn::OrAnd(mag, sbit, k.e2m1_eight);
  const hn::Mask<decltype(di)> near{_mm512_testn_epi32_mask(hn::Add(a, k.e2m1_eight).raw, k.e2m1_near.raw)};
  return hn::RebindMask(df, near);
}
#endif

// Codes of one f32 vector from r = x * inv, and the mask of lanes in which r (or t, for
// minifloats) lies near a rounding boundary: those lanes' codes are unreliable, and the caller
// divides exactly (FastCodes below, or a group of vectors at once).
// Both round by the f32 adder in fixed point: adding a constant M of the right binade rounds
// v + M to a multiple of the binade's ulp (ties to even, M's last bit being even), so the pattern
// of the sum, minus M's, is round_half_even(v / ulp): the code in its high bits and the distance
// to the rounding boundary in its low bits, one add for both.
template <bool kFloat, bool kClamp, bool kLowByte = false, int kFmt = -1, class DF>
HWY_INLINE hn::Mask<DF> FastCodesNear(DF df, hn::Vec<DF> x, hn::Vec<DF> vinv, const FastConsts<DF>& k,
                                      hn::Vec<hn::Rebind<std::int32_t, DF>>* out) {
  const hn::Rebind<std::int32_t, DF> di;
  const hn::RebindToUnsigned<decltype(di)> du;
  const auto r = hn::Mul(x, vinv);
  if constexpr (!kFloat) {
    // Clamping r to [lo, hi] (integers) before rounding equals clamping the rounded value; a
    // clamped lane is an integer, never near a boundary. Then one add gives the code and the flag,
    // in fixed point: |rc| < 2^9, so s = rc + M with M = 1536 + 4098 * 2^-13 lies in
    // [2^10, 2^11), where the f32 ulp is 2^-13, and s is M + round_even(rc * 2^13) * 2^-13 (M's
    // last bit is even, so ties still go to even). Its pattern is then 0x44C00000 + g with
    // g = round_even(rc * 2^13) + 4098: g >> 13 = floor(rc + 1/2) unless the low 13 bits of g
    // are 0..3, i.e. unless rc is within 1.5 * 2^-13 of a half-integer; those lanes are flagged,
    // and elsewhere rc is at least 1.5 * 2^-13 from every boundary. 0x44C00000 is a multiple of
    // 2^13 with a zero low byte: the flag reads the pattern as is, and so may a caller that keeps
    // only the low byte of the code (kLowByte: pattern >> 13, one subtraction fewer).
    const auto magic = hn::Set(df, 1536.500244140625f);
#if HWY_NATIVE_FMA
    // Unclamped, the product need not be rounded first: s = RN(x * inv + M) rounds the exact
    // x * inv, whose distance to x/e (at most |x/e| * (2^-23 + 2^-46) < 2^-15.9 for |x/e| <= 2^7,
    // which holds when no clamp is needed) is below that of r, so the same flag stays exact.
    const auto s = hn::BitCast(di, kClamp ? hn::Add(hn::Min(hn::Max(r, k.flo), k.fhi), magic) : hn::MulAdd(x, vinv, magic));
#else
    const auto rc = kClamp ? hn::Min(hn::Max(r, k.flo), k.fhi) : r;
    const auto s = hn::BitCast(di, hn::Add(rc, magic));
#endif
    if constexpr (kLowByte) {
      *out = hn::BitCast(di, hn::ShiftRight<13>(hn::BitCast(du, s)));
    } else {
      *out = hn::ShiftRight<13>(hn::Sub(s, hn::Set(di, 0x44C00000)));
    }
    return hn::RebindMask(df, NoBitSet(di, s, 0x1FFC));
  } else {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if constexpr (kFmt == scalar::kE2M1 && kE2M1Table<DF>) return E2M1CodesNear<kClamp>(df, x, r, k, out);
#endif
    const auto y = hn::Min(hn::Abs(r), k.vmax);
    // em = (E + 127) << 23, the exponent field of max(y, 2^emin); 2^(m - E) has the field
    // ((254 + m) << 23) - em, and (E + 127) << m is em >> (23 - m).
    const auto em = hn::And(hn::BitCast(du, hn::Max(y, k.min_normal)), hn::Set(du, 0x7F800000u));
    const auto t = hn::Mul(y, hn::BitCast(df, hn::Sub(k.pbias, em)));  // <= 2^(m+1) <= 16
    // n = round_half_even(t) and the flag in fixed point, as for integers: s = t + M with
    // M = 192 + 32770 * 2^-16 lies in [2^7, 2^8), where the f32 ulp is 2^-16, and its pattern is
    // 0x43400000 + g with g = round_half_even(t * 2^16) + 32770 (M's last bit is even); then
    // n = g >> 16 = (pattern >> 16) - 0x4340 unless the low 16 bits of g are 0..3, i.e. unless t
    // lies within [b - 2.5 * 2^-16, b + 1.5 * 2^-16] of a half-integer b: those lanes are flagged.
    // kLowByte: M = 128 + B + 32770 * 2^-16 (m_byte; t + M < 2^8 still) instead, whose
    // pattern >> 16 is 0x4300 + B, B = -((127 + emin) << m) mod 2^8: the low byte of
    // ((E + 127) << m) + (pattern >> 16) is then (E - emin) << m + n with no bias to subtract.
    const auto s = hn::BitCast(di, hn::Add(t, kLowByte ? k.m_byte : k.m_code));
    // (E - emin) << m + n = ((E + 127) << m) - ((127 + emin) << m) - 0x4340 + (pattern >> 16); the
    // sign bit of x on top (bit 7 or 3 of a magnitude below it).
    hn::Vec<decltype(di)> code, sbit;
    if constexpr (kFmt >= 0) {
      constexpr int kM = scalar::kMini[kFmt].m;
      code = hn::Add(hn::BitCast(di, hn::ShiftRight<23 - kM>(em)), hn::BitCast(di, hn::ShiftRight<16>(hn::BitCast(du, s))));
      sbit = hn::BitCast(di, hn::ShiftRight<scalar::kMini[kFmt].sign == 0x80 ? 24 : 28>(hn::BitCast(du, x)));
    } else {
      code = hn::Add(hn::BitCast(di, hn::ShiftRightSame(em, 23 - k.m)), hn::BitCast(di, hn::ShiftRight<16>(hn::BitCast(du, s))));
      sbit = hn::BitCast(di, hn::ShiftRightSame(hn::BitCast(du, x), k.sign_shift));
    }
    if constexpr (!kLowByte) code = hn::Add(code, k.code_bias);
    *out = hn::OrAnd(code, sbit, k.sign);
    return hn::RebindMask(df, NoBitSet(di, s, 0xFFFC));
  }
}

// FastCodesNear for one vector: false, leaving *out unset, when a lane is near a boundary.
template <bool kFloat, bool kClamp, int kFmt = -1, class DF>
HWY_INLINE bool FastCodes(DF df, hn::Vec<DF> x, hn::Vec<DF> vinv, const FastConsts<DF>& k,
                          hn::Vec<hn::Rebind<std::int32_t, DF>>* out) {
  hn::Vec<hn::Rebind<std::int32_t, DF>> q;
  const auto near = FastCodesNear<kFloat, kClamp, false, kFmt>(df, x, vinv, k, &q);
  if (HWY_UNLIKELY(!hn::AllFalse(df, near))) return false;
  *out = q;
  return true;
}

// The code of a lane FastCodes flagged near the half-integer b, once the side of b on which the
// exact x/e lies is known: `above` rounds up, `below` down, neither is the exact tie, rounded to
// even. Unflagged lanes keep q. Clamped and converted as FastCodes does.
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> ResolveNear(DF df, hn::Vec<DF> q, hn::Vec<DF> b, hn::Mask<DF> near,
                                                             hn::Mask<DF> above, hn::Mask<DF> below,
                                                             const FastConsts<DF>& k) {
  const hn::Rebind<std::int32_t, DF> di;
  const auto magic = hn::Set(df, 12582912.0f);  // 1.5 * 2^23, as FastCodes
  const auto half = hn::Set(df, 0.5f);
  const auto down = hn::Sub(b, half), up = hn::Add(b, half);
  // The even one of down and up: down's parity is the low bit of down + magic.
  const auto down_odd = hn::RebindMask(df, hn::Eq(hn::And(hn::BitCast(di, hn::Add(down, magic)), hn::Set(di, 1)),
                                                  hn::Set(di, 1)));
  const auto tie = hn::IfThenElse(down_odd, up, down);
  auto qn = hn::IfThenElse(above, up, hn::IfThenElse(below, down, tie));
  qn = hn::Min(hn::Max(hn::IfThenElse(near, qn, q), k.flo), k.fhi);
  return hn::Sub(hn::BitCast(di, hn::Add(qn, magic)), hn::Set(di, 0x4B400000));
}

// The nearest integer q of rc = x * vinv clamped to the code range, the half-integer b between q
// and rc, and `near`: whether rc lies within the near-tie window of b, so that the exact x/e may
// lie on b's other side (docs/SEMANTICS-fast.md section 6). The start of both near-lane redos.
template <class DF>
struct NearestCode {
  hn::Vec<DF> q, b;
  hn::Mask<DF> near;
};
template <class DF>
HWY_INLINE NearestCode<DF> NearestOf(DF df, hn::Vec<DF> x, hn::Vec<DF> vinv, const FastConsts<DF>& k) {
  const auto magic = hn::Set(df, 12582912.0f);  // 1.5 * 2^23, as FastCodes
  const auto half = hn::Set(df, 0.5f);
  const auto rc = hn::Min(hn::Max(hn::Mul(x, vinv), k.flo), k.fhi);
  const auto q = hn::Sub(hn::Add(rc, magic), magic);
  return {q, hn::IfThenElse(hn::Gt(rc, q), hn::Add(q, half), hn::Sub(q, half)),
          hn::Gt(hn::Abs(hn::Sub(rc, q)), k.near_int)};
}

// Integer codes of a vector in which FastCodes flagged a lane near a half-integer b, without a
// division: a flagged lane's side of b is the sign of d = x - b * e in f64. b * e is exact (b has
// at most 9 significant bits, e at most 35), and x/e lies within 2^-12 of b (the flag's 2^-13
// plus r's error), so x and b * e are within a factor 2 of each other and the subtraction is exact
// (Sterbenz): d > 0 rounds up, d < 0 down, d == 0 is the exact tie, rounded to even. Unflagged
// lanes keep r's rounding. e_lo/e_hi: the f64 scales of the lower and upper half; vinv = f32(1/e).
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> NearIntCodes(DF df, hn::Vec<DF> x, hn::Vec<DF> vinv,
                                                              hn::Vec<hn::Rebind<double, hn::Half<DF>>> e_lo,
                                                              hn::Vec<hn::Rebind<double, hn::Half<DF>>> e_hi,
                                                              const FastConsts<DF>& k) {
  const hn::Half<DF> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const NearestCode<DF> n = NearestOf(df, x, vinv, k);
  const auto b = n.b;
  // sign(x - b * e) per lane, carried from f64 halves to f32 lanes as -1, 0, +1.
  auto sign_half = [&](hn::Vec<decltype(dh)> xh, hn::Vec<decltype(dh)> bh, hn::Vec<decltype(dd)> eh) {
    const auto d = hn::Sub(hn::PromoteTo(dd, xh), hn::Mul(hn::PromoteTo(dd, bh), eh));
    const auto one = hn::Set(dd, 1.0);
    return hn::DemoteTo(dh, hn::IfThenElse(hn::Gt(d, hn::Zero(dd)), one,
                                           hn::IfThenElseZero(hn::Lt(d, hn::Zero(dd)), hn::Neg(one))));
  };
  const auto sgn = hn::Combine(df, sign_half(hn::UpperHalf(dh, x), hn::UpperHalf(dh, b), e_hi),
                               sign_half(hn::LowerHalf(dh, x), hn::LowerHalf(dh, b), e_lo));
  return ResolveNear(df, n.q, b, n.near, hn::Gt(sgn, hn::Zero(df)), hn::Lt(sgn, hn::Zero(df)), k);
}

#if HWY_NATIVE_FMA
// Integer codes with no f64, for targets with a fused multiply-add: as FastCodes, but a lane near a
// half-integer b takes its side of b from the sign of d = fl(b * s1) * s2 - x
// rounded once by the FMA, where e = s1 * s2 with b * s1 exact in f32: (s1, s2) = (1, e) when e is
// an f32 value, (s_j, g) for two levels (b: at most 9 bits, s_j at most 11). d is exact up to
// that one rounding, which keeps its sign and, since every operand is a multiple of 2^-149 and
// e >= 2^-100, never turns a non-zero d into 0: d > 0 rounds down, d < 0 up, d == 0 is the tie,
// rounded to even. The redo of the asymmetric kinds (a vector FastCodesNear flags), whose
// calibrated maximum lands next to lo + 1/2 in about every other block: cheaper than an f64 one.
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, DF>> IntCodesFma(DF df, hn::Vec<DF> x, hn::Vec<DF> vinv, hn::Vec<DF> s1,
                                                             hn::Vec<DF> s2, const FastConsts<DF>& k) {
  const NearestCode<DF> n = NearestOf(df, x, vinv, k);
  const auto d = hn::MulSub(hn::Mul(n.b, s1), s2, x);  // b * e - x
  return ResolveNear(df, n.q, n.b, n.near, hn::Lt(d, hn::Zero(df)), hn::Gt(d, hn::Zero(df)), k);
}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
