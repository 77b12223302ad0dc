// The whole-tensor stage of quantize (fast/quantize.cc): i32 codes of the whole tensor, pass by
// pass (block maxima or exact sums, the scales stage, the codes), for every scheme and option the
// fast engine runs. It reports every error in the reference's order, so the units stage leaves
// errors to it as well as the cases it does not take (N-D blocks, absmean, blocks wider than a
// unit, block extents that are no multiple of the vector length).
#include "fast/quantize_whole.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "fast/exact_scale.h"
#include "fast/f32_steps.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/mx_steps.hpp"
#include "fast/te_nvfp4.hpp"
#include "fast/plan.hpp"
#include "fast/scales.hpp"
#include "fast/support/lowest_code.hpp"
#include "fast/support/run_rows.hpp"
#include "fast/value_codes.hpp"
#include "scheme/errors.hpp"

namespace qscheme::fast::detail {

Status quantize_whole(const Scheme& scheme, const Layout& l, const float* x, const Point& point, std::int32_t* codes,
                      std::uint32_t* scale_bits, std::uint32_t* global_bits) {
  const PointOptions& opt = point.options;
  if (const std::optional<StepRecipe> step = step_recipe(point)) {
    if (*step == StepRecipe::onnx) QSCHEME_RETURN_IF_ERROR(onnx_option_checks(scheme, l, opt));
    return steps_whole(*step, scheme, l, x, opt.scales, codes, scale_bits);
  }
  const ScalePick pick = point.pick;
  const kernels::Kernels& kf = kernels::Get();
  const bool two = scheme.two_level();
  const bool burn = opt.profile == Profile::burn;
  const bool absmean = opt.calibration == Calibration::absmean;
  const GivenScales* given = opt.scales;
  if (given) QSCHEME_RETURN_IF_ERROR(check_given_scales(*given, l, two));
  if (!given && burn && absmean && two) {
    return errors::burn_absmean_two_level();
  }
  const Geo g(l);
  const std::uint64_t nb = l.scales;
  // Calibration pass: max |x| bits per block (also finds non-finite input).
  std::vector<std::uint32_t> bmax(nb, 0);
  for_runs(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                        std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    kf.rows_segment_max_abs_bits(x + off, nrows, len, bw, &bmax[b], groups, gstride);
  });
  for (std::uint32_t m : bmax) {
    if (m >= 0x7F800000u) {
      std::size_t i = 0;
      while (std::isfinite(x[i])) ++i;
      return errors::non_finite_input(i);
    }
  }
  if (point.te_nvfp4) {
    // nvidia-nvfp4 (te_nvfp4.hpp): its f32 scale steps block by block, its codes per run.
    TeNvfp4 t;
    std::vector<float> r(nb);
    if (given) {
      std::vector<std::uint32_t> scratch(nb);
      const std::size_t bad = te_nvfp4_given(kf, *given, scheme.value, nb, &t, scale_bits, r.data(), scratch.data());
      if (bad != nb) return errors::f32_scale_product_overflow(bad);
    } else {
      std::uint32_t top = 0;
      for (std::uint32_t m : bmax) top = std::max(top, m);
      if (opt.global_amax) top = scalar::f32_bits(*opt.global_amax);  // the given one
      t = te_nvfp4_global(top, scheme.value);
      te_nvfp4_blocks(kf, t, bmax.data(), nb, scale_bits, r.data());
    }
    if (global_bits) *global_bits = scalar::f32_bits(t.g);
    const kernels::StepSpec spec = te_nvfp4_step_spec(t);
    for_runs(g, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                           std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
      for_run_rows(nrows, groups, gstride, len, [&](std::size_t r0) {
        kf.quantize_steps(x + off + r0, len, 0, bw, r.data() + b, spec, codes + off + r0, nullptr, nullptr);
      });
    });
    return {};
  }
  std::vector<ExactSum> sums;
  if (!given && absmean) {
    sums.resize(nb);
    // Exact sums per block; chunks aligned so that no block is shared between threads.
    for_rows(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t b) {
      for (std::uint64_t i = 0; i < len; ++i) sums[b + i / g.bw].add_abs(x[off + i]);
    });
  }
  const ScaleRule rule = scale_rule(scheme, opt, pick);
  BlockScales sc;
  QSCHEME_RETURN_IF_ERROR(block_scales(rule, kf, l, g, x, bmax, sums, given, scale_bits, global_bits, &sc));

  if (point.mx_steps) {
    // microxcaling's codes: the f32 steps of x / 2^k per block (mx_steps.hpp).
    std::vector<float> multiplier(nb);
    for (std::uint64_t j = 0; j < nb; ++j) multiplier[j] = mx_multiplier(scale_bits[j]);
    const kernels::StepSpec spec = mx_step_spec(scheme.value);
    for_runs(g, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                           std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
      for_run_rows(nrows, groups, gstride, len, [&](std::size_t r0) {
        kf.quantize_steps(x + off + r0, len, 0, bw, multiplier.data() + b, spec, codes + off + r0, nullptr, nullptr);
      });
    });
    return {};
  }

  // Quantize pass.
  const ValueInfo& vi = info(scheme.value);
  const double W = rule.W;
  const int fmt = vi.is_float ? mini_fmt(scheme.value) : 0;
  const int mode = (burn ? 2 : 0) + (vi.is_float ? 1 : 0);
  const LowestPlan& plan = sc.plan;
  for_runs(g, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                         std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    kf.quantize_row(x + off, len, bw, sc.ee.empty() ? nullptr : sc.ee.data() + b,
                    sc.ei.empty() ? nullptr : sc.ei.data() + b, sc.g, sc.eb.empty() ? nullptr : sc.eb.data() + b, mode,
                    plan.lo, vi.hi, fmt, codes + off, nrows, groups, gstride,
                    plan.put_back ? sc.lowest.data() + b : nullptr);
    // The kernel put lo back where W e == 2a; a saturated block's lo is put back here. Segment k
    // of each of the run's rows lies in block b + k.
    for (std::uint64_t k = 0; plan.put_back && sc.saturated && k * bw < len; ++k) {
      if (!sc.tight[b + k]) continue;
      const std::uint64_t c0 = k * bw, n = std::min(bw, len - c0);
      const LowestFix f = lowest_fix(bmax[b + k], sc.ee[b + k], W, vi.lo);
      for_run_rows(nrows, groups, gstride, len, [&](std::uint64_t r0) {
        put_lowest(f, x + off + r0 + c0, n, vi.lo, codes + off + r0 + c0);
      });
    }
  });
  return {};
}


}  // namespace qscheme::fast::detail
