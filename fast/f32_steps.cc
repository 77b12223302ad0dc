#include "fast/f32_steps.hpp"

#include <cmath>
#include <vector>

#include "fast/kernels/scalar.h"
#include "fast/plan.hpp"
#include "fast/scales.hpp"
#include "fast/support/run_rows.hpp"
#include "scheme/errors.hpp"

namespace qscheme::fast::detail {
std::optional<StepRecipe> step_recipe(const Point& p) {
  if (p.torch_codes) return StepRecipe::torch;
  if (p.options.profile == Profile::onnx) return StepRecipe::onnx;
  return std::nullopt;
}

kernels::StepSpec step_spec(StepRecipe r, Value v) {
  const ValueInfo& vi = info(v);
  kernels::StepSpec s;
  s.op = r == StepRecipe::onnx ? kernels::StepOp::divide : kernels::StepOp::multiply;
  s.tie = kernels::StepTie::even;
  s.saturation = r == StepRecipe::onnx ? kernels::StepSaturation::clamp : kernels::StepSaturation::int64_min_then_clamp;
  s.lo = vi.lo;
  s.hi = vi.hi;
  if (vi.is_float) {
    s.fmt = v == Value::e4m3 ? scalar::kE4M3 : v == Value::e5m2 ? scalar::kE5M2 : scalar::kE2M1;
    // ONNX's fp4 path adds the zero point to the quotient: -0 + 0 = +0.
    s.zero_plus = v == Value::e2m1;
  }
  return s;
}

Status onnx_option_checks(const Scheme& scheme, const Layout& l, const QuantizeOptions& opt) {
  const bool two = scheme.two_level();
  if (opt.scales) QSCHEME_RETURN_IF_ERROR(check_given_scales(*opt.scales, l, two));
  if (!opt.scales || two || scheme.scale_dtype() != ScaleDtype::f32) return errors::onnx_needs_given_f32_scales();
  return {};
}

Status steps_whole(StepRecipe r, const Scheme& scheme, const Layout& l, const float* x, const GivenScales& given,
                   std::int32_t* codes, std::uint32_t* scale_bits) {
  const kernels::Kernels& kf = kernels::Get();
  if (l.elements > 0 && kf.max_abs_bits(x, l.elements) >= 0x7F800000u) {
    std::size_t i = 0;
    while (std::isfinite(x[i])) ++i;
    return errors::non_finite_input(i);
  }
  const std::vector<float>& s = given.block;
  bool any_zero = false;
  for (float v : s) any_zero = any_zero || v == 0.0f;
  if (r == StepRecipe::onnx && any_zero) {
    // The first element, in the layout's order, that is non-zero in a block with a zero scale.
    std::uint64_t block = 0;
    const std::uint64_t bad = find_element(l, [&](std::uint64_t e, std::uint64_t b) {
      block = b;
      return s[b] == 0.0f && x[e] != 0.0f;
    });
    if (bad != l.elements) return errors::zero_scale_nonzero_input(block, bad);
  }
  std::vector<float> operand(l.scales);
  for (std::size_t j = 0; j < l.scales; ++j) {
    scale_bits[j] = scalar::f32_bits(std::fabs(s[j]));
    operand[j] = step_operand(r, s[j]);
  }
  const kernels::StepSpec spec = step_spec(r, scheme.value);
  const Geo g(l);
  for_runs(g, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                         std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    for_run_rows(nrows, groups, gstride, len, [&](std::size_t r0) {
      kf.quantize_steps(x + off + r0, len, 0, bw, operand.data() + b, spec, codes + off + r0, nullptr);
    });
  });
  return {};
}

}  // namespace qscheme::fast::detail
