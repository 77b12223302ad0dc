#include "reference/exponent_scales.hpp"

#include <string>

#include "reference/minifloat.hpp"
#include "reference/values.hpp"
#include "scheme/errors.hpp"

namespace qscheme::reference {
namespace {

using rule::ScaleRounding;

// ln 2 to 40 decimals, and the bounds it lies between.
const Integer& ln2_numerator() {
  static const Integer n("6931471805599453094172321214581765680755");
  return n;
}
const Integer& ln2_denominator() {
  static const Integer d = mp::pow(Integer(10), 40);
  return d;
}

std::uint32_t biased(int e) {
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  return static_cast<std::uint32_t>(e + 127);
}

// Half the gap between the integer n != 0 and the next f32 toward -infinity, as 2^-h_exp.
int half_gap_exp(int n) {
  const int m = n > 0 ? n : -n;
  const int p = 31 - __builtin_clz(static_cast<unsigned>(m));  // floor(log2 |n|)
  // Below a positive power of two the f32 grid is twice as fine.
  const bool finer = n > 0 && (m & (m - 1)) == 0;
  const int gap_exp = p - 23 - (finer ? 1 : 0);
  return -(gap_exp - 1);
}

}  // namespace

int emax_elem(Value v) {
  const Format f = format_of(v);
  const Magnitude m = code_magnitude(f, format_info(f).max_code);
  return m.exp2 + (31 - __builtin_clz(m.mant));
}

Result<int> floor_of_f32_log2(float a) {
  const F32Parts p = split_f32(a);
  const Quotient q{Integer(p.mant), Integer(1), p.exp2};
  const int k = floor_log2(q);
  const int n = k + 1;
  // A power of two has an exact log2; below 1 the f32 grid near 0 is too fine to round up to 0.
  if ((p.mant & (p.mant - 1)) == 0 || n == 0) return k;
  // r = a / 2^n in (1/2, 1); f32(log2 a) reaches n iff log2 a > n - h, h = 2^-h_exp, i.e. iff
  // -ln(r) < h ln 2 (no tie: log2 of a non-power of two is irrational).
  const Rational r = to_rational(a) / pow2(n);
  const Rational delta = 1 - r;
  const int h_exp = half_gap_exp(n);
  // h ln 2 < 2^-17 for every n an f32 reaches: a delta past 2^-16 is far below the boundary.
  if (delta > pow2(-16)) return k;
  // -ln(1 - d) = d + d^2/2 + d^3/3 + ..., bounded by its first three terms and a geometric tail.
  const Rational lower = delta + delta * delta / 2 + delta * delta * delta / 3;
  const Rational d4 = delta * delta * delta * delta;
  const Rational upper = lower + d4 / (4 * (1 - delta));
  const Rational h = pow2(-h_exp);
  const Rational ln2_lo = Rational(ln2_numerator() - 1, ln2_denominator());
  const Rational ln2_hi = Rational(ln2_numerator() + 1, ln2_denominator());
  if (upper < h * ln2_lo) return n;
  if (lower > h * ln2_hi) return k;
  return Status(ErrorCode::internal, "floor(f32(log2 a)) is not decided by 40 digits of ln 2 for a = " +
                                         std::to_string(a) + "; please report");
}

Result<std::uint32_t> exponent_scale(ScaleRounding rule, Value v, float amax, std::uint64_t block) {
  const int emax = emax_elem(v);
  const std::uint32_t bits = f32_bits(amax) & 0x7FFFFFFFu;
  switch (rule) {
    case ScaleRounding::ocp_floor: {
      if (bits == 0) return 0;  // no exponent: the smallest scale, 2^-127
      const F32Parts p = split_f32(amax);
      return biased(floor_log2(Quotient{Integer(p.mant), Integer(1), p.exp2}) - emax);
    }
    case ScaleRounding::torchao_ceil: {
      // The biased exponent field (0 for zero and subnormals), plus one for any mantissa bit.
      const int e = static_cast<int>(bits >> 23) - 127 + ((bits & 0x7FFFFFu) != 0 ? 1 : 0);
      return biased(e - emax);
    }
    case ScaleRounding::torchao_even: {
      // Half a unit of the element's last mantissa bit added to the pattern, mantissa cleared.
      const int mbits = format_info(format_of(v)).man_bits;
      const std::uint32_t rounded = (bits + (std::uint32_t{1} << (22 - mbits))) & 0xFF800000u;
      if ((rounded >> 23) == 0xFFu) {  // carried into inf: torchao stores the NaN scale 0xFF
        return errors::torchao_even_nan_scale(block, amax);
      }
      return biased(static_cast<int>(rounded >> 23) - 127 - emax);
    }
    case ScaleRounding::log2f_floor: {
      // microxcaling replaces a zero amax by f32 min normal (2^-126) before the log2.
      const float a = bits == 0 ? f32_from_bits(0x00800000u) : f32_from_bits(bits);
      const Result<int> l = floor_of_f32_log2(a);
      if (!l) return l.status();
      return biased(*l - emax);
    }
    default:
      break;
  }
  return Status(ErrorCode::internal, "exponent_scale called with a rounding that is not an exponent rule");
}

}  // namespace qscheme::reference
