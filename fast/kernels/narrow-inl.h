// Per-target f32 values rounded once more to f16 or bf16 (dequantize's 16-bit outputs,
// docs/SEMANTICS.md section 16), on the bits of the f32 pattern:
//  * bf16: adding 0x7FFF plus the lowest kept bit and dropping the low 16 bits rounds to nearest
//    even; a carry moves into the exponent, up to infinity, which is right for every finite value.
//  * f16: from 2^-14 (normal): the exponent rebiased by (15 - 127) << 23 in the same addition,
//    0xFFF plus the lowest kept bit, 13 bits dropped; a carry past 65504 gives infinity, as it
//    should from 65520 on. Below 2^-14 (subnormal): + 0.5f rounds the value to a multiple of
//    2^-24 (0.5's ulp) by the f32 adder, nearest even, and the pattern minus 0.5f's is the count.
//    2^16 and beyond, infinity; a NaN, the quiet NaN of its sign.

#if defined(QSCHEME_FAST_KERNELS_NARROW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_NARROW_INL_H_
#undef QSCHEME_FAST_KERNELS_NARROW_INL_H_
#else
#define QSCHEME_FAST_KERNELS_NARROW_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fast/kernels/vector-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_NOINLINE void NarrowF32Impl(const float* HWY_RESTRICT y, std::size_t n, bool bf16, std::uint16_t* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<std::uint16_t, decltype(df)> d16;
  const std::size_t N = hn::Lanes(df);
  // Comparisons on the magnitude's pattern as i32: the sign bit is clear, and Highway 1.0.3 has no
  // ordered compares of u32 lanes on x86.
  const auto inf = hn::Set(di, 0x7F800000);
  auto one = [&](const float* src, std::uint16_t* dst) {
    const auto b = hn::BitCast(du, hn::LoadU(df, src));
    const auto sign = hn::And(b, hn::Set(du, 0x80000000u));
    const auto mag = hn::Xor(b, sign);
    const auto mi = hn::BitCast(di, mag);
    const auto is_nan = hn::RebindMask(du, hn::Gt(mi, inf));
    hn::Vec<decltype(du)> r;
    if (bf16) {
      const auto lsb = hn::And(hn::ShiftRight<16>(mag), hn::Set(du, 1u));
      r = hn::ShiftRight<16>(hn::Add(hn::Add(mag, hn::Set(du, 0x7FFFu)), lsb));
      r = hn::IfThenElse(is_nan, hn::Set(du, 0x7FC0u), r);
    } else {
      const auto lsb = hn::And(hn::ShiftRight<13>(mag), hn::Set(du, 1u));
      const auto normal = hn::ShiftRight<13>(hn::Add(hn::Add(mag, hn::Set(du, 0xC8000FFFu)), lsb));
      const auto magic = hn::Set(df, 0.5f);
      const auto sub = hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(df, mag), magic)), hn::BitCast(du, magic));
      r = hn::IfThenElse(hn::RebindMask(du, hn::Lt(mi, hn::Set(di, 113 << 23))), sub, normal);
      r = hn::IfThenElse(hn::RebindMask(du, hn::Gt(mi, hn::Set(di, (143 << 23) - 1))), hn::Set(du, 0x7C00u), r);
      r = hn::IfThenElse(is_nan, hn::Set(du, 0x7E00u), r);
    }
    r = hn::Or(r, hn::ShiftRight<16>(sign));
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, r)), d16, dst);
  };
  ForEachVectorPadded(y, out, n, N, one);
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
