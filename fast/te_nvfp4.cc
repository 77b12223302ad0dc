#include "fast/te_nvfp4.hpp"

#include <algorithm>
#include <bit>
#include <cfloat>

#include "fast/kernels/scalar.h"
#include "fast/value_codes.hpp"

namespace qscheme::fast::detail {
namespace {

constexpr float kUe4m3Max = 448.0f;

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
                     std::uint32_t* bits, float* r) {
  // g is about A / 2688 (about 2^-128 where S is capped), so s g <= 448 g stays near A / 6 at
  // most: no product overflows.
  kf.te_scales(amax, nb, {.mult = t.mult, .g = t.g}, bits, r);
}

std::size_t te_nvfp4_given(const kernels::Kernels& kf, const GivenScales& given, Value v, std::size_t nb,
                           TeNvfp4* t, std::uint32_t* bits, float* r, std::uint32_t* scratch) {
  t->g = *given.global + 0.0f;  // a -0 is stored as +0
  t->mult = 1;
  t->fmt = fmt_of(v);
  // The given values themselves (v = f32(s * 1)), -0 as +0.
  for (std::size_t k = 0; k < nb; ++k) scratch[k] = std::bit_cast<std::uint32_t>(given.block[k]) & 0x7FFFFFFFu;
  return kf.te_scales(scratch, nb, {.mult = 1.0f, .g = t->g}, bits, r);
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
