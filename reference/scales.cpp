#include "reference/scales.hpp"

#include <algorithm>
#include <string>

#include "reference/minifloat.hpp"
#include "reference/values.hpp"

namespace qscheme::reference {
namespace {

// f32 MIN_POSITIVE, the floor Burn puts under the global scale.
Rational min_normal_f32() { return pow2(-126); }

Rational largest(ScaleDtype d) {
  const Format f = format_of(d);
  return decode(f, format_info(f).max_code);
}

Dyadic dyadic_of(ScaleDtype d, std::uint32_t bits) {
  const Magnitude m = code_magnitude(format_of(d), bits);
  return {Integer(m.mant), m.exp2};
}

Dyadic dyadic_of(float x) {
  const F32Parts p = split_f32(x);
  return {Integer(p.mant), p.exp2};
}

Rational value_span(Value v) { return Rational(info(v).hi - info(v).lo); }

// g >= 2^-126 from the largest block scale, rounded up to f32 (exact profile).
Rational exact_global(const Rational& largest_block, ScaleDtype d) {
  const Rational g = to_rational(round_up_to_f32(largest_block / largest(d)));
  return std::max(g, min_normal_f32());
}

}  // namespace

std::uint32_t round_up_to_dtype(const Rational& v, ScaleDtype d) {
  return round_to_format(format_of(d), v, RoundMode::up, Overflow::saturate);
}

StoredScales exact_scales(const Scheme& s, std::span<const Rational> alpha) {
  const ScaleDtype d = s.scale_dtype();
  std::vector<Rational> ideal(alpha.size());
  for (std::size_t j = 0; j < alpha.size(); ++j) ideal[j] = 2 * alpha[j] / value_span(s.value);
  StoredScales out;
  out.bits.resize(alpha.size());
  if (!s.two_level()) {
    for (std::size_t j = 0; j < ideal.size(); ++j) out.bits[j] = round_up_to_dtype(ideal[j], d);
    return out;
  }
  Rational top = 0;
  for (const Rational& v : ideal) top = std::max(top, v);
  const Rational g = exact_global(top, d);
  out.global_bits = f32_bits(round_to_f32(g, Overflow::saturate));  // g is an f32 already
  for (std::size_t j = 0; j < ideal.size(); ++j) out.bits[j] = round_up_to_dtype(ideal[j] / g, d);
  return out;
}

Result<StoredScales> burn_scales(const Scheme& s, std::span<const Rational> alpha) {
  const ScaleDtype d = s.scale_dtype();
  static const Rational kHalfF32Max = decode(Format::f32, format_info(Format::f32).max_code) / 2;
  std::vector<Rational> scale(alpha.size());
  for (std::size_t j = 0; j < alpha.size(); ++j) {
    // alpha in f32: max |x| is one already; the mean is rounded once (Burn sums in f32 in its
    // own order, which is not modelled).
    const Rational a = to_rational(round_to_f32(alpha[j], Overflow::saturate));
    if (a > kHalfF32Max) {
      return Result<StoredScales>(
          ErrorCode::unsupported_profile,
          "block " + std::to_string(j) + ": max |x| is above f32 max / 2, where Burn's f32 "
          "arithmetic overflows (2 * alpha = inf); use profile exact",
          j);
    }
    // f32(f32(2 alpha) / (b - a)); 2 alpha is exact in f32 below the overflow checked above.
    scale[j] = to_rational(round_to_f32(2 * a / value_span(s.value), Overflow::infinity));
  }
  StoredScales out;
  out.bits.resize(alpha.size());
  if (!s.two_level()) {
    for (std::size_t j = 0; j < scale.size(); ++j) out.bits[j] = round_up_to_dtype(scale[j], d);
    return out;
  }
  Rational top = 0;
  for (const Rational& v : scale) top = std::max(top, v);
  const Rational g =
      std::max(to_rational(round_to_f32(top / largest(d), Overflow::infinity)), min_normal_f32());
  out.global_bits = f32_bits(round_to_f32(g, Overflow::saturate));
  for (std::size_t j = 0; j < scale.size(); ++j) {
    const Rational normalised = to_rational(round_to_f32(scale[j] / g, Overflow::saturate));
    out.bits[j] = round_up_to_dtype(normalised, d);
  }
  return out;
}

Result<StoredScales> given_scales(const Scheme& s, const Layout& l, const GivenScales& given) {
  if (given.block.size() != l.scales) {
    return Result<StoredScales>(ErrorCode::size_mismatch,
                                "the scheme and shape take " + std::to_string(l.scales) +
                                    " scale(s), but " + std::to_string(given.block.size()) +
                                    " were given");
  }
  if (given.global.has_value() != s.two_level()) {
    return Result<StoredScales>(
        ErrorCode::size_mismatch,
        s.two_level() ? "a two-level scheme needs a global (per-tensor) scale, none was given"
                      : "only a two-level scheme takes a global (per-tensor) scale, one was given");
  }
  // Finite and >= 0 (-0 counts as 0): the f32 pattern's exponent is not all ones, and a set
  // sign bit only on a zero.
  const auto acceptable = [](float v) {
    const std::uint32_t b = f32_bits(v);
    return (b & 0x7F800000u) != 0x7F800000u && (b >> 31 == 0 || (b & 0x7FFFFFFFu) == 0);
  };
  for (std::size_t j = 0; j < given.block.size(); ++j) {
    if (!acceptable(given.block[j])) {
      return Result<StoredScales>(ErrorCode::invalid_scale,
                                  "scale " + std::to_string(j) + " is negative, NaN or infinite; "
                                  "scales must be finite and >= 0",
                                  j);
    }
  }
  if (given.global && !acceptable(*given.global)) {
    return Result<StoredScales>(ErrorCode::invalid_scale,
                                "the global (per-tensor) scale is negative, NaN or infinite; it "
                                "must be finite and >= 0 (index = number of block scales)",
                                given.block.size());
  }
  StoredScales out;
  out.bits.resize(given.block.size());
  for (std::size_t j = 0; j < given.block.size(); ++j) {
    out.bits[j] = round_up_to_dtype(to_rational(given.block[j]), s.scale_dtype());
  }
  if (given.global) out.global_bits = round_up_to_dtype(to_rational(*given.global), ScaleDtype::f32);
  return out;
}

Result<std::vector<Dyadic>> effective_scales(const Scheme& s, Profile p, const StoredScales& stored) {
  const ScaleDtype d = s.scale_dtype();
  std::vector<Dyadic> e(stored.bits.size());
  const Dyadic g = stored.global_bits ? dyadic_of(f32_from_bits(*stored.global_bits)) : Dyadic{1, 0};
  for (std::size_t j = 0; j < e.size(); ++j) {
    const Dyadic sj = dyadic_of(d, stored.bits[j]);
    if (p != Profile::burn) {  // exact and onnx (one f32 level: the scale itself)
      e[j] = stored.global_bits ? g * sj : sj;
      continue;
    }
    float eff = f32_from_bits(0);
    if (stored.global_bits) {
      // Burn forms global * block first, in f32.
      eff = round_to_f32(false, to_quotient(g * sj), Overflow::infinity);
      if ((f32_bits(eff) & 0x7F800000u) == 0x7F800000u) {
        return Result<std::vector<Dyadic>>(
            ErrorCode::unsupported_profile,
            "block " + std::to_string(j) + ": global * block scale overflows f32 in Burn's "
            "arithmetic; use profile exact",
            j);
      }
    } else {
      eff = round_to_f32(false, to_quotient(sj), Overflow::saturate);  // exact: sj is an f32
    }
    // Burn's valid_scale: a zero scale divides and multiplies as 0.1 (the stored scale stays 0).
    if (f32_bits(eff) == 0) eff = f32_from_bits(0x3DCCCCCDu);  // f32(0.1)
    e[j] = dyadic_of(eff);
  }
  return e;
}

}  // namespace qscheme::reference
