// Per-target block maxima: the largest |x| bit pattern of a range, of segments of a row, of the
// rows of a run that share their blocks, and of whole blocks N at a time (the calibration of
// minmax scales; a result >= 0x7F800000 means a NaN or infinity); and the range of given scales.

#if defined(QSCHEME_FAST_KERNELS_MAXABS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_MAXABS_INL_H_
#undef QSCHEME_FAST_KERNELS_MAXABS_INL_H_
#else
#define QSCHEME_FAST_KERNELS_MAXABS_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "fast/kernels/vector-inl.h"
#include "fast/support/run_rows.hpp"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

// The signed range of given scales: -0 read as +0, then the largest and least pattern as i32.
HWY_NOINLINE ScaleRange ScaleRangeImpl(const float* HWY_RESTRICT s, std::size_t n) {
  if (n == 0) return {};
  const hn::ScalableTag<int32_t> di;
  const hn::ScalableTag<float> df;
  const std::size_t N = hn::Lanes(di);
  const auto neg_zero = hn::Set(di, static_cast<std::int32_t>(0x80000000u));
  auto top = hn::Set(di, std::numeric_limits<std::int32_t>::min());
  auto least = hn::Set(di, std::numeric_limits<std::int32_t>::max());
  auto one = [&](hn::Vec<decltype(di)> b) {
    const auto m = hn::IfThenZeroElse(hn::Eq(b, neg_zero), b);
    top = hn::Max(top, m);
    least = hn::Min(least, m);
  };
  std::size_t i = 0;
  for (; i + N <= n; i += N) one(hn::BitCast(di, hn::LoadU(df, s + i)));
  if (i < n) {
    // Padding repeats the last pattern, which changes neither end.
    HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)];
    for (std::size_t j = 0; j < N; ++j) buf[j] = s[std::min(i + j, n - 1)];
    one(hn::BitCast(di, hn::Load(df, buf)));
  }
  return {hn::GetLane(hn::MaxOfLanes(di, top)), hn::GetLane(hn::MinOfLanes(di, least))};
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
  WithVectorsPerBlock(bw, kN, groups);
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

// The largest f32 pattern of some elements read as i32 (s) and as u32 (u): two plain maxima per
// vector, from which the two sides of their largest |x| follow (SidesOf).
template <class V>
struct PatternMax {
  V s, u;
};

// ConcatMaxTree over PatternMax leaves: lane k of each holds the maximum of leaf k's lanes.
template <std::size_t kC, class D, class Leaf>
HWY_INLINE PatternMax<hn::Vec<D>> ConcatPatternMaxTree(D d, const Leaf& leaf, std::size_t j0 = 0) {
  if constexpr (kC == 1) {
    return leaf(j0);
  } else {
    const hn::RebindToUnsigned<D> du;
    const auto a = ConcatPatternMaxTree<kC / 2>(d, leaf, j0);
    const auto b = ConcatPatternMaxTree<kC / 2>(d, leaf, j0 + kC / 2);
    return {hn::Max(hn::ConcatEven(d, b.s, a.s), hn::ConcatOdd(d, b.s, a.s)),
            hn::BitCast(d, hn::Max(hn::BitCast(du, hn::ConcatEven(d, b.u, a.u)), hn::BitCast(du, hn::ConcatOdd(d, b.u, a.u))))};
  }
}

// The two sides of the largest |x| of the elements a PatternMax covers: p, the largest |x| pattern
// of those whose sign bit is clear, and q, of those whose sign bit is set (0 where there is none).
// Read as i32 the sign-clear patterns are the non-negative ones, so p = max(s, 0); read as u32
// the sign-set ones are the largest, so u has its sign bit set exactly when some element does,
// and then u's magnitude is q.
template <class V>
struct Sides {
  V p, q;
};
template <class D>
HWY_INLINE Sides<hn::Vec<D>> SidesOf(D d, const PatternMax<hn::Vec<D>>& m) {
  const auto zero = hn::Zero(d);
  return {hn::Max(m.s, zero), hn::IfThenElseZero(hn::Lt(m.u, zero), hn::And(m.u, hn::Set(d, 0x7FFFFFFF)))};
}

// The pattern of the first element of x[0..n) whose |x| pattern is a (one is there).
HWY_INLINE std::uint32_t FirstOfMagnitude(const float* HWY_RESTRICT x, std::size_t n, std::uint32_t a) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t b;
    std::memcpy(&b, x + i, 4);
    if ((b & 0x7FFFFFFFu) == a) return b;
  }
  return a;
}

// A block's signed maximum from its two sides: the larger side with its sign; equal sides hold +a
// and -a both (or only zeros, p = q = 0: +0), and the block's first of them decides.
HWY_INLINE std::uint32_t SignedMaxOf(std::uint32_t p, std::uint32_t q, const float* HWY_RESTRICT x, std::size_t n) {
  if (q > p) return q | 0x80000000u;
  if (p > q || p == 0) return p;
  return FirstOfMagnitude(x, n, p);
}

