#include "scheme/rules.hpp"

#include <algorithm>
#include <array>
#include <type_traits>

#include "scheme/errors.hpp"
#include "scheme/quantized.hpp"

namespace qscheme {
namespace {

using namespace rule;

// The enumerators of each field, in enumerator order (the index is the enumerator's value).
constexpr std::array kSource{
    RuleChoice{"calibrated-or-given", "calibrated from each block, or the caller's scales rounded to their dtype"},
    RuleChoice{"given-f32", "only the caller's scales, one level of f32 (ONNX y_scale, torch's scale)"},
};
constexpr std::array kStatistic{
    RuleChoice{"magnitude", "alpha = max |x| (minmax) or mean |x| (absmean); scales are >= 0"},
    RuleChoice{"signed-max", "m = the first element of largest |x| with its sign; d = m / lo (a signed scale)"},
};
constexpr std::array kArithmetic{
    RuleChoice{"exact", "u = alpha / M exactly, M = (hi - lo) / 2 (|lo| for signed-max)"},
    RuleChoice{"f32-divide", "u = f32(f32(alpha) / M)"},
    RuleChoice{"f32-reciprocal", "u = f32(f32(alpha) * f32(1 / M))"},
    RuleChoice{"burn", "u = f32(f32(2 alpha) / (hi - lo)); unsupported where 2 alpha overflows f32"},
};
constexpr std::array kScaleRounding{
    RuleChoice{"up", "the smallest value of the dtype not below u"},
    RuleChoice{"nearest", "the nearest value of the dtype, ties to even (ue8m0: ties to the larger)"},
    RuleChoice{"down", "the largest value of the dtype not above u"},
    RuleChoice{"ocp-floor", "ue8m0 2^(floor(log2 amax) - emax_elem), within [2^-127, 2^127]"},
    RuleChoice{"torchao-ceil", "ue8m0 2^(ceil(log2 amax) - emax_elem) from amax's f32 bits, at least 2^-127"},
    RuleChoice{"torchao-even", "ue8m0: amax rounded half-up to the element's mantissa bits, then ocp-floor"},
    RuleChoice{"log2f-floor", "ue8m0 2^(floor(f32(log2 amax)) - emax_elem): log2 rounded to f32 first"},
};
constexpr std::array kScaleOverflow{
    RuleChoice{"saturate", "a rounded scale past the dtype's largest finite value is that value"},
    RuleChoice{"infinity", "a rounded scale past the dtype's largest finite value is +-inf"},
};
constexpr std::array kTwoLevel{
    RuleChoice{"exact", "g = max(round-up-f32(max u_j / max(d)), 2^-126); s_j = rounding(u_j / g)"},
    RuleChoice{"burn", "g = max(f32(max u_j / max(d)), 2^-126); s_j = rounding(f32(u_j / g))"},
    RuleChoice{"te-nvfp4", "S = min(f32(f32(max(d) M) / amax), f32max); g = f32(1 / S); "
                           "s_j = rounding(min(f32(alpha_j f32(S f32(1 / M))), f32max))"},
};
constexpr std::array kProduct{
    RuleChoice{"exact", "two levels: e_j = s_j g, not rounded"},
    RuleChoice{"f32", "two levels: e_j = f32(s_j g)"},
};
constexpr std::array kCodesFrom{
    RuleChoice{"stored", "codes use the effective scale of the stored patterns"},
    RuleChoice{"unrounded", "codes use u, the scale before its stored rounding"},
};
constexpr std::array kQuotient{
    RuleChoice{"exact", "t = x / e exactly"},
    RuleChoice{"f32-divide", "t = f32(x / e)"},
    RuleChoice{"f32-reciprocal", "t = f32(x f32(1 / e)), 1 / 0 = +inf"},
    RuleChoice{"f32-reciprocal-or-zero", "t = f32(x r), r = f32(1 / e) for e != 0, else 0"},
    RuleChoice{"f32-reciprocal-capped", "t = f32(x min(f32(1 / e), f32max)), 1 / 0 = +inf -> f32max"},
    RuleChoice{"f32-max-over-amax", "t = f32(x r), r = f32(hi / amax) for amax != 0, else 0"},
};
constexpr std::array kTies{
    RuleChoice{"half-even", "nearest, ties to even"},
    RuleChoice{"half-away", "nearest, ties away from zero"},
    RuleChoice{"half-up-f32-offset", "integers: trunc(f32(t + (0.5 - lo))) + lo"},
    RuleChoice{"half-away-f32-add", "sign(t) floor(f32(q + 0.5)), q = |t| / quantum"},
    RuleChoice{"half-even-f32-add", "sign(t) (floor(f32(q + 0.5)) - [q - 0.5 is an even integer])"},
};
constexpr std::array kSaturation{
    RuleChoice{"standard", "clamp to [lo, hi] (minifloats: +-max); an infinite t clamps by its sign"},
    RuleChoice{"full-range", "integers: clamp to the full two's complement range of the kind's bits"},
    RuleChoice{"none", "integers: x86 conversion (NaN, inf, beyond int32 give INT32_MIN) wrapped to the "
                       "kind's bits; e4m3 overflows to NaN, e5m2 to inf"},
    RuleChoice{"upper-only", "integers: min(hi, x86 conversion wrapped to 8 bits)"},
    RuleChoice{"int64-min-then-clamp", "integers: NaN, inf or >= 2^63 give INT64_MIN, then clamp to [lo, hi]"},
    RuleChoice{"int32-min-then-full-range", "integers: NaN, inf or beyond int32 give INT32_MIN, then clamp to "
                                            "the full range"},
};
constexpr std::array kZeroSign{
    RuleChoice{"keep", "a zero minifloat code has the sign of t"},
    RuleChoice{"zero-quotient-positive", "+0 when t is zero; a negative t that rounds to zero keeps -0"},
    RuleChoice{"zero-quotient-positive-e2m1", "zero-quotient-positive for e2m1, keep for e4m3 and e5m2"},
    RuleChoice{"drop", "every zero code is +0"},
};
constexpr std::array kZeroScale{
    RuleChoice{"error", "zero-scale-nonzero-input when a block with a zero scale holds a non-zero value"},
    RuleChoice{"substitute-point-one", "a zero effective scale is f32(0.1), quantizing and dequantizing"},
    RuleChoice{"ieee", "the quotient's IEEE arithmetic on the zero scale decides"},
};

constexpr std::array kFields{
    RuleField{"source", "where the scales come from", kSource},
    RuleField{"statistic", "the block statistic the scale follows", kStatistic},
    RuleField{"arithmetic", "the unrounded scale u", kArithmetic},
    RuleField{"scale", "u to the stored scale", kScaleRounding},
    RuleField{"scale-overflow", "a stored scale past the dtype's range", kScaleOverflow},
    RuleField{"two-level", "the global and block scales of a two-level scheme", kTwoLevel},
    RuleField{"product", "the effective scale of two levels", kProduct},
    RuleField{"codes-from", "the scale codes are computed with", kCodesFrom},
    RuleField{"quotient", "the quotient t of x and the scale", kQuotient},
    RuleField{"ties", "t to an integer code", kTies},
    RuleField{"float-ties", "t to a minifloat code", kTies},
    RuleField{"saturation", "codes past the range, non-finite t", kSaturation},
    RuleField{"zero-sign", "the sign of a zero minifloat code", kZeroSign},
    RuleField{"zero-scale", "a zero scale", kZeroScale},
};

// Field index -> the member, as its enumerator value. The one switch both directions share.
template <class R, class F>
void visit_field(R& r, std::size_t field, F&& f) {
  switch (field) {
    case 0: f(r.source); break;
    case 1: f(r.statistic); break;
    case 2: f(r.arithmetic); break;
    case 3: f(r.scale); break;
    case 4: f(r.scale_overflow); break;
    case 5: f(r.two_level); break;
    case 6: f(r.product); break;
    case 7: f(r.codes_from); break;
    case 8: f(r.quotient); break;
    case 9: f(r.ties); break;
    case 10: f(r.float_ties); break;
    case 11: f(r.saturation); break;
    case 12: f(r.zero_sign); break;
    case 13: f(r.zero_scale); break;
    default: break;
  }
}

Status unsupported(const std::string& why) { return {ErrorCode::unsupported_profile, why}; }

std::string choices_of(const RuleField& f) {
  std::string out;
  for (const RuleChoice& c : f.choices) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

std::string_view choice_name(const Rules& r, std::size_t field) {
  return kFields[field].choices[field_value(r, field)].name;
}

bool is_ue8m0_exponent_rule(ScaleRounding s) {
  return s == ScaleRounding::ocp_floor || s == ScaleRounding::torchao_ceil || s == ScaleRounding::torchao_even ||
         s == ScaleRounding::log2f_floor;
}

bool dtype_has_sign(ScaleDtype d) { return d == ScaleDtype::f32 || d == ScaleDtype::f16 || d == ScaleDtype::bf16; }

}  // namespace

Rules profile_rules(Profile p) {
  Rules r;
  switch (p) {
    case Profile::exact:
      break;
    case Profile::burn:
      r.arithmetic = Arithmetic::burn;
      r.two_level = TwoLevel::burn;
      r.product = Product::f32;
      r.quotient = Quotient::f32_divide;
      r.ties = Ties::half_away;  // Rust f32::round; Burn's minifloat casts round to even
      r.zero_scale = ZeroScale::substitute_point_one;
      break;
    case Profile::onnx:
      r.source = Source::given_f32;
      r.quotient = Quotient::f32_divide;
      r.zero_sign = ZeroSign::zero_quotient_positive_e2m1;
      break;
  }
  return r;
}

std::optional<Profile> profile_of(const Rules& r) {
  for (Profile p : {Profile::exact, Profile::burn, Profile::onnx}) {
    if (profile_rules(p) == r) return p;
  }
  return std::nullopt;
}

std::span<const RuleField> rule_fields() { return kFields; }

std::uint8_t field_value(const Rules& r, std::size_t field) {
  std::uint8_t out = 0;
  visit_field(r, field, [&](auto& m) { out = static_cast<std::uint8_t>(m); });
  return out;
}

void set_field_value(Rules& r, std::size_t field, std::uint8_t value) {
  visit_field(r, field, [&](auto& m) { m = static_cast<std::remove_reference_t<decltype(m)>>(value); });
}

std::string format_rules(const Rules& r) {
  std::string out;
  for (std::size_t i = 0; i < kFields.size(); ++i) {
    if (i) out += ',';
    out += kFields[i].name;
    out += '=';
    out += choice_name(r, i);
  }
  return out;
}

Result<Rules> parse_rules(std::string_view text) {
  Rules r;
  std::array<bool, kFields.size()> seen{};
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = text.substr(pos, comma - pos);
    pos = comma + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status(ErrorCode::invalid_argument, "rules: '" + std::string(item) + "' is not field=choice");
    }
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    std::size_t f = 0;
    while (f < kFields.size() && kFields[f].name != key) ++f;
    if (f == kFields.size()) {
      std::string names;
      for (const RuleField& field : kFields) names += (names.empty() ? "" : ", ") + std::string(field.name);
      return Status(ErrorCode::invalid_argument, "rules: unknown field '" + std::string(key) + "'; fields: " + names);
    }
    if (seen[f]) return Status(ErrorCode::invalid_argument, "rules: field '" + std::string(key) + "' is given twice");
    seen[f] = true;
    std::size_t c = 0;
    while (c < kFields[f].choices.size() && kFields[f].choices[c].name != value) ++c;
    if (c == kFields[f].choices.size()) {
      return Status(ErrorCode::invalid_argument, "rules: " + std::string(key) + " has no choice '" + std::string(value) +
                                                     "'; choices: " + choices_of(kFields[f]));
    }
    set_field_value(r, f, static_cast<std::uint8_t>(c));
  }
  return r;
}

