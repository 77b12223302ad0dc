// Per-target bodies of the fast engine's kernels (declared in kernels.h, dispatched from
// kernels.cc). Included once per Highway target by foreach_target.h.
//
// Tails: every kernel processes whole vectors, then copies the remaining (< lanes) elements to a
// zero-filled stack buffer, runs the same vector body on it and copies the live lanes back. So
// there is one arithmetic path for body and tail, and no read or write past the caller's range.
//
// Exactness (details and proofs in docs/SEMANTICS-fast.md):
//  * exact profile: x (f32, 24 bits) is promoted to f64 and divided by e (f64, <= 35 significant
//    bits). IEEE division is correctly rounded, so the f64 quotient is within 2^-53 (relative) of
//    x/e. A rounding boundary (k + 1/2 for integers, a midpoint of the minifloat grid) is either hit
//    exactly by x/e -- then the boundary is an f64 value and the quotient is exact -- or missed by
//    at least 2^-44 relative. Hence rounding the f64 quotient decides exactly as rounding x/e.
//  * dequantize: value(code) (<= 8 bits) * e (<= 35 bits) is exact in f64; DemoteTo f32 rounds it
//    once, to nearest-even (cvtpd2ps under the default MXCSR).

#if defined(QSCHEME_FAST_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_INL_H_
#undef QSCHEME_FAST_KERNELS_INL_H_
#else
#define QSCHEME_FAST_KERNELS_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "fast/codes_f32-inl.h"
#include "fast/fused.h"
#include "fast/run_rows.hpp"
#include "fast/simd_common-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs body(offset, count_is_full) over [0, n) in steps of `lanes`, handing the tail to
// tail(offset, remaining).
template <class Body, class Tail>
HWY_INLINE void ForEachVector(std::size_t n, std::size_t lanes, Body body, Tail tail) {
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) body(i);
  if (i < n) tail(i, n - i);
}

// Runs one(src, dst) on whole vectors of N elements, then on a zero-padded copy of the rest: one
// arithmetic path for body and tail, and no access past the caller's n elements.
template <class TIn, class TOut, class One>
HWY_INLINE void ForEachVectorPadded(const TIn* HWY_RESTRICT in, TOut* HWY_RESTRICT out, std::size_t n, std::size_t N,
                                    One one) {
  ForEachVector(n, N, [&](std::size_t i) { one(in + i, out + i); },
                [&](std::size_t i, std::size_t r) {
                  HWY_ALIGN TIn b[HWY_MAX_BYTES] = {};  // at least N elements of any lane type
                  HWY_ALIGN TOut o[HWY_MAX_BYTES];
                  std::memcpy(b, in + i, r * sizeof(TIn));
                  one(b, o);
                  std::memcpy(out + i, o, r * sizeof(TOut));
                });
}

// ---------------------------------------------------------------------------- calibration

HWY_NOINLINE std::uint32_t MaxAbsBitsImpl(const float* HWY_RESTRICT x, std::size_t n) {
  const hn::ScalableTag<int32_t> di;
  const hn::ScalableTag<float> df;
  const std::size_t N = hn::Lanes(di);
  const auto mask = hn::Set(di, 0x7FFFFFFF);
  auto m0 = hn::Zero(di), m1 = hn::Zero(di);
  std::size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    hwy::Prefetch(x + i + kReadAhead);  // one per 64-byte line (16 floats)
    if (2 * N > 16) hwy::Prefetch(x + i + 16 + kReadAhead);
    m0 = hn::Max(m0, hn::And(hn::BitCast(di, hn::LoadU(df, x + i)), mask));
    m1 = hn::Max(m1, hn::And(hn::BitCast(di, hn::LoadU(df, x + i + N)), mask));
  }
  for (; i + N <= n; i += N) m0 = hn::Max(m0, hn::And(hn::BitCast(di, hn::LoadU(df, x + i)), mask));
  if (i < n) {
    HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
    std::memcpy(buf, x + i, (n - i) * sizeof(float));
    m1 = hn::Max(m1, hn::And(hn::BitCast(di, hn::Load(df, buf)), mask));
  }
  return static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(di, hn::Max(m0, m1))));
}