// ggml q4_0's statistic, N blocks at a time as BlockMaxAbsBitsT: each block's patterns fold into
// their largest as i32 and as u32 (PatternMax), ConcatPatternMaxTree leaves block k's in lane k,
// and SidesOf turns them into the two sides of its largest |x|. Only a block whose sides are equal
// and non-zero (both +a and -a occur: rare in data) is scanned for the first.
HWY_NOINLINE std::uint32_t BlockSignedMaxBitsImpl(const float* HWY_RESTRICT x, std::size_t len, std::size_t bw,
                                                  std::uint32_t* HWY_RESTRICT m) {
  const hn::ScalableTag<std::int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const hn::RebindToUnsigned<decltype(di)> du;
  using V = hn::Vec<decltype(di)>;
  constexpr std::size_t kN = hn::MaxLanes(decltype(di)());  // == Lanes(di) on every x86 target
  const std::size_t N = hn::Lanes(di);
  const auto zero = hn::Zero(di);
  auto patterns = [&](const float* b) QSCHEME_INLINE_LAMBDA {
    const auto v = hn::BitCast(di, hn::LoadU(df, b));
    return PatternMax<V>{v, v};
  };
  auto merge = [&](PatternMax<V>& acc, const PatternMax<V>& t) QSCHEME_INLINE_LAMBDA {
    acc.s = hn::Max(acc.s, t.s);
    acc.u = hn::BitCast(di, hn::Max(hn::BitCast(du, acc.u), hn::BitCast(du, t.u)));
  };
  // n: a multiple of N. One prefetch per 64-byte line.
  auto fold = [&](const float* b, std::size_t n) QSCHEME_INLINE_LAMBDA {
    hwy::Prefetch(b + kReadAhead);
    PatternMax<V> acc = patterns(b);
    for (std::size_t i = N; i < n; i += N) {
      if (i % 16 == 0) hwy::Prefetch(b + i + kReadAhead);
      merge(acc, patterns(b + i));
    }
    return acc;
  };
  const std::size_t nfull = len / bw;
  auto all = hn::Zero(di);  // the largest |x| over every block, returned
  std::size_t k = 0;
  auto groups = [&](auto kV) {
    constexpr std::size_t Vn = decltype(kV)::value;  // vectors per block, or 0 for bw / N
    const std::size_t n = Vn ? Vn * kN : bw;
    for (; k + kN <= nfull; k += kN) {
      const float* xk = x + k * bw;
      const Sides<V> pq = SidesOf(di, ConcatPatternMaxTree<kN>(di, [&](std::size_t j) { return fold(xk + j * n, n); }));
      all = hn::Max(all, hn::Max(pq.p, pq.q));
      const auto top = hn::IfThenElse(hn::Gt(pq.q, pq.p), hn::Or(pq.q, hn::Set(di, std::numeric_limits<std::int32_t>::min())), pq.p);
      hn::StoreU(hn::BitCast(du, top), du, m + k);
      const auto both = hn::AndNot(hn::Eq(pq.p, zero), hn::Eq(pq.p, pq.q));
      if (HWY_UNLIKELY(!hn::AllFalse(di, both))) {
        HWY_ALIGN std::int32_t p[kN], q[kN];
        hn::Store(pq.p, di, p);
        hn::Store(pq.q, di, q);
        for (std::size_t j = 0; j < N; ++j) {
          m[k + j] = SignedMaxOf(static_cast<std::uint32_t>(p[j]), static_cast<std::uint32_t>(q[j]), xk + j * bw, bw);
        }
      }
    }
  };
  WithVectorsPerBlock(bw, kN, groups);
  auto one = [&](const float* b, std::size_t n, const PatternMax<V>& acc) {
    const Sides<V> pq = SidesOf(di, acc);
    all = hn::Max(all, hn::Max(pq.p, pq.q));
    return SignedMaxOf(static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(di, pq.p))),
                       static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(di, pq.q))), b, n);
  };
  for (; k < nfull; ++k) m[k] = one(x + k * bw, bw, fold(x + k * bw, bw));
  if (nfull * bw < len) {  // a partial last block: +0 padding changes neither maximum's sides
    const float* b = x + nfull * bw;
    const std::size_t rest = len - nfull * bw, whole = rest / N * N;
    PatternMax<V> acc = whole ? fold(b, whole) : PatternMax<V>{zero, zero};
    if (whole < rest) {
      HWY_ALIGN float pad[HWY_MAX_BYTES / sizeof(float)] = {};
      std::memcpy(pad, b + whole, (rest - whole) * sizeof(float));
      merge(acc, patterns(pad));
    }
    m[nfull] = one(b, rest, acc);
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

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
