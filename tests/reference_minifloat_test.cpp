// The exact format grids of reference/minifloat.hpp against independent knowledge: hardware
// conversions (_Float16, f32 bit shifts for bf16, double -> float for f32), the published
// e2m1/e4m3/e5m2/ue8m0 tables, and brute-force searches over each grid for the round-up and
// round-to-nearest-even rules.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "scheme/float_bits.hpp"
#include "tests/support/print_support.hpp"
#include "reference/minifloat.hpp"
#include "reference/scales.hpp"
#include "reference/values.hpp"

using namespace qscheme;
using namespace qscheme::reference;

namespace {

// The exact value of a double (every grid value here is one).
Rational exact(double d) {
  int e = 0;
  const double m = std::frexp(std::fabs(d), &e);  // |d| = m * 2^e, m in [0.5, 1)
  const auto mant = static_cast<std::int64_t>(std::ldexp(m, 53));
  Rational r = Rational(Integer(mant)) * pow2(e - 53);
  return d < 0 ? Rational(-r) : r;
}

std::uint32_t max_code_of(Format f) { return format_info(f).max_code; }
std::uint32_t code_count(Format f) { return std::uint32_t{1} << format_info(f).width; }

// Independent decoders: each format's value from a source other than minifloat.cpp.
double independent_value(Format f, std::uint32_t c) {
  switch (f) {
    case Format::f16: {
      _Float16 h;
      const auto b = static_cast<std::uint16_t>(c);
      std::memcpy(&h, &b, 2);
      return static_cast<double>(h);
    }
    case Format::bf16: return qscheme::bf16_to_f32(c);
    case Format::f32: return qscheme::f32_from_bits(c);
    case Format::e5m2: return independent_value(Format::f16, c << 8);  // e5m2 is f16's top byte
    case Format::e2m1: {
      static constexpr double kTable[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
      return (c & 8 ? -1 : 1) * kTable[c & 7];
    }
    case Format::ue8m0: return std::ldexp(1.0, static_cast<int>(c) - 127);
    case Format::ue4m3:
    case Format::e4m3: {
      // OCP E4M3FN: 1.mmm * 2^(e-7), subnormals 0.mmm * 2^-6.
      const double s = (c & 0x80) ? -1 : 1;
      const int e = static_cast<int>((c >> 3) & 0xF);
      const int m = static_cast<int>(c & 7);
      return s * (e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7));
    }
  }
  return 0;
}

bool independent_negative(Format f, std::uint32_t c) {
  if (f == Format::ue8m0 || f == Format::ue4m3) return false;
  return (c >> (format_info(f).width - 1)) & 1;
}

// The finite non-negative values of a format in increasing order, from the independent decoder.
std::vector<double> grid(Format f) {
  std::vector<double> v;
  const std::uint32_t top = f == Format::ue8m0 ? 0xFE : max_code_of(f);
  for (std::uint32_t c = 0; c <= top; ++c) v.push_back(independent_value(f, c));
  BOOST_TEST_REQUIRE(std::is_sorted(v.begin(), v.end()));
  return v;
}

constexpr Format kNarrow[] = {Format::f16, Format::bf16, Format::e4m3, Format::e5m2,
                              Format::e2m1, Format::ue4m3, Format::ue8m0};

}  // namespace

BOOST_AUTO_TEST_CASE(published_code_points) {
  BOOST_TEST(decode(Format::e4m3, 0x7E) == 448);
  BOOST_TEST(decode(Format::e4m3, 0x38) == 1);
  BOOST_TEST(decode(Format::e4m3, 0x01) == pow2(-9));
  BOOST_TEST(decode(Format::e4m3, 0x08) == pow2(-6));
  BOOST_TEST(decode(Format::e5m2, 0x7B) == 57344);
  BOOST_TEST(decode(Format::e5m2, 0x01) == pow2(-16));
  BOOST_TEST(decode(Format::e2m1, 0x7) == 6);
  BOOST_TEST(decode(Format::e2m1, 0xF) == -6);
  BOOST_TEST(decode(Format::ue8m0, 0x00) == pow2(-127));
  BOOST_TEST(decode(Format::ue8m0, 0xFE) == pow2(127));
  BOOST_TEST(decode(Format::f16, 0x7BFF) == 65504);
  BOOST_TEST(decode(Format::f16, 0x0001) == pow2(-24));
  BOOST_TEST(decode(Format::ue4m3, 0x7E) == 448);
  BOOST_TEST(!is_finite_code(Format::e4m3, 0x7F));
  BOOST_TEST(!is_finite_code(Format::e4m3, 0xFF));
  BOOST_TEST(is_finite_code(Format::e4m3, 0xFE));
  for (std::uint32_t c : {0x7Cu, 0x7Du, 0x7Eu, 0x7Fu, 0xFCu, 0xFDu, 0xFEu, 0xFFu}) BOOST_TEST(!is_finite_code(Format::e5m2, c));
  BOOST_TEST(!is_finite_code(Format::e2m1, 16));
  BOOST_TEST(!is_finite_code(Format::ue8m0, 0xFF));
  BOOST_TEST(!is_finite_code(Format::ue4m3, 0x80));
  BOOST_TEST(!is_finite_code(Format::f16, 0x7C00));
  BOOST_TEST(!is_finite_code(Format::bf16, 0x7F80));
  BOOST_TEST(!is_finite_code(Format::f16, 0x10000));
}

