#include "fast/te_nvfp4.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "fast/kernels/scalar.h"
#include "fast/value_codes.hpp"

namespace qscheme::fast::detail {
namespace {

constexpr float kUe4m3Max = 448.0f;

// Nearest ue4m3, ties to even, saturating at 448: e4m3's codes of v >= 0 (the step kernel's
// minifloat rounding with the operand 1).
void round_to_ue4m3(const kernels::Kernels& kf, const float* v, std::size_t nb, std::uint32_t* bits) {
  kernels::StepSpec round_e4m3;
  round_e4m3.op = kernels::StepOp::multiply;
  round_e4m3.fmt = scalar::kE4M3;
  const float one = 1.0f;
  kf.quantize_steps(v, nb, 0, 0, &one, round_e4m3, reinterpret_cast<std::int32_t*>(bits), nullptr);
}

// r = min(f32(1 / e), f32max) of e = f32(s g), 1 / 0 taken as f32max; nb where no e is infinite,
// else the first block whose e is.
std::size_t multipliers(const std::uint32_t* bits, std::size_t nb, float g, float* r) {
  std::size_t first_inf = nb;
  for (std::size_t k = 0; k < nb; ++k) {
    const float e = static_cast<float>(scalar::mini_value(static_cast<int>(bits[k]), scalar::kE4M3)) * g;
    if (std::isinf(e) && first_inf == nb) first_inf = k;
    r[k] = e == 0.0f ? FLT_MAX : std::min(1.0f / e, FLT_MAX);
  }
  return first_inf;
}

int fmt_of(Value v) { return info(v).is_float ? mini_fmt(v) : -1; }

}  // namespace

TeNvfp4 te_nvfp4_global(std::uint32_t top_bits, Value v) {
  const ValueInfo& vi = info(v);
  const float M = static_cast<float>(vi.hi - vi.lo) / 2.0f;  // exact: the kind's largest magnitude
  const float A = scalar::f32_from_bits(top_bits);
  // A = 0 gives +inf, which the cap takes.
  const float S = std::min((kUe4m3Max * M) / A, FLT_MAX);
  TeNvfp4 t;
  t.g = 1.0f / S;
  t.mult = S * (1.0f / M);
  t.fmt = fmt_of(v);
  return t;
}

void te_nvfp4_blocks(const kernels::Kernels& kf, const TeNvfp4& t, const std::uint32_t* amax, std::size_t nb,
                     std::uint32_t* bits, float* r, float* v_scratch) {
  for (std::size_t k = 0; k < nb; ++k) v_scratch[k] = std::min(scalar::f32_from_bits(amax[k]) * t.mult, FLT_MAX);
  round_to_ue4m3(kf, v_scratch, nb, bits);
  // g is about A / 2688 (about 2^-128 where S is capped), so s g <= 448 g stays near A / 6 at
  // most: no product overflows.
  multipliers(bits, nb, t.g, r);
}

std::size_t te_nvfp4_given(const kernels::Kernels& kf, const GivenScales& given, Value v, std::size_t nb,
                           TeNvfp4* t, std::uint32_t* bits, float* r, float* v_scratch) {
  t->g = *given.global + 0.0f;  // a -0 is stored as +0
  t->mult = 0;
  t->fmt = fmt_of(v);
  for (std::size_t k = 0; k < nb; ++k) v_scratch[k] = given.block[k] + 0.0f;
  round_to_ue4m3(kf, v_scratch, nb, bits);
  return multipliers(bits, nb, t->g, r);
}

kernels::StepSpec te_nvfp4_step_spec(const TeNvfp4& t) {
  kernels::StepSpec s;
  s.op = kernels::StepOp::multiply;
  s.tie = kernels::StepTie::even;
  s.zero_plus = true;
  s.fmt = t.fmt;
  return s;
}

}  // namespace qscheme::fast::detail
