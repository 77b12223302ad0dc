// Per-target dequantize kernels: code values times their scales, from i32 codes (segments and
// whole runs of rows, DequantRow) and from one-byte codes of a unit of the bytes path
// (DequantCodes), and the streaming copy of large dequantized outputs.
//
// Exactness (docs/SEMANTICS-fast.md sections 4 and 6): value(code) (<= 8 bits) * e (<= 35 bits)
// is exact in f64, and DemoteTo f32 rounds it once, to nearest-even (cvtpd2ps under the default
// MXCSR). In f32 lanes, one level: value * s is one IEEE multiplication, correctly rounded; two
// levels: value * s is exact in f32 (TwoLevelInF32), and the multiplication by g rounds once.

#if defined(QSCHEME_FAST_KERNELS_DEQUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_DEQUANT_INL_H_
#undef QSCHEME_FAST_KERNELS_DEQUANT_INL_H_
#else
#define QSCHEME_FAST_KERNELS_DEQUANT_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/minifloat-inl.h"
#include "fast/kernels/scales-inl.h"
#include "fast/kernels/vector-inl.h"
#include "fast/support/run_rows.hpp"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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
    ForEachVectorPadded2(c, e, out, n, N, one);
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
  ForEachVectorPadded2(c, eb, out, n, N, one);
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

// The power of two an 8-bit minifloat's pattern, shifted into f32's exponent and mantissa fields
// as CodeValuesOfBytes shifts it, is multiplied by to give its value (subnormals included).
template <int kKind>
constexpr float MiniBias() {
  static_assert(kKind == 2 + scalar::kE4M3 || kKind == 2 + scalar::kE5M2);
  return std::bit_cast<float>(static_cast<std::uint32_t>(253 + scalar::kMini[kKind - 2].emin) << 23);
}

// Values of one vector of one-byte codes: the signed value of integer fields (sign-extended from
// c.bits) or the f32 value of minifloat patterns. kKind: 0 = 8-bit integers, 1 = narrower
// integers, 2 + fmt = a minifloat, as a constant so that the loops of DequantCodesT carry no test
// of the kind. `bytes`: the N codes, one a lane.
template <int kKind, class DF>
HWY_INLINE hn::Vec<DF> CodeValuesOfBytes(DF df, hn::Vec<hn::Rebind<std::uint8_t, DF>> bytes, const CodeSpec& c) {
  const hn::Rebind<std::int32_t, DF> di;
  const hn::Rebind<std::int8_t, DF> ds8;
  if constexpr (kKind == 0) {
    return hn::ConvertTo(df, hn::PromoteTo(di, hn::BitCast(ds8, bytes)));
  } else if constexpr (kKind == 2 + scalar::kE4M3 || kKind == 2 + scalar::kE5M2) {
    // An 8-bit minifloat sign-extended: shifted as MiniValue shifts its magnitude, the copies of
    // its sign bit land on f32's sign bit and the bits below it, which one mask clears. The same
    // pattern as MiniValue's in two operations instead of five.
    constexpr int kM = scalar::kMini[kKind - 2].m;
    const auto v = hn::PromoteTo(di, hn::BitCast(ds8, bytes));
    const auto bits = hn::And(hn::ShiftLeft<23 - kM>(v), hn::Set(di, static_cast<std::int32_t>(0x80000000u | (0x7Fu << (23 - kM)))));
    return hn::Mul(hn::BitCast(df, bits), hn::Set(df, MiniBias<kKind>()));
  } else {
    const auto raw = hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<decltype(di)>(), bytes));
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

// CodeValuesOfBytes of the N codes at src.
template <int kKind, class DF>
HWY_INLINE hn::Vec<DF> CodeValuesOf(DF df, const std::uint8_t* HWY_RESTRICT src, const CodeSpec& c) {
  return CodeValuesOfBytes<kKind>(df, hn::LoadU(hn::Rebind<std::uint8_t, DF>(), src), c);
}