BOOST_AUTO_TEST_CASE(every_code_decodes_independently_and_reencodes_to_itself) {
  for (Format f : kNarrow) {
    int checked = 0;
    for (std::uint32_t c = 0; c < code_count(f); ++c) {
      const double expected = independent_value(f, c);
      const bool independent_finite = std::isfinite(expected) && !(f == Format::e4m3 && (c & 0x7F) == 0x7F) &&
                                      !(f == Format::ue4m3 && (c >= 0x7F)) && !(f == Format::ue8m0 && c == 0xFF);
      BOOST_TEST_REQUIRE(is_finite_code(f, c) == independent_finite, format_info(f).name << " code " << c);
      if (!independent_finite) continue;
      const Rational v = decode(f, c);
      BOOST_TEST_REQUIRE(v == exact(expected), format_info(f).name << " code " << c);
      const bool neg = independent_negative(f, c);
      BOOST_TEST_REQUIRE(code_is_negative(f, c) == neg);
      // An exact grid value rounds to itself in every direction (ue8m0 has only up/down).
      for (RoundMode m : {RoundMode::up, RoundMode::down, RoundMode::half_even, RoundMode::half_away}) {
        if (f == Format::ue8m0 && (m == RoundMode::half_even || m == RoundMode::half_away)) continue;
        BOOST_TEST_REQUIRE(round_to_format(f, v, m, Overflow::saturate, neg) == c, format_info(f).name << " code " << c);
      }
      ++checked;
    }
    BOOST_TEST_MESSAGE(format_info(f).name << ": " << checked << " codes round-tripped");
  }
}

BOOST_AUTO_TEST_CASE(finite_code_counts) {
  const auto count = [](Format f) {
    int n = 0;
    for (std::uint32_t c = 0; c < code_count(f); ++c) n += is_finite_code(f, c);
    return n;
  };
  BOOST_TEST(count(Format::e4m3) == 254);
  BOOST_TEST(count(Format::e5m2) == 248);
  BOOST_TEST(count(Format::e2m1) == 16);
  BOOST_TEST(count(Format::ue4m3) == 127);
  BOOST_TEST(count(Format::ue8m0) == 255);
  BOOST_TEST(count(Format::f16) == 65536 - 2048);
  BOOST_TEST(count(Format::bf16) == 65536 - 256);
}

// Round-up against brute force: for each gap (v_k, v_k+1) of the grid, values at v_k, just
// above it, at the midpoint and just below v_k+1 round up to the smallest grid value not below
// them, found by search; past the maximum the result saturates.
BOOST_AUTO_TEST_CASE(round_up_matches_brute_force_over_the_whole_grid) {
  for (ScaleDtype d : {ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue4m3, ScaleDtype::ue8m0}) {
    const Format f = format_of(d);
    const std::vector<double> g = grid(f);
    std::vector<Rational> G;
    for (double v : g) G.push_back(exact(v));
    // The first grid value not below v, by search over the sorted grid (saturating at the top).
    const auto brute = [&](const Rational& v) -> Rational {
      const auto it = std::lower_bound(G.begin(), G.end(), v);
      return it == G.end() ? G.back() : *it;
    };
    int checked = 0;
    const auto check = [&](const Rational& v) {
      const Rational got = decode(f, round_up_to_dtype(v, d));
      BOOST_TEST_REQUIRE(got == brute(v), to_string(d) << " at " << v);
      ++checked;
    };
    check(Rational(0));
    check(G.front() / 3);
    for (std::size_t k = 0; k + 1 < G.size(); ++k) {
      const Rational gap = G[k + 1] - G[k];
      check(G[k]);
      check(G[k] + gap / 1024);
      check(G[k] + gap / 2);
      check(G[k + 1] - gap / 1024);
    }
    check(G.back());
    check(G.back() + 1);
    check(G.back() * 1000);
    BOOST_TEST_MESSAGE(to_string(d) << ": " << checked << " round-ups checked");
  }
}

