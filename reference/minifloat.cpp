#include "reference/minifloat.hpp"

#include <cassert>

namespace qscheme::reference {

const FormatInfo& format_info(Format f) {
  static constexpr std::array<FormatInfo, 8> kInfo{{
      {"f32", 32, 23, 127, 0x7F7FFFFFu, true, true},
      {"f16", 16, 10, 15, 0x7BFFu, true, true},
      {"bf16", 16, 7, 127, 0x7F7Fu, true, true},
      // OCP E4M3FN: no infinity; S.1111.111 is NaN, so the largest finite is 0x7E = 448.
      {"e4m3", 8, 3, 7, 0x7Eu, true, false},
      // IEEE-like, but quantization saturates, so its infinity is never produced.
      {"e5m2", 8, 2, 15, 0x7Bu, true, true},
      {"e2m1", 4, 1, 1, 0x7u, true, false},
      // The e4m3 grid without the sign (its top bit must be clear).
      {"ue4m3", 8, 3, 7, 0x7Eu, false, false},
      // 2^(code - 127) for code 0..254; 0xFF is NaN.
      {"ue8m0", 8, 0, 127, 0xFEu, false, false},
  }};
  return kInfo[static_cast<std::size_t>(f)];
}

std::uint32_t sign_bit(Format f) {
  const FormatInfo& fi = format_info(f);
  return fi.is_signed ? (std::uint32_t{1} << (fi.width - 1)) : 0;
}

bool is_finite_code(Format f, std::uint32_t code) {
  const FormatInfo& fi = format_info(f);
  if (fi.width < 32 && code >> fi.width != 0) return false;
  return (code & ~sign_bit(f)) <= fi.max_code;
}

bool code_is_negative(Format f, std::uint32_t code) { return (code & sign_bit(f)) != 0; }

namespace {
// Exponent of the subnormal quantum (= of the min-normal quantum): 2^(1 - bias - man_bits).
int min_quantum_exp(const FormatInfo& fi) { return 1 - fi.bias - fi.man_bits; }
}  // namespace

Magnitude code_magnitude(Format f, std::uint32_t code) {
  const FormatInfo& fi = format_info(f);
  if (f == Format::ue8m0) return {1, static_cast<int>(code) - 127};
  const std::uint32_t mag = code & ~sign_bit(f);
  const std::uint32_t e = mag >> fi.man_bits;
  const std::uint32_t frac = mag & ((std::uint32_t{1} << fi.man_bits) - 1);
  if (e == 0) return {frac, min_quantum_exp(fi)};
  return {frac | (std::uint32_t{1} << fi.man_bits), static_cast<int>(e) - 1 + min_quantum_exp(fi)};
}

Rational decode(Format f, std::uint32_t code) {
  const Magnitude m = code_magnitude(f, code);
  Rational v = Rational(Integer(m.mant)) * pow2(m.exp2);
  return code_is_negative(f, code) ? Rational(-v) : v;
}

namespace {

std::uint32_t round_ue8m0(const Quotient& q, RoundMode mode) {
  assert(mode == RoundMode::up || mode == RoundMode::down);
  if (q.num == 0) return 0;  // no zero: the smallest value, 2^-127, is the floor of the format
  const int e = floor_log2(q);
  int p = e;
  // Not a power of two: the ceiling is the next one.
  if (mode == RoundMode::up && round_quotient(q, e, RoundMode::up) != 1) p = e + 1;
  if (p < -127) p = -127;
  if (p > 127) p = 127;
  return static_cast<std::uint32_t>(p + 127);
}

}  // namespace

std::uint32_t round_to_format(Format f, bool negative, const Quotient& q, RoundMode mode,
                              Overflow overflow) {
  const FormatInfo& fi = format_info(f);
  assert(fi.is_signed || !negative || q.num == 0);
  if (f == Format::ue8m0) return round_ue8m0(q, mode);
  const std::uint32_t sign = negative ? sign_bit(f) : 0;
  if (q.num == 0) return sign;

  const int qmin = min_quantum_exp(fi);
  // Exponent of the largest finite value's leading bit.
  const int emax = static_cast<int>(fi.max_code >> fi.man_bits) - 1 + qmin + fi.man_bits;
  const int e = floor_log2(q);
  bool overflowed = e > emax + 1;  // past any rounding back into range; saves huge shifts
  std::uint64_t mag = 0;
  if (!overflowed) {
    const int qe = e - fi.man_bits > qmin ? e - fi.man_bits : qmin;
    const Integer m = round_quotient(q, qe, mode);  // <= 2^(man_bits+1)
    // (qe - qmin) counts binades above the subnormal one; a carry to m = 2^(man_bits+1) lands
    // on the next binade's first code by the same formula.
    mag = (static_cast<std::uint64_t>(qe - qmin) << fi.man_bits) + m.convert_to<std::uint64_t>();
    overflowed = mag > fi.max_code;
  }
  if (overflowed) {
    if (overflow == Overflow::infinity && fi.has_infinity) {
      const int exp_bits = fi.width - 1 - fi.man_bits;
      mag = ((std::uint64_t{1} << exp_bits) - 1) << fi.man_bits;
    } else {
      mag = fi.max_code;
    }
  }
  return sign | static_cast<std::uint32_t>(mag);
}

std::uint32_t round_to_format(Format f, const Rational& v, RoundMode mode, Overflow overflow,
                              bool negative_zero) {
  const bool negative = v < 0 || (v == 0 && negative_zero);
  return round_to_format(f, negative, magnitude_of(v), mode, overflow);
}

float round_to_f32(const Rational& v, Overflow overflow, bool negative_zero) {
  return f32_from_bits(round_to_format(Format::f32, v, RoundMode::half_even, overflow, negative_zero));
}

float round_to_f32(bool negative, const Quotient& q, Overflow overflow) {
  return f32_from_bits(round_to_format(Format::f32, negative, q, RoundMode::half_even, overflow));
}

float round_up_to_f32(const Rational& v) {
  assert(v >= 0);
  return f32_from_bits(round_to_format(Format::f32, v, RoundMode::up, Overflow::saturate));
}

}  // namespace qscheme::reference