HWY_NOINLINE void SegmentMaxAbsBitsImpl(const float* HWY_RESTRICT x, std::size_t len, std::size_t w,
                                        std::uint32_t* HWY_RESTRICT acc) {
  const hn::ScalableTag<int32_t> di;
  const std::size_t N = hn::Lanes(di);
  std::size_t k = 0;
  if (w >= N) {
    for (std::size_t off = 0; off < len; off += w, ++k) {
      const std::size_t cnt = len - off < w ? len - off : w;
      const std::uint32_t m = MaxAbsBitsImpl(x + off, cnt);
      if (m > acc[k]) acc[k] = m;
    }
    return;
  }
  // Narrow power-of-two segments: w vectors hold N segments; ConcatMaxTree over the w of them
  // leaves segment k's maximum in lane k (as BlockMaxAbsBits).
  if ((w & (w - 1)) == 0) {
    const hn::Rebind<float, decltype(di)> df;
    const hn::RebindToUnsigned<decltype(di)> du;
    const auto mask = hn::Set(di, 0x7FFFFFFF);
    std::size_t off = 0;
    auto rows = [&](auto kW) {
      constexpr std::size_t W = decltype(kW)::value;
      for (; off + W * N <= len; off += W * N, k += N) {
        const auto m = ConcatMaxTree<W>(
            di, [&](std::size_t j) { return hn::And(hn::BitCast(di, hn::LoadU(df, x + off + j * N)), mask); });
        const auto prev = hn::BitCast(di, hn::LoadU(du, acc + k));
        hn::StoreU(hn::BitCast(du, hn::Max(prev, m)), du, acc + k);
      }
    };
    switch (w) {  // w < N <= 16 lanes on x86
      case 1: rows(std::integral_constant<std::size_t, 1>()); break;
      case 2: rows(std::integral_constant<std::size_t, 2>()); break;
      case 4: rows(std::integral_constant<std::size_t, 4>()); break;
      default: rows(std::integral_constant<std::size_t, 8>()); break;
    }
    x += off;
    len -= off;
  }
  // Other narrow segments (w < N): N segments at a time, w gathers of stride w (lane k reads
  // element j of segment k), so lane k ends with segment k's maximum.
  if (w < N && (w & (w - 1)) != 0) {
    const hn::Rebind<float, decltype(di)> df;
    const auto mask = hn::Set(di, 0x7FFFFFFF);
    const auto vidx = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<std::int32_t>(w)));
    std::size_t off = 0;
    for (; off + w * N <= len; off += w * N, k += N) {
      auto m = hn::Zero(di);
      for (std::size_t j = 0; j < w; ++j) {
        m = hn::Max(m, hn::And(hn::BitCast(di, hn::GatherIndex(df, x + off + j, vidx)), mask));
      }
      const hn::RebindToUnsigned<decltype(di)> du;
      const auto prev = hn::BitCast(di, hn::LoadU(du, acc + k));
      hn::StoreU(hn::BitCast(du, hn::Max(prev, m)), du, acc + k);
    }
    x += off;
    len -= off;
  }
  // Other narrow segments, and what the vectors above left: a scalar loop.
  for (std::size_t off = 0; off < len; off += w, ++k) {
    const std::size_t cnt = len - off < w ? len - off : w;
    std::uint32_t m = acc[k];
    for (std::size_t i = 0; i < cnt; ++i) {
      std::uint32_t b;
      std::memcpy(&b, x + off + i, 4);
      b &= 0x7FFFFFFFu;
      m = b > m ? b : m;
    }
    acc[k] = m;
  }
}

// ---------------------------------------------------------------------------- quantize

// Half-width f32 tag matching the f64 lane count.
template <class DF64>
using HalfF32 = hn::Rebind<float, DF64>;
template <class DF64>
using HalfI32 = hn::Rebind<int32_t, DF64>;

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

// ---------------------------------------------------------------------------- dequantize

