// The rule space: every choice a quantizer makes between its f32 input and its stored codes and
// scales, as data. A point in this space (Rules) fixes each rounding and each corner case; the
// reference engine evaluates every point validate_rules() accepts, exactly. qscheme's own
// profiles are three such points (profile_rules), and a recipe (scheme/recipes.hpp) is a scheme
// plus a point, named after the implementation it reproduces.
//
// docs/SEMANTICS.md section 11 defines every enumerator exactly, with its source; rule_fields()
// below carries the same one-line definitions for `qscheme recipes` and the text form.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme {

enum class Profile : std::uint8_t;
enum class Calibration : std::uint8_t;

namespace rule {

// Where the scales come from.
enum class Source : std::uint8_t {
  calibrated_or_given,  // calibrated from the block, or the caller's (rounded to their dtype)
  given_f32,            // only the caller's, one level of f32 scales (ONNX y_scale, torch's scale)
};

// The block statistic the scale follows.
enum class Statistic : std::uint8_t {
  magnitude,   // alpha = max |x| (minmax) or mean |x| (absmean); the scale is >= 0
  signed_max,  // m = the first element of largest |x|, signed; d = m / lo (ggml q4_0)
};

// How the unrounded scale u follows from the statistic; M = (hi - lo) / 2 (|lo| for signed_max).
enum class Arithmetic : std::uint8_t {
  exact,           // u = alpha / M exactly
  f32_divide,      // u = f32(f32(alpha) / M)
  f32_reciprocal,  // u = f32(f32(alpha) * f32(1 / M))
  burn,            // u = f32(f32(2 alpha) / (hi - lo)); 2 alpha past f32 max is unsupported-profile
};

// How u becomes the stored scale of the innermost dtype.
enum class ScaleRounding : std::uint8_t {
  up,            // the smallest dtype value >= u
  nearest,       // the nearest dtype value, ties to even (ue8m0: ties to the larger)
  down,          // the largest dtype value <= u
  ocp_floor,     // ue8m0: 2^(floor(log2 amax) - emax_elem), clamped to [2^-127, 2^127]
  torchao_ceil,  // ue8m0: 2^(ceil(log2 amax) - emax_elem) from amax's f32 bits, clamped below
  torchao_even,  // ue8m0: amax rounded half-up to the element's mantissa bits, then ocp_floor
  log2f_floor,   // ue8m0: 2^(floor(f32(log2 amax)) - emax_elem): log2 rounded to f32 first
};

// A rounded scale beyond the dtype's largest finite value.
enum class ScaleOverflow : std::uint8_t {
  saturate,  // the largest finite value
  infinity,  // +-inf (IEEE conversion, e.g. f16(d) in ggml)
};

// The two scales of a two-level scheme (global g: f32; block s_j: the block dtype d).
enum class TwoLevel : std::uint8_t {
  exact,     // g = max(round_up_f32(max_j u_j / max(d)), 2^-126); s_j = rounding(u_j / g)
  burn,      // g = max(f32(max_j u_j / max(d)), 2^-126); s_j = rounding(f32(u_j / g))
  te_nvfp4,  // S = min(f32(f32(max(d) * M) / amax), f32max); g = f32(1 / S);
             // s_j = rounding(min(f32(alpha_j * f32(S * f32(1 / M))), f32max))
};

// The effective scale e_j of a two-level scheme.
enum class Product : std::uint8_t {
  exact,  // e_j = s_j * g, not rounded
  f32,    // e_j = f32(s_j * g); an overflow is unsupported-profile
};

// Which scale the codes are computed with.
enum class CodesFrom : std::uint8_t {
  stored,     // the effective scale of the stored patterns
  unrounded,  // u itself, before the stored rounding (ggml: the f32 d, not f16(d))
};

// The quotient t a code is rounded from (e: the scale codes are computed with).
enum class Quotient : std::uint8_t {
  exact,                    // t = x / e exactly
  f32_divide,               // t = f32(x / e)
  f32_reciprocal,           // t = f32(x * f32(1 / e)); 1 / 0 = +inf
  f32_reciprocal_or_zero,   // t = f32(x * r), r = e != 0 ? f32(1 / e) : 0
  f32_reciprocal_capped,    // t = f32(x * min(f32(1 / e), f32max)); 1 / 0 = f32max
  f32_max_over_amax,        // t = f32(x * r), r = amax != 0 ? f32(hi / amax) : 0
};

// Rounding of t onto the code grid (integers, or the minifloat's grid: q = |t| / quantum).
enum class Ties : std::uint8_t {
  half_even,           // nearest, ties to even
  half_away,           // nearest, ties away from zero
  half_up_f32_offset,  // integers: trunc(f32(t + (0.5 - lo))) + lo (ggml q4_0's + 8.5f)
  half_away_f32_add,   // sign(t) * floor(f32(q + 0.5))
  half_even_f32_add,   // sign(t) * (floor(f32(q + 0.5)) - [q - 0.5 is an even integer])
};

// What happens to a code beyond the kind's range, and to a non-finite quotient.
enum class Saturation : std::uint8_t {
  standard,                  // clamp to [lo, hi] (+-max for minifloats); +-inf clamps by sign
  full_range,                // integers: clamp to [-2^(bits-1), 2^(bits-1) - 1]
  none,                      // integers: x86 conversion (NaN, inf, beyond int32 -> INT32_MIN),
                             // wrapped to bits; e4m3 overflows to NaN, e5m2 to inf
  upper_only,                // integers: min(hi, wrapped x86 conversion) (ggml q4_0's MIN(15, ...))
  int64_min_then_clamp,      // integers: NaN, inf, >= 2^63 -> INT64_MIN, then [lo, hi] (torch)
  int32_min_then_full_range, // integers: NaN, inf, beyond int32 -> INT32_MIN, then the full
                             // range (ggml x86: cvtps_epi32, then saturating packs)
};

// The sign of a zero code of a minifloat kind.
enum class ZeroSign : std::uint8_t {
  keep,                         // the sign of t: -0 for x = -0 and for a negative t rounding to 0
  zero_quotient_positive,       // +0 when t is zero; a negative t rounding to 0 keeps -0
  zero_quotient_positive_e2m1,  // as zero_quotient_positive for e2m1, keep for e4m3/e5m2 (ONNX)
  drop,                         // every zero code is +0
};

// A zero scale that codes are computed with.
enum class ZeroScale : std::uint8_t {
  error,                 // zero-scale-nonzero-input when the block holds a non-zero value
  substitute_point_one,  // e = f32(0.1) instead, at quantize and dequantize (Burn's valid_scale)
  ieee,                  // the quotient rule's arithmetic on 0 decides (x / 0 = +-inf)
};

}  // namespace rule

