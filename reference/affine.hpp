// Affine mode's quantization parameters: the zero point per scale, given or calibrated from
// min and max (docs/SEMANTICS.md section 14). Profile exact evaluates PyTorch's MinMaxObserver
// exactly, profile onnx computes DynamicQuantizeLinear's f32 steps.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reference/scales.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"

namespace qscheme::reference {

// The checks of caller-supplied zero points (size-mismatch, invalid-scale), after those of the
// scales: none for a sym scheme; for affine, none (zero points of 0) or one per scale, each in
// the kind's range.
Status check_given_zero_points(const Scheme& s, const Layout& l, const GivenScales& given);

// An affine scheme's scales and zero points. Given: the scales as block_scales takes them, the
// zero points as given (0 when none). Calibrated (minmax, one level): per block, with
// lo' = min(min x, 0) and hi' = max(max x, 0),
//   exact: s = round_up(max((hi' - lo') / (b - a), 2^-23)) to the scale dtype,
//          z = clamp(a - round_half_even(lo' / s), a, b);
//   onnx:  s = 1 when hi' = lo', else f32(f32(hi' - lo') / 255);
//          z = round_half_even(clamp(f32(a - f32(lo' / s)), a, b)).
// Errors: block_scales' errors; unsupported-profile (index = block) when onnx's f32 range or
// scale overflows to inf or underflows to 0.
struct AffineScales {
  BlockScales scales;
  std::vector<std::int32_t> zero_points;
};
Result<AffineScales> affine_scales(const Scheme& s, const Layout& l, std::span<const float> x,
                                   std::span<const std::uint64_t> block_of, const Rules& r, Calibration c,
                                   const std::optional<GivenScales>& given);

}  // namespace qscheme::reference