HWY_NOINLINE void DequantExactIntImpl(const std::int32_t* HWY_RESTRICT c, std::size_t n, double e,
                                      float* HWY_RESTRICT out) {
  const hn::ScalableTag<double> dd;
  const HalfF32<decltype(dd)> df;
  const HalfI32<decltype(dd)> di;
  const std::size_t N = hn::Lanes(dd);
  const auto ve = hn::Set(dd, e);
  auto one = [&](const std::int32_t* src, float* dst) {
    hn::StoreU(DemoteToF32Overflowing(df, dd, hn::Mul(hn::PromoteTo(dd, hn::LoadU(di, src)), ve)), df, dst);
  };
  ForEachVectorPadded(c, out, n, N, one);
}

HWY_NOINLINE void DequantExactFloatImpl(const std::int32_t* HWY_RESTRICT c, std::size_t n, double e, int fmt,
                                        float* HWY_RESTRICT out) {
  const hn::ScalableTag<double> dd;
  const HalfF32<decltype(dd)> df;
  const HalfI32<decltype(dd)> di;
  const std::size_t N = hn::Lanes(dd);
  const MiniParams mp = Mini(fmt);
  const auto ve = hn::Set(dd, e);
  auto one = [&](const std::int32_t* src, float* dst) {
    const auto v = MiniValue(di, hn::LoadU(di, src), mp);
    hn::StoreU(DemoteToF32Overflowing(df, dd, hn::Mul(hn::PromoteTo(dd, v), ve)), df, dst);
  };
  ForEachVectorPadded(c, out, n, N, one);
}

// f32 lanes: out[i] = f32(f32(e * value(c[i])) * g). Burn's product (g = 1), and the exact one:
// with e = s_j (f16 or ue4m3 when g != 1) the first product has at most 7 + 11 significant bits
// and no underflow, so it is exact and the one rounding is that of value * s_j * g
// (SEMANTICS-fast.md section 4).
template <bool kFloat>
HWY_INLINE hn::Vec<hn::ScalableTag<float>> DequantF32(hn::Vec<hn::ScalableTag<std::int32_t>> ci,
                                                      hn::Vec<hn::ScalableTag<float>> ve,
                                                      hn::Vec<hn::ScalableTag<float>> vg, const MiniParams& mp) {
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<std::int32_t> di;
  const auto v = kFloat ? MiniValue(di, ci, mp) : hn::ConvertTo(df, ci);
  return hn::Mul(hn::Mul(ve, v), vg);
}

// DequantF32 over a row of L elements, segment s of bw under eb[s]; constants hoisted out of
// the segment loop. One segment of n (bw = n) is the Burn kernels with their scalar twins.
template <bool kFloat>
HWY_INLINE void DequantScaledRow(const std::int32_t* HWY_RESTRICT c, std::size_t L, std::size_t bw, const float* eb,
                                 float g, int fmt, float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<int32_t> di;
  const MiniParams mp = Mini(fmt);
  const auto vg = hn::Set(df, g);
  for (std::size_t off = 0, s = 0; off < L; off += bw, ++s) {
    const std::size_t cnt = L - off < bw ? L - off : bw;
    const auto ve = hn::Set(df, eb[s]);
    auto one = [&](const std::int32_t* src, float* dst) {
      hn::StoreU(DequantF32<kFloat>(hn::LoadU(di, src), ve, vg, mp), df, dst);
    };
    ForEachVectorPadded(c + off, out + off, cnt, hn::Lanes(df), one);
  }
}

HWY_NOINLINE void DequantBurnIntImpl(const std::int32_t* HWY_RESTRICT c, std::size_t n, float e,
                                     float* HWY_RESTRICT out) {
  DequantScaledRow<false>(c, n, n, &e, 1.0f, 0, out);
}

HWY_NOINLINE void DequantBurnFloatImpl(const std::int32_t* HWY_RESTRICT c, std::size_t n, float e, int fmt,
                                       float* HWY_RESTRICT out) {
  DequantScaledRow<true>(c, n, n, &e, 1.0f, fmt, out);
}

// ---------------------------------------------------------------------------- bytes and packing

HWY_NOINLINE void CodesToBytesImpl(const std::int32_t* HWY_RESTRICT c, std::size_t n, std::uint8_t* HWY_RESTRICT out) {
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const std::size_t N = hn::Lanes(di);
  const auto m = hn::Set(di, 0xFF);
  auto one = [&](const std::int32_t* src, std::uint8_t* dst) {
    hn::StoreU(hn::DemoteTo(d8, hn::And(hn::LoadU(di, src), m)), d8, dst);
  };
  ForEachVectorPadded(c, out, n, N, one);
}