// A point of the rule space. Each field has the exact profile's meaning at its default value.
struct Rules {
  rule::Source source = rule::Source::calibrated_or_given;
  rule::Statistic statistic = rule::Statistic::magnitude;
  rule::Arithmetic arithmetic = rule::Arithmetic::exact;
  rule::ScaleRounding scale = rule::ScaleRounding::up;
  rule::ScaleOverflow scale_overflow = rule::ScaleOverflow::saturate;
  rule::TwoLevel two_level = rule::TwoLevel::exact;
  rule::Product product = rule::Product::exact;
  rule::CodesFrom codes_from = rule::CodesFrom::stored;
  rule::Quotient quotient = rule::Quotient::exact;
  rule::Ties ties = rule::Ties::half_even;        // integer kinds
  rule::Ties float_ties = rule::Ties::half_even;  // minifloat kinds
  rule::Saturation saturation = rule::Saturation::standard;
  rule::ZeroSign zero_sign = rule::ZeroSign::keep;
  rule::ZeroScale zero_scale = rule::ZeroScale::error;

  friend bool operator==(const Rules&, const Rules&) = default;
};

// The point a profile is (docs/SEMANTICS.md: exact, burn, onnx).
Rules profile_rules(Profile p);
// The profile whose point r is, if any.
std::optional<Profile> profile_of(const Rules& r);

// One field of Rules and its enumerators, for printing and parsing: names are kebab-case.
struct RuleChoice {
  std::string_view name;
  std::string_view meaning;  // one line: the exact definition, in words
};
struct RuleField {
  std::string_view name;     // e.g. "quotient"
  std::string_view meaning;
  std::span<const RuleChoice> choices;  // in enumerator order
};
// Every field, in the order of struct Rules.
std::span<const RuleField> rule_fields();
// The enumerator index a field holds in r, and setting it (precondition: index in range).
std::uint8_t field_value(const Rules& r, std::size_t field);
void set_field_value(Rules& r, std::size_t field, std::uint8_t value);

// "field=choice,field=choice,..." over every field (the canonical text of a point).
std::string format_rules(const Rules& r);
// Parses "field=choice,..." (fields in any order, each at most once); fields not named keep the
// exact profile's value. invalid-argument naming the field or choice and listing the valid ones.
Result<Rules> parse_rules(std::string_view text);

// Does the point define quantizing this scheme with this calibration (given: whether the caller
// supplies the scales)? The one place combinations are rejected: unsupported-profile, with a
// message naming the rules that conflict and what would work.
Status validate_rules(const Rules& r, const Scheme& s, Calibration c, bool given);

// The stored patterns a point can produce, which dequantize, encode and decode accept.
// Codes: integers within [lo, hi] under standard saturation (and upper-only and
// int64-min-then-clamp, which end in that range), the full two's complement range under the
// others; minifloats add the NaN (e4m3) or inf (e5m2) overflow patterns under saturation none.
bool code_allowed(const Rules& r, Value v, std::int32_t code);
// Scales: also negative values (signed_max) and inf (scale overflow infinity).
bool scale_allowed(const Rules& r, ScaleDtype d, std::uint32_t bits);
// The sign bit of a scale dtype's pattern: 0 for the unsigned dtypes (ue8m0, ue4m3), which
// have none.
std::uint32_t scale_sign_bit(ScaleDtype d);

}  // namespace qscheme
