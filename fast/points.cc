#include "fast/points.hpp"

#include "fast/log2f_thresholds.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "scheme/recipes.hpp"

namespace qscheme::fast::detail {
namespace {

Status not_yet(const Rules& r) {
  return Status(ErrorCode::unsupported_profile, "the fast engine does not run this point of the rule space yet (" +
                                                    format_rules(r) + "); use --engine reference");
}

// The exact profile's point with r's scale step (scale and arithmetic) put in; with mx_steps,
// microxcaling's codes too (f32 division, floor(f32(q + 0.5)), +0 for a zero quotient).
bool exact_but_scale_step(const Rules& r, bool mx_steps) {
  Rules e = profile_rules(Profile::exact);
  e.scale = r.scale;
  e.arithmetic = r.arithmetic;
  if (mx_steps) {
    e.quotient = rule::Quotient::f32_divide;
    e.float_ties = rule::Ties::half_away_f32_add;
    e.zero_sign = rule::ZeroSign::zero_quotient_positive;
  }
  return e == r;
}

// torch's quantize_val over given scales: the exact profile's point with torch's quotient,
// saturation and zero scale, its scales given (source given-f32) or not.
bool torch_point(const Rules& r) {
  Rules t = profile_rules(Profile::exact);
  t.source = r.source;
  t.quotient = rule::Quotient::f32_reciprocal;
  t.saturation = rule::Saturation::int64_min_then_clamp;
  t.zero_scale = rule::ZeroScale::ieee;
  return t == r;
}

// ggml's points are its recipes' rules exactly.
GgmlPoint ggml_point(const Rules& r) {
  constexpr std::pair<std::string_view, GgmlPoint> kGgml[] = {
      {"ggml-q8_0", GgmlPoint::q8_0}, {"ggml-q8_0-x86", GgmlPoint::q8_0_x86}, {"ggml-q4_0", GgmlPoint::q4_0}};
  for (const auto& [name, point] : kGgml) {
    if (find_recipe(name).value()->rules == r) return point;
  }
  return GgmlPoint::none;
}

// NVIDIA's NVFP4 reference quantizer: recipe nvidia-nvfp4's rules.
bool te_nvfp4_point(const Rules& r) {
  Rules t = profile_rules(Profile::exact);
  t.arithmetic = rule::Arithmetic::f32_reciprocal;
  t.scale = rule::ScaleRounding::nearest;
  t.two_level = rule::TwoLevel::te_nvfp4;
  t.product = rule::Product::f32;
  t.quotient = rule::Quotient::f32_reciprocal_capped;
  t.zero_sign = rule::ZeroSign::zero_quotient_positive;
  t.zero_scale = rule::ZeroScale::ieee;
  return t == r;
}

ScalePick pick_of(const Rules& r) {
  using rule::Arithmetic;
  using rule::ScaleRounding;
  if (r.arithmetic == Arithmetic::exact) {
    switch (r.scale) {
      case ScaleRounding::ocp_floor: return ScalePick::ocp_floor;
      case ScaleRounding::torchao_ceil: return ScalePick::torchao_ceil;
      case ScaleRounding::torchao_even: return ScalePick::torchao_even;
      case ScaleRounding::log2f_floor: return ScalePick::log2f_floor;
      default: return ScalePick::profile;
    }
  }
  if (r.arithmetic == Arithmetic::f32_reciprocal && r.scale == ScaleRounding::up) return ScalePick::rceil;
  return ScalePick::profile;
}

}  // namespace

Result<Point> point_of(const Scheme& s, const QuantizeOptions& options) {
  Point p;
  // A global amax of -0 as +0, once for every stage (check_global_amax admits no other sign).
  p.options = {options.profile, options.calibration, options.scales ? &*options.scales : nullptr,
               options.global_amax ? std::optional<float>(std::fabs(*options.global_amax)) : std::nullopt};
  if (!options.rules) return p;
  const Rules& r = *options.rules;
  // A profile's point runs as the profile, whose own checks are validate_rules' for it.
  if (const std::optional<Profile> prof = profile_of(r)) {
    p.options.profile = *prof;
    return p;
  }
  QSCHEME_RETURN_IF_ERROR(validate_rules(r, s, options.calibration, options.scales.has_value()));
  p.options.profile = Profile::exact;
  if (torch_point(r)) {
    // validate_rules admitted given-f32 only with given scales, one level of f32.
    if (!options.scales || info(s.value).is_float) return not_yet(r);
    p.torch_codes = true;
    return p;
  }
  if (const GgmlPoint g = ggml_point(r); g != GgmlPoint::none) {
    // Calibrated by minmax (validate_rules admitted absmean for q8_0 only, and given scales for
    // q8_0 only): one level (codes-from unrounded has no other) of the IEEE dtypes over an integer
    // kind. The rest is the reference's.
    const ScaleDtype d = s.scale_dtype();
    if (options.scales || options.calibration != Calibration::minmax || info(s.value).is_float ||
        !(d == ScaleDtype::f32 || d == ScaleDtype::f16 || d == ScaleDtype::bf16)) {
      return not_yet(r);
    }
    p.ggml = g;
    return p;
  }
  if (te_nvfp4_point(r)) {
    // Two levels of ue4m3 block scales over a minifloat kind (nvfp4's tuple and its kin),
    // calibrated by minmax (validate_rules admits no other) or given.
    if (!s.two_level() || s.scale_dtype() != ScaleDtype::ue4m3 || !info(s.value).is_float) return not_yet(r);
    p.te_nvfp4 = true;
    return p;
  }
  p.mx_steps = exact_but_scale_step(r, true);
  if (!p.mx_steps && !exact_but_scale_step(r, false)) return not_yet(r);
  p.pick = pick_of(r);
  if (p.pick == ScalePick::profile) return not_yet(r);
  // microxcaling's codes run on calibrated exponent scales over minifloats (its only use).
  if (p.mx_steps && (options.scales || p.pick == ScalePick::rceil || !info(s.value).is_float || s.two_level() ||
                     s.scale_dtype() != ScaleDtype::ue8m0 || options.calibration != Calibration::minmax)) {
    return not_yet(r);
  }
  // Given scales are rounded up as the exact profile rounds them (validate_rules admits them
  // under rceil only); rceil runs on one calibrated level of ue8m0 scales over a minifloat kind,
  // with max |x| as its statistic.
  if (options.scales) {
    p.pick = ScalePick::profile;
    return p;
  }
  if (p.pick == ScalePick::rceil &&
      (s.scale_dtype() != ScaleDtype::ue8m0 || s.two_level() || !info(s.value).is_float ||
       options.calibration != Calibration::minmax)) {
    return not_yet(r);
  }
  return p;
}

namespace {

Result<StoredReading> reading_of_rules(const Rules& r) {
  if (const std::optional<Profile> p = profile_of(r)) return StoredReading{*p};
  using rule::Saturation;
  // code_allowed and scale_allowed read saturation, scale overflow and the statistic;
  // stored_scale_values the product and a zero scale's substitute. Under these values they
  // accept and give what the exact profile does, over the wider patterns below.
  const bool codes_as_exact = r.saturation == Saturation::standard || r.saturation == Saturation::upper_only ||
                              r.saturation == Saturation::int64_min_then_clamp;
  // Integer codes over the full range; a minifloat's NaN and inf patterns (saturation none) the
  // fast engine does not read.
  const bool full_range = r.saturation == Saturation::full_range || r.saturation == Saturation::none ||
                          r.saturation == Saturation::int32_min_then_full_range;
  // product=f32 rounds g * s_j once more (stored_scale_values); Burn's two levels outside the
  // burn profile report its overflow under Burn's error, which this reading does not.
  const bool f32_product = r.product == rule::Product::f32 && r.two_level != rule::TwoLevel::burn;
  if ((codes_as_exact || full_range) && (r.product == rule::Product::exact || f32_product) &&
      r.zero_scale != rule::ZeroScale::substitute_point_one) {
    StoredReading out;
    out.full_range = full_range;
    out.signed_scales = r.statistic == rule::Statistic::signed_max;
    out.inf_scales = r.scale_overflow == rule::ScaleOverflow::infinity;
    out.f32_product = f32_product;
    return out;
  }
  return not_yet(r);
}

}  // namespace

Result<StoredReading> stored_reading(const Rules& r, const Scheme& s) {
  Result<StoredReading> out = reading_of_rules(r);
  if (!out) return out;
  if ((out->full_range && info(s.value).is_float && r.saturation == rule::Saturation::none) ||
      (out->inf_scales && s.two_level())) {
    return not_yet(r);
  }
  // One level has no product.
  out->f32_product = out->f32_product && s.two_level();
  return out;
}

Result<Profile> stored_profile(const Rules& r) {
  const Result<StoredReading> s = reading_of_rules(r);
  if (!s) return s.status();
  if (s->wider()) {
    return Status(ErrorCode::unsupported_profile,
                  "tensors stored under this point hold codes or scales no profile does (" + format_rules(r) +
                      "); read them under the point itself");
  }
  return s->profile;
}

ExponentRule::ExponentRule(ScalePick pick, Value v) : pick_(pick) {
  const ValueInfo& vi = info(v);
  using kernels::ExponentRuleKind;
  spec_.rule = pick == ScalePick::ocp_floor      ? ExponentRuleKind::ocp_floor
               : pick == ScalePick::torchao_ceil ? ExponentRuleKind::torchao_ceil
               : pick == ScalePick::torchao_even ? ExponentRuleKind::torchao_even
               : pick == ScalePick::log2f_floor  ? ExponentRuleKind::log2f_floor
                                                 : ExponentRuleKind::rceil;
  // Built on first use (254 expm1 calls): only a log2f-floor call pays for it.
  if (pick == ScalePick::log2f_floor) spec_.log2_thresholds = log2f_thresholds();
  spec_.emax = v == Value::e4m3 ? 8 : v == Value::e5m2 ? 15 : 2;
  const int mantissa_bits = v == Value::e4m3 ? 3 : v == Value::e5m2 ? 2 : 1;
  spec_.half_unit = std::uint32_t{1} << (22 - mantissa_bits);
  spec_.rcp_m = 1.0f / (static_cast<float>(vi.hi - vi.lo) / 2.0f);
  spec_.W = static_cast<double>(vi.hi - vi.lo);
}

}  // namespace qscheme::fast::detail
