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

namespace {

// The same arithmetic on 128-bit integers: nearly every per-element operand (an f32 significand,
// a scale's significand, their product) fits, and cpp_int arithmetic costs several times more.
// Whenever an operand would not fit, the cpp_int path below runs instead, so results never
// depend on which path was taken (tests/reference_minifloat_test.cpp compares the two).
__extension__ typedef unsigned __int128 U128;

constexpr std::uint64_t kU64Max = ~std::uint64_t{0};

int bit_length(U128 v) {
  const auto hi = static_cast<std::uint64_t>(v >> 64);
  const auto lo = static_cast<std::uint64_t>(v);
  if (hi != 0) return 128 - __builtin_clzll(hi);
  return lo != 0 ? 64 - __builtin_clzll(lo) : 0;
}

Integer to_integer(U128 v) {
  const auto hi = static_cast<std::uint64_t>(v >> 64);
  const auto lo = static_cast<std::uint64_t>(v);
  if (hi == 0) return Integer(lo);
  return (Integer(hi) << 64) | Integer(lo);
}

bool both_narrow(const Quotient& q) { return q.num <= kU64Max && q.den <= kU64Max; }

// quot + (0 or 1) by `mode`, from a division's remainder; value >= 0, so "away" means up.
template <typename T>
bool rounds_up(const T& quot, const T& rem, const T& d, RoundMode mode) {
  if (rem == 0) return false;
  switch (mode) {
    case RoundMode::down: return false;
    case RoundMode::up: return true;
    case RoundMode::half_even:
    case RoundMode::half_away: {
      const T twice = rem << 1;  // rem < d < 2^127 on the narrow path: no overflow
      if (twice < d) return false;
      if (twice > d) return true;
      return mode == RoundMode::half_away || (quot & 1) != 0;  // an exact tie
    }
  }
  return false;
}

}  // namespace

Integer round_quotient_wide(const Quotient& q, int quantum_exp, RoundMode mode) {
  // value = num * 2^shift / den; shifting whichever side keeps both operands integers.
  const int shift = q.exp2 - quantum_exp;
  Integer n = q.num;
  Integer d = q.den;
  if (shift >= 0) n <<= shift;
  else d <<= -shift;
  Integer quot;
  Integer rem;
  mp::divide_qr(n, d, quot, rem);
  if (rounds_up<Integer>(quot, rem, d, mode)) ++quot;
  return quot;
}

Integer round_quotient(const Quotient& q, int quantum_exp, RoundMode mode) {
  const int shift = q.exp2 - quantum_exp;
  if (both_narrow(q)) {
    U128 n = q.num.convert_to<std::uint64_t>();
    U128 d = q.den.convert_to<std::uint64_t>();
    const bool fits = shift >= 0 ? bit_length(n) + shift <= 127 : bit_length(d) - shift <= 127;
    if (fits) {
      if (shift >= 0) n <<= shift;
      else d <<= -shift;
      const U128 quot = n / d;
      const U128 rem = n % d;
      return to_integer(quot + (rounds_up<U128>(quot, rem, d, mode) ? 1 : 0));
    }
  }
  return round_quotient_wide(q, quantum_exp, mode);
}

int floor_log2(const Quotient& q) {
  // num/den lies in [2^(k-1), 2^(k+1)) for k = msb(num) - msb(den); one comparison decides.
  if (both_narrow(q)) {
    const U128 n = q.num.convert_to<std::uint64_t>();
    const U128 d = q.den.convert_to<std::uint64_t>();
    const int k = bit_length(n) - bit_length(d);  // |k| < 64: the shifts below fit
    const bool at_least_2k = k >= 0 ? n >= (d << k) : (n << -k) >= d;
    return q.exp2 + (at_least_2k ? k : k - 1);
  }
  const int k = static_cast<int>(mp::msb(q.num)) - static_cast<int>(mp::msb(q.den));
  const bool at_least_2k = k >= 0 ? q.num >= (q.den << k) : (q.num << -k) >= q.den;
  return q.exp2 + (at_least_2k ? k : k - 1);
}

int compare(const Quotient& a, const Quotient& b) {
  // a.num * b.den * 2^a.exp2 against b.num * a.den * 2^b.exp2, scaled to a common exponent.
  Integer lhs = a.num * b.den;
  Integer rhs = b.num * a.den;
  if (lhs == 0 || rhs == 0) return lhs == rhs ? 0 : (lhs == 0 ? -1 : 1);
  const int d = a.exp2 - b.exp2;
  if (d >= 0) lhs <<= d;
  else rhs <<= -d;
  return lhs < rhs ? -1 : (lhs > rhs ? 1 : 0);
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
