// microxcaling's codes (Point::mx_steps) on the f32-step kernel (kernels::quantize_steps): per
// block the divisor 2^k of its ue8m0 scale, per element t = f32(x / 2^k), then the grid value of
// floor(f32(q + 0.5)) (StepTie::away on a minifloat), t's sign, +0 for a zero t. The division is
// the one microxcaling performs; it rounds only where t falls among the f32 subnormals, far
// below every kind's least quantum.
#pragma once

#include <cstdint>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/scalar.h"
#include "fast/value_codes.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::fast::detail {

inline kernels::StepSpec mx_step_spec(Value v) {
  kernels::StepSpec s;
  s.op = kernels::StepOp::divide;
  s.tie = kernels::StepTie::away;
  s.zero_plus = true;
  s.fmt = info(v).is_float ? mini_fmt(v) : 0;
  return s;
}

// 2^(p - 127) in f32 for a ue8m0 pattern p <= 254; 2^-127 is the subnormal 0x00400000.
inline float mx_divisor(std::uint32_t p) { return scalar::f32_from_bits(p == 0 ? 0x00400000u : p << 23); }

}  // namespace qscheme::fast::detail
