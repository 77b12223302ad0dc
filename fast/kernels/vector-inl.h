// Per-target helpers of every SIMD body: loops over whole vectors with a padded tail, lane
// reductions, and the prefetch distances of the loops that stream input from memory.

#if defined(QSCHEME_FAST_KERNELS_VECTOR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_VECTOR_INL_H_
#undef QSCHEME_FAST_KERNELS_VECTOR_INL_H_
#else
#define QSCHEME_FAST_KERNELS_VECTOR_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

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

// Half-width f32 tag matching the f64 lane count.
template <class DF64>
using HalfF32 = hn::Rebind<float, DF64>;
template <class DF64>
using HalfI32 = hn::Rebind<int32_t, DF64>;

// f(integral_constant<size_t, V>) with V the vectors per block when a block is 1, 2 or 4 whole
// vectors of `lanes`, else V = 0 (the body takes bw / lanes at run time): the block loops then
// find their blocks' first vectors at compile-time positions in the common widths.
template <class F>
HWY_INLINE decltype(auto) WithVectorsPerBlock(std::size_t bw, std::size_t lanes, F&& f) {
  switch (bw % lanes == 0 ? bw / lanes : 0) {
    case 1: return f(std::integral_constant<std::size_t, 1>());
    case 2: return f(std::integral_constant<std::size_t, 2>());
    case 4: return f(std::integral_constant<std::size_t, 4>());
    default: return f(std::integral_constant<std::size_t, 0>());
  }
}

// f(integral_constant<size_t, i>) for i = 0, 1, ..., K - 1 in that order: the vectors of an
// unrolled step, each at a compile-time position.
template <std::size_t K, class F>
HWY_INLINE void ForEachIndex(F&& f) {
  [&]<std::size_t... kI>(std::index_sequence<kI...>) QSCHEME_INLINE_LAMBDA {
    (f(std::integral_constant<std::size_t, kI>()), ...);
  }(std::make_index_sequence<K>());
}

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

// The same with a second input read alongside the first, element for element (codes and their
// per-element scales): one(a, b, dst).
template <class TA, class TB, class TOut, class One>
HWY_INLINE void ForEachVectorPadded2(const TA* HWY_RESTRICT a, const TB* HWY_RESTRICT b, TOut* HWY_RESTRICT out,
                                     std::size_t n, std::size_t N, One one) {
  ForEachVector(n, N, [&](std::size_t i) { one(a + i, b + i, out + i); },
                [&](std::size_t i, std::size_t r) {
                  HWY_ALIGN TA pa[HWY_MAX_BYTES] = {};
                  HWY_ALIGN TB pb[HWY_MAX_BYTES] = {};
                  HWY_ALIGN TOut o[HWY_MAX_BYTES];
                  std::memcpy(pa, a + i, r * sizeof(TA));
                  std::memcpy(pb, b + i, r * sizeof(TB));
                  one(pa, pb, o);
                  std::memcpy(out + i, o, r * sizeof(TOut));
                });
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