HWY_NOINLINE void BytesToCodesImpl(const std::uint8_t* HWY_RESTRICT bytes, std::size_t n, bool is_signed,
                                   std::int32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<uint8_t, decltype(di)> du8;
  const hn::Rebind<int8_t, decltype(di)> ds8;
  const std::size_t N = hn::Lanes(di);
  auto one = [&](const std::uint8_t* src, std::int32_t* dst) {
    const auto b = hn::LoadU(du8, src);
    const auto v = is_signed ? hn::PromoteTo(di, hn::BitCast(ds8, b)) : hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<decltype(di)>(), b));
    hn::StoreU(v, di, dst);
  };
  ForEachVectorPadded(bytes, out, n, N, one);
}

HWY_NOINLINE void PackWordsImpl(const std::int32_t* HWY_RESTRICT codes, std::size_t inner, std::size_t count,
                                std::size_t stride, int bits, std::uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<uint32_t> du;
  const std::size_t N = hn::Lanes(du);
  const auto mask = hn::Set(du, bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1));
  std::size_t j = 0;
  for (; j + N <= inner; j += N) {
    auto acc = hn::Zero(du);
    for (std::size_t i = 0; i < count; ++i) {
      const auto v = hn::And(hn::LoadU(du, reinterpret_cast<const uint32_t*>(codes + i * stride + j)), mask);
      acc = hn::Or(acc, hn::ShiftLeftSame(v, static_cast<int>(i) * bits));
    }
    hn::StoreU(acc, du, out + j);
  }
  for (; j < inner; ++j) {
    std::uint32_t w = 0;
    for (std::size_t i = 0; i < count; ++i) {
      w |= (static_cast<std::uint32_t>(codes[i * stride + j]) & (bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1)))
           << (i * bits);
    }
    out[j] = w;
  }
}

HWY_NOINLINE void UnpackWordsImpl(const std::uint32_t* HWY_RESTRICT words, std::size_t inner, std::size_t count,
                                  std::size_t stride, int bits, bool is_signed, std::int32_t* HWY_RESTRICT codes) {
  const hn::ScalableTag<int32_t> di;
  const std::size_t N = hn::Lanes(di);
  std::size_t j = 0;
  for (; j + N <= inner; j += N) {
    const auto w = hn::BitCast(di, hn::LoadU(hn::RebindToUnsigned<decltype(di)>(), words + j));
    for (std::size_t i = 0; i < count; ++i) {
      // Move field i to the top, then shift back down: arithmetic shift sign-extends.
      const auto top = hn::ShiftLeftSame(w, 32 - static_cast<int>((i + 1)) * bits);
      const auto v = is_signed ? hn::ShiftRightSame(top, 32 - bits)
                               : hn::BitCast(di, hn::ShiftRightSame(hn::BitCast(hn::RebindToUnsigned<decltype(di)>(), top),
                                                                    32 - bits));
      hn::StoreU(v, di, codes + i * stride + j);
    }
  }
  for (; j < inner; ++j) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t f = (words[j] >> (i * bits)) & ((1u << bits) - 1);
      std::int32_t v = static_cast<std::int32_t>(f);
      if (is_signed && (f >> (bits - 1))) v -= (1 << bits);
      codes[i * stride + j] = v;
    }
  }
}

