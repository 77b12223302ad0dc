// Exact numbers for the reference engine and the named roundings that turn them into stored
// quantities. Every stored value the engine produces passes through exactly one function here
// (or in minifloat.hpp), so the rounding of each step can be read off its name.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>

#include "scheme/float_bits.hpp"

namespace qscheme::reference {

namespace mp = boost::multiprecision;
using Integer = mp::cpp_int;
using Rational = mp::cpp_rational;

// An exact non-negative value num / den * 2^exp2, deliberately kept unreduced: the inner loops
// divide one dyadic number by another, and a gcd per element would cost more than the rounding.
// Invariant: num >= 0, den > 0.
struct Quotient {
  Integer num;
  Integer den{1};
  int exp2 = 0;
};

// An exact non-negative dyadic value mant * 2^exp2: every scale the engine divides by is one
// (a value of a binary format, or a product of two).
struct Dyadic {
  Integer mant;
  int exp2 = 0;
  bool is_zero() const { return mant == 0; }
};
inline Dyadic operator*(const Dyadic& a, const Dyadic& b) { return {a.mant * b.mant, a.exp2 + b.exp2}; }
inline Quotient to_quotient(const Dyadic& d) { return {d.mant, Integer(1), d.exp2}; }
Rational to_rational(const Dyadic& d);

// -1, 0 or 1 as a < b, a == b, a > b.
int compare(const Quotient& a, const Quotient& b);
// q / d, exactly (precondition d > 0).
inline Quotient operator/(const Quotient& q, const Dyadic& d) { return {q.num, q.den * d.mant, q.exp2 - d.exp2}; }

// |v| as a Quotient.
Quotient magnitude_of(const Rational& v);
// The Quotient's value as a reduced Rational (for the few per-block steps that need one).
Rational to_rational(const Quotient& q);

// Directions onto a grid. `half_even` and `half_away` are round-to-nearest with the named tie
// rule; `up` is the ceiling (never below the value), `down` the floor.
enum class RoundMode { half_even, half_away, up, down };

// round(q / 2^quantum_exp) with `mode`, as an integer.
Integer round_quotient(const Quotient& q, int quantum_exp, RoundMode mode);
// The same, always in arbitrary precision (round_quotient takes a 128-bit shortcut when the
// operands allow; this is the path it must agree with).
Integer round_quotient_wide(const Quotient& q, int quantum_exp, RoundMode mode);
// floor(log2(q)); precondition q > 0.
int floor_log2(const Quotient& q);

// Rounds a rational to an integer; ties to the even integer (IEEE roundTiesToEven).
Integer round_half_even_to_int(const Rational& v);
// Rounds a rational to an integer; ties away from zero (C roundf, Rust f32::round).
Integer round_half_away_to_int(const Rational& v);

// 2^k as an exact rational.
Rational pow2(int k);

// The exact value of a finite f32. Precondition: std::isfinite(x).
Rational to_rational(float x);

using qscheme::f32_bits;
using qscheme::f32_from_bits;

// A finite f32 split into sign, integer significand and exponent: |x| = mant * 2^exp2.
struct F32Parts {
  bool negative = false;
  std::uint32_t mant = 0;
  int exp2 = 0;
};
F32Parts split_f32(float x);

}  // namespace qscheme::reference