// Ties to even and nearest rounding against brute force, both signs, with saturation and the
// sign of zero, for every signed narrow format.
BOOST_AUTO_TEST_CASE(nearest_even_matches_brute_force_with_ties_and_saturation) {
  for (Format f : {Format::e4m3, Format::e5m2, Format::e2m1, Format::f16, Format::bf16, Format::ue4m3}) {
    const std::vector<double> g = grid(f);
    std::vector<Rational> G;
    for (double v : g) G.push_back(exact(v));
    int ties = 0;
    for (std::size_t k = 0; k + 1 < G.size(); ++k) {
      const Rational gap = G[k + 1] - G[k];
      const Rational mid = G[k] + gap / 2;
      // The even neighbour: codes k and k+1 are adjacent, the even code has mantissa LSB 0.
      const std::uint32_t even = (k % 2 == 0) ? static_cast<std::uint32_t>(k) : static_cast<std::uint32_t>(k + 1);
      for (bool neg : {false, true}) {
        if (neg && !format_info(f).is_signed) continue;
        const Rational s = neg ? -1 : 1;
        const std::uint32_t sb = neg ? sign_bit(f) : 0;
        BOOST_TEST_REQUIRE(round_to_format(f, s * mid, RoundMode::half_even, Overflow::saturate) == (sb | even));
        BOOST_TEST_REQUIRE(round_to_format(f, s * mid, RoundMode::half_away, Overflow::saturate) == (sb | (k + 1)));
        BOOST_TEST_REQUIRE(round_to_format(f, s * (mid + gap / 4096), RoundMode::half_even, Overflow::saturate) == (sb | (k + 1)));
        BOOST_TEST_REQUIRE(round_to_format(f, s * (mid - gap / 4096), RoundMode::half_even, Overflow::saturate) == (sb | k));
        ++ties;
      }
    }
    // Saturation: the first value past the maximum and far beyond it give the maximum.
    const Rational top = G.back();
    const Rational last_gap = G.back() - G[G.size() - 2];
    for (const Rational& v : {Rational(top + last_gap / 2), Rational(top + last_gap), Rational(top * 1000000)}) {
      BOOST_TEST(round_to_format(f, v, RoundMode::half_even, Overflow::saturate) == max_code_of(f));
      if (format_info(f).is_signed)
        BOOST_TEST(round_to_format(f, Rational(-v), RoundMode::half_even, Overflow::saturate) == (sign_bit(f) | max_code_of(f)));
    }
    // Below half the smallest subnormal: zero of the value's sign.
    BOOST_TEST(round_to_format(f, G[1] / 3, RoundMode::half_even, Overflow::saturate) == 0u);
    if (format_info(f).is_signed) {
      BOOST_TEST(round_to_format(f, Rational(-G[1] / 3), RoundMode::half_even, Overflow::saturate) == sign_bit(f));
      BOOST_TEST(round_to_format(f, Rational(0), RoundMode::half_even, Overflow::saturate, true) == sign_bit(f));
    }
    BOOST_TEST_MESSAGE(format_info(f).name << ": " << ties << " ties checked");
  }
}

BOOST_AUTO_TEST_CASE(ieee_overflow_of_the_formats_with_infinity) {
  // f16: 65519.99 rounds to 65504; 65520 is the tie with 2^16 and goes to infinity (IEEE).
  BOOST_TEST(round_to_format(Format::f16, Rational(65519), RoundMode::half_even, Overflow::infinity) == 0x7BFFu);
  BOOST_TEST(round_to_format(Format::f16, Rational(65520), RoundMode::half_even, Overflow::infinity) == 0x7C00u);
  BOOST_TEST(round_to_format(Format::f16, Rational(-65520), RoundMode::half_even, Overflow::infinity) == 0xFC00u);
  BOOST_TEST(round_to_format(Format::f16, Rational(65520), RoundMode::half_even, Overflow::saturate) == 0x7BFFu);
}