// SegmentMaxAbsBits over the rows of a run (detail::for_run_rows) that share their segments: the
// rows are folded element-wise (integer max of |x| bits) into an L1 buffer, a chunk of whole
// segments at a time, and each chunk is then reduced once instead of once per row.
HWY_NOINLINE void RowsSegmentMaxAbsBitsImpl(const float* HWY_RESTRICT x, std::size_t rows, std::size_t L,
                                            std::size_t w, std::uint32_t* HWY_RESTRICT acc, std::size_t groups,
                                            std::size_t gstride) {
  const hn::ScalableTag<int32_t> di;
  const hn::ScalableTag<float> df;
  const std::size_t N = hn::Lanes(di);
  constexpr std::size_t kChunk = 1024;
  if ((rows == 1 && groups == 1) || w > kChunk) {
    detail::for_run_rows(rows, groups, gstride, L, [&](std::size_t o) { SegmentMaxAbsBitsImpl(x + o, L, w, acc); });
    return;
  }
  const auto mask = hn::Set(di, 0x7FFFFFFF);
  HWY_ALIGN float buf[kChunk];
  const std::size_t step = kChunk / w * w;  // whole segments per chunk
  for (std::size_t c0 = 0; c0 < L; c0 += step) {
    const std::size_t n = L - c0 < step ? L - c0 : step;
    std::size_t i = 0;
    for (; i + N <= n; i += N) {
      auto m = hn::Zero(di);
      detail::for_run_rows(rows, groups, gstride, L, [&](std::size_t o) {
        m = hn::Max(m, hn::And(hn::BitCast(di, hn::LoadU(df, x + o + c0 + i)), mask));
      });
      hn::Store(hn::BitCast(df, m), df, buf + i);
    }
    for (; i < n; ++i) {
      std::uint32_t m = 0;
      detail::for_run_rows(rows, groups, gstride, L, [&](std::size_t o) {
        std::uint32_t v;
        std::memcpy(&v, x + o + c0 + i, 4);
        v &= 0x7FFFFFFFu;
        m = v > m ? v : m;
      });
      std::memcpy(buf + i, &m, 4);
    }
    SegmentMaxAbsBitsImpl(buf, n, w, acc + c0 / w);
  }
}

HWY_NOINLINE std::size_t FirstInvalidCodeImpl(const std::int32_t* HWY_RESTRICT c, std::size_t n, int lo, int hi,
                                              int nan_mask) {
  const hn::ScalableTag<int32_t> di;
  const std::size_t N = hn::Lanes(di);
  const auto vlo = hn::Set(di, lo), vhi = hn::Set(di, hi), vnm = hn::Set(di, nan_mask);
  const bool check_nan = nan_mask != 0;
  auto bad = [&](hn::Vec<decltype(di)> v) {
    auto m = hn::Or(hn::Lt(v, vlo), hn::Gt(v, vhi));
    if (check_nan) m = hn::Or(m, hn::Eq(hn::And(v, vnm), vnm));
    return m;
  };
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto m = bad(hn::LoadU(di, c + i));
    if (!hn::AllFalse(di, m)) return i + static_cast<std::size_t>(hn::FindFirstTrue(di, m));
  }
  if (i < n) {
    HWY_ALIGN std::int32_t b[HWY_MAX_BYTES / sizeof(std::int32_t)] = {};  // code 0 is always valid
    std::memcpy(b, c + i, (n - i) * sizeof(std::int32_t));
    const auto m = bad(hn::Load(di, b));
    if (!hn::AllFalse(di, m)) return i + static_cast<std::size_t>(hn::FindFirstTrue(di, m));
  }
  return n;
}

// ---------------------------------------------------------------------------- whole rows

// ---- the asymmetric kinds' lowest code, put back in the code loops
//
// Codes clamped at -hi are exact wherever x/e > -W/2 (fast/lowest_code.hpp). In a tight block
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

// ---- narrow blocks: one scale per lane
//
// A row whose blocks are narrower than two vectors (N-D blocks cut rows into short segments) is
// processed in chunks with the scales spread out to one per element, so each vector takes any
// mix of blocks. Exact modes divide every lane by its own e in f64 (correctly rounded, hence exact
// by SEMANTICS-fast.md sections 2 and 3); burn modes divide in f32 as Burn does.

constexpr std::size_t kLaneChunk = 256;  // elements per chunk of spread-out scales (stack arrays)

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

