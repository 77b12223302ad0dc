#include "fast/ext_params.hpp"

#include <atomic>
#include <cmath>
#include <cstring>

#include "fast/affine_params.hpp"
#include "fast/codec.hpp"
#include "fast/exact_scale.h"
#include "fast/f32_steps.hpp"
#include "fast/kernels/scalar.h"
#include "fast/plan.hpp"
#include "fast/scales.hpp"
#include "fast/support/parallel.hpp"
#include "fast/support/run_rows.hpp"
#include "scheme/errors.hpp"

namespace qscheme::fast::detail {
namespace {

// non-finite-input at the first NaN or infinity of x, if there is one.
Status check_finite(const kernels::Kernels& kf, const float* x, std::uint64_t n) {
  std::atomic<bool> bad{false};
  parallel_chunks(n, 1 << 14, n, [&](std::uint64_t b, std::uint64_t e) {
    if (kf.max_abs_bits(x + b, e - b) >= 0x7F800000u) bad = true;
  });
  if (!bad.load()) return {};
  std::uint64_t i = 0;
  while (std::isfinite(x[i])) ++i;
  return errors::non_finite_input(i);
}

Status first_non_finite(const float* x) {
  std::uint64_t i = 0;
  while (std::isfinite(x[i])) ++i;
  return errors::non_finite_input(i);
}

}  // namespace

ExtRule ext_rule(const Point& p) {
  if (p.torch_codes) return ExtRule::torch;
  if (p.options.profile == Profile::burn) return ExtRule::burn;
  if (p.options.profile == Profile::onnx) return ExtRule::onnx;
  return ExtRule::exact;
}

Result<Point> ext_point(const Scheme& scheme, const Layout& l, const QuantizeOptions& options) {
  if (options.scales) {
    QSCHEME_RETURN_IF_ERROR(check_given_scales(*options.scales, l, scheme.two_level()));
    const std::vector<std::int32_t>& zp = options.scales->zero_points;
    if (!zp.empty()) {
      if (!scheme.affine() || zp.size() != l.zero_points) {
        return errors::given_zero_point_count(zp.size(), l.zero_points, scheme.affine());
      }
      const ValueInfo& vi = info(scheme.value);
      for (std::size_t j = 0; j < zp.size(); ++j) {
        if (zp[j] < vi.lo || zp[j] > vi.hi) return errors::invalid_given_zero_point(j, scheme.value, zp[j]);
      }
    }
  }
  // The profiles' own conditions too (unsigned kinds calibrate no sym scale, burn takes no
  // affine scheme, onnx calibrates affine u8 only), which point_of leaves to the Burn stages.
  QSCHEME_RETURN_IF_ERROR(validate_rules(rules_of(options), scheme, options.calibration, options.scales.has_value()));
  QSCHEME_RETURN_IF_ERROR(check_global_amax(scheme, rules_of(options), options));
  return point_of(scheme, options);
}

ExtParams empty_ext_params(const Scheme& scheme, const Point& p, std::uint64_t blocks) {
  const ValueInfo& vi = info(scheme.value);
  const ExtRule rule = ext_rule(p);
  ExtParams out;
  out.spec.op = rule == ExtRule::exact   ? kernels::AffineOp::exact
                : rule == ExtRule::torch ? kernels::AffineOp::multiply
                                         : kernels::AffineOp::divide;
  out.spec.away = rule == ExtRule::burn;
  out.spec.lo = vi.lo;
  out.spec.hi = vi.hi;
  out.bits.resize(blocks);
  out.r.resize(blocks);
  if (rule == ExtRule::exact) out.e.resize(blocks);
  if (scheme.affine()) out.zero_points.resize(blocks);
  return out;
}

Result<ExtParams> given_ext_params(const Scheme& scheme, const Layout& l, const Point& p, bool* zero_scale) {
  const GivenScales& g = *p.options.scales;
  const ExtRule rule = ext_rule(p);
  ExtParams out = empty_ext_params(scheme, p, l.scales);
  *zero_scale = false;
  if (rule == ExtRule::onnx || rule == ExtRule::torch) {
    // One level of f32 scales (validate_rules), stored as given (-0 as +0).
    const StepRecipe step = rule == ExtRule::onnx ? StepRecipe::onnx : StepRecipe::torch;
    for (std::size_t j = 0; j < l.scales; ++j) {
      out.bits[j] = scalar::f32_bits(std::fabs(g.block[j]));
      out.r[j] = step_operand(step, g.block[j]);
      if (rule == ExtRule::onnx && g.block[j] == 0.0f) *zero_scale = true;
    }
  } else {
    // The Burn stages' scales step with no block maxima: its zero-scale check never fires, and
    // the caller makes it against the input.
    const Geo geo(l);
    const std::vector<std::uint32_t> no_maxima(l.scales, 0);
    std::uint32_t gb = 0;
    BlockScales bs;
    QSCHEME_RETURN_IF_ERROR(block_scales(scale_rule(scheme, p.options), kernels::Get(), l, geo, nullptr, no_maxima, {},
                                         &g, out.bits.data(), &gb, &bs));
    if (scheme.two_level()) out.global_bits = gb;
    if (rule == ExtRule::exact) {
      out.e = std::move(bs.ee);
      out.r = std::move(bs.ei);
      for (double e : out.e) *zero_scale = *zero_scale || e == 0;
    } else {
      out.r = std::move(bs.eb);
    }
  }
  if (scheme.affine() && !g.zero_points.empty()) out.zero_points = g.zero_points;
  return out;
}

Status calibrate_affine_block(const Scheme& scheme, ExtRule rule, std::uint64_t j, float lo, float hi, ExtParams* p) {
  const ValueInfo& vi = info(scheme.value);
  AffineBlock b;
  if (rule == ExtRule::onnx) {
    switch (onnx_affine_block(lo, hi, vi.lo, vi.hi, &b)) {
      case OnnxAffine::range_overflow: return errors::onnx_affine_range_overflow(j);
      case OnnxAffine::scale_underflow: return errors::onnx_affine_scale_underflow(j);
      case OnnxAffine::ok: break;
    }
    p->r[j] = static_cast<float>(b.scale);
  } else {
    const ScaleDtype d = scheme.scale_dtype();
    b = exact_affine_block(lo, hi, vi.lo, vi.hi, grid_of(d), d);
    p->e[j] = b.scale;
    p->r[j] = kernels::InvF32(b.scale);
  }
  p->bits[j] = b.bits;
  p->zero_points[j] = b.zero_point;
  return {};
}

Result<ExtParams> ext_params(const Scheme& scheme, const Layout& l, const float* x, const Point& p) {
  const kernels::Kernels& kf = kernels::Get();
  const Geo g(l);
  const std::uint64_t nb = l.scales;
  const ExtRule rule = ext_rule(p);
  const GivenScales* given = p.options.scales;
  if (given) {
    QSCHEME_RETURN_IF_ERROR(check_finite(kf, x, l.elements));
    bool zero = false;
    Result<ExtParams> out = given_ext_params(scheme, l, p, &zero);
    if (!out || !zero) return out;
    // A zero effective scale over a non-zero x: named by the first such element (row-major).
    std::uint64_t block = 0;
    const std::uint64_t bad = find_element(l, [&](std::uint64_t i, std::uint64_t b) {
      block = b;
      const bool zero_b = rule == ExtRule::exact ? out->e[b] == 0 : given->block[b] == 0.0f;
      return zero_b && (scalar::f32_bits(x[i]) & 0x7FFFFFFFu) != 0;
    });
    if (bad != l.elements) return errors::zero_scale_nonzero_input(block, bad);
    return out;
  }
  if (scheme.affine()) {
    // min and max per block (the keys also find non-finite input), then each block's scale and
    // zero point.
    std::vector<std::int32_t> lo(nb, kernels::kNoKeys.lo), hi(nb, kernels::kNoKeys.hi);
    for_runs(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                          std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
      for_run_rows(nrows, groups, gstride, len,
                   [&](std::size_t r0) { kf.segment_min_max_keys(x + off + r0, len, bw, &lo[b], &hi[b]); });
    });
    for (std::uint64_t j = 0; j < nb; ++j) {
      if (!kernels::MinMaxKeys{lo[j], hi[j]}.finite()) return first_non_finite(x);
    }
    ExtParams out = empty_ext_params(scheme, p, nb);
    for (std::uint64_t j = 0; j < nb; ++j) {
      // A block without elements (an empty tensor's one) has min and max 0, as in the reference.
      const bool empty = lo[j] > hi[j];
      const float a = empty ? 0.0f : scalar::f32_from_bits(kernels::BitsOfKey(lo[j]));
      const float b = empty ? 0.0f : scalar::f32_from_bits(kernels::BitsOfKey(hi[j]));
      QSCHEME_RETURN_IF_ERROR(calibrate_affine_block(scheme, rule, j, a, b, &out));
    }
    return out;
  }
  // Sym calibration (i16; the unsigned kinds take given scales only): the Burn stages' scales step
  // from max |x| (and exact sums for absmean) per block.
  std::vector<std::uint32_t> bmax(nb, 0);
  for_runs(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                        std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    kf.rows_segment_max_abs_bits(x + off, nrows, len, bw, &bmax[b], groups, gstride);
  });
  for (std::uint32_t m : bmax) {
    if (m >= 0x7F800000u) return first_non_finite(x);
  }
  std::vector<ExactSum> sums;
  if (p.options.calibration == Calibration::absmean) {
    sums.resize(nb);
    for_rows(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t b) {
      for (std::uint64_t i = 0; i < len; ++i) sums[b + i / g.bw].add_abs(x[off + i]);
    });
  }
  ExtParams out = empty_ext_params(scheme, p, nb);
  std::uint32_t gb = 0;
  BlockScales bs;
  QSCHEME_RETURN_IF_ERROR(
      block_scales(scale_rule(scheme, p.options), kf, l, g, x, bmax, sums, nullptr, out.bits.data(), &gb, &bs));
  if (scheme.two_level()) out.global_bits = gb;
  if (rule == ExtRule::exact) {
    out.e = std::move(bs.ee);
    out.r = std::move(bs.ei);
  } else {
    out.r = std::move(bs.eb);
  }
  return out;
}

void write_ext_params(const Scheme& scheme, const Layout& l, const ExtParams& p, const ExtOutput& out) {
  if (out.bytes) {
    write_scales(scheme, l, p.bits.data(), p.global_bits ? &*p.global_bits : nullptr, out.bytes);
    write_zero_points(scheme, l, p.zero_points.data(), out.bytes);
    return;
  }
  if (!p.bits.empty()) std::memcpy(out.scale_bits, p.bits.data(), p.bits.size() * sizeof(std::uint32_t));
  if (p.global_bits && out.global_bits) *out.global_bits = *p.global_bits;
  if (!p.zero_points.empty()) std::memcpy(out.zero_points, p.zero_points.data(), p.zero_points.size() * sizeof(std::int32_t));
}

}  // namespace qscheme::fast::detail
