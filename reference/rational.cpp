#include "reference/rational.hpp"

namespace qscheme::reference {

Quotient magnitude_of(const Rational& v) {
  Quotient q;
  q.num = mp::abs(mp::numerator(v));
  q.den = mp::denominator(v);
  return q;
}

Rational to_rational(const Quotient& q) {
  Integer num = q.num;
  Integer den = q.den;
  if (q.exp2 >= 0) num <<= q.exp2;
  else den <<= -q.exp2;
  return Rational(num, den);
}

Rational to_rational(const Dyadic& d) { return Rational(d.mant) * pow2(d.exp2); }

Integer round_quotient(const Quotient& q, int quantum_exp, RoundMode mode) {
  // value = num * 2^shift / den; shifting whichever side keeps both operands integers.
  const int shift = q.exp2 - quantum_exp;
  Integer n = q.num;
  Integer d = q.den;
  if (shift >= 0) n <<= shift;
  else d <<= -shift;
  Integer quot;
  Integer rem;
  mp::divide_qr(n, d, quot, rem);
  if (rem == 0) return quot;
  switch (mode) {
    case RoundMode::down: return quot;
    case RoundMode::up: return quot + 1;
    case RoundMode::half_even:
    case RoundMode::half_away: {
      const Integer twice = rem << 1;
      if (twice < d) return quot;
      if (twice > d) return quot + 1;
      // An exact tie between quot and quot + 1 (value >= 0, so "away" means up).
      if (mode == RoundMode::half_away) return quot + 1;
      return mp::bit_test(quot, 0) ? Integer(quot + 1) : quot;
    }
  }
  return quot;
}

int floor_log2(const Quotient& q) {
  // num/den lies in [2^(k-1), 2^(k+1)) for k = msb(num) - msb(den); one comparison decides.
  const int k = static_cast<int>(mp::msb(q.num)) - static_cast<int>(mp::msb(q.den));
  const bool at_least_2k = k >= 0 ? q.num >= (q.den << k) : (q.num << -k) >= q.den;
  return q.exp2 + (at_least_2k ? k : k - 1);
}

namespace {
Integer signed_round(const Rational& v, RoundMode mode) {
  const Integer m = round_quotient(magnitude_of(v), 0, mode);
  return v < 0 ? Integer(-m) : m;
}
}  // namespace

Integer round_half_even_to_int(const Rational& v) { return signed_round(v, RoundMode::half_even); }
Integer round_half_away_to_int(const Rational& v) { return signed_round(v, RoundMode::half_away); }

Rational pow2(int k) {
  if (k >= 0) return Rational(Integer(1) << k);
  return Rational(Integer(1), Integer(1) << -k);
}

F32Parts split_f32(float x) {
  const std::uint32_t b = f32_bits(x);
  F32Parts p;
  p.negative = (b >> 31) != 0;
  const std::uint32_t e = (b >> 23) & 0xFF;
  const std::uint32_t f = b & 0x7FFFFF;
  if (e == 0) {
    p.mant = f;
    p.exp2 = -149;
  } else {
    p.mant = f | 0x800000;
    p.exp2 = static_cast<int>(e) - 150;
  }
  return p;
}

Rational to_rational(float x) {
  const F32Parts p = split_f32(x);
  Rational r = Rational(Integer(p.mant)) * pow2(p.exp2);
  return p.negative ? Rational(-r) : r;
}

}  // namespace qscheme::reference
