// The extension stage's per-block parameters (ext_stage.hpp): what a call's output holds besides
// its codes (stored scales, the global, zero points) and what its codes are computed from (the
// affine kernels' operands), with the errors of each scale step in the reference's order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fast/ext_stage.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/points.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// The rule of a point's codes: the exact profile (an exact quotient), burn (f32(x / e) rounded
// half away, a zero scale as 0.1), onnx (f32(x / e) rounded half to even), torch's quantize_val
// (f32(x * f32(1 / e)), NaN and |t| >= 2^63 to lo).
enum class ExtRule : std::uint8_t { exact, burn, onnx, torch };
ExtRule ext_rule(const Point& p);

struct ExtParams {
  kernels::AffineSpec spec;
  std::vector<std::uint32_t> bits;           // stored scale patterns, one per block
  std::optional<std::uint32_t> global_bits;  // two levels (sym only)
  std::vector<std::int32_t> zero_points;     // affine: one per block; sym: none
  std::vector<float> r;                      // the kernel's operand per block
  std::vector<double> e;                     // exact: the effective scale per block
};

// The checks of a call before its input is read, in the reference's order: the given scales,
// the given zero points, the point's rules; then the point it runs as. Precondition: l is the
// layout of (scheme, shape) with the input's size checked.
Result<Point> ext_point(const Scheme& scheme, const Layout& l, const QuantizeOptions& options);

// The parameters of every block under given scales and zero points, the input aside: burn's
// product overflow is the one error here. *zero_scale: whether some block's effective scale is 0
// under a rule for which that is an error over non-zero input (exact, onnx).
Result<ExtParams> given_ext_params(const Scheme& scheme, const Layout& l, const Point& p, bool* zero_scale);

// The kernel spec and the per-block vectors of a call's rule, sized for `blocks` blocks (the
// calibrating paths fill them block by block).
ExtParams empty_ext_params(const Scheme& scheme, const Point& p, std::uint64_t blocks);

// Affine calibration of block j from its least and largest x (finite) into p. Profile onnx's
// range errors name the block.
Status calibrate_affine_block(const Scheme& scheme, ExtRule rule, std::uint64_t j, float lo, float hi, ExtParams* p);

// The whole-tensor parameters: the input read once for what the scale step needs (min and max
// per block for affine calibration, max |x| and exact sums for sym calibration), non-finite
// input reported first, then the scale step's errors.
Result<ExtParams> ext_params(const Scheme& scheme, const Layout& l, const float* x, const Point& p);

// Everything of p the output holds besides the codes: stored scales, the global, zero points.
void write_ext_params(const Scheme& scheme, const Layout& l, const ExtParams& p, const ExtOutput& out);

}  // namespace qscheme::fast::detail