// round_to_f32 against the hardware's double -> float conversion (IEEE RNE), subnormals and
// overflow included.
BOOST_AUTO_TEST_CASE(round_to_f32_matches_hardware_double_to_float) {
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<std::uint64_t> any;
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    // Doubles spread over f32's range and beyond: exponent in [-160, 140].
    const std::uint64_t r = any(rng);
    const int e = static_cast<int>(r % 301) - 160;
    double d = std::ldexp(1.0 + static_cast<double>(r >> 12) / 4503599627370496.0, e);
    if (r & 1) d = -d;
    if (i % 7 == 0) {
      // An exact f32 tie: the midpoint of a float and its neighbour away from zero.
      const float f = static_cast<float>(d);
      const float next = std::nextafter(f, f < 0 ? -INFINITY : INFINITY);
      if (std::isfinite(next)) d = (static_cast<double>(f) + static_cast<double>(next)) / 2;
    }
    const float expected = static_cast<float>(d);
    const float got = round_to_f32(exact(d), Overflow::infinity);
    BOOST_TEST_REQUIRE(qscheme::f32_bits(got) == qscheme::f32_bits(expected), "at " << d);
    ++checked;
  }
  // Midpoints between adjacent f32 values are exact ties: the even neighbour wins.
  for (std::uint32_t b : {0x00000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x3F800000u, 0x3F800001u, 0x7F7FFFFEu}) {
    const Rational lo = to_rational(qscheme::f32_from_bits(b));
    const Rational hi = to_rational(qscheme::f32_from_bits(b + 1));
    const float got = round_to_f32((lo + hi) / 2, Overflow::infinity);
    const std::uint32_t even = (b % 2 == 0) ? b : b + 1;
    BOOST_TEST(qscheme::f32_bits(got) == even);
    ++checked;
  }
  // Past f32 max: the tie with 2^128 and above overflow to infinity (IEEE) or saturate.
  const Rational max = to_rational(std::numeric_limits<float>::max());
  const Rational half_ulp = pow2(103);
  BOOST_TEST(qscheme::f32_bits(round_to_f32(max + half_ulp - 1, Overflow::infinity)) == 0x7F7FFFFFu);
  BOOST_TEST(qscheme::f32_bits(round_to_f32(max + half_ulp, Overflow::infinity)) == 0x7F800000u);
  BOOST_TEST(qscheme::f32_bits(round_to_f32(-(max + half_ulp), Overflow::infinity)) == 0xFF800000u);
  BOOST_TEST(qscheme::f32_bits(round_to_f32(max * 4, Overflow::saturate)) == 0x7F7FFFFFu);
  // Below half the smallest subnormal: zero with the value's sign; the half itself ties to 0.
  BOOST_TEST(qscheme::f32_bits(round_to_f32(-pow2(-150), Overflow::infinity)) == 0x80000000u);
  BOOST_TEST(qscheme::f32_bits(round_to_f32(pow2(-150) + pow2(-200), Overflow::infinity)) == 0x00000001u);
  BOOST_TEST_MESSAGE(checked << " f32 roundings checked against hardware");
}

BOOST_AUTO_TEST_CASE(round_up_to_f32_is_the_ceiling) {
  BOOST_TEST(qscheme::f32_bits(round_up_to_f32(Rational(0))) == 0u);
  BOOST_TEST(qscheme::f32_bits(round_up_to_f32(pow2(-200))) == 1u);  // smallest subnormal
  BOOST_TEST(qscheme::f32_bits(round_up_to_f32(Rational(1) + pow2(-60))) == 0x3F800001u);
  BOOST_TEST(qscheme::f32_bits(round_up_to_f32(Rational(1))) == 0x3F800000u);
  // f32 nearest to 1/3 is 0x3EAAAAAB = 0.3333333432..., above 1/3, so it is also the ceiling;
  // 2/3's nearest (0x3F2AAAAB = 0.6666666865...) is above too; 0.1's nearest is above, 0.3's below.
  BOOST_TEST(qscheme::f32_bits(round_up_to_f32(Rational(1, 3))) == 0x3EAAAAABu);
  BOOST_TEST(qscheme::f32_bits(round_up_to_f32(Rational(3, 10))) == 0x3E99999Au);
  BOOST_TEST(qscheme::f32_bits(round_up_to_f32(pow2(200))) == 0x7F7FFFFFu);  // saturates
}

