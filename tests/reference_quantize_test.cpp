// Behaviour of reference::quantize / dequantize that the golden vectors do not pin down: tie
// rules per profile, error bounds, idempotence, signed zeros, zero blocks, partial and N-D
// blocks, ue8m0, caller-supplied scales, errors, and each documented burn-vs-exact difference.
// Expected values are worked out by hand or by the test's own exact arithmetic (doubles and
// Boost rationals built here), never taken from the engine.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "scheme/float_bits.hpp"
#include "tests/support/print_support.hpp"
#include "reference/reference.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"
#include "tests/support/sanitized.hpp"

using namespace qscheme;
namespace mp = boost::multiprecision;
using Q = mp::cpp_rational;

namespace {

Scheme scheme(const char* text) {
  auto s = parse_scheme(text);
  BOOST_TEST_REQUIRE(s.ok(), text << ": " << s.status().to_string());
  return *s;
}


// The exact value of a float (test-side, via frexp).
Q exact(double d) {
  if (d == 0) return Q(0);
  int e = 0;
  const double m = std::frexp(std::fabs(d), &e);
  const auto mant = static_cast<std::int64_t>(std::ldexp(m, 53));
  Q r{mp::cpp_int(mant)};
  if (e - 53 >= 0) r *= Q(mp::cpp_int(1) << (e - 53));
  else r /= Q(mp::cpp_int(1) << (53 - e));
  return d < 0 ? Q(-r) : r;
}

// The smallest float not below v > 0 (test-side search from a nearby float).
float ceil_f32(const Q& v) {
  float f = static_cast<float>(v.convert_to<double>());
  while (exact(f) < v) f = std::nextafter(f, INFINITY);
  while (f > 0 && exact(std::nextafter(f, 0.0f)) >= v) f = std::nextafter(f, 0.0f);
  return f;
}

QuantizeOptions opts(Profile p = Profile::exact, Calibration c = Calibration::minmax) {
  QuantizeOptions o;
  o.profile = p;
  o.calibration = c;
  return o;
}

QuantizeOptions given(std::vector<float> block, std::optional<float> global = std::nullopt,
                      Profile p = Profile::exact) {
  QuantizeOptions o = opts(p);
  o.scales = GivenScales{std::move(block), global};
  return o;
}

QuantizedTensor quantize_ok(const Scheme& s, std::vector<std::uint64_t> shape, const std::vector<float>& x,
                            const QuantizeOptions& o = {}) {
  auto q = reference::quantize(s, shape, x, o);
  BOOST_TEST_REQUIRE(q.ok(), q.status().to_string());
  return *q;
}

std::vector<float> dequantize_ok(const QuantizedTensor& q) {
  auto d = reference::dequantize(q);
  BOOST_TEST_REQUIRE(d.ok(), d.status().to_string());
  return *d;
}

float scale_f32(const QuantizedTensor& q, std::size_t j) {
  auto v = reference::scale_value(q.scheme.scale_dtype(), q.scale_bits.at(j));
  BOOST_TEST_REQUIRE(v.ok());
  return v->f32;
}

constexpr Value kIntegerKinds[] = {Value::q8f, Value::q8s, Value::q4f, Value::q4s, Value::q2f, Value::q2s};
constexpr Profile kProfiles[] = {Profile::exact, Profile::burn};

std::string text_of(Value v, const char* rest) { return std::string(to_string(v)) + rest; }

}  // namespace

BOOST_AUTO_TEST_SUITE(ties)

// Every exact tie k + 1/2 of every integer kind, at scales 1 and 1/2: exact goes to the even
// neighbour, burn away from zero; both clamp to [lo, hi].
BOOST_AUTO_TEST_CASE(every_integer_tie_goes_to_even_in_exact_and_away_in_burn) {
  int checked = 0;
  for (Value v : kIntegerKinds) {
    const int lo = info(v).lo;
    const int hi = info(v).hi;
    for (float scale : {1.0f, 0.5f}) {
      std::vector<float> x;
      std::vector<std::int32_t> even, away;
      for (int k = lo - 1; k <= hi; ++k) {
        x.push_back(static_cast<float>((k + 0.5) * scale));
        const int ev = (k % 2 == 0) ? k : k + 1;
        const int aw = k >= 0 ? k + 1 : k;
        even.push_back(std::clamp(ev, lo, hi));
        away.push_back(std::clamp(aw, lo, hi));
      }
      const Scheme s = scheme(std::string(to_string(v)).c_str());
      const auto qe = quantize_ok(s, {x.size()}, x, given({scale}));
      const auto qb = quantize_ok(s, {x.size()}, x, given({scale}, std::nullopt, Profile::burn));
      BOOST_TEST(qe.codes == even, boost::test_tools::per_element());
      BOOST_TEST(qb.codes == away, boost::test_tools::per_element());
      checked += static_cast<int>(x.size());
    }
  }
  BOOST_TEST_MESSAGE(checked << " ties checked per profile");
  // (hi - lo + 2) ties per kind and scale: q8f 257, q8s 256, q4f 17, q4s 16, q2f 5, q2s 4.
  BOOST_TEST(checked == 2 * (257 + 256 + 17 + 16 + 5 + 4));
}

