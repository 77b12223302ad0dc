#include "reference/scales.hpp"

#include <string>

#include "reference/minifloat.hpp"
#include "reference/values.hpp"
#include "scheme/errors.hpp"

namespace qscheme::reference {
namespace {

// f32 MIN_POSITIVE (2^-126), the floor Burn puts under the global scale; for positive f32
// values, bit patterns order like the values, so the floor is a max over patterns.
constexpr std::uint32_t kMinNormalF32Bits = 0x00800000u;
// f32 max / 2 (exact): above it, Burn's 2 * alpha overflows.
constexpr std::uint32_t kHalfMaxF32Bits = 0x7EFFFFFFu;
// f32(0.1), Burn's stand-in for a zero scale.
constexpr std::uint32_t kPointOneF32Bits = 0x3DCCCCCDu;
constexpr std::uint32_t kExponentMask = 0x7F800000u;

Dyadic largest(ScaleDtype d) {
  const Format f = format_of(d);
  const Magnitude m = code_magnitude(f, format_info(f).max_code);
  return {Integer(m.mant), m.exp2};
}

Dyadic dyadic_of(ScaleDtype d, std::uint32_t bits) {
  const Magnitude m = code_magnitude(format_of(d), bits);
  return {Integer(m.mant), m.exp2};
}

// |x| of an f32 pattern (the sign is dropped: a -0 scale is 0).
Dyadic dyadic_of_f32(std::uint32_t bits) {
  const F32Parts p = split_f32(f32_from_bits(bits));
  return {Integer(p.mant), p.exp2};
}

Integer value_span(Value v) { return Integer(info(v).hi - info(v).lo); }

// 2 alpha / (b - a), exactly.
Quotient ideal_scale(const Quotient& alpha, Value v) {
  return {alpha.num * 2, alpha.den * value_span(v), alpha.exp2};
}

// An f32 operation of Burn's: the exact result, rounded to nearest-even f32.
std::uint32_t f32_op(const Quotient& exact_result, Overflow overflow) {
  return round_to_format(Format::f32, false, exact_result, RoundMode::half_even, overflow);
}

}  // namespace

std::uint32_t round_up_to_dtype(const Quotient& v, ScaleDtype d) {
  return round_to_format(format_of(d), false, v, RoundMode::up, Overflow::saturate);
}

std::uint32_t round_up_to_dtype(const Rational& v, ScaleDtype d) {
  return round_up_to_dtype(magnitude_of(v), d);
}

StoredScales exact_scales(const Scheme& s, std::span<const Quotient> alpha) {
  const ScaleDtype d = s.scale_dtype();
  StoredScales out;
  out.bits.resize(alpha.size());
  if (!s.two_level()) {
    for (std::size_t j = 0; j < alpha.size(); ++j) out.bits[j] = round_up_to_dtype(ideal_scale(alpha[j], s.value), d);
    return out;
  }
  // g = max(round_up_f32(max_j s*_j / max(d)), 2^-126); s*_j ordered like alpha_j.
  Quotient top{Integer(0), Integer(1), 0};
  for (const Quotient& a : alpha)
    if (compare(a, top) > 0) top = a;
  std::uint32_t g_bits = round_up_to_dtype(ideal_scale(top, s.value) / largest(d), ScaleDtype::f32);
  if (g_bits < kMinNormalF32Bits) g_bits = kMinNormalF32Bits;
  out.global_bits = g_bits;
  const Dyadic g = dyadic_of_f32(g_bits);
  for (std::size_t j = 0; j < alpha.size(); ++j) out.bits[j] = round_up_to_dtype(ideal_scale(alpha[j], s.value) / g, d);
  return out;
}

Result<StoredScales> burn_scales(const Scheme& s, std::span<const Quotient> alpha) {
  const ScaleDtype d = s.scale_dtype();
  std::vector<std::uint32_t> scale(alpha.size());
  for (std::size_t j = 0; j < alpha.size(); ++j) {
    // alpha in f32: max |x| is one already; the mean is rounded once (Burn sums in f32 in its
    // own order, which is not modelled).
    const std::uint32_t a_bits = f32_op(alpha[j], Overflow::saturate);
    if (a_bits > kHalfMaxF32Bits) {
      return errors::burn_alpha_overflow(j);
    }
    // f32(f32(2 alpha) / (b - a)); 2 alpha is exact in f32 below the overflow checked above.
    scale[j] = f32_op(ideal_scale(to_quotient(dyadic_of_f32(a_bits)), s.value), Overflow::infinity);
  }
  StoredScales out;
  out.bits.resize(alpha.size());
  if (!s.two_level()) {
    for (std::size_t j = 0; j < scale.size(); ++j) out.bits[j] = round_up_to_dtype(to_quotient(dyadic_of_f32(scale[j])), d);
    return out;
  }
  std::uint32_t top = 0;
  for (std::uint32_t v : scale) top = v > top ? v : top;
  std::uint32_t g_bits = f32_op(to_quotient(dyadic_of_f32(top)) / largest(d), Overflow::infinity);
  if (g_bits < kMinNormalF32Bits) g_bits = kMinNormalF32Bits;
  out.global_bits = g_bits;
  const Dyadic g = dyadic_of_f32(g_bits);
  for (std::size_t j = 0; j < scale.size(); ++j) {
    const std::uint32_t normalised = f32_op(to_quotient(dyadic_of_f32(scale[j])) / g, Overflow::saturate);
    out.bits[j] = round_up_to_dtype(to_quotient(dyadic_of_f32(normalised)), d);
  }
  return out;
}

Result<StoredScales> given_scales(const Scheme& s, const Layout& l, const GivenScales& given) {
  if (given.block.size() != l.scales) {
    return errors::given_scale_count(given.block.size(), l.scales);
  }
  if (given.global.has_value() != s.two_level()) {
    return errors::given_global_presence(s.two_level());
  }
  // Finite and >= 0 (-0 counts as 0): the exponent is not all ones, and a set sign bit only
  // on a zero.
  const auto acceptable = [](float v) {
    const std::uint32_t b = f32_bits(v);
    return (b & kExponentMask) != kExponentMask && (b >> 31 == 0 || (b & 0x7FFFFFFFu) == 0);
  };
  for (std::size_t j = 0; j < given.block.size(); ++j) {
    if (!acceptable(given.block[j])) {
      return errors::invalid_given_scale(j);
    }
  }
  if (given.global && !acceptable(*given.global)) {
    return errors::invalid_given_global(given.block.size());
  }
  StoredScales out;
  out.bits.resize(given.block.size());
  for (std::size_t j = 0; j < given.block.size(); ++j) {
    out.bits[j] = round_up_to_dtype(to_quotient(dyadic_of_f32(f32_bits(given.block[j]))), s.scale_dtype());
  }
  if (given.global) {
    out.global_bits = round_up_to_dtype(to_quotient(dyadic_of_f32(f32_bits(*given.global))), ScaleDtype::f32);
  }
  return out;
}

Result<std::vector<Dyadic>> effective_scales(const Scheme& s, Profile p, const StoredScales& stored) {
  const ScaleDtype d = s.scale_dtype();
  std::vector<Dyadic> e(stored.bits.size());
  const Dyadic g = stored.global_bits ? dyadic_of_f32(*stored.global_bits) : Dyadic{Integer(1), 0};
  for (std::size_t j = 0; j < e.size(); ++j) {
    const Dyadic sj = dyadic_of(d, stored.bits[j]);
    if (p != Profile::burn) {  // exact and onnx (one f32 level: the scale itself)
      e[j] = stored.global_bits ? g * sj : sj;
      continue;
    }
    // Burn forms global * block first, in f32; one level, sj is an f32 value already.
    const std::uint32_t eff = f32_op(to_quotient(stored.global_bits ? g * sj : sj), Overflow::infinity);
    if ((eff & kExponentMask) == kExponentMask) {
      return errors::burn_scale_product_overflow(j);
    }
    // Burn's valid_scale: a zero scale divides and multiplies as 0.1 (the stored scale stays 0).
    e[j] = dyadic_of_f32(eff == 0 ? kPointOneF32Bits : eff);
  }
  return e;
}

}  // namespace qscheme::reference
