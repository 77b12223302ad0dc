#include "reference/scales.hpp"

#include <string>

#include "reference/calibrate.hpp"
#include "reference/exponent_scales.hpp"
#include "reference/minifloat.hpp"
#include "reference/values.hpp"
#include "scheme/errors.hpp"

namespace qscheme::reference {
namespace {

using namespace rule;

// f32 MIN_POSITIVE (2^-126), the floor under the global scale (Burn's); for positive f32
// values, bit patterns order like the values, so the floor is a max over patterns.
constexpr std::uint32_t kMinNormalF32Bits = 0x00800000u;
// f32 max / 2 (exact): above it, Burn's 2 * alpha overflows.
constexpr std::uint32_t kHalfMaxF32Bits = 0x7EFFFFFFu;
constexpr std::uint32_t kMaxF32Bits = 0x7F7FFFFFu;
constexpr std::uint32_t kInfF32Bits = 0x7F800000u;
// f32(0.1), Burn's stand-in for a zero scale.
constexpr std::uint32_t kPointOneF32Bits = 0x3DCCCCCDu;

// |v| of an f32 pattern (the sign is dropped: a -0 scale is 0).
Quotient f32_value(std::uint32_t bits) {
  const F32Parts p = split_f32(f32_from_bits(bits));
  return {Integer(p.mant), Integer(1), p.exp2};
}

// An f32 operation: the exact result, rounded to nearest-even f32 (a positive pattern).
std::uint32_t f32_round(const Quotient& exact, Overflow overflow) {
  return round_to_format(Format::f32, false, exact, RoundMode::half_even, overflow);
}

Quotient times(const Quotient& a, const Quotient& b) { return {a.num * b.num, a.den * b.den, a.exp2 + b.exp2}; }
Quotient over(const Quotient& a, const Quotient& b) { return {a.num * b.den, a.den * b.num, a.exp2 - b.exp2}; }
Quotient reciprocal(const Quotient& a) { return {a.den, a.num, -a.exp2}; }

Quotient largest(ScaleDtype d) {
  const Format f = format_of(d);
  const Magnitude m = code_magnitude(f, format_info(f).max_code);
  return {Integer(m.mant), Integer(1), m.exp2};
}

// M: the value range's half-width ((hi - lo) / 2), or |lo| for a signed-max scale (d = m / lo
// puts the largest element on the code lo).
Quotient half_range(Value v, Statistic st) {
  const ValueInfo& vi = info(v);
  if (st == Statistic::signed_max) return {Integer(-vi.lo), Integer(1), 0};
  return {Integer(vi.hi - vi.lo), Integer(2), 0};
}

// |u| onto the grid of d in the direction of `mode`, the sign kept.
std::uint32_t round_scale(const Quotient& mag, bool negative, ScaleDtype d, ScaleRounding mode, ScaleOverflow of) {
  const Format f = format_of(d);
  // Rounding down never passes the largest finite value: only up and nearest can overflow.
  const Overflow o =
      of == ScaleOverflow::infinity && mode != ScaleRounding::down ? Overflow::infinity : Overflow::saturate;
  if (f == Format::ue8m0 && mode == ScaleRounding::nearest) {
    // ue8m0 rounds only up or down; the nearer of the two, a tie to the larger.
    const std::uint32_t lo = round_to_format(f, false, mag, RoundMode::down, o);
    const std::uint32_t hi = round_to_format(f, false, mag, RoundMode::up, o);
    const Rational v = to_rational(mag);
    return v - decode(f, lo) < decode(f, hi) - v ? lo : hi;
  }
  const RoundMode m = mode == ScaleRounding::nearest ? RoundMode::half_even
                      : mode == ScaleRounding::down  ? RoundMode::down
                                                     : RoundMode::up;
  return round_to_format(f, negative && format_info(f).is_signed, mag, m, o);
}

bool is_exponent_rule(ScaleRounding s) {
  return s == ScaleRounding::ocp_floor || s == ScaleRounding::torchao_ceil || s == ScaleRounding::torchao_even ||
         s == ScaleRounding::log2f_floor;
}

SignedScale unsigned_scale(const Quotient& q) { return {q, false, false}; }

// The per-block statistic: |m| and whether the unrounded scale is negative. signed-max: m is
// the first element of largest |x| in the block (ggml scans with a strict <, starting from +0),
// and d = m / lo has the opposite sign (an all-zero block gives m = +0, d = -0).
struct Statistics {
  std::vector<Quotient> alpha;
  std::vector<bool> negative;
};

Statistics statistics(const Layout& l, std::span<const float> x, std::span<const std::uint64_t> block_of,
                      Statistic st, Calibration c) {
  Statistics out;
  out.alpha = calibrate(l, x, block_of, st == Statistic::signed_max ? Calibration::minmax : c);
  out.negative.assign(out.alpha.size(), false);
  if (st != Statistic::signed_max) return out;
  std::vector<std::uint32_t> best(out.alpha.size(), 0);
  std::vector<bool> m_negative(out.alpha.size(), false);
  for (std::size_t n = 0; n < x.size(); ++n) {
    const std::uint32_t b = f32_bits(x[n]);
    const std::uint64_t j = block_of[n];
    if ((b & 0x7FFFFFFFu) > best[j]) {
      best[j] = b & 0x7FFFFFFFu;
      m_negative[j] = (b >> 31) != 0;
    }
  }
  for (std::size_t j = 0; j < out.alpha.size(); ++j) out.negative[j] = !m_negative[j];
  return out;
}

}  // namespace

std::uint32_t round_up_to_dtype(const Quotient& v, ScaleDtype d) {
  return round_to_format(format_of(d), false, v, RoundMode::up, Overflow::saturate);
}

std::uint32_t round_up_to_dtype(const Rational& v, ScaleDtype d) { return round_up_to_dtype(magnitude_of(v), d); }

SignedScale scale_of_pattern(ScaleDtype d, std::uint32_t bits) {
  const Format f = format_of(d);
  const FormatInfo& fi = format_info(f);
  SignedScale s;
  s.negative = code_is_negative(f, bits);
  const std::uint32_t mag = bits & ~sign_bit(f);
  if (fi.has_infinity && mag == (((std::uint32_t{1} << (fi.width - 1 - fi.man_bits)) - 1) << fi.man_bits)) {
    s.infinite = true;
    return s;
  }
  const Magnitude m = code_magnitude(f, mag);
  s.mag = {Integer(m.mant), Integer(1), m.exp2};
  return s;
}

Status check_given_scales(const Scheme& s, const Layout& l, const GivenScales& given) {
  if (given.block.size() != l.scales) return errors::given_scale_count(given.block.size(), l.scales);
  if (given.global.has_value() != s.two_level()) return errors::given_global_presence(s.two_level());
  // Finite and >= 0 (-0 counts as 0): the exponent is not all ones, and a set sign bit only
  // on a zero.
  const auto acceptable = [](float v) {
    const std::uint32_t b = f32_bits(v);
    return (b & kInfF32Bits) != kInfF32Bits && (b >> 31 == 0 || (b & 0x7FFFFFFFu) == 0);
  };
  for (std::size_t j = 0; j < given.block.size(); ++j) {
    if (!acceptable(given.block[j])) return errors::invalid_given_scale(j);
  }
  if (given.global && !acceptable(*given.global)) return errors::invalid_given_global(given.block.size());
  return {};
}

Result<std::vector<SignedScale>> stored_scale_values(const Scheme& s, const Rules& r, const StoredScales& stored) {
  const ScaleDtype d = s.scale_dtype();
  std::vector<SignedScale> e(stored.bits.size());
  const Quotient g = stored.global_bits ? f32_value(*stored.global_bits) : Quotient{Integer(1), Integer(1), 0};
  for (std::size_t j = 0; j < e.size(); ++j) {
    SignedScale sj = scale_of_pattern(d, stored.bits[j]);
    if (stored.global_bits && !sj.infinite) {
      sj.mag = times(sj.mag, g);
      if (r.product == Product::f32) {
        const std::uint32_t p = f32_round(sj.mag, Overflow::infinity);
        if (p == kInfF32Bits) {
          if (r.two_level == TwoLevel::burn) return errors::burn_scale_product_overflow(j);
          return errors::f32_scale_product_overflow(j);
        }
        sj.mag = f32_value(p);
      }
    }
    // Burn's valid_scale: a zero scale divides and multiplies as 0.1 (the stored scale stays 0).
    if (sj.is_zero() && r.zero_scale == ZeroScale::substitute_point_one) sj = unsigned_scale(f32_value(kPointOneF32Bits));
    e[j] = sj;
  }
  return e;
}

Result<BlockScales> block_scales(const Scheme& s, const Layout& l, std::span<const float> x,
                                 std::span<const std::uint64_t> block_of, const Rules& r, Calibration c,
                                 const std::optional<GivenScales>& given, std::optional<float> global_amax) {
  const ScaleDtype d = s.scale_dtype();
  const std::size_t blocks = static_cast<std::size_t>(l.scales);
  BlockScales out;
  out.stored.bits.resize(blocks);
  std::vector<SignedScale> unrounded(blocks);
  // Caller-supplied scales follow the rounding of the rules (up for the exponent rules, which
  // take none); the global is an f32 already (a -0 is stored as +0).
  if (given) {
    const ScaleRounding mode = is_exponent_rule(r.scale) ? ScaleRounding::up : r.scale;
    for (std::size_t j = 0; j < blocks; ++j) {
      unrounded[j] = unsigned_scale(f32_value(f32_bits(given->block[j])));
      out.stored.bits[j] = round_scale(unrounded[j].mag, false, d, mode, r.scale_overflow);
    }
    if (given->global) out.stored.global_bits = round_up_to_dtype(f32_value(f32_bits(*given->global)), ScaleDtype::f32);
  } else {
    const Statistics st = statistics(l, x, block_of, r.statistic, c);
    const Quotient m = half_range(s.value, r.statistic);
    // u = alpha / M under the rules' arithmetic; false for Burn's overflow of 2 alpha.
    const auto unrounded_of = [&](const Quotient& alpha, Quotient* u) {
      if (r.arithmetic == Arithmetic::exact) {
        *u = over(alpha, m);
        return true;
      }
      // f32(alpha): max |x| is one already; a mean is rounded once (an f32 sum's order is not
      // modelled).
      const std::uint32_t a = f32_round(alpha, Overflow::saturate);
      if (r.arithmetic == Arithmetic::burn && a > kHalfMaxF32Bits) return false;
      const Quotient ideal = r.arithmetic == Arithmetic::f32_reciprocal
                                 ? times(f32_value(a), f32_value(f32_round(reciprocal(m), Overflow::infinity)))
                                 : over(f32_value(a), m);
      *u = f32_value(f32_round(ideal, Overflow::infinity));
      return true;
    };
    for (std::size_t j = 0; j < blocks; ++j) {
      unrounded[j].negative = st.negative[j];
      if (!unrounded_of(st.alpha[j], &unrounded[j].mag)) return errors::burn_alpha_overflow(j);
    }
    // The max |x| the global follows from: the given one (check_global_amax admitted it: two
    // levels, max |x|, no Burn arithmetic; -0 as 0), else the largest block's.
    const std::optional<Quotient> given_top =
        global_amax ? std::optional<Quotient>(f32_value(f32_bits(*global_amax) & 0x7FFFFFFFu)) : std::nullopt;
    if (!s.two_level()) {
      for (std::size_t j = 0; j < blocks; ++j) {
        if (is_exponent_rule(r.scale)) {
          const float amax = f32_from_bits(f32_round(st.alpha[j], Overflow::saturate));
          Result<std::uint32_t> bits = exponent_scale(r.scale, s.value, amax, j);
          if (!bits) return bits.status();
          out.stored.bits[j] = *bits;
        } else {
          out.stored.bits[j] = round_scale(unrounded[j].mag, unrounded[j].negative, d, r.scale, r.scale_overflow);
        }
      }
    } else if (r.two_level == TwoLevel::te_nvfp4) {
      // S = min(f32(f32(max(d) M) / A), f32max) with A = max |x| over the tensor (A = 0: inf);
      // g = f32(1 / S); the block's f32(alpha_j * f32(S * f32(1 / M))), capped at f32 max.
      Quotient top{Integer(0), Integer(1), 0};
      for (const Quotient& a : st.alpha)
        if (compare(a, top) > 0) top = a;
      if (given_top) top = *given_top;
      const Quotient numerator = f32_value(f32_round(times(largest(d), m), Overflow::infinity));
      std::uint32_t enc = top.num == 0 ? kInfF32Bits : f32_round(over(numerator, top), Overflow::infinity);
      if (enc > kMaxF32Bits) enc = kMaxF32Bits;
      out.stored.global_bits = f32_round(reciprocal(f32_value(enc)), Overflow::infinity);
      const Quotient mult =
          f32_value(f32_round(times(f32_value(enc), f32_value(f32_round(reciprocal(m), Overflow::infinity))),
                              Overflow::infinity));
      for (std::size_t j = 0; j < blocks; ++j) {
        std::uint32_t v = f32_round(times(st.alpha[j], mult), Overflow::infinity);
        if (v > kMaxF32Bits) v = kMaxF32Bits;
        out.stored.bits[j] = round_scale(f32_value(v), false, d, r.scale, r.scale_overflow);
      }
    } else {
      Quotient top{Integer(0), Integer(1), 0};
      for (const SignedScale& u : unrounded)
        if (compare(u.mag, top) > 0) top = u.mag;
      if (given_top) unrounded_of(*given_top, &top);  // no Burn arithmetic here: it cannot fail
      const bool burn = r.two_level == TwoLevel::burn;
      std::uint32_t g_bits = burn ? f32_round(over(top, largest(d)), Overflow::infinity)
                                  : round_up_to_dtype(over(top, largest(d)), ScaleDtype::f32);
      if (g_bits < kMinNormalF32Bits) g_bits = kMinNormalF32Bits;
      out.stored.global_bits = g_bits;
      const Quotient g = f32_value(g_bits);
      for (std::size_t j = 0; j < blocks; ++j) {
        Quotient normalised = over(unrounded[j].mag, g);
        if (burn) normalised = f32_value(f32_round(normalised, Overflow::saturate));
        out.stored.bits[j] = round_scale(normalised, false, d, r.scale, r.scale_overflow);
      }
    }
    if (r.quotient == rule::Quotient::f32_max_over_amax) out.amax = st.alpha;
  }

  if (r.codes_from == CodesFrom::unrounded) {
    out.code_scale = std::move(unrounded);
    if (r.zero_scale == ZeroScale::substitute_point_one) {
      for (SignedScale& e : out.code_scale)
        if (e.is_zero()) e = unsigned_scale(f32_value(kPointOneF32Bits));
    }
  } else {
    Result<std::vector<SignedScale>> e = stored_scale_values(s, r, out.stored);
    if (!e) return e.status();
    out.code_scale = std::move(*e);
  }

  if (r.zero_scale == ZeroScale::error) {
    // Only a scale rounded to zero or a caller's zero can be zero over non-zero data (a
    // calibrated scale rounded up is zero only for an all-zero block); there is no value to
    // divide by, so it is an error. The first such element in row-major order names it.
    for (std::size_t n = 0; n < x.size(); ++n) {
      const std::uint64_t b = block_of[n];
      if (out.code_scale[b].is_zero() && (f32_bits(x[n]) & 0x7FFFFFFFu) != 0) {
        return errors::zero_scale_nonzero_input(b, n);
      }
    }
  }
  return out;
}

}  // namespace qscheme::reference