// Calibrated: absmax 127 gives scale 1, so x = 0.5, 1.5, 2.5 are exact ties.
BOOST_AUTO_TEST_CASE(calibrated_ties_differ_between_profiles) {
  const std::vector<float> x{127, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f};
  const auto qe = quantize_ok(scheme("q8s"), {6}, x, opts(Profile::exact));
  const auto qb = quantize_ok(scheme("q8s"), {6}, x, opts(Profile::burn));
  BOOST_TEST(scale_f32(qe, 0) == 1.0f);
  BOOST_TEST(scale_f32(qb, 0) == 1.0f);
  BOOST_TEST(qe.codes == (std::vector<std::int32_t>{127, 0, 2, 2, 0, -2}), boost::test_tools::per_element());
  BOOST_TEST(qb.codes == (std::vector<std::int32_t>{127, 1, 2, 3, -1, -3}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(properties)

const char* const kSchemeTails[] = {"", ":block[16]=f16", ":block[4]=bf16", ":block[4,4]=ue8m0",
                                    ":block[8]=ue4m3:tensor=f32", ":block[2,8]=f16:tensor=f32",
                                    ":tensor=ue4m3"};

std::vector<float> random_tensor(std::mt19937& rng, std::size_t n) {
  std::uniform_real_distribution<float> mag(-4.0f, 4.0f);
  std::uniform_int_distribution<int> scale_exp(-6, 6);
  std::vector<float> x(n);
  for (float& v : x) v = std::ldexp(mag(rng), scale_exp(rng));
  return x;
}

// Three random [8, 16] tensors for each kind of `kinds` under each scheme tail, quantized and
// dequantized by the exact profile: calls f(scheme text, x, q, dequantized).
template <typename Kinds, typename F>
void for_each_sample(const Kinds& kinds, std::uint32_t seed, F f) {
  std::mt19937 rng(seed);
  for (Value v : kinds) {
    for (const char* tail : kSchemeTails) {
      const std::string text = text_of(v, tail);
      const Scheme s = scheme(text.c_str());
      for (int trial = 0; trial < 3; ++trial) {
        const std::vector<float> x = random_tensor(rng, 128);
        const auto q = quantize_ok(s, {8, 16}, x);
        f(text, x, q, dequantize_ok(q));
      }
    }
  }
}

// The effective scale of element (r, c) of an [8, 16] tensor, from the stored patterns.
Q effective(const QuantizedTensor& q, std::size_t r, std::size_t c) {
  std::size_t j = 0;
  if (q.scheme.block) {
    const auto ext = q.scheme.block->size.extents();
    const std::size_t br = ext.size() == 2 ? ext[0] : 1;
    const std::size_t bc = ext.back();
    j = (r / br) * ((16 + bc - 1) / bc) + c / bc;
  }
  Q e = reference::scale_value(q.scheme.scale_dtype(), q.scale_bits.at(j))->exact;
  if (q.global_bits) e *= exact(qscheme::f32_from_bits(*q.global_bits));
  return e;
}

// Integer kinds, exact profile: wherever x/e lies in [lo, hi], |x - code * e| <= e / 2, and the
// dequantized f32 is within f32 rounding of code * e.
BOOST_AUTO_TEST_CASE(integer_error_is_at_most_half_a_scale_inside_the_range) {
  int checked = 0;
  for_each_sample(kIntegerKinds, 7, [&](const std::string& text, const auto& x, const auto& q, const auto& d) {
    const Value v = q.scheme.value;
    for (std::size_t n = 0; n < x.size(); ++n) {
      const Q e = effective(q, n / 16, n % 16);
      BOOST_TEST_REQUIRE(e > 0);
      const Q t = exact(x[n]) / e;
      const Q approx = Q(q.codes[n]) * e;
      if (t >= info(v).lo && t <= info(v).hi) {
        BOOST_TEST_REQUIRE(mp::abs(exact(x[n]) - approx) <= e / 2, text << " element " << n);
        ++checked;
      }
      BOOST_TEST_REQUIRE(mp::abs(exact(d[n]) - approx) <= mp::abs(approx) / (1 << 24));
    }
  });
  BOOST_TEST_MESSAGE(checked << " in-range elements checked");
  BOOST_TEST(checked > 10000);
}

// Exact profile, every kind: quantizing the dequantized tensor against the stored scales (as
// caller-supplied scales) gives the same codes and scales back.
BOOST_AUTO_TEST_CASE(requantizing_the_dequantized_tensor_is_idempotent) {
  int checked = 0;
  for_each_sample(kBurnValues, 11, [&](const std::string& text, const auto&, const auto& q, const auto& d) {
    std::vector<float> scales;
    for (std::size_t j = 0; j < q.scale_bits.size(); ++j) scales.push_back(scale_f32(q, j));
    std::optional<float> g;
    if (q.global_bits) g = qscheme::f32_from_bits(*q.global_bits);
    const auto again = quantize_ok(q.scheme, {8, 16}, d, given(scales, g));
    BOOST_TEST_REQUIRE(again.codes == q.codes, text);
    BOOST_TEST_REQUIRE(again.scale_bits == q.scale_bits);
    BOOST_TEST_REQUIRE((again.global_bits == q.global_bits));
    ++checked;
  });
  BOOST_TEST(checked == 9 * 7 * 3);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(zeros)

BOOST_AUTO_TEST_CASE(the_sign_of_zero_is_kept) {
  const std::vector<float> x{-0.0f, 0.0f, -1e-30f, 1e-30f};
  for (Profile p : kProfiles) {
    const auto e4 = quantize_ok(scheme("e4m3"), {4}, x, given({1.0f}, std::nullopt, p));
    BOOST_TEST(e4.codes == (std::vector<std::int32_t>{0x80, 0, 0x80, 0}), boost::test_tools::per_element());
    const auto d = dequantize_ok(e4);
    BOOST_TEST(qscheme::f32_bits(d[0]) == 0x80000000u);
    BOOST_TEST(qscheme::f32_bits(d[1]) == 0u);
    BOOST_TEST(qscheme::f32_bits(d[2]) == 0x80000000u);
    const auto e2 = quantize_ok(scheme("e2m1:packed-u32(0)"), {4}, x, given({1.0f}, std::nullopt, p));
    BOOST_TEST(e2.codes == (std::vector<std::int32_t>{8, 0, 8, 0}), boost::test_tools::per_element());
    const auto e5 = quantize_ok(scheme("e5m2"), {4}, x, given({1.0f}, std::nullopt, p));
    BOOST_TEST(e5.codes == (std::vector<std::int32_t>{0x80, 0, 0x80, 0}), boost::test_tools::per_element());
    const auto i8 = quantize_ok(scheme("q8s"), {4}, x, given({1.0f}, std::nullopt, p));
    BOOST_TEST(i8.codes == (std::vector<std::int32_t>{0, 0, 0, 0}), boost::test_tools::per_element());
    for (float y : dequantize_ok(i8)) BOOST_TEST(qscheme::f32_bits(y) == 0u);  // integer 0 has no sign
  }
}

// An all-zero block stores scale 0 (ue8m0: its smallest value 2^-127, pattern 0x00), its codes
// are zeros of x's sign, and it dequantizes to zeros, next to a normal block.
BOOST_AUTO_TEST_CASE(all_zero_blocks) {
  const std::vector<float> x{0, -0.0f, 0, 0, 1, 2, 3, 4};
  for (Profile p : kProfiles) {
    for (const char* text : {"q8s:block[4]=f32", "q8s:block[4]=f16", "q8s:block[4]=bf16", "q8s:block[4]=ue4m3",
                             "q8s:block[4]=ue8m0", "e4m3:block[4]=f16", "q4f:block[4]=bf16"}) {
      const auto q = quantize_ok(scheme(text), {8}, x, opts(p));
      BOOST_TEST(q.scale_bits.at(0) == 0u, text);
      BOOST_TEST(q.scale_bits.at(1) != 0u, text);
      const bool fl = info(q.scheme.value).is_float;
      BOOST_TEST(q.codes[0] == 0);
      BOOST_TEST(q.codes[1] == (fl ? 0x80 : 0));
      BOOST_TEST(q.codes[2] == 0);
      const auto d = dequantize_ok(q);
      BOOST_TEST(qscheme::f32_bits(d[0]) == 0u);
      BOOST_TEST(qscheme::f32_bits(d[1]) == (fl ? 0x80000000u : 0u));
      BOOST_TEST(d[7] > 3.5f);
    }
  }
}

// Two levels, all zero: the global is f32 MIN_POSITIVE (2^-126), every block scale 0.
BOOST_AUTO_TEST_CASE(two_level_all_zero) {
  for (Profile p : kProfiles) {
    for (const char* text : {"q8s:block[4]=ue4m3:tensor=f32", "e2m1:packed-u32(0):block[4]=f16:tensor=f32"}) {
      const auto q = quantize_ok(scheme(text), {8}, std::vector<float>(8, 0.0f), opts(p));
      BOOST_TEST_REQUIRE(q.global_bits.has_value());
      BOOST_TEST(*q.global_bits == 0x00800000u);
      BOOST_TEST(q.scale_bits == (std::vector<std::uint32_t>{0, 0}), boost::test_tools::per_element());
      BOOST_TEST(q.codes == std::vector<std::int32_t>(8, 0), boost::test_tools::per_element());
      for (float y : dequantize_ok(q)) BOOST_TEST(qscheme::f32_bits(y) == 0u);
    }
  }
}

// Burn's block_tensor_symmetric_int8: after normalisation the largest block scale is the block
// dtype's maximum (448 for ue4m3; 65504 for f16), in both profiles, and block * global stays
// within a rounding step of each block's ideal scale.
BOOST_AUTO_TEST_CASE(two_level_largest_block_scale_is_the_dtype_maximum) {
  const std::vector<float> x{-1.8f, -1.0f, 0.0f, 0.5f, -0.5f, 1.8f, 0.2f, 0.3f,
                             0.01f, 0.02f, 0.03f, 0.04f, -0.01f, -0.02f, -0.03f, -0.04f};
  for (Profile p : kProfiles) {
    const auto u = quantize_ok(scheme("q8s:block[4]=ue4m3:tensor=f32"), {16}, x, opts(p));
    BOOST_TEST(u.scale_bits[0] == 0x7Eu);
    BOOST_TEST(u.scale_bits[1] == 0x7Eu);
    const auto h = quantize_ok(scheme("q8s:block[4]=f16:tensor=f32"), {16}, x, opts(p));
    BOOST_TEST(h.scale_bits[0] == 0x7BFFu);
    // Block 2: alpha 0.04, ideal 0.04 / 127; the f16 grid is fine enough for 1e-3 relative error.
    const double eff = reference::scale_value(ScaleDtype::f16, h.scale_bits[2])->f32 *
                       static_cast<double>(qscheme::f32_from_bits(*h.global_bits));
    BOOST_TEST(std::fabs(eff / (0.04 / 127) - 1) < 1e-3);
    BOOST_TEST(h.codes[11] == 127);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(blocks)

// A [3, 5] tensor in [2, 2] blocks: a 2 x 3 grid whose last row and column are partial; each
// block's scale comes from its own elements only.
BOOST_AUTO_TEST_CASE(partial_nd_blocks_take_their_own_scale) {
  std::vector<float> x(15);
  for (std::size_t n = 0; n < 15; ++n) x[n] = static_cast<float>(n + 1) * (n % 2 ? -1.0f : 1.0f);
  const auto q = quantize_ok(scheme("q8s:block[2,2]=f32"), {3, 5}, x);
  BOOST_TEST_REQUIRE(q.scale_bits.size() == 6u);
  for (std::size_t br = 0; br < 2; ++br) {
    for (std::size_t bc = 0; bc < 3; ++bc) {
      double alpha = 0;
      for (std::size_t r = 2 * br; r < std::min<std::size_t>(3, 2 * br + 2); ++r)
        for (std::size_t c = 2 * bc; c < std::min<std::size_t>(5, 2 * bc + 2); ++c)
          alpha = std::max(alpha, std::fabs(static_cast<double>(x[r * 5 + c])));
      // q8s: s* = 2 alpha / 254, stored as the smallest f32 not below it.
      BOOST_TEST(scale_f32(q, br * 3 + bc) == ceil_f32(exact(alpha) / 127), "block " << br << "," << bc);
    }
  }
  // Element (2, 4) = 15 is alone in the last block: it maps to 127.
  BOOST_TEST(q.codes[14] == 127);
}

// absmean over a partial block divides by the block's actual element count.
BOOST_AUTO_TEST_CASE(absmean_partial_block_uses_its_own_count) {
  const std::vector<float> x{0.5f, -0.25f, 0.3f};
  const auto q = quantize_ok(scheme("q2s:block[2]=f32"), {3}, x, opts(Profile::exact, Calibration::absmean));
  // q2s: s* = 2 alpha / 2 = alpha.
  BOOST_TEST(scale_f32(q, 0) == ceil_f32((exact(0.5f) + exact(0.25f)) / 2));
  BOOST_TEST(scale_f32(q, 1) == ceil_f32(exact(0.3f)));
  // Burn's published absmean example: [-0.9, -0.3, 0, 0.6] has alpha 0.45.
  const std::vector<float> y{-0.9f, -0.3f, 0.0f, 0.6f};
  const auto e = quantize_ok(scheme("q2s"), {4}, y, opts(Profile::exact, Calibration::absmean));
  BOOST_TEST(scale_f32(e, 0) == ceil_f32((exact(0.9f) + exact(0.3f) + exact(0.6f)) / 4));
  BOOST_TEST(e.codes == (std::vector<std::int32_t>{-1, -1, 0, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(empty_and_rank_zero_tensors) {
  const auto empty = quantize_ok(scheme("q8s"), {0}, {});
  BOOST_TEST(empty.codes.empty());
  BOOST_TEST(empty.scale_bits == (std::vector<std::uint32_t>{0}), boost::test_tools::per_element());
  BOOST_TEST(dequantize_ok(empty).empty());
  const auto empty_blocks = quantize_ok(scheme("q8s:block[2]=f16"), {0, 4}, {});
  BOOST_TEST(empty_blocks.scale_bits.empty());
  const auto scalar = quantize_ok(scheme("q8s"), {}, {2.0f});
  BOOST_TEST(scalar.codes == (std::vector<std::int32_t>{127}), boost::test_tools::per_element());
  // The scale is rounded up, so 127 * s is a little above 2 (127 * s is exact in a double).
  BOOST_TEST(dequantize_ok(scalar).at(0) == static_cast<float>(127.0 * ceil_f32(Q(2, 127))));
  BOOST_TEST(dequantize_ok(scalar).at(0) > 2.0f);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(ue8m0)

BOOST_AUTO_TEST_CASE(ue8m0_scales_are_powers_of_two_rounded_up) {
  for (Profile p : kProfiles) {
    // s* = 2 / 254 = 1/127 lies in (2^-7, 2^-6]: stored 2^-6, pattern 127 - 6 = 121.
    const auto q = quantize_ok(scheme("q8s:block[4]=ue8m0"), {4}, {1.0f, 0.5f, -0.25f, 0.125f}, opts(p));
    BOOST_TEST(q.scale_bits == (std::vector<std::uint32_t>{121}), boost::test_tools::per_element());
    BOOST_TEST(q.codes == (std::vector<std::int32_t>{64, 32, -16, 8}), boost::test_tools::per_element());
    const auto d = dequantize_ok(q);
    BOOST_TEST(d == (std::vector<float>{1.0f, 0.5f, -0.25f, 0.125f}), boost::test_tools::per_element());
    // Given scales: 1.5 -> 2 (128), 0 -> 2^-127 (0), 3e38 -> saturates at 2^127 (254), 2^-130 -> 2^-127.
    const auto g = quantize_ok(scheme("q8s:block[1]=ue8m0"), {4}, {0.0f, 0.0f, 0.0f, 0.0f},
                               given({1.5f, 0.0f, 3e38f, std::ldexp(1.0f, -130)}, std::nullopt, p));
    BOOST_TEST(g.scale_bits == (std::vector<std::uint32_t>{128, 0, 254, 0}), boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(caller_supplied_scale_errors) {
  const Scheme one = scheme("q8s:block[2]=f16");
  const Scheme two = scheme("q8s:block[2]=ue4m3:tensor=f32");
  const std::vector<float> x{1, 2, 3, 4};
  for (Profile p : kProfiles) {
    const auto code = [&](const Scheme& s, const QuantizeOptions& o) {
      return reference::quantize(s, std::vector<std::uint64_t>{4}, x, o).status();
    };
    BOOST_TEST(code(one, given({1}, std::nullopt, p)).code() == ErrorCode::size_mismatch);
    BOOST_TEST(code(one, given({1, 1, 1}, std::nullopt, p)).code() == ErrorCode::size_mismatch);
    BOOST_TEST(code(one, given({1, 1}, 1.0f, p)).code() == ErrorCode::size_mismatch);
    BOOST_TEST(code(two, given({1, 1}, std::nullopt, p)).code() == ErrorCode::size_mismatch);
    const Status nan = code(one, given({1, std::nanf("")}, std::nullopt, p));
    BOOST_TEST(nan.code() == ErrorCode::invalid_scale);
    BOOST_TEST(nan.index() == 1u);
    BOOST_TEST(code(one, given({-1, 1}, std::nullopt, p)).index() == 0u);
    BOOST_TEST(code(one, given({-1, 1}, std::nullopt, p)).code() == ErrorCode::invalid_scale);
    BOOST_TEST(code(one, given({INFINITY, 1}, std::nullopt, p)).code() == ErrorCode::invalid_scale);
    const Status global = code(two, given({1, 1}, -2.0f, p));
    BOOST_TEST(global.code() == ErrorCode::invalid_scale);
    BOOST_TEST(global.message().find("global") != std::string::npos);
    // -0 is >= 0: accepted, stored as +0.
    const auto neg_zero = reference::quantize(one, std::vector<std::uint64_t>{4}, std::vector<float>{0, 0, 1, 2},
                                              given({-0.0f, 1}, std::nullopt, p));
    BOOST_TEST_REQUIRE(neg_zero.ok());
    BOOST_TEST(neg_zero->scale_bits[0] == 0u);
  }
  // Exact: a zero effective scale over a non-zero value has no quotient; index = the block.
  const Status zero = reference::quantize(one, std::vector<std::uint64_t>{4}, x, given({1, 0})).status();
  BOOST_TEST(zero.code() == ErrorCode::zero_scale_nonzero_input);
  BOOST_TEST(zero.index() == 1u);
  const Status zero_global = reference::quantize(two, std::vector<std::uint64_t>{4}, x, given({1, 1}, 0.0f)).status();
  BOOST_TEST(zero_global.code() == ErrorCode::zero_scale_nonzero_input);
  BOOST_TEST(zero_global.index() == 0u);
  // ... but is fine over an all-zero block.
  const auto fine = quantize_ok(one, {4}, {0, -0.0f, 3, 4}, given({0, 1}));
  BOOST_TEST(fine.codes[0] == 0);
}

// A given global amax fixes the global; each block still follows its own max |x| under it. With
// amax = 127 * 448 / 16, g = 2 amax / (254 * 448) = 1/16 exactly. Block 0 (max 4): 4 / (127 / 16)
// = 0.5039 rounds up to the ue4m3 0.5625 (0x31), e = 0.03515625, codes 1, 2, 3, 4 divided by it:
// 28.44, 56.89, 85.33, 113.78. Block 1 (max 16000, above the amax): 2015.7 saturates at 448
// (0x7E), e = 28, and its codes clamp at +-127.
BOOST_AUTO_TEST_CASE(a_given_global_amax_fixes_the_global_and_blocks_above_it_saturate) {
  QuantizeOptions o;
  o.global_amax = 127.0f * 448.0f / 16.0f;
  const auto q = quantize_ok(scheme("q8s:block[4]=ue4m3:tensor=f32"), {8}, {1, 2, 3, 4, 8000, 0, -0.0f, -16000}, o);
  BOOST_TEST_REQUIRE(q.global_bits.has_value());
  BOOST_TEST(*q.global_bits == 0x3D800000u);
  BOOST_TEST(q.scale_bits == (std::vector<std::uint32_t>{0x31, 0x7E}), boost::test_tools::per_element());
  BOOST_TEST(q.codes == (std::vector<std::int32_t>{28, 57, 85, 114, 127, 0, 0, -127}), boost::test_tools::per_element());
  // Calibrated, the global follows the data instead (16000 / (127 * 448) rounded up to an f32).
  const auto c = quantize_ok(scheme("q8s:block[4]=ue4m3:tensor=f32"), {8}, {1, 2, 3, 4, 8000, 0, -0.0f, -16000});
  BOOST_TEST(*c.global_bits != 0x3D800000u);
}

// nvidia-nvfp4 under a known amax A = 2688: S = f32(f32(448 * 6) / A) = 1, g = f32(1 / S) = 1,
// v_j = f32(a_j * f32(1 / 6)). Block 0 (max 12): v = 2 (f32(1/6) * 12 = 2 + 6e-8 rounds to 2),
// ue4m3 0x40, r = 0.5: 12, -3, 1 give t = 6, -1.5, 0.5, codes 0x7, 0xB, 0x1. Block 1 (max 6000):
// v = 1000 saturates at 448 (0x7E), r = f32(1 / 448): 6000 gives t = 13.4, clamped to 6 (0x7);
// 100 gives t = 0.223, below 0.25: +0.
BOOST_AUTO_TEST_CASE(nvidia_nvfp4_takes_a_known_amax_in_place_of_the_tensors) {
  const Recipe* r = *find_recipe("nvidia-nvfp4");
  QuantizeOptions o = recipe_options(*r, {});
  o.global_amax = 2688.0f;
  std::vector<float> x(32, 0.0f);
  x[0] = 12;
  x[1] = -3;
  x[2] = 1;
  x[16] = 6000;
  x[17] = 100;
  const auto q = quantize_ok(scheme("nvfp4"), {32}, x, o);
  BOOST_TEST(*q.global_bits == 0x3F800000u);
  BOOST_TEST(q.scale_bits == (std::vector<std::uint32_t>{0x40, 0x7E}), boost::test_tools::per_element());
  std::vector<std::int32_t> want(32, 0);
  want[0] = 0x7;
  want[1] = 0xB;
  want[2] = 0x1;
  want[16] = 0x7;
  BOOST_TEST(q.codes == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_global_amax_where_it_does_not_apply_is_a_typed_error) {
  const Scheme one = scheme("q8s:block[2]=f16");
  const Scheme two = scheme("q8s:block[2]=ue4m3:tensor=f32");
  const std::vector<float> x{1, 2, 3, 4};
  const auto status = [&](const Scheme& s, QuantizeOptions o, float amax) {
    o.global_amax = amax;
    return reference::quantize(s, std::vector<std::uint64_t>{4}, x, o).status();
  };
  BOOST_TEST(status(one, {}, 4.0f).code() == ErrorCode::invalid_argument);
  BOOST_TEST(status(two, given({1, 1}, 1.0f), 4.0f).code() == ErrorCode::invalid_argument);
  BOOST_TEST(status(two, opts(Profile::burn), 4.0f).code() == ErrorCode::unsupported_profile);
  BOOST_TEST(status(two, opts(Profile::exact, Calibration::absmean), 4.0f).code() == ErrorCode::unsupported_profile);
  for (float bad : {-1.0f, std::nanf(""), INFINITY, -INFINITY}) {
    const Status st = status(two, {}, bad);
    BOOST_TEST(st.code() == ErrorCode::invalid_scale);
    BOOST_TEST(st.message().find("global amax") != std::string::npos);
  }
  // -0 is a max |x| of 0: the global is the least normal f32, every block saturates at 448.
  QuantizeOptions z;
  z.global_amax = -0.0f;
  const auto q = quantize_ok(two, {4}, x, z);
  BOOST_TEST(*q.global_bits == 0x00800000u);
  BOOST_TEST(q.scale_bits == (std::vector<std::uint32_t>{0x7E, 0x7E}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(given_scales_are_rounded_up_to_their_dtype) {
  // f16: 0.1 is not an f16; the next f16 above is 0x2E67 (0.1000366); ue4m3: 500 saturates to
  // 448 (0x7E); 7.7e-4 rounds up to the smallest subnormal 2^-9 (0x01); bf16: 0.3 -> 0x3E9A.
  const auto f16 = quantize_ok(scheme("q8s:block[1]=f16"), {1}, {0}, given({0.1f}));
  BOOST_TEST(f16.scale_bits[0] == 0x2E67u);
  const auto ue4m3 = quantize_ok(scheme("q8s:block[1]=ue4m3"), {2}, {0, 0}, given({500.0f, 7.7e-4f}));
  BOOST_TEST(ue4m3.scale_bits == (std::vector<std::uint32_t>{0x7E, 0x01}), boost::test_tools::per_element());
  const auto bf16 = quantize_ok(scheme("q8s:tensor=bf16"), {1}, {0}, given({0.3f}));
  BOOST_TEST(bf16.scale_bits[0] == 0x3E9Au);
  // f16 saturates at 65504 (0x7BFF).
  const auto sat = quantize_ok(scheme("q8s:tensor=f16"), {1}, {0}, given({1e6f}));
  BOOST_TEST(sat.scale_bits[0] == 0x7BFFu);
}

BOOST_AUTO_TEST_CASE(non_finite_input_reports_the_first_bad_element) {
  for (Profile p : kProfiles) {
    const auto r = reference::quantize(scheme("q8s"), std::vector<std::uint64_t>{4},
                                       std::vector<float>{1, 2, std::nanf(""), INFINITY}, opts(p));
    BOOST_TEST(r.status().code() == ErrorCode::non_finite_input);
    BOOST_TEST(r.status().index() == 2u);
    const auto r2 = reference::quantize(scheme("e4m3:block[2]=f16"), std::vector<std::uint64_t>{4},
                                        std::vector<float>{1, -INFINITY, std::nanf(""), 0}, opts(p));
    BOOST_TEST(r2.status().index() == 1u);
  }
}

BOOST_AUTO_TEST_CASE(shape_and_validation_errors_come_first) {
  BOOST_TEST(reference::quantize(scheme("q8s"), std::vector<std::uint64_t>{4}, std::vector<float>{1, 2, 3})
                 .status().code() == ErrorCode::size_mismatch);
  // A scheme validate() rejects is reported before the size mismatch and the NaN.
  Scheme lookup = scheme("q8s:packed-u32(0)");
  lookup.mode = Mode::lookup;
  BOOST_TEST(reference::quantize(lookup, std::vector<std::uint64_t>{4}, std::vector<float>{NAN})
                 .status().code() == ErrorCode::lookup_table_missing);
  BOOST_TEST(reference::quantize(scheme("q8s:block[2,2]=f32"), std::vector<std::uint64_t>{4}, std::vector<float>{1, 2, 3, 4})
                 .status().code() == ErrorCode::block_rank_exceeds_tensor);
}

BOOST_AUTO_TEST_CASE(dequantize_rejects_what_quantize_cannot_produce) {
  QuantizedTensor q = quantize_ok(scheme("q8s"), {2}, {1, -1});
  q.codes[1] = -128;
  BOOST_TEST(reference::dequantize(q).status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(reference::dequantize(q).status().index() == 1u);
  q.codes[1] = -127;
  q.scale_bits[0] = 0x7FC00000u;  // NaN
  BOOST_TEST(reference::dequantize(q).status().code() == ErrorCode::corrupt_bytes);
  q.scale_bits[0] = 0xBF800000u;  // -1
  BOOST_TEST(reference::dequantize(q).status().code() == ErrorCode::corrupt_bytes);
  q.scale_bits = {};
  BOOST_TEST(reference::dequantize(q).status().code() == ErrorCode::size_mismatch);
  q.scale_bits = {0x3F800000u};
  q.codes.push_back(0);
  BOOST_TEST(reference::dequantize(q).status().code() == ErrorCode::size_mismatch);
  q.codes.pop_back();
  q.global_bits = 0x3F800000u;
  BOOST_TEST(reference::dequantize(q).status().code() == ErrorCode::size_mismatch);

  QuantizedTensor e = quantize_ok(scheme("e4m3"), {2}, {1, -1});
  e.codes[0] = 0x7F;
  BOOST_TEST(reference::dequantize(e).status().code() == ErrorCode::corrupt_bytes);
  e.codes[0] = 0xFF;
  BOOST_TEST(reference::dequantize(e).status().code() == ErrorCode::corrupt_bytes);
  QuantizedTensor t = quantize_ok(scheme("q8s:block[2]=ue4m3:tensor=f32"), {2}, {1, -1});
  t.scale_bits[0] = 0x80;  // ue4m3 has no sign
  BOOST_TEST(reference::dequantize(t).status().code() == ErrorCode::corrupt_bytes);
  t.scale_bits[0] = 0x38;
  t.global_bits = 0x7F800000u;  // inf
  BOOST_TEST(reference::dequantize(t).status().code() == ErrorCode::corrupt_bytes);
}

// value * scale past f32 max dequantizes to +-inf, as IEEE f32 arithmetic does.
BOOST_AUTO_TEST_CASE(dequantize_overflow_is_ieee_infinity) {
  for (Profile p : kProfiles) {
    QuantizedTensor q;
    q.scheme = scheme("e4m3");
    q.profile = p;
    q.shape = {2};
    q.codes = {0x7E, 0xFE};
    q.scale_bits = {0x7F7FFFFFu};
    const auto d = dequantize_ok(q);
    BOOST_TEST(qscheme::f32_bits(d[0]) == 0x7F800000u);
    BOOST_TEST(qscheme::f32_bits(d[1]) == 0xFF800000u);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(burn_versus_exact)

// Burn's valid_scale: a zero scale divides as f32 0.1 (stored 0), at quantize and dequantize.
// 1 / f32(0.1) = 9.99999985... -> f32 10 -> code 10; 10 * f32(0.1) -> f32 1.
BOOST_AUTO_TEST_CASE(zero_scale_is_point_one_in_burn_and_an_error_in_exact) {
  const auto b = quantize_ok(scheme("q8s"), {2}, {1.0f, 0.0f}, given({0.0f}, std::nullopt, Profile::burn));
  BOOST_TEST(b.scale_bits[0] == 0u);
  BOOST_TEST(b.codes == (std::vector<std::int32_t>{10, 0}), boost::test_tools::per_element());
  BOOST_TEST(dequantize_ok(b) == (std::vector<float>{1.0f, 0.0f}), boost::test_tools::per_element());
  BOOST_TEST(reference::quantize(scheme("q8s"), std::vector<std::uint64_t>{2}, std::vector<float>{1.0f, 0.0f}, given({0.0f}))
                 .status().code() == ErrorCode::zero_scale_nonzero_input);
  QuantizedTensor e = b;
  e.profile = Profile::exact;
  BOOST_TEST(qscheme::f32_bits(dequantize_ok(e)[0]) == 0u);  // exact: 10 * 0
}

// f32(x / e) can turn a non-tie into a tie: 0.25 / f32(0.1) = 2.4999999627... (exact: 2), which
// f32 rounds to 2.5, and Burn then rounds away to 3.
BOOST_AUTO_TEST_CASE(f32_division_rounds_before_the_integer_rounding_in_burn) {
  const auto e = quantize_ok(scheme("q8s"), {1}, {0.25f}, given({0.1f}));
  const auto b = quantize_ok(scheme("q8s"), {1}, {0.25f}, given({0.1f}, std::nullopt, Profile::burn));
  BOOST_TEST(e.codes[0] == 2);
  BOOST_TEST(b.codes[0] == 3);
}

// The calibrated f32 scale: exact stores the smallest f32 not below 1/127, Burn the nearest f32
// to 2/254, which is one ulp below.
BOOST_AUTO_TEST_CASE(calibrated_scale_is_rounded_up_in_exact_and_to_nearest_in_burn) {
  const auto e = quantize_ok(scheme("q8s"), {1}, {1.0f}, opts(Profile::exact));
  const auto b = quantize_ok(scheme("q8s"), {1}, {1.0f}, opts(Profile::burn));
  const float up = ceil_f32(Q(1, 127));
  BOOST_TEST(exact(up) > Q(1, 127));
  BOOST_TEST(e.scale_bits[0] == qscheme::f32_bits(up));
  BOOST_TEST(b.scale_bits[0] == qscheme::f32_bits(up) - 1);
  BOOST_TEST(e.codes[0] == 127);
  BOOST_TEST(b.codes[0] == 127);
}

BOOST_AUTO_TEST_CASE(burn_overflow_and_two_level_absmean_are_unsupported) {
  const std::vector<float> big{3e38f, 1.0f};
  BOOST_TEST(reference::quantize(scheme("q8s"), std::vector<std::uint64_t>{2}, big, opts(Profile::burn)).status().code() ==
             ErrorCode::unsupported_profile);
  const auto e = quantize_ok(scheme("q8s"), {2}, big, opts(Profile::exact));
  BOOST_TEST(e.codes == (std::vector<std::int32_t>{127, 0}), boost::test_tools::per_element());
  const Scheme two = scheme("q8s:block[2]=ue4m3:tensor=f32");
  const std::vector<float> x{1, 2, 3, 4};
  BOOST_TEST(reference::quantize(two, std::vector<std::uint64_t>{4}, x, opts(Profile::burn, Calibration::absmean))
                 .status().code() == ErrorCode::unsupported_profile);
  const auto ok = quantize_ok(two, {4}, x, opts(Profile::exact, Calibration::absmean));
  // alpha = [1.5, 3.5]; s* = alpha / 127; g = ceil_f32(s*_max / 448).
  BOOST_TEST(*ok.global_bits == qscheme::f32_bits(ceil_f32(Q(7, 2) / 127 / 448)));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// The extension kinds (docs/SEMANTICS.md section 13), worked by hand.

BOOST_AUTO_TEST_SUITE(extension_kinds)

// u8 with a given scale 1/2: t = 2x; negatives clamp to 0, ties go to even, past 255 saturates.
BOOST_AUTO_TEST_CASE(u8_codes_clamp_to_zero_and_255) {
  const std::vector<float> x{-1.0f, -0.0f, 0.25f, 0.75f, 127.5f, 200.0f, 1.25f};
  for (Profile p : {Profile::exact, Profile::onnx}) {
    const auto q = quantize_ok(scheme("u8"), {7}, x, given({0.5f}, std::nullopt, p));
    BOOST_TEST(q.codes == (std::vector<std::int32_t>{0, 0, 0, 2, 255, 255, 2}), boost::test_tools::per_element());
    const auto d = dequantize_ok(q);
    BOOST_TEST(d == (std::vector<float>{0, 0, 0, 1.0f, 127.5f, 127.5f, 1.0f}), boost::test_tools::per_element());
  }
}

// i16 with a given scale 2^-10: the full [-32768, 32767] range, both ends saturating.
BOOST_AUTO_TEST_CASE(i16_uses_its_whole_range) {
  const std::vector<float> x{-40.0f, 32767.0f / 1024, 32.0f, -32769.0f / 1024, -32.0f, 0.00048828125f};
  const auto q = quantize_ok(scheme("i16"), {6}, x, given({1.0f / 1024}));
  BOOST_TEST(q.codes == (std::vector<std::int32_t>{-32768, 32767, 32767, -32768, -32768, 0}),
             boost::test_tools::per_element());
  // Calibrated: max |x| = 1 gives u = 1 / 32767.5 (M = (b - a) / 2), rounded up to f32.
  const auto c = quantize_ok(scheme("i16"), {3}, {-1.0f, 0.5f, 1.0f});
  const Q u = Q(1) / Q(Q(65535) / 2);
  BOOST_TEST(scale_f32(c, 0) == ceil_f32(u));
  const Q e = exact(scale_f32(c, 0));
  for (std::size_t n = 0; n < 3; ++n) {
    const Q t = exact(std::vector<float>{-1.0f, 0.5f, 1.0f}[n]) / e;
    BOOST_TEST(mp::abs(Q(c.codes[n]) - t) <= Q(1, 2));
  }
}

// u16 and u4 at their largest codes, u2 in its range.
BOOST_AUTO_TEST_CASE(u16_u4_u2_ranges) {
  const auto a = quantize_ok(scheme("u16"), {3}, {70000.0f, 65535.0f, 1.5f}, given({1.0f}));
  BOOST_TEST(a.codes == (std::vector<std::int32_t>{65535, 65535, 2}), boost::test_tools::per_element());
  const auto b = quantize_ok(scheme("u4:packed-u32(0)"), {3}, {16.0f, 14.5f, -3.0f}, given({1.0f}));
  BOOST_TEST(b.codes == (std::vector<std::int32_t>{15, 14, 0}), boost::test_tools::per_element());
  const auto c = quantize_ok(scheme("u2"), {3}, {2.5f, 3.5f, 0.5f}, given({1.0f}));
  BOOST_TEST(c.codes == (std::vector<std::int32_t>{2, 3, 0}), boost::test_tools::per_element());
}

// An unsigned kind has no symmetric calibration: a typed error that says to give the scales.
BOOST_AUTO_TEST_CASE(unsigned_kinds_take_given_scales_only) {
  for (const char* text : {"u8", "u4:block[4]=f16", "u16"}) {
    for (Profile p : {Profile::exact, Profile::burn}) {
      auto q = reference::quantize(scheme(text), std::vector<std::uint64_t>{4}, std::vector<float>{1, 2, 3, 4}, opts(p));
      BOOST_TEST_REQUIRE(!q.ok(), text);
      BOOST_TEST((q.status().code() == ErrorCode::unsupported_profile), text);
      BOOST_TEST(q.status().message().find("give the scales") != std::string::npos, q.status().message());
    }
  }
}

// Burn's bytes for the extension kinds: 16-bit codes little-endian in two bytes, unsigned codes
// as themselves; a native u4 byte past 15 is corrupt.
BOOST_AUTO_TEST_CASE(extension_bytes) {
  auto q = quantize_ok(scheme("i16"), {2}, {-40.0f, 1.0f}, given({1.0f / 1024}));
  auto bytes = reference::encode(q);
  BOOST_TEST_REQUIRE(bytes.ok());
  BOOST_TEST(*bytes == (std::vector<std::uint8_t>{0x00, 0x80, 0x00, 0x04, 0x00, 0x00, 0x80, 0x3A}),
             boost::test_tools::per_element());
  q = quantize_ok(scheme("u16:packed-u32(0)"), {3}, {65535.0f, 1.0f, 2.0f}, given({1.0f}));
  bytes = reference::encode(q);
  BOOST_TEST_REQUIRE(bytes.ok());
  BOOST_TEST(*bytes == (std::vector<std::uint8_t>{0xFF, 0xFF, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0, 0, 0x80, 0x3F}),
             boost::test_tools::per_element());
  auto back = reference::decode(scheme("u16:packed-u32(0)"), std::vector<std::uint64_t>{3}, *bytes);
  BOOST_TEST_REQUIRE(back.ok());
  BOOST_TEST(back->codes == q.codes, boost::test_tools::per_element());

  const std::vector<std::uint8_t> u4{0x0F, 0x10, 0, 0, 0x80, 0x3F};
  auto bad = reference::decode(scheme("u4"), std::vector<std::uint64_t>{2}, u4);
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST((bad.status().code() == ErrorCode::corrupt_bytes));
  BOOST_TEST(bad.status().index() == 1u);
  const std::vector<std::uint8_t> u4_ok{0x0F, 0x00, 0, 0, 0x80, 0x3F};
  auto good = reference::decode(scheme("u4"), std::vector<std::uint64_t>{2}, u4_ok);
  BOOST_TEST_REQUIRE(good.ok());
  BOOST_TEST(good->codes == (std::vector<std::int32_t>{15, 0}), boost::test_tools::per_element());
  // A code outside the kind's range is refused at dequantize.
  QuantizedTensor out = quantize_ok(scheme("u8"), {1}, {1.0f}, given({1.0f}));
  out.codes[0] = -1;
  BOOST_TEST((reference::dequantize(out).status().code() == ErrorCode::corrupt_bytes));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// Affine mode (docs/SEMANTICS.md section 14), worked by hand.

BOOST_AUTO_TEST_SUITE(affine_mode)

QuantizeOptions given_affine(std::vector<float> scales, std::vector<std::int32_t> zero_points,
                             Profile p = Profile::exact) {
  QuantizeOptions o = given(std::move(scales), std::nullopt, p);
  o.scales->zero_points = std::move(zero_points);
  return o;
}

// u8, s = 1/2, z = 10: t = 2x = -12, -10.5, 0, 2.5, 240, -0 rounds (ties to even) to -12, -10,
// 0, 2, 240, 0; plus 10, clamped to [0, 255]: 0, 0, 10, 12, 250, 10. Dequantized (q - 10) / 2.
BOOST_AUTO_TEST_CASE(given_scale_and_zero_point) {
  const std::vector<float> x{-6.0f, -5.25f, 0.0f, 1.25f, 120.0f, -0.0f};
  for (Profile p : {Profile::exact, Profile::onnx}) {
    const auto q = quantize_ok(scheme("u8:affine"), {6}, x, given_affine({0.5f}, {10}, p));
    BOOST_TEST(q.codes == (std::vector<std::int32_t>{0, 0, 10, 12, 250, 10}), boost::test_tools::per_element());
    BOOST_TEST(q.zero_points == (std::vector<std::int32_t>{10}), boost::test_tools::per_element());
    const auto d = dequantize_ok(q);
    BOOST_TEST(d == (std::vector<float>{-5.0f, -5.0f, 0.0f, 1.0f, 120.0f, 0.0f}), boost::test_tools::per_element());
  }
  // Per block, a signed kind: q8f, s = 1/4, z = -3 then 5: 4x = 124, -124, 0.5 | 128, 132, -0.5
  // rounds to 124, -124, 0 | 128, 132, 0; plus z: 121, -127, -3 | 133 -> 127, 137 -> 127, 5.
  const auto b = quantize_ok(scheme("q8f:affine:block[3]=f32"), {6}, {31.0f, -31.0f, 0.125f, 32.0f, 33.0f, -0.125f},
                             given_affine({0.25f, 0.25f}, {-3, 5}));
  BOOST_TEST(b.codes == (std::vector<std::int32_t>{121, -127, -3, 127, 127, 5}), boost::test_tools::per_element());
  // No zero points given: 0 each (ONNX QuantizeLinear without y_zero_point).
  const auto z = quantize_ok(scheme("u8:affine"), {2}, {1.0f, -1.0f}, given({0.5f}));
  BOOST_TEST(z.codes == (std::vector<std::int32_t>{2, 0}), boost::test_tools::per_element());
  BOOST_TEST(z.zero_points == (std::vector<std::int32_t>{0}), boost::test_tools::per_element());
}

// Profile exact calibrates as PyTorch's MinMaxObserver (per-tensor affine) in exact arithmetic:
// lo' = min(min x, 0), hi' = max(max x, 0), s = round_up(max((hi' - lo') / (b - a), 2^-23)),
// z = clamp(a - round_half_even(lo' / s), a, b).
BOOST_AUTO_TEST_CASE(exact_calibration_is_minmax_observer) {
  // u8, x = -1, 0.5, 2: s = ceil_f32(3 / 255) = ceil_f32(1 / 85) >= 1/85, so 1/s is just below 85:
  // -1/s rounds to -85, z = 0 + 85 = 85; codes round(x / s) + 85: -85 + 85 = 0, 42 + 85 = 127
  // (0.5/s just below 42.5), 170 + 85 = 255 (clamped).
  const auto q = quantize_ok(scheme("u8:affine"), {3}, {-1.0f, 0.5f, 2.0f});
  const float s = ceil_f32(Q(1, 85));
  BOOST_TEST(scale_f32(q, 0) == s);
  BOOST_TEST_REQUIRE(Q(1) / exact(s) < Q(85));
  BOOST_TEST_REQUIRE(Q(1) / exact(s) > Q(169, 2));
  BOOST_TEST(q.zero_points == (std::vector<std::int32_t>{85}), boost::test_tools::per_element());
  BOOST_TEST(q.codes == (std::vector<std::int32_t>{0, 127, 255}), boost::test_tools::per_element());
  // q8f, x = -2, 1: the same s; -2/s in (-170, -169.5) rounds to -170, z = -128 + 170 = 42;
  // codes -170 + 42 = -128 and 85 + 42 = 127.
  const auto i = quantize_ok(scheme("q8f:affine"), {2}, {-2.0f, 1.0f});
  BOOST_TEST(scale_f32(i, 0) == s);
  BOOST_TEST(i.zero_points == (std::vector<std::int32_t>{42}), boost::test_tools::per_element());
  BOOST_TEST(i.codes == (std::vector<std::int32_t>{-128, 127}), boost::test_tools::per_element());
  // An all-zero tensor: the range is 0, so s = eps = 2^-23 and z = a (0 for u8, -128 for q8f).
  const auto zu = quantize_ok(scheme("u8:affine"), {2}, {0.0f, -0.0f});
  BOOST_TEST(scale_f32(zu, 0) == std::ldexp(1.0f, -23));
  BOOST_TEST(zu.zero_points == (std::vector<std::int32_t>{0}), boost::test_tools::per_element());
  const auto zi = quantize_ok(scheme("q8f:affine"), {1}, {0.0f});
  BOOST_TEST(zi.zero_points == (std::vector<std::int32_t>{-128}), boost::test_tools::per_element());
  BOOST_TEST(zi.codes == (std::vector<std::int32_t>{-128}), boost::test_tools::per_element());
  BOOST_TEST(dequantize_ok(zi) == (std::vector<float>{0.0f}), boost::test_tools::per_element());
  // Only positive values: lo' = 0, z = a; only negative: hi' = 0, z = b.
  const auto pos = quantize_ok(scheme("u8:affine:block[2]=f16"), {4}, {1.0f, 3.0f, -4.0f, -1.0f});
  BOOST_TEST(pos.zero_points == (std::vector<std::int32_t>{0, 255}), boost::test_tools::per_element());
}

// Profile onnx calibrates u8 as DynamicQuantizeLinear. ONNX's node test (onnx/backend/test/case/
// node/dynamicquantizelinear.py): x = 0, 2, -3, -2.5, 1.34, 0.5 gives y_scale = f32(5 / 255)
// (0.0196078438), y_zero_point = 153 and y = 153, 255, 0, 26, 221, 179.
BOOST_AUTO_TEST_CASE(onnx_calibration_is_dynamic_quantize_linear) {
  const auto q = quantize_ok(scheme("u8:affine"), {6}, {0.0f, 2.0f, -3.0f, -2.5f, 1.34f, 0.5f}, opts(Profile::onnx));
  BOOST_TEST(scale_f32(q, 0) == 5.0f / 255.0f);
  BOOST_TEST(q.zero_points == (std::vector<std::int32_t>{153}), boost::test_tools::per_element());
  BOOST_TEST(q.codes == (std::vector<std::int32_t>{153, 255, 0, 26, 221, 179}), boost::test_tools::per_element());
  // The same node test's other two inputs: all negative (z = 255) and all positive (z = 0).
  const auto neg = quantize_ok(scheme("u8:affine"), {6}, {-1.0f, -2.1f, -1.3f, -2.5f, -3.34f, -4.0f}, opts(Profile::onnx));
  BOOST_TEST(neg.zero_points == (std::vector<std::int32_t>{255}), boost::test_tools::per_element());
  BOOST_TEST(neg.codes == (std::vector<std::int32_t>{191, 121, 172, 96, 42, 0}), boost::test_tools::per_element());
  const auto pos = quantize_ok(scheme("u8:affine"), {12},
                               {1.0f, 2.1f, 1.3f, 2.5f, 3.34f, 4.0f, 1.5f, 2.6f, 3.9f, 4.0f, 3.0f, 2.345f},
                               opts(Profile::onnx));
  BOOST_TEST(pos.zero_points == (std::vector<std::int32_t>{0}), boost::test_tools::per_element());
  BOOST_TEST(pos.codes == (std::vector<std::int32_t>{64, 134, 83, 159, 213, 255, 96, 166, 249, 255, 191, 149}),
             boost::test_tools::per_element());
  // All zeros: the scale is defined as 1, z = 0.
  const auto z = quantize_ok(scheme("u8:affine"), {2}, {0.0f, 0.0f}, opts(Profile::onnx));
  BOOST_TEST(scale_f32(z, 0) == 1.0f);
  BOOST_TEST(z.zero_points == (std::vector<std::int32_t>{0}), boost::test_tools::per_element());
}

// Typed errors: zero points out of range or miscounted, bad scales, undefined combinations.
BOOST_AUTO_TEST_CASE(bad_parameters_are_typed_errors) {
  const std::vector<float> x{1.0f, 2.0f};
  const std::vector<std::uint64_t> shape{2};
  auto code = [&](const char* text, const QuantizeOptions& o) { return reference::quantize(scheme(text), shape, x, o).status(); };
  Status st = code("u8:affine", given_affine({0.5f}, {256}));
  BOOST_TEST((st.code() == ErrorCode::invalid_scale));
  BOOST_TEST(st.index() == 0u);
  BOOST_TEST(st.message().find("[0, 255]") != std::string::npos, st.message());
  BOOST_TEST((code("q8f:affine:block[1]=f32", given_affine({0.5f, 0.5f}, {0, -129})).code() == ErrorCode::invalid_scale));
  BOOST_TEST(code("q8f:affine:block[1]=f32", given_affine({0.5f, 0.5f}, {0, -129})).index() == 1u);
  BOOST_TEST((code("u8:affine", given_affine({0.5f}, {1, 2})).code() == ErrorCode::size_mismatch));
  BOOST_TEST((code("u8", given_affine({0.5f}, {1})).code() == ErrorCode::size_mismatch));
  for (float bad : {-0.5f, NAN, INFINITY}) {
    BOOST_TEST((code("u8:affine", given_affine({bad}, {1})).code() == ErrorCode::invalid_scale));
  }
  BOOST_TEST((code("e4m3:affine", given({0.5f})).code() == ErrorCode::unsupported_profile));
  BOOST_TEST((code("q8f:affine:block[2]=f16:tensor=f32", given({0.5f}, 1.0f)).code() == ErrorCode::unsupported_profile));
  BOOST_TEST((code("u8:affine", opts(Profile::burn)).code() == ErrorCode::unsupported_profile));
  BOOST_TEST((code("u8:affine", given({0.5f}, std::nullopt, Profile::burn)).code() == ErrorCode::unsupported_profile));
  BOOST_TEST((code("i16:affine", opts(Profile::onnx)).code() == ErrorCode::unsupported_profile));
  BOOST_TEST((code("u8:affine", opts(Profile::exact, Calibration::absmean)).code() == ErrorCode::unsupported_profile));
  BOOST_TEST((code("u8:affine:block[2]=f16", opts(Profile::onnx)).code() == ErrorCode::unsupported_profile));
  // A stored tensor: a zero point out of range is corrupt, a missing one a size mismatch.
  QuantizedTensor q = quantize_ok(scheme("u4:affine"), {2}, x, given_affine({0.5f}, {3}));
  q.zero_points[0] = 16;
  BOOST_TEST((reference::dequantize(q).status().code() == ErrorCode::corrupt_bytes));
  BOOST_TEST((reference::encode(q).status().code() == ErrorCode::corrupt_bytes));
  q.zero_points.clear();
  BOOST_TEST((reference::dequantize(q).status().code() == ErrorCode::size_mismatch));
  QuantizedTensor sym = quantize_ok(scheme("u8"), {2}, x, given({0.5f}));
  sym.zero_points = {0};
  BOOST_TEST((reference::dequantize(sym).status().code() == ErrorCode::size_mismatch));
}

// Bytes: [values][scales][zero points], a zero point as a native code of the kind (one byte,
// two's complement for the signed kinds; two bytes little-endian for i16 and u16).
BOOST_AUTO_TEST_CASE(zero_points_follow_the_scales_in_the_bytes) {
  const auto q = quantize_ok(scheme("q4f:affine:block[2]=f16"), {4}, {1.0f, -1.0f, 0.0f, 2.0f},
                             given_affine({1.0f, 0.5f}, {-3, 2}));
  // codes: 1 - 3, -1 - 3, 0 + 2, 4 + 2 -> -2, -4, 2, 6 (in [-8, 7]).
  BOOST_TEST(q.codes == (std::vector<std::int32_t>{-2, -4, 2, 6}), boost::test_tools::per_element());
  auto bytes = reference::encode(q);
  BOOST_TEST_REQUIRE(bytes.ok());
  BOOST_TEST(*bytes == (std::vector<std::uint8_t>{0xFE, 0xFC, 0x02, 0x06, 0x00, 0x3C, 0x00, 0x38, 0xFD, 0x02}),
             boost::test_tools::per_element());
  auto back = reference::decode(q.scheme, std::vector<std::uint64_t>{4}, *bytes);
  BOOST_TEST_REQUIRE(back.ok(), back.status().to_string());
  BOOST_TEST((*back == q));
  // A zero point byte that is no q4f value (8 > 7): corrupt-bytes, naming the zero point.
  std::vector<std::uint8_t> bad = *bytes;
  bad[9] = 0x08;
  auto r = reference::decode(q.scheme, std::vector<std::uint64_t>{4}, bad);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST((r.status().code() == ErrorCode::corrupt_bytes));
  BOOST_TEST(r.status().index() == 1u);
  // i16: two bytes little-endian.
  const auto w = quantize_ok(scheme("i16:affine"), {1}, {1.0f}, given_affine({1.0f}, {-2}));
  auto wb = reference::encode(w);
  BOOST_TEST_REQUIRE(wb.ok());
  BOOST_TEST(*wb == (std::vector<std::uint8_t>{0xFF, 0xFF, 0x00, 0x00, 0x80, 0x3F, 0xFE, 0xFF}),
             boost::test_tools::per_element());
  // One byte short: the zero point region is part of the length.
  wb->pop_back();
  BOOST_TEST((reference::decode(w.scheme, std::vector<std::uint64_t>{1}, *wb).status().code() == ErrorCode::size_mismatch));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// Per-axis scales (docs/SEMANTICS.md section 15).

BOOST_AUTO_TEST_SUITE(per_axis)

// Per column (axis 0 from the innermost) of a [2, 3] tensor, u8 affine, s = 1, 1/2, 1/4 and
// z = 0, 10, 100: codes x / s + z = [[1, 14, 112], [4, 20, 124]].
BOOST_AUTO_TEST_CASE(one_scale_and_zero_point_per_column) {
  QuantizeOptions o = given({1.0f, 0.5f, 0.25f});
  o.scales->zero_points = {0, 10, 100};
  const auto q = quantize_ok(scheme("u8:affine:axis(0)=f32"), {2, 3}, {1, 2, 3, 4, 5, 6}, o);
  BOOST_TEST(q.codes == (std::vector<std::int32_t>{1, 14, 112, 4, 20, 124}), boost::test_tools::per_element());
  BOOST_TEST(dequantize_ok(q) == (std::vector<float>{1, 2, 3, 4, 5, 6}), boost::test_tools::per_element());
  // Per row (axis 1) of the same tensor, sym q8s calibrated: max |x| = 3 and 6 per row.
  const auto r = quantize_ok(scheme("q8s:axis(1)=f32"), {2, 3}, {1, 2, 3, 4, 5, 6});
  BOOST_TEST(scale_f32(r, 0) == ceil_f32(Q(3, 127)));
  BOOST_TEST(scale_f32(r, 1) == ceil_f32(Q(6, 127)));
  BOOST_TEST(r.codes[2] == 127);
  BOOST_TEST(r.codes[5] == 127);
}

// A [4096, 4096] weight with per-row u8 affine scales (extent 4096 per row, 4096 scales: past
// Burn's 255), calibrated (exact), through the bytes and back. Under a sanitizer 64 of the rows.
BOOST_AUTO_TEST_CASE(per_row_affine_4096_by_4096_round_trips) {
  const std::uint64_t rows = qscheme::testing::kSanitized ? 64 : 4096;
  const std::uint64_t cols = 4096;
  std::vector<float> x(rows * cols);
  // Rows of different ranges, some all positive, some all negative (multiples of 2^-4).
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t c = 0; c < cols; ++c) {
      const auto k = static_cast<int>((r * 7 + c * 13) % (64 + r % 200)) - static_cast<int>(r % 3 == 0 ? 0 : 50 + r % 90);
      x[r * cols + c] = static_cast<float>(r % 5 == 4 ? -std::abs(k) : k) / 16.0f;
    }
  }
  const Scheme s = scheme("u8:affine:axis(1)=f32");
  const auto q = quantize_ok(s, {rows, cols}, x);
  BOOST_TEST_REQUIRE(q.scale_bits.size() == rows);
  BOOST_TEST_REQUIRE(q.zero_points.size() == rows);
  auto bytes = reference::encode(q);
  BOOST_TEST_REQUIRE(bytes.ok(), bytes.status().to_string());
  BOOST_TEST(bytes->size() == rows * cols + rows * 4 + rows);
  auto back = reference::decode(s, std::vector<std::uint64_t>{rows, cols}, *bytes);
  BOOST_TEST_REQUIRE(back.ok(), back.status().to_string());
  BOOST_TEST_REQUIRE((*back == q));
  const auto y = dequantize_ok(*back);
  // Every element of a row within one step of x: half a step of rounding, and a code clamped at
  // a range end (round(hi' / s) - round(lo' / s) can reach b - a + 1) one more half; the f32
  // product's rounding is far below step / 1024.
  // (In doubles y - x is exact: both have 24-bit significands between 2^-40 and 2^7, or are 0.)
  std::uint64_t far = 0;
  for (std::uint64_t r = 0; r < rows; ++r) {
    const double step = scale_f32(q, r);
    for (std::uint64_t c = 0; c < cols; ++c) {
      const std::uint64_t n = r * cols + c;
      far += std::fabs(static_cast<double>(y[n]) - static_cast<double>(x[n])) > step + step / 1024;
    }
  }
  BOOST_TEST(far == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// f16 and bf16 output (docs/SEMANTICS.md section 16): ONNX's DequantizeLinear multiplies in
// float32 and casts the product, so the exact product is rounded twice (f32, then f16/bf16).

BOOST_AUTO_TEST_SUITE(output_dtype)

QuantizedTensor stored(const char* text, std::vector<std::int32_t> codes, float scale, Profile p = Profile::onnx) {
  QuantizedTensor q;
  q.scheme = scheme(text);
  q.profile = p;
  q.shape = {codes.size()};
  q.codes = std::move(codes);
  q.scale_bits = {f32_bits(scale)};
  return q;
}

std::vector<std::uint16_t> dequantize_16_ok(const QuantizedTensor& q, OutputDtype d) {
  auto y = reference::dequantize_16(q, d);
  BOOST_TEST_REQUIRE(y.ok(), y.status().to_string());
  return *y;
}

// u16 code 59221, scale 1.005859375 (f16 0x3C06): the exact product 59567.998046875 is half an
// f32 step (2^-8) below 59568, a tie that f32 rounds to the even 59568; 59568 lies halfway
// between the f16 values 59552 (0x7B45) and 59584 (0x7B46), and that tie goes to the even
// 0x7B46. Rounded once, the product is below the midpoint: 0x7B45. ONNX gives 0x7B46 (numpy:
// (np.float32(59221) * np.float16(1.005859375)).astype(np.float16)).
BOOST_AUTO_TEST_CASE(f16_is_the_f32_product_rounded_again) {
  for (Profile p : {Profile::onnx, Profile::exact}) {
    const auto q = stored("u16", {59221, 1, 0, 65535}, 1.005859375f, p);
    // 1 * s = 0x3C06; 0 = +0; 65535 * s = 65918.9 is past f16's 65504 (and its rounding
    // boundary 65520): +inf, as numpy's cast overflows.
    BOOST_TEST(dequantize_16_ok(q, OutputDtype::f16) == (std::vector<std::uint16_t>{0x7B46, 0x3C06, 0x0000, 0x7C00}),
               boost::test_tools::per_element());
  }
}

// bf16 the same way: u16 code 17553, scale 0x3F032498 (0.51227712...): the exact product
// 8992.000398... rounds to the f32 8992 = 0x460C8000, the bf16 midpoint of 0x460C and 0x460D,
// and the tie goes to the even 0x460C; rounded once (above the midpoint) it would be 0x460D.
// Negative codes keep their sign, and f16 subnormals are kept: q8f -1 * 2^-20 = -2^-20 is the
// f16 subnormal 0x8010 (2^-20 / 2^-24 = 16).
BOOST_AUTO_TEST_CASE(bf16_and_signs_and_subnormals) {
  const auto q = stored("u16", {17553}, f32_from_bits(0x3F032498u));
  BOOST_TEST(dequantize_16_ok(q, OutputDtype::bf16) == (std::vector<std::uint16_t>{0x460C}),
             boost::test_tools::per_element());
  const auto n = stored("q8f", {-1, 2}, std::ldexp(1.0f, -20));
  BOOST_TEST(dequantize_16_ok(n, OutputDtype::f16) == (std::vector<std::uint16_t>{0x8010, 0x0020}),
             boost::test_tools::per_element());
  // bf16 of -2^-20 is the f32's high half: 0xB580.
  BOOST_TEST(dequantize_16_ok(n, OutputDtype::bf16) == (std::vector<std::uint16_t>{0xB580, 0x3600}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(errors_are_dequantize_errors) {
  auto bad = stored("u8", {300}, 1.0f);  // outside u8's range
  const auto y = reference::dequantize_16(bad, OutputDtype::f16);
  BOOST_TEST((y.status().code() == ErrorCode::corrupt_bytes));
  const auto f32 = reference::dequantize_16(stored("u8", {3}, 1.0f), OutputDtype::f32);
  BOOST_TEST((f32.status().code() == ErrorCode::invalid_argument));
}

BOOST_AUTO_TEST_SUITE_END()
