// The f32-step points the fast engine runs, on the one kernel family of their codes
// (kernels::quantize_steps): profile onnx (ONNX QuantizeLinear with zero point 0 over given f32
// scales: one IEEE f32 division, np.rint, clip; minifloats by a saturating round-to-nearest-even
// cast, e2m1's zero quotient as +0), torch's quantize_val over given f32 scales (recipe
// torch-qint8: t = f32(x * f32(1 / e)), ties to even, NaN and t >= 2^63 to lo, then the clamp),
// and ggml's calibrated quantizers (recipes ggml-q8_0, ggml-q8_0-x86, ggml-q4_0: the block's
// statistic, d = f32(a / M) stored rounded to nearest, codes from x * f32(1 / d) or
// x * f32(hi / amax) converted as x86 converts). Their checks in the reference's order, the
// per-block operands, and the QuantizedTensor codes; steps_units.cc runs the same kernel unit by
// unit.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fast/kernels/dispatch.h"
#include "fast/points.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

enum class StepRecipe : std::uint8_t { onnx, torch, ggml_q8_0, ggml_q8_0_x86, ggml_q4_0 };

// The f32-step recipe point p runs as, if any.
std::optional<StepRecipe> step_recipe(const Point& p);

// Whether the recipe calibrates its scales (ggml's) rather than taking given ones.
inline bool calibrates(StepRecipe r) { return r != StepRecipe::onnx && r != StepRecipe::torch; }

// The kernel's rules for the recipe's codes of value kind v.
kernels::StepSpec step_spec(StepRecipe r, Value v);

// Burn's codes of value kind v (docs/SEMANTICS.md section 5) as f32 steps: t = f32(x / e), then
// half away from zero and the clamp (integers) or the saturating round-to-nearest-even cast with t's
// sign (minifloats).
kernels::StepSpec burn_step_spec(Value v);

// The scale step of a calibrating recipe over value kind v and scale dtype d.
kernels::StepScaleSpec step_scale_spec(StepRecipe r, Value v, ScaleDtype d);

// The operand of a block whose given scale e passed the checks (finite, >= 0 or -0). onnx divides
// by e; a block with a zero scale holds only zeros (else zero-scale-nonzero-input), whose codes
// dividing by 1 gives (x's sign kept, e2m1's +0). torch multiplies by f32(1 / |e|), +inf for 0.
inline float step_operand(StepRecipe r, float e) {
  if (r == StepRecipe::onnx) return e == 0.0f ? 1.0f : e;
  return 1.0f / std::fabs(e);
}

// onnx's checks of its options, in the reference's order: the given scales (count, global, each
// value), then onnx-needs-given-f32-scales.
Status onnx_option_checks(const Scheme& scheme, const Layout& l, const PointOptions& opt);

// The whole-tensor stage of the recipe (quantize_whole.cc; steps_units.cc is its units stage):
// its codes and stored scales (the given ones, -0 as +0; or the calibrated ones) of a tensor
// whose options passed their checks, after the input's: non-finite-input, then (onnx)
// zero-scale-nonzero-input. `given` is null for a calibrating recipe. Nothing is written on error.
Status steps_whole(StepRecipe r, const Scheme& scheme, const Layout& l, const float* x, const GivenScales* given,
                   std::int32_t* codes, std::uint32_t* scale_bits);

}  // namespace qscheme::fast::detail
