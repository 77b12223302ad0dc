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
  switch (p.ggml) {
    case GgmlPoint::q8_0: return StepRecipe::ggml_q8_0;
    case GgmlPoint::q8_0_x86: return StepRecipe::ggml_q8_0_x86;
    case GgmlPoint::q4_0: return StepRecipe::ggml_q4_0;
    case GgmlPoint::none: break;
  }
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
  s.bits = vi.bits;
  switch (r) {
    case StepRecipe::ggml_q8_0:  // roundf, then (int8_t): x86's conversion wrapped to the kind's bits
      s.tie = kernels::StepTie::away;
      s.saturation = kernels::StepSaturation::x86_wrap;
      break;
    case StepRecipe::ggml_q8_0_x86:  // cvtps_epi32 (ties to even), then the saturating packs
      s.saturation = kernels::StepSaturation::x86_full_range;
      s.lo = full_lo(v);
      s.hi = full_hi(v);
      break;
    case StepRecipe::ggml_q4_0:  // MIN(15, (int8_t)(t + 8.5f)) - 8
      s.tie = kernels::StepTie::half_up_offset;
      s.saturation = kernels::StepSaturation::upper_only;
      break;
    default: break;
  }
  if (vi.is_float) {
    s.fmt = v == Value::e4m3 ? scalar::kE4M3 : v == Value::e5m2 ? scalar::kE5M2 : scalar::kE2M1;
    // ONNX's fp4 path adds the zero point to the quotient: -0 + 0 = +0.
    s.zero_plus = v == Value::e2m1;
  }
  return s;
}

kernels::StepSpec burn_step_spec(Value v) {
  kernels::StepSpec s = step_spec(StepRecipe::onnx, v);  // divide, clamp, the kind's range
  s.tie = info(v).is_float ? kernels::StepTie::even : kernels::StepTie::away;
  s.zero_plus = false;  // a zero t keeps its sign
  return s;
}

kernels::StepScaleSpec step_scale_spec(StepRecipe r, Value v, ScaleDtype d) {
  const ValueInfo& vi = info(v);
  kernels::StepScaleSpec s;
  // d = f32(a / M), M = (hi - lo) / 2 (exact in f32); q4_0's signed max m gives d = m / lo.
  s.divisor = r == StepRecipe::ggml_q4_0 ? static_cast<float>(vi.lo) : static_cast<float>(vi.hi - vi.lo) / 2.0f;
  s.dt = static_cast<int>(d);
  s.operand = r == StepRecipe::ggml_q8_0_x86 ? kernels::StepOperand::hi_over_amax : kernels::StepOperand::reciprocal_or_zero;
  s.hi = static_cast<float>(vi.hi);
  return s;
}

Status onnx_option_checks(const Scheme& scheme, const Layout& l, const PointOptions& opt) {
  const bool two = scheme.two_level();
  if (opt.scales) QSCHEME_RETURN_IF_ERROR(check_given_scales(*opt.scales, l, two));
  if (!opt.scales || two || scheme.scale_dtype() != ScaleDtype::f32) return errors::onnx_needs_given_f32_scales();
  return {};
}

namespace {

// Each block's statistic (the f32 pattern of max |x|, or of q4_0's signed max) over any block
// grid: the block maxima per run of rows, as the exact profile's whole-tensor stage takes them;
// the signed max by one pass in row-major order, whose chunks of rows never share a block.
std::vector<std::uint32_t> block_statistics(StepRecipe r, const kernels::Kernels& kf, const Geo& g, const float* x) {
  std::vector<std::uint32_t> stat(g.nblocks, 0);
  if (r != StepRecipe::ggml_q4_0) {
    for_runs(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                          std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
      kf.rows_segment_max_abs_bits(x + off, nrows, len, bw, &stat[b], groups, gstride);
    });
    return stat;
  }
  std::vector<std::uint32_t> best(g.nblocks, 0);
  for_rows(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t b) {
    for (std::uint64_t i = 0; i < len; ++i) {
      const std::uint32_t bits = scalar::f32_bits(x[off + i]);
      const std::uint64_t j = b + i / g.bw;
      if ((bits & 0x7FFFFFFFu) > best[j]) {
        best[j] = bits & 0x7FFFFFFFu;
        stat[j] = bits;
      }
    }
  });
  return stat;
}

// The given scales' operands and stored patterns (-0 as +0), after onnx's zero-scale check.
Status given_operands(StepRecipe r, const Layout& l, const float* x, const GivenScales& given,
                      std::uint32_t* scale_bits, float* operand) {
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
  for (std::size_t j = 0; j < l.scales; ++j) {
    scale_bits[j] = scalar::f32_bits(std::fabs(s[j]));
    operand[j] = step_operand(r, s[j]);
  }
  return {};
}

}  // namespace

Status steps_whole(StepRecipe r, const Scheme& scheme, const Layout& l, const float* x, const GivenScales* given,
                   std::int32_t* codes, std::uint32_t* scale_bits) {
  const kernels::Kernels& kf = kernels::Get();
  if (l.elements > 0 && kf.max_abs_bits(x, l.elements) >= 0x7F800000u) {
    std::size_t i = 0;
    while (std::isfinite(x[i])) ++i;
    return errors::non_finite_input(i);
  }
  const kernels::StepSpec spec = step_spec(r, scheme.value);
  const Geo g(l);
  std::vector<float> operand(l.scales);
  if (calibrates(r)) {
    const std::vector<std::uint32_t> stat = block_statistics(r, kf, g, x);
    kf.step_scales(stat.data(), l.scales, step_scale_spec(r, scheme.value, scheme.scale_dtype()), scale_bits,
                   operand.data());
  } else {
    QSCHEME_RETURN_IF_ERROR(given_operands(r, l, x, *given, scale_bits, operand.data()));
  }
  for_runs(g, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                         std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    for_run_rows(nrows, groups, gstride, len, [&](std::size_t r0) {
      kf.quantize_steps(x + off + r0, len, 0, bw, operand.data() + b, spec, codes + off + r0, nullptr, nullptr);
    });
  });
  return {};
}

}  // namespace qscheme::fast::detail