Status validate_rules(const Rules& r, const Scheme& s, Calibration c, bool given) {
  const ValueInfo& vi = info(s.value);
  const ScaleDtype d = s.scale_dtype();
  const bool two = s.two_level();
  if (s.affine()) {
    // Affine mode is defined by two sources (docs/SEMANTICS.md section 14): ONNX's operators in
    // f32 steps (profile onnx) and the same definitions evaluated exactly (profile exact).
    // A third: PyTorch's quantize_val, whose zero point the torch recipes' given-f32 points add
    // before their INT64_MIN-then-clamp saturation (docs/SEMANTICS.md section 14).
    const std::optional<Profile> p = profile_of(r);
    const bool torch = r.source == Source::given_f32 && r.saturation == Saturation::int64_min_then_clamp;
    if (p != Profile::exact && p != Profile::onnx && !torch) {
      return unsupported("affine mode is defined under the exact and onnx profiles and the torch recipes only; use "
                         "--profile exact or onnx, or --recipe torch-quint8 or torch-qint8");
    }
    if (torch && (!given || two || d != ScaleDtype::f32)) {
      return unsupported("source=given-f32 takes given scales (--scales) and one level of f32 scales");
    }
    if (!given && c != Calibration::minmax) {
      return unsupported("affine calibration follows min and max (the range forced to include 0); use "
                         "calibration minmax, or give scales and zero points");
    }
    if (p == Profile::onnx && d != ScaleDtype::f32) return errors::onnx_needs_given_f32_scales();
    if (p == Profile::onnx && !given && s.value != Value::u8) {
      return unsupported("profile onnx calibrates affine u8 only (DynamicQuantizeLinear); give scales and zero "
                         "points (--scales, --zero-points), or use profile exact");
    }
    return {};
  }
  // The profiles' own conditions first, worded as both engines word them.
  if (r.source == Source::given_f32 && (!given || two || d != ScaleDtype::f32)) {
    if (profile_of(r) == Profile::onnx) return errors::onnx_needs_given_f32_scales();
    return unsupported("source=given-f32 takes given scales (--scales) and one level of f32 scales");
  }
  if (!given && two && r.two_level == TwoLevel::burn && c == Calibration::absmean) {
    return errors::burn_absmean_two_level();
  }
  if (is_ue8m0_exponent_rule(r.scale)) {
    const std::string rule(choice_name(r, 3));
    if (d != ScaleDtype::ue8m0 || !vi.is_float) {
      return unsupported("scale=" + rule + " is an exponent rule for ue8m0 scales over a minifloat kind (e4m3, "
                         "e5m2, e2m1); use scale=up, nearest or down");
    }
    if (given) return unsupported("scale=" + rule + " derives the scale from the block; drop the given scales");
    if (c != Calibration::minmax) return unsupported("scale=" + rule + " follows max |x|; use calibration minmax");
    if (r.statistic != Statistic::magnitude) return unsupported("scale=" + rule + " needs statistic=magnitude");
  }
  if (vi.is_unsigned && !given) {
    // (hi - lo) / 2 of [0, 2^bits - 1] would put 0 at mid-range: a symmetric scale cannot use an
    // unsigned kind's codes, so sym mode takes the caller's scales only (ONNX's zero point 0).
    return unsupported(std::string(vi.name) + " is unsigned: sym mode has no calibration for it (negative "
                       "values have no codes); give the scales (--scales)");
  }
  if (r.statistic == Statistic::signed_max) {
    if (vi.is_float || vi.lo != -vi.hi - 1) {
      return unsupported("statistic=signed-max divides by lo; it needs an integer kind with lo = -(hi + 1) "
                         "(q8f, q4f, q2f)");
    }
    if (!dtype_has_sign(d) || two) {
      return unsupported("statistic=signed-max stores a signed scale: one level of f32, f16 or bf16");
    }
    if (c != Calibration::minmax) return unsupported("statistic=signed-max follows the element of largest |x|; "
                                                     "use calibration minmax");
  }
  if (r.codes_from == CodesFrom::unrounded && two) {
    return unsupported("codes-from=unrounded needs one scale level (two levels have no single unrounded scale)");
  }
  if (r.scale_overflow == ScaleOverflow::infinity && r.codes_from != CodesFrom::unrounded) {
    return unsupported("scale-overflow=infinity leaves codes without a finite scale; it needs "
                       "codes-from=unrounded");
  }
  if (r.two_level == TwoLevel::te_nvfp4 && two && !given) {
    if (c != Calibration::minmax) return unsupported("two-level=te-nvfp4 follows max |x|; use calibration minmax");
    if (r.arithmetic != Arithmetic::f32_reciprocal) {
      return unsupported("two-level=te-nvfp4 computes its scales with f32 reciprocals; it needs "
                         "arithmetic=f32-reciprocal");
    }
  }
  if (r.quotient == Quotient::f32_max_over_amax) {
    if (given || two || r.statistic != Statistic::magnitude || c != Calibration::minmax) {
      return unsupported("quotient=f32-max-over-amax multiplies by hi / max |x|: it needs one calibrated level, "
                         "statistic=magnitude and calibration minmax");
    }
  }
  if (r.float_ties == Ties::half_up_f32_offset) {
    return unsupported("float-ties=half-up-f32-offset is a rule for integer codes; use it as ties=");
  }
  if (vi.is_float && r.saturation != Saturation::standard && r.saturation != Saturation::none) {
    return unsupported("saturation=" + std::string(choice_name(r, 11)) + " is a rule for integer codes; " +
                       std::string(vi.name) + " takes standard or none");
  }
  if (r.saturation == Saturation::upper_only &&
      (r.ties != Ties::half_up_f32_offset || r.statistic != Statistic::signed_max || given || vi.bits > 4)) {
    // Only the signed-max scale keeps t + (0.5 - lo) >= 0, where the truncation is a floor and
    // min(hi, .) the only clamp needed; and only up to 4 bits do the offset codes fit the int8
    // the conversion goes through.
    return unsupported("saturation=upper-only needs ties=half-up-f32-offset with a calibrated "
                       "statistic=signed-max scale, on a kind of at most 4 bits (q4f, q2f)");
  }
  return {};
}

