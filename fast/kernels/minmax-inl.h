// Per-target least and largest f32 values as ordered keys (kernels::OrderedKey): the calibration
// of affine mode's scales and zero points (min and max per block), which also finds non-finite
// input, since the keys of NaN and of +-inf lie at or beyond those of +-inf.

#if defined(QSCHEME_FAST_KERNELS_MINMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_MINMAX_INL_H_
#undef QSCHEME_FAST_KERNELS_MINMAX_INL_H_
#else
#define QSCHEME_FAST_KERNELS_MINMAX_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/vector-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// OrderedKey of every lane: the pattern with its magnitude bits flipped where the sign is set.
template <class DI>
HWY_INLINE hn::Vec<DI> KeysOf(DI di, hn::Vec<hn::Rebind<float, DI>> x) {
  const auto b = hn::BitCast(di, x);
  return hn::Xor(b, hn::And(hn::ShiftRight<31>(b), hn::Set(di, 0x7FFFFFFF)));
}

HWY_NOINLINE MinMaxKeys MinMaxKeysImpl(const float* HWY_RESTRICT x, std::size_t n) {
  if (n == 0) return {};
  const hn::ScalableTag<std::int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const std::size_t N = hn::Lanes(di);
  // Two accumulators of each: the loop is bound by loads, not by the dependency of one chain.
  auto lo0 = hn::Set(di, kNoKeys.lo), lo1 = lo0;
  auto hi0 = hn::Set(di, kNoKeys.hi), hi1 = hi0;
  std::size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    hwy::Prefetch(x + i + kReadAhead);  // one per 64-byte line (16 floats)
    if (2 * N > 16) hwy::Prefetch(x + i + 16 + kReadAhead);
    const auto k0 = KeysOf(di, hn::LoadU(df, x + i)), k1 = KeysOf(di, hn::LoadU(df, x + i + N));
    lo0 = hn::Min(lo0, k0);
    hi0 = hn::Max(hi0, k0);
    lo1 = hn::Min(lo1, k1);
    hi1 = hn::Max(hi1, k1);
  }
  for (; i + N <= n; i += N) {
    const auto k = KeysOf(di, hn::LoadU(df, x + i));
    lo0 = hn::Min(lo0, k);
    hi0 = hn::Max(hi0, k);
  }
  if (i < n) {
    // Padding repeats the last element, which moves neither end.
    HWY_ALIGN float b[HWY_MAX_BYTES / sizeof(float)];
    for (std::size_t j = 0; j < N; ++j) b[j] = x[i + j < n ? i + j : n - 1];
    const auto k = KeysOf(di, hn::Load(df, b));
    lo1 = hn::Min(lo1, k);
    hi1 = hn::Max(hi1, k);
  }
  return {hn::GetLane(hn::MinOfLanes(di, hn::Min(lo0, lo1))), hn::GetLane(hn::MaxOfLanes(di, hn::Max(hi0, hi1)))};
}

HWY_NOINLINE void SegmentMinMaxKeysImpl(const float* HWY_RESTRICT x, std::size_t len, std::size_t w,
                                        std::int32_t* HWY_RESTRICT lo, std::int32_t* HWY_RESTRICT hi) {
  const hn::ScalableTag<std::int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const std::size_t N = hn::Lanes(di);
  if (w == 1) {
    // One segment per element (a scale per column, folded over the rows by repeated calls).
    std::size_t i = 0;
    for (; i + N <= len; i += N) {
      const auto k = KeysOf(di, hn::LoadU(df, x + i));
      hn::StoreU(hn::Min(hn::LoadU(di, lo + i), k), di, lo + i);
      hn::StoreU(hn::Max(hn::LoadU(di, hi + i), k), di, hi + i);
    }
    for (; i < len; ++i) {
      std::uint32_t b;
      std::memcpy(&b, x + i, 4);
      const std::int32_t k = OrderedKey(b);
      lo[i] = k < lo[i] ? k : lo[i];
      hi[i] = k > hi[i] ? k : hi[i];
    }
    return;
  }
  std::size_t k = 0;
  for (std::size_t off = 0; off < len; off += w, ++k) {
    const std::size_t cnt = len - off < w ? len - off : w;
    MinMaxKeys m;
    if (w >= N) {
      m = MinMaxKeysImpl(x + off, cnt);
    } else {
      // Narrow segments: a scalar loop (no calibrated kind needs them fast).
      for (std::size_t i = 0; i < cnt; ++i) {
        std::uint32_t b;
        std::memcpy(&b, x + off + i, 4);
        const std::int32_t key = OrderedKey(b);
        m.lo = key < m.lo ? key : m.lo;
        m.hi = key > m.hi ? key : m.hi;
      }
    }
    lo[k] = m.lo < lo[k] ? m.lo : lo[k];
    hi[k] = m.hi > hi[k] ? m.hi : hi[k];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