BOOST_AUTO_TEST_CASE(scale_and_code_values_reject_what_no_scheme_produces) {
  BOOST_TEST(scale_value(ScaleDtype::f32, 0x7FC00000u).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(scale_value(ScaleDtype::f32, 0x7F800000u).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(scale_value(ScaleDtype::f32, 0xBF800000u).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(scale_value(ScaleDtype::f16, 0x10000u).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(scale_value(ScaleDtype::ue4m3, 0x80u).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(scale_value(ScaleDtype::ue8m0, 0xFFu).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(scale_value(ScaleDtype::ue8m0, 0x00u)->f32 == std::ldexp(1.0f, -127));
  BOOST_TEST(scale_value(ScaleDtype::bf16, 0x3F80u)->f32 == 1.0f);
  BOOST_TEST(code_value(Value::q8s, -128).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(code_value(Value::q8f, -128)->f32 == -128.0f);
  BOOST_TEST(code_value(Value::q2f, 2).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(code_value(Value::e4m3, 0x7F).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(code_value(Value::e4m3, 0xFF).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(code_value(Value::e4m3, 256).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(code_value(Value::e4m3, -1).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(code_value(Value::e5m2, 0x7C).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(code_value(Value::e2m1, 16).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(code_value(Value::e2m1, 15)->f32 == -6.0f);
  BOOST_TEST(code_value(Value::e2m1, 8)->negative);
  BOOST_TEST(std::signbit(code_value(Value::e2m1, 8)->f32));
}

// round_quotient takes a 128-bit shortcut when the operands allow; it must agree with the
// arbitrary-precision path on every input, including shifts at and past the 128-bit edge, and
// floor_log2 must bracket the value.
BOOST_AUTO_TEST_CASE(narrow_and_wide_quotient_rounding_agree) {
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<std::uint64_t> any;
  int checked = 0;
  for (int i = 0; i < 100000; ++i) {
    const int num_bits = static_cast<int>(any(rng) % 65);
    const int den_bits = 1 + static_cast<int>(any(rng) % 64);
    Quotient q;
    q.num = num_bits == 0 ? 0 : (any(rng) >> (64 - num_bits));
    q.den = (any(rng) >> (64 - den_bits)) | (std::uint64_t{1} << (den_bits - 1));
    if (i % 5 == 0) q.den = 1;
    if (i % 7 == 0) q.num *= 3;  // ties and exact quotients
    q.exp2 = static_cast<int>(any(rng) % 301) - 150;
    const int quantum = static_cast<int>(any(rng) % 301) - 150;
    for (RoundMode m : {RoundMode::half_even, RoundMode::half_away, RoundMode::up, RoundMode::down}) {
      BOOST_TEST_REQUIRE(round_quotient(q, quantum, m) == round_quotient_wide(q, quantum, m),
                         "num " << q.num << " den " << q.den << " exp " << q.exp2 << " quantum " << quantum);
    }
    if (q.num != 0) {
      const int e = floor_log2(q);
      const Rational v = to_rational(q);
      BOOST_TEST_REQUIRE((pow2(e) <= v && v < pow2(e + 1)));
    }
    ++checked;
  }
  BOOST_TEST(checked == 100000);
}

BOOST_AUTO_TEST_CASE(named_integer_roundings) {
  // Ties: even vs away from zero; non-ties agree.
  BOOST_TEST(round_half_even_to_int(Rational(5, 2)) == 2);
  BOOST_TEST(round_half_away_to_int(Rational(5, 2)) == 3);
  BOOST_TEST(round_half_even_to_int(Rational(-5, 2)) == -2);
  BOOST_TEST(round_half_away_to_int(Rational(-5, 2)) == -3);
  BOOST_TEST(round_half_even_to_int(Rational(7, 2)) == 4);
  BOOST_TEST(round_half_away_to_int(Rational(-7, 2)) == -4);
  BOOST_TEST(round_half_even_to_int(Rational(-1, 2)) == 0);
  BOOST_TEST(round_half_even_to_int(Rational(7, 3)) == 2);
  BOOST_TEST(round_half_away_to_int(Rational(-8, 3)) == -3);
  BOOST_TEST(round_half_even_to_int(Rational(-255, 2)) == -128);
  // compare on unreduced quotients with different exponents.
  BOOST_TEST(compare(Quotient{Integer(3), Integer(4), 1}, Quotient{Integer(3), Integer(2), 0}) == 0);
  BOOST_TEST(compare(Quotient{Integer(1), Integer(3), 0}, Quotient{Integer(1), Integer(1), -2}) > 0);
  BOOST_TEST(compare(Quotient{Integer(0), Integer(3), 40}, Quotient{Integer(1), Integer(1), -300}) < 0);
}