bool code_allowed(const Rules& r, Value v, std::int32_t code) {
  const ValueInfo& vi = info(v);
  if (!vi.is_float) {
    const bool full = r.saturation == Saturation::full_range || r.saturation == Saturation::none ||
                      r.saturation == Saturation::int32_min_then_full_range;
    const std::int32_t lo = full ? full_lo(v) : vi.lo;
    const std::int32_t hi = full ? full_hi(v) : vi.hi;
    return code >= lo && code <= hi;
  }
  if (!code_problem(v, code)) return true;
  if (r.saturation != Saturation::none || code < 0 || code >= (1 << vi.bits)) return false;
  const auto c = static_cast<std::uint32_t>(code);
  if (v == Value::e4m3) return (c & 0x7Fu) == 0x7Fu;  // the NaN overflow gives
  if (v == Value::e5m2) return (c & 0x7Fu) == 0x7Cu;  // inf, never NaN
  return false;
}

bool scale_allowed(const Rules& r, ScaleDtype d, std::uint32_t bits) {
  if (!scale_problem(d, bits)) return true;
  if (!dtype_has_sign(d)) return false;
  const int width = info(d).bytes * 8;
  if (width < 32 && bits >> width != 0) return false;
  const std::uint32_t sign = scale_sign_bit(d);
  const std::uint32_t exp_mask = d == ScaleDtype::f32 ? 0x7F800000u : d == ScaleDtype::f16 ? 0x7C00u : 0x7F80u;
  const std::uint32_t mag = bits & ~sign;
  const bool inf = mag == exp_mask;
  const bool nan = (mag & exp_mask) == exp_mask && mag != exp_mask;
  if (nan) return false;
  if (inf && r.scale_overflow != ScaleOverflow::infinity) return false;
  if ((bits & sign) && r.statistic != Statistic::signed_max) return false;
  return true;
}

std::uint32_t scale_sign_bit(ScaleDtype d) {
  return dtype_has_sign(d) ? std::uint32_t{1} << (info(d).bytes * 8 - 1) : 0;
}

}  // namespace qscheme