// Quarter k of a vector of 4N bytes (the N bytes of the k-th f32 vector they make), taken from the
// register: an in-cache q8_0 dequantize that loaded each quarter again, beside the one load of
// the whole that its check reads, ran about a third slower.
template <int k, class D8>
HWY_INLINE hn::Vec<hn::Half<hn::Half<D8>>> QuarterOf(D8 d8, hn::Vec<D8> v) {
  static_assert(k >= 0 && k < 4);
  const hn::Half<D8> dh;
  const hn::Half<decltype(dh)> dq;
  hn::Vec<decltype(dh)> half;
  if constexpr (k < 2) half = hn::LowerHalf(dh, v);
  else half = hn::UpperHalf(dh, v);
  (void)d8;
  if constexpr (k % 2 == 0) return hn::LowerHalf(dq, half);
  else return hn::UpperHalf(dq, half);
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
    WithVectorsPerBlock(bw, N, blocks);
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

// ---------------------------------------------------------------------------- ggml's blocks

// ggml's blocks N at a time: their N f16 scales gathered into one vector, checked and widened
// to f32 there (exactly: normal patterns by rebiasing, subnormals as their integer count times
// 2^-24, 0x7C00 as inf), then each block's codes as vectors of N: int8 widened, or the low and
// high nibbles of N bytes less 8 (codes i and i + 16), times the broadcast scale. kOut false: the
// checks alone (the untouched-output prepass). N <= 16 (x86's targets), so that a vector's bytes
// lie in one half of a block_q4_0.
//
// The codes' check is the least code of the call, a vector min a vector, compared once at the
// end; a compare and mask OR a vector made the OR chain the loop's bound (an in-cache 64K q8_0
// call took about twice as long). The scale patterns of 64 blocks are copied out before any is
// loaded as a vector (a vector load right after N scalar stores waited for them; one gather per
// group was slower still).
template <bool kNibbles, bool kOut>
HWY_INLINE bool DequantGgmlT(const std::uint8_t* HWY_RESTRICT in, std::size_t nb, const GgmlSpec& s,
                             float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  static_assert(hn::MaxLanes(decltype(df)()) <= 16, "a vector of codes lies in one half of a block");
  const std::size_t N = hn::Lanes(df);
  constexpr std::size_t kBytes = kNibbles ? 18 : 34;
  const bool inf_scales = s.inf_scales, signed_scales = s.signed_scales;
  const auto m7fff = hn::Set(di, 0x7FFF), inf_pattern = hn::Set(di, 0x7C00), least_normal = hn::Set(di, 0x400);
  auto bad = hn::Zero(di);                // lanes of bad scales, all ones
  auto least = hn::Set(di, 0x7FFFFFFF);  // the least code
  // Scales kChunk blocks at a time: their patterns copied out first, then checked and widened by
  // the vector, then the chunk's codes.
  constexpr std::size_t kChunk = 64;
  HWY_ALIGN std::int32_t h[kChunk + HWY_MAX_BYTES / sizeof(std::int32_t)];
  HWY_ALIGN float d[kChunk + HWY_MAX_BYTES / sizeof(float)];
  for (std::size_t c0 = 0; c0 < nb; c0 += kChunk) {
    const std::size_t cn = nb - c0 < kChunk ? nb - c0 : kChunk;
    const std::size_t padded = (cn + N - 1) / N * N;
    for (std::size_t j = 0; j < padded; ++j) {
      const std::uint8_t* b = in + (c0 + j) * kBytes;
      h[j] = j < cn ? static_cast<std::int32_t>(b[0] | (b[1] << 8)) : 0;  // +0 pads: allowed
    }
    for (std::size_t j = 0; j < padded; j += N) {
      const auto hv = hn::Load(di, h + j);
      const auto m = hn::And(hv, m7fff);
      auto bad_now = hn::Gt(m, inf_pattern);  // NaN
      if (!inf_scales) bad_now = hn::Or(bad_now, hn::Eq(m, inf_pattern));
      if (!signed_scales) bad_now = hn::Or(bad_now, hn::Ne(m, hv));
      bad = hn::Or(bad, hn::VecFromMask(di, bad_now));
      if constexpr (kOut) {
        const auto normal = hn::Add(hn::ShiftLeft<13>(m), hn::Set(di, 112 << 23));
        const auto sub = hn::BitCast(di, hn::Mul(hn::ConvertTo(df, m), hn::Set(df, 0x1p-24f)));
        const auto mag = hn::IfThenElse(hn::Lt(m, least_normal), sub,
                                        hn::IfThenElse(hn::Lt(m, inf_pattern), normal, hn::Set(di, 0x7F800000)));
        hn::Store(hn::BitCast(df, hn::Or(mag, hn::ShiftLeft<16>(hn::AndNot(m7fff, hv)))), df, d + j);
      }
    }
    for (std::size_t j = 0; j < cn; ++j) {
      const std::uint8_t* c = in + (c0 + j) * kBytes + 2;
      float* o = kOut ? out + (c0 + j) * 32 : nullptr;
      const auto vd = kOut ? hn::Set(df, d[j]) : hn::Zero(df);
      if constexpr (kNibbles) {
        const hn::Rebind<std::uint8_t, decltype(di)> d8;
        for (std::size_t i = 0; i < 16; i += N) {
          const auto raw = hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<decltype(di)>(), hn::LoadU(d8, c + i)));
          const auto lo = hn::Sub(hn::And(raw, hn::Set(di, 0xF)), hn::Set(di, 8));
          const auto hi = hn::Sub(hn::ShiftRight<4>(raw), hn::Set(di, 8));
          least = hn::Min(least, hn::Min(lo, hi));
          if constexpr (kOut) {
            hn::StoreU(hn::Mul(hn::ConvertTo(df, lo), vd), df, o + i);
            hn::StoreU(hn::Mul(hn::ConvertTo(df, hi), vd), df, o + 16 + i);
          }
        }
      } else {
        const hn::Rebind<std::int8_t, decltype(di)> d8;
        for (std::size_t i = 0; i < 32; i += N) {
          const auto v = hn::PromoteTo(di, hn::LoadU(d8, reinterpret_cast<const std::int8_t*>(c) + i));
          least = hn::Min(least, v);
          if constexpr (kOut) hn::StoreU(hn::Mul(hn::ConvertTo(df, v), vd), df, o + i);
        }
      }
    }
  }
  return hn::AllFalse(di, hn::Or(hn::MaskFromVec(bad), hn::Lt(least, hn::Set(di, s.lo))));
}

HWY_NOINLINE bool DequantGgmlImpl(const std::uint8_t* HWY_RESTRICT in, std::size_t nb, const GgmlSpec& s,
                                  float* HWY_RESTRICT out) {
  if (s.nibbles) return out ? DequantGgmlT<true, true>(in, nb, s, out) : DequantGgmlT<true, false>(in, nb, s, out);
  return out ? DequantGgmlT<false, true>(in, nb, s, out) : DequantGgmlT<false, false>(in, nb, s, out);
}

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