// Dequantizes n <= kLaneChunk elements with one scale per element (modes as DequantRow).
HWY_INLINE void DequantLanes(const std::int32_t* HWY_RESTRICT c, std::size_t n, const double* HWY_RESTRICT e,
                             const float* HWY_RESTRICT eb, float g, int mode, int fmt, float* HWY_RESTRICT out) {
  const MiniParams mp = Mini(fmt);
  if (mode <= 1) {
    const hn::ScalableTag<double> dd;
    const HalfF32<decltype(dd)> df;
    const HalfI32<decltype(dd)> di;
    const std::size_t N = hn::Lanes(dd);
    auto one = [&](const std::int32_t* cs, const double* es, float* dst) {
      const auto ci = hn::LoadU(di, cs);
      const auto v = mode == 0 ? hn::PromoteTo(dd, ci) : hn::PromoteTo(dd, MiniValue(di, ci, mp));
      hn::StoreU(DemoteToF32Overflowing(df, dd, hn::Mul(v, hn::LoadU(dd, es))), df, dst);
    };
    std::size_t i = 0;
    for (; i + N <= n; i += N) one(c + i, e + i, out + i);
    if (i < n) {
      HWY_ALIGN std::int32_t cb[HWY_MAX_BYTES / sizeof(double)] = {};
      HWY_ALIGN double ebuf[HWY_MAX_BYTES / sizeof(double)] = {};
      HWY_ALIGN float o[HWY_MAX_BYTES / sizeof(double)];
      std::memcpy(cb, c + i, (n - i) * sizeof(std::int32_t));
      std::memcpy(ebuf, e + i, (n - i) * sizeof(double));
      one(cb, ebuf, o);
      std::memcpy(out + i, o, (n - i) * sizeof(float));
    }
    return;
  }
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<std::int32_t> di;
  const std::size_t N = hn::Lanes(df);
  const auto vg = hn::Set(df, g);
  auto one = [&](const std::int32_t* cs, const float* es, float* dst) {
    const auto ci = hn::LoadU(di, cs);
    hn::StoreU(mode == 2 ? DequantF32<false>(ci, hn::LoadU(df, es), vg, mp) : DequantF32<true>(ci, hn::LoadU(df, es), vg, mp),
               df, dst);
  };
  std::size_t i = 0;
  for (; i + N <= n; i += N) one(c + i, eb + i, out + i);
  if (i < n) {
    HWY_ALIGN std::int32_t cb[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float ebuf[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float o[HWY_MAX_BYTES / sizeof(float)];
    std::memcpy(cb, c + i, (n - i) * sizeof(std::int32_t));
    std::memcpy(ebuf, eb + i, (n - i) * sizeof(float));
    one(cb, ebuf, o);
    std::memcpy(out + i, o, (n - i) * sizeof(float));
  }
}

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

// One segment: the kernels.h entry points with their scalar twins.
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

// Dequantize counterpart: modes 0 exact int, 1 exact float (f64 e); 2 int, 3 float:
// f32(f32(eb[s] * value) * g) (DequantF32).
HWY_NOINLINE void DequantRowImpl(const std::int32_t* HWY_RESTRICT c, std::size_t L, std::size_t bw, const double* ee,
                                 const float* eb, float g, int mode, int fmt, float* HWY_RESTRICT out,
                                 std::size_t rows, std::size_t groups, std::size_t gstride) {
  if (NarrowBlocks(bw)) {
    ForLaneChunks(L, bw, ee, nullptr, eb, mode,
                  [&](std::size_t c0, std::size_t n, const double* e, const float*, bool, const float* b, bool) {
                    detail::for_run_rows(rows, groups, gstride, L, [&](std::size_t r0) {
                      DequantLanes(c + r0 + c0, n, e, b, g, mode, fmt, out + r0 + c0);
                    });
                  });
    return;
  }
  detail::for_run_rows(rows, groups, gstride, L, [&](std::size_t r0) {
    const std::int32_t* cr = c + r0;
    float* o = out + r0;
    switch (mode) {
      case 2: return DequantScaledRow<false>(cr, L, bw, eb, g, fmt, o);
      case 3: return DequantScaledRow<true>(cr, L, bw, eb, g, fmt, o);
      default: break;
    }
    for (std::size_t off = 0, s = 0; off < L; off += bw, ++s) {
      const std::size_t cnt = L - off < bw ? L - off : bw;
      if (mode == 0) DequantExactIntImpl(cr + off, cnt, ee[s], o + off);
      else DequantExactFloatImpl(cr + off, cnt, ee[s], fmt, o + off);
    }
  });
}

HWY_NOINLINE std::int64_t TargetImpl() { return HWY_TARGET; }
HWY_NOINLINE std::size_t LanesF32Impl() { return hn::Lanes(hn::ScalableTag<float>()); }

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
