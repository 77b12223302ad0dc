// microxcaling's codes (Point::mx_steps) on the f32-step kernel (kernels::quantize_steps): per
// block its ue8m0 scale 2^k, per element t = f32(x / 2^k), then the code of floor(f32(q + 0.5))
// (StepTie::away on a minifloat), t's sign, +0 for a zero t. The kernel multiplies by 2^-k, which
// gives the same t: 2^-k is an f32 for every k in [-127, 127], and x * 2^-k and x / 2^k are the
// same real number, rounded once (only where t falls among the f32 subnormals, far below every
// kind's least quantum).
#pragma once

#include <cstdint>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/scalar.h"
#include "fast/value_codes.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::fast::detail {

inline kernels::StepSpec mx_step_spec(Value v) {
  kernels::StepSpec s;
  s.op = kernels::StepOp::multiply;
  s.tie = kernels::StepTie::away;
  s.zero_plus = true;
  s.fmt = info(v).is_float ? mini_fmt(v) : 0;
  return s;
}

// 2^(127 - p) in f32 for a ue8m0 pattern p <= 254: 2^-127 (p = 254) is the subnormal 0x00400000.
inline float mx_multiplier(std::uint32_t p) {
  return scalar::f32_from_bits(p == 254 ? 0x00400000u : (254 - p) << 23);
}

}  // namespace qscheme::fast::detail
