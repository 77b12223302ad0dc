#include "fast/scales.hpp"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>

#include "fast/kernels/scalar.h"
#include "scheme/errors.hpp"

namespace qscheme::fast::detail {

ScaleRule scale_rule(const Scheme& s, const PointOptions& opt, ScalePick pick) {
  const ValueInfo& vi = info(s.value);
  ScaleRule r;
  r.sd = s.scale_dtype();
  r.grid = grid_of(r.sd);
  r.W = static_cast<double>(vi.hi - vi.lo);
  r.two = s.two_level();
  r.Dmax = r.two ? r.grid.max : 1.0;
  r.burn = opt.profile == Profile::burn;
  r.absmean = opt.calibration == Calibration::absmean;
  r.lo = vi.lo;
  r.hi = vi.hi;
  r.value = s.value;
  r.pick = opt.scales ? ScalePick::profile : pick;
  r.global_amax = opt.global_amax;
  return r;
}

Status check_given_scales(const GivenScales& given, const Layout& l, bool two) {
  if (given.block.size() != l.scales) return errors::given_scale_count(given.block.size(), l.scales);
  if (given.global.has_value() != two) return errors::given_global_presence(two);
  // One kernel pass finds whether any value is bad (nvfp4 has a scale per 16 elements); only then
  // a scalar loop finds the first.
  const kernels::ScaleRange range = kernels::Get().scale_range(given.block.data(), given.block.size());
  for (std::size_t i = 0; (range.least < 0 || range.top >= 0x7F800000) && i < given.block.size(); ++i) {
    if (!std::isfinite(given.block[i]) || given.block[i] < 0) return errors::invalid_given_scale(i);
  }
  if (two && (!std::isfinite(*given.global) || *given.global < 0)) return errors::invalid_given_global(l.scales);
  return {};
}

double exact_global(double gm) { return std::max(gm, std::ldexp(1.0, -126)); }

double exact_global_from_max(float amax, double W, double Dmax) {
  return exact_global(grid_round_up(2.0 * amax / (W * Dmax), f32_grid()));
}

bool burn_scale(float a, double W, float* s) {
  const float two_a = a * 2.0f;
  if (std::isinf(two_a)) return false;
  *s = two_a / static_cast<float>(W);
  return true;
}

bool burn_block_scale(std::uint32_t a, const kernels::BurnScaleSpec& s, ScaleDtype d, std::uint32_t* bits,
                      float* divisor) {
  float q;
  if (s.given) {
    q = scalar::f32_from_bits(a & 0x7FFFFFFFu);
  } else {
    if (!burn_scale(scalar::f32_from_bits(a), s.W, &q)) return false;
    if (s.two) q = q / s.g;
  }
  const double c = grid_round_up(q, grid_of(d));
  *bits = scale_to_bits(c, d);
  const float e = s.two ? s.g * static_cast<float>(c) : static_cast<float>(c);
  if (std::isinf(e)) return false;
  *divisor = burn_divisor(e);
  return true;
}

Status block_scales(const ScaleRule& r, const kernels::Kernels& kf, const Layout& l, const Geo& g, const float* x,
                    const std::vector<std::uint32_t>& bmax, const std::vector<ExactSum>& sums,
                    const GivenScales* given, std::uint32_t* scale_bits, std::uint32_t* global_bits,
                    BlockScales* out) {
  const std::uint64_t nb = l.scales;
  const Grid& grid = r.grid;
  const double W = r.W;
  std::vector<double> stored(nb);  // stored scale values
  double gval = 1.0;               // global (two-level)
  auto alpha_f = [&](std::uint64_t j) { return scalar::f32_from_bits(bmax[j]); };

  if (given) {
    for (std::uint64_t j = 0; j < nb; ++j) stored[j] = grid_round_up(given->block[j], grid);
    if (r.two) gval = *given->global + 0.0;  // a given -0 is stored as +0 (a stored sign bit is corrupt)
  } else if (r.pick != ScalePick::profile) {
    // A ue8m0 exponent rule or rceil (points.hpp): one level, calibrated by max |x|.
    const ExponentRule exponent(r.pick, r.value);
    for (std::uint64_t j = 0; j < nb; ++j) {
      const std::uint32_t p = exponent(bmax[j]);
      if (p == 0xFFu) return errors::torchao_even_nan_scale(j, alpha_f(j));
      stored[j] = std::ldexp(1.0, static_cast<int>(p) - 127);
    }
  } else if (!r.burn) {
    // exact profile
    if (!r.two) {
      // minmax: the scales come from the SIMD kernel below (vector_scales).
      for (std::uint64_t j = 0; j < nb && r.absmean; ++j) {
        stored[j] = round_up_ratio(sums[j], static_cast<u128>(g.block_elements(j)) * static_cast<u128>(W), 1.0, grid);
      }
    } else {
      if (r.absmean) {
        const Grid f32g = f32_grid();
        double gm = 0;
        for (std::uint64_t j = 0; j < nb; ++j) {
          const u128 D = static_cast<u128>(g.block_elements(j)) * static_cast<u128>(W) * static_cast<u128>(r.Dmax);
          gm = std::max(gm, round_up_ratio(sums[j], D, 1.0, f32g));
        }
        gval = exact_global(gm);
      } else {
        float amax = 0;
        for (std::uint64_t j = 0; j < nb; ++j) amax = std::max(amax, alpha_f(j));
        if (r.global_amax) amax = *r.global_amax;  // the given one
        gval = exact_global_from_max(amax, W, r.Dmax);
      }
      // minmax: the scales come from the SIMD kernel below (vector_scales).
      for (std::uint64_t j = 0; j < nb && r.absmean; ++j) {
        stored[j] = round_up_ratio(sums[j], static_cast<u128>(g.block_elements(j)) * static_cast<u128>(W), gval, grid);
      }
    }
  } else {
    // burn profile: f32 at every step.
    std::vector<float> scale(nb);
    for (std::uint64_t j = 0; j < nb; ++j) {
      const float a = r.absmean ? f32_mean_rne(sums[j], g.block_elements(j)) : alpha_f(j);
      if (!burn_scale(a, W, &scale[j])) return errors::burn_alpha_overflow(j);
    }
    if (!r.two) {
      for (std::uint64_t j = 0; j < nb; ++j) stored[j] = grid_round_up(scale[j], grid);
    } else {
      float smax = 0;
      for (float s : scale) smax = std::max(smax, s);
      const float gf = std::max(smax / static_cast<float>(r.Dmax), FLT_MIN);
      gval = gf;
      for (std::uint64_t j = 0; j < nb; ++j) stored[j] = grid_round_up(scale[j] / gf, grid);
    }
  }

  // Stored bits and effective scales. Calibrated minmax under the exact profile: all blocks at
  // once by the scales_from_max kernel (the same round-up as grid_round_up, tested against it).
  BlockScales& bs = *out;
  bs.g = r.two ? gval : 1.0;
  bs.plan = {r.lo, false};
  const bool vector_scales = !given && !r.burn && !r.absmean && r.pick == ScalePick::profile;
  if (vector_scales) {
    // W * g is exact: W has at most 17 significant bits, g 24.
    kernels::ScaleSpec sp = scale_spec(r.sd, r.two ? W * gval : W, r.two ? gval : 1.0);
    bs.ee.resize(nb);
    bs.ei.resize(nb);
    const bool asym = asymmetric(r.lo, r.hi);
    sp.count_tight = asym;
    if (asym) {
      bs.tight.resize(nb);
      bs.lowest.resize(nb);
    }
    const kernels::ScaleFacts facts = kf.scales_from_max(bmax.data(), nb, sp, scale_bits, bs.ee.data(), bs.ei.data(),
                                                         asym ? bs.tight.data() : nullptr,
                                                         asym ? bs.lowest.data() : nullptr);
    bs.plan = lowest_plan_in_kernel(r.lo, r.hi, facts.tight);
    bs.saturated = facts.below > 0;
  } else {
    for (std::uint64_t j = 0; j < nb; ++j) scale_bits[j] = scale_to_bits(stored[j], r.sd);
  }
  if (r.two && global_bits) *global_bits = scalar::f32_bits(static_cast<float>(gval));
  if (vector_scales) {
    // A calibrated scale is zero only for an all-zero block; nothing to check.
  } else if (!r.burn) {
    bs.ee.resize(nb);
    bool any_zero = false;
    for (std::uint64_t j = 0; j < nb; ++j) {
      bs.ee[j] = r.two ? stored[j] * gval : stored[j];  // <= 11 + 24 significant bits: exact
      any_zero = any_zero || (bs.ee[j] == 0 && bmax[j] != 0);
    }
    if (any_zero) {
      // Named by the first such element in row-major order, as reference/ does (docs/SEMANTICS.md).
      std::uint64_t block = 0;
      const std::uint64_t e = find_element(l, [&](std::uint64_t i, std::uint64_t b) {
        block = b;
        return bs.ee[b] == 0 && (scalar::f32_bits(x[i]) & 0x7FFFFFFFu) != 0;
      });
      return errors::zero_scale_nonzero_input(block, e);
    }
    bs.ei.resize(nb);
    for (std::uint64_t j = 0; j < nb; ++j) bs.ei[j] = kernels::InvF32(bs.ee[j]);
  } else {
    bs.eb.resize(nb);
    const float gf = static_cast<float>(gval);
    for (std::uint64_t j = 0; j < nb; ++j) {
      const float e = r.two ? gf * static_cast<float>(stored[j]) : static_cast<float>(stored[j]);
      if (std::isinf(e)) return errors::burn_scale_product_overflow(j);
      bs.eb[j] = burn_divisor(e);
    }
  }
  return {};
}

GivenFacts given_facts(const kernels::Kernels& kf, const GivenScales& gs, const Layout& l, bool two,
                       bool grid_has_zero, bool blocks) {
  GivenFacts f;
  if (gs.block.size() != l.scales || gs.global.has_value() != two) return f;
  const kernels::ScaleRange r = blocks ? kf.scale_range(gs.block.data(), gs.block.size()) : kernels::ScaleRange{};
  const kernels::ScaleRange g = kf.scale_range(two ? &*gs.global : nullptr, two ? 1 : 0);
  if (r.least < 0 || r.top >= 0x7F800000 || g.least < 0 || g.top >= 0x7F800000) return f;
  f.ok = true;
  f.zero = (two && g.top == 0) || (blocks && grid_has_zero && r.least == 0);
  f.top = std::bit_cast<float>(static_cast<std::uint32_t>(r.top));
  return f;
}

GivenFacts unit_scales(const kernels::Kernels& kf, const float* s, std::size_t n, bool grid_has_zero) {
  const kernels::ScaleRange r = kf.scale_range(s, n);
  GivenFacts f;
  f.ok = r.least >= 0 && r.top < 0x7F800000;
  f.zero = grid_has_zero && r.least == 0;
  f.top = std::bit_cast<float>(static_cast<std::uint32_t>(r.top));
  return f;
}


}  // namespace qscheme::fast::detail
