// Affine mode's calibration, one block at a time (scalar, after the SIMD min and max of the
// block): the stored scale and the zero point from the block's least and largest x
// (docs/SEMANTICS.md section 14; why each step is exact: docs/SEMANTICS-fast.md section 11).
#pragma once

#include <cstdint>

#include "fast/exact_scale.h"
#include "scheme/scheme.hpp"

namespace qscheme::fast::detail {

struct AffineBlock {
  std::uint32_t bits = 0;   // the stored scale's pattern
  double scale = 0;         // its value (exact)
  std::int32_t zero_point = 0;
};

// Profile exact (PyTorch's MinMaxObserver, evaluated exactly), for the block's least and largest
// x (finite): with lo' = min(lo, 0) and hi' = max(hi, 0), the scale is the least value of `grid`
// at or above max((hi' - lo') / (b - a), 2^-23) (saturating at the grid's largest), and the zero
// point clamp(a - round_half_even(lo' / scale), a, b).
AffineBlock exact_affine_block(float lo, float hi, std::int32_t a, std::int32_t b, const Grid& grid, ScaleDtype d);

// Profile onnx (DynamicQuantizeLinear, u8), f32 at every step: scale 1 when hi' == lo', else
// f32(f32(hi' - lo') / (b - a)); zero point round_half_even(clamp(f32(a - f32(lo' / scale)), a,
// b)). What goes wrong instead: the range overflows to inf, or the scale underflows to 0.
enum class OnnxAffine : std::uint8_t { ok, range_overflow, scale_underflow };
OnnxAffine onnx_affine_block(float lo, float hi, std::int32_t a, std::int32_t b, AffineBlock* out);

}  // namespace qscheme::fast::detail
