// Per-target code checks: the first code a value kind cannot hold, in i32 codes and in raw
// one-byte fields (sign-extended from their width).

#if defined(QSCHEME_FAST_KERNELS_CHECK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_CHECK_INL_H_
#undef QSCHEME_FAST_KERNELS_CHECK_INL_H_
#else
#define QSCHEME_FAST_KERNELS_CHECK_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/vector-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

// On byte lanes (a full vector of codes per compare): a raw field is bad when, sign-extended from
// its width, it lies outside [lo, hi] (integers), or when it is wider than the format or a NaN/inf
// pattern (minifloats).
HWY_NOINLINE std::size_t FirstBadCodeImpl(const std::uint8_t* HWY_RESTRICT codes, std::size_t len, const CodeSpec& c) {
  const hn::ScalableTag<std::uint8_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const std::size_t N = hn::Lanes(du);
  const int nm = c.fmt < 0 ? 0 : c.nan_mask;
  const auto vnm = hn::Set(du, static_cast<std::uint8_t>(nm));
  const auto vhi_u = hn::Set(du, static_cast<std::uint8_t>(c.fmt < 0 ? 0 : c.hi));
  const auto vlo = hn::Set(di, static_cast<std::int8_t>(c.fmt < 0 ? c.lo : 0));
  const auto vhi = hn::Set(di, static_cast<std::int8_t>(c.fmt < 0 ? c.hi : 0));
  const int sh = 8 - c.bits;
  auto bad = [&](hn::Vec<decltype(du)> raw) {
    if (c.fmt >= 0) {
      auto m = hn::Gt(raw, vhi_u);  // never for 8-bit formats (hi = 255)
      if (nm) m = hn::Or(m, hn::Eq(hn::And(raw, vnm), vnm));
      return m;
    }
    // Sign-extend a bits-wide field: move it to the top of the byte, shift back arithmetically.
    const auto v = sh ? hn::ShiftRightSame(hn::BitCast(di, hn::ShiftLeftSame(raw, sh)), sh) : hn::BitCast(di, raw);
    return hn::RebindMask(du, hn::Or(hn::Lt(v, vlo), hn::Gt(v, vhi)));
  };
  std::size_t i = 0;
  for (; i + N <= len; i += N) {
    const auto m = bad(hn::LoadU(du, codes + i));
    if (HWY_UNLIKELY(!hn::AllFalse(du, m))) return i + static_cast<std::size_t>(hn::FindFirstTrue(du, m));
  }
  if (i < len) {
    HWY_ALIGN std::uint8_t b[HWY_MAX_BYTES] = {};  // field 0 is a code of every kind
    std::memcpy(b, codes + i, len - i);
    const auto m = bad(hn::Load(du, b));
    if (!hn::AllFalse(du, m)) return i + static_cast<std::size_t>(hn::FindFirstTrue(du, m));
  }
  return len;
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
