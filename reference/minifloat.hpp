// Binary floating-point formats as exact grids: f32, f16, bf16 and the narrow formats a scheme
// stores (e4m3 = OCP E4M3FN, e5m2, e2m1, and the unsigned scale formats ue4m3 and ue8m0).
// A code decodes to an exact rational; a rational rounds onto the grid in a named direction,
// subnormals included, with explicit overflow handling. No float arithmetic happens here: the
// float results are assembled from bit patterns.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "reference/rational.hpp"

namespace qscheme::reference {

enum class Format : std::uint8_t { f32, f16, bf16, e4m3, e5m2, e2m1, ue4m3, ue8m0 };
inline constexpr std::array kAllFormats{Format::f32,  Format::f16,  Format::bf16,  Format::e4m3,
                                        Format::e5m2, Format::e2m1, Format::ue4m3, Format::ue8m0};

struct FormatInfo {
  std::string_view name;
  int width;                // bits of one code
  int man_bits;             // stored fraction bits (ue8m0: 0)
  int bias;
  std::uint32_t max_code;   // largest finite magnitude code (sign bit clear)
  bool is_signed;           // the top bit of the code is a sign bit
  bool has_infinity;        // IEEE formats whose all-ones exponent with zero fraction is inf
};
const FormatInfo& format_info(Format f);

// The sign bit of a signed format's code (0 for unsigned formats).
std::uint32_t sign_bit(Format f);
// Is `code` a finite value of `f`: within the width, not NaN or inf, sign clear if unsigned.
bool is_finite_code(Format f, std::uint32_t code);
bool code_is_negative(Format f, std::uint32_t code);

// |value(code)| = mant * 2^exp2 for a finite code (precondition is_finite_code).
struct Magnitude {
  std::uint32_t mant = 0;
  int exp2 = 0;
};
Magnitude code_magnitude(Format f, std::uint32_t code);
// The exact value of a finite code; -0 decodes to 0 (ask code_is_negative for the sign).
Rational decode(Format f, std::uint32_t code);

// What rounding does with a result beyond the format's largest finite value.
enum class Overflow {
  saturate,  // +-max finite (the narrow formats never produce inf or NaN)
  infinity,  // +-inf (IEEE overflow) for formats with an infinity; the others saturate
};

// Rounds (negative ? -q : q) onto the grid of `f` in direction `mode`, subnormals included.
// Zero keeps the given sign (a negative value that rounds to zero gives the negative-zero code).
// ue8m0 has no zero and no sign: it takes non-negative values, supports modes up and down only,
// and clamps to [2^-127, 2^127]. Unsigned formats take negative == false only.
std::uint32_t round_to_format(Format f, bool negative, const Quotient& q, RoundMode mode,
                              Overflow overflow);
// The same for a rational; `negative_zero` picks the sign of an exact zero.
std::uint32_t round_to_format(Format f, const Rational& v, RoundMode mode, Overflow overflow,
                              bool negative_zero = false);

// IEEE binary32 roundTiesToEven of an exact value, subnormals included. With
// Overflow::infinity a result past f32 max is +-inf (as IEEE arithmetic gives); with
// Overflow::saturate it is +-f32 max.
float round_to_f32(const Rational& v, Overflow overflow, bool negative_zero = false);
float round_to_f32(bool negative, const Quotient& q, Overflow overflow);
// The smallest f32 not below v >= 0, subnormals included, saturating at f32 max.
float round_up_to_f32(const Rational& v);

}  // namespace qscheme::reference
