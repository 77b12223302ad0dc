// qscheme check (oracle/check.hpp): the reference's own output is "identical"; a candidate made
// by hand the way a known bug would make it is "differs", with the right count and a diagnosis
// that names the recipe, or the recipe with one or two rules changed, that reproduces it. Every
// hand-made candidate below is written out literally, computed by hand (or with Python's
// fractions or numpy's float32, noted where so) from the rule it breaks, never with qscheme
// itself; the names follow from the rule definitions (docs/SEMANTICS.md section 11). The search
// tries the recipes that reproduce the scheme first (for the schemes below mostly the profiles
// exact, burn and onnx), so a candidate that one of them reproduces is named after it.
#include <algorithm>
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/ostream.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"
#include "oracle/check.hpp"
#include "io/file_io.hpp"
#include "io/npy.hpp"

using namespace qscheme;
using oracle::Candidate;
using oracle::CandidateKind;
using oracle::CheckRequest;

namespace {

float f(std::uint32_t bits) { return qscheme::f32_from_bits(bits); }

CheckRequest request(const std::string& scheme, std::vector<std::uint64_t> shape, std::vector<float> x,
                     std::optional<std::vector<float>> scales = std::nullopt, std::optional<float> global = std::nullopt,
                     Profile profile = Profile::exact) {
  auto s = parse_scheme(scheme);
  BOOST_REQUIRE_MESSAGE(s.ok(), scheme);
  CheckRequest r;
  r.scheme = *s;
  r.shape = std::move(shape);
  r.x = std::move(x);
  r.options.profile = profile;
  if (scales) r.options.scales = GivenScales{*scales, global};
  return r;
}

Candidate codes(std::vector<std::int32_t> c) {
  Candidate k;
  k.kind = CandidateKind::quantized;
  k.codes = std::move(c);
  return k;
}

std::vector<std::string> names(const oracle::CheckReport& r) {
  std::vector<std::string> out;
  for (const auto& d : r.diagnosis) out.push_back(d.name);
  return out;
}

// The candidate differs in `n` elements and the diagnosis is exactly `expected`.
void expect_diagnosis(const CheckRequest& rq, const Candidate& c, std::uint64_t n, std::vector<std::string> expected) {
  auto r = oracle::check(rq, c);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(!r->identical);
  BOOST_TEST(r->differing_elements == n);
  BOOST_TEST(names(*r) == expected, boost::test_tools::per_element());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(check)

BOOST_AUTO_TEST_CASE(reference_output_is_identical_in_every_representation) {
  const CheckRequest rq = request("q4f:packed-u32(0):block[4]=f16", {2, 6},
                                  {0.5f, -1.5f, 2.5f, 3, -7, 100, 0, -0.0f, 1e-30f, 7, 6.5f, -6.5f});
  auto q = reference::quantize(rq.scheme, rq.shape, rq.x, rq.options);
  BOOST_REQUIRE(q.ok());
  Candidate c = codes(q->codes);
  c.scale_bits = q->scale_bits;
  auto r = oracle::check(rq, c);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->identical);
  BOOST_TEST(r->differing_elements == 0u);
  BOOST_TEST(r->diagnosis.empty());

  Candidate b;
  b.kind = CandidateKind::bytes;
  b.bytes = *reference::encode(*q);
  r = oracle::check(rq, b);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->identical);

  Candidate d;
  d.kind = CandidateKind::dequantized;
  d.values = *reference::dequantize(*q);
  r = oracle::check(rq, d);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->identical);
}

BOOST_AUTO_TEST_CASE(ties_away) {
  // x / 1 = 0.5, 1.5, 2.5, -0.5, -2.5: to even 0 2 2 0 -2; away 1 2 3 -1 -3: Burn's rounding
  // (its f32 division by 1 is exact).
  const auto rq = request("q8s", {6}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 3}, std::vector<float>{1});
  expect_diagnosis(rq, codes({1, 2, 3, -1, -3, 3}), 4, {"burn"});
  auto r = oracle::check(rq, codes({1, 2, 3, -1, -3, 3}));
  BOOST_REQUIRE(r.ok());
  BOOST_REQUIRE(r->first.size() == 4u);
  BOOST_TEST(r->first[0].index == 0u);
  BOOST_TEST(r->first[0].expected_code == 0);
  BOOST_TEST(*r->first[0].found_code == 1);
  BOOST_TEST(r->first[0].scale == 1.0f);
  BOOST_TEST(*r->first[0].found_value == 1.0f);
  BOOST_TEST(r->first[3].index == 4u);
}

BOOST_AUTO_TEST_CASE(f32_quotient_and_reciprocal) {
  // Scale f32(0.1) = 0x3DCCCCCD. Found with Python fractions:
  //  x = 0xC0500001 (-3.2500002): exact x/s = -32.5000015.. -> -33; f32(x/s) = -32.5 -> -32;
  //      f32(x * f32(1/s)) -> -33.
  //  x = 0x40166666 (2.35): exact 23.49999.. -> 23, f32(x/s) -> 23, f32(x * f32(1/s)) = 23.5 -> 24.
  // The f32 quotient rounded to even is ONNX's QuantizeLinear (burn's ties away give -33); the
  // reciprocal is no recipe of q8s, but the exact profile with each of the three reciprocal
  // quotients (s is not 0, so the two guards do not act).
  const auto rq = request("q8s", {2}, {f(0xC0500001u), f(0x40166666u)}, std::vector<float>{f(0x3DCCCCCDu)});
  expect_diagnosis(rq, codes({-32, 23}), 1, {"onnx"});
  expect_diagnosis(rq, codes({-33, 24}), 1,
                   {"exact with quotient=f32-reciprocal", "exact with quotient=f32-reciprocal-or-zero",
                    "exact with quotient=f32-reciprocal-capped"});
}

BOOST_AUTO_TEST_CASE(scale_nearest_and_truncated) {
  // q8s, calibrated, blocks of 2: s* = 3/127 and 9/127 (Python fractions). Up: 0x3CC18307,
  // 0x3D912245. Nearest: 0x3CC18306 (below), 0x3D912245 (above). Down: 0x3CC18306, 0x3D912244.
  // The codes are the same under all three (127, 21, 127, 31). Burn's f32(f32(2 amax) / 254) is
  // the nearest f32 scale. f32(amax * f32(1 / 127)) (numpy float32) is 0x3CC18306 and
  // 0x3D912244: the truncated scales, so the exact profile with arithmetic=f32-reciprocal
  // reproduces them as well as scale=down does.
  const auto rq = request("q8s:block[2]=f32", {4}, {3, 0.5f, 9, 2.2f});
  Candidate nearest = codes({127, 21, 127, 31});
  nearest.scale_bits = std::vector<std::uint32_t>{0x3CC18306u, 0x3D912245u};
  expect_diagnosis(rq, nearest, 0, {"burn"});
  Candidate down = codes({127, 21, 127, 31});
  down.scale_bits = std::vector<std::uint32_t>{0x3CC18306u, 0x3D912244u};
  auto r = oracle::check(rq, down);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->differing_scales == 2u);
  BOOST_TEST(r->differing_elements == 0u);
  BOOST_TEST(names(*r) == (std::vector<std::string>{"exact with arithmetic=f32-reciprocal", "exact with scale=down"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(saturation) {
  // q8s, scale 1: 200 -> 127 and -200 -> -127; wrapping gives -56 and 56; the full int8 range
  // clamps -200 to -128, and so does the x86 conversion followed by the full-range clamp.
  const auto rq = request("q8s", {3}, {200, -200, 5}, std::vector<float>{1});
  expect_diagnosis(rq, codes({-56, 56, 5}), 2, {"exact with saturation=none"});
  expect_diagnosis(rq, codes({127, -128, 5}), 1,
                   {"exact with saturation=full-range", "exact with saturation=int32-min-then-full-range"});
  // e4m3, scale 1: 500 and -1000 saturate to 0x7E / 0xFE; without saturation they are NaN.
  const auto rq8 = request("e4m3", {3}, {500, -1000, 1}, std::vector<float>{1});
  expect_diagnosis(rq8, codes({0x7F, 0xFF, 0x38}), 2, {"exact with saturation=none"});
}

BOOST_AUTO_TEST_CASE(zero_sign_and_integer_before_cast) {
  // e4m3, scale 1: -0 -> 0x80, 1 -> 0x38, -0.0001 -> 0x80 (below half the smallest subnormal).
  // Every zero code +0 is zero-sign=drop; zero-quotient-positive would keep -0.0001's -0.
  const auto rq = request("e4m3", {3}, {-0.0f, 1, -0.0001f}, std::vector<float>{1});
  expect_diagnosis(rq, codes({0x00, 0x38, 0x00}), 2, {"exact with zero-sign=drop"});
  // 1.25 -> 0x3A, 2.6 -> 2.5 = 0x42, 0.3 -> 0.3125 = 0x2A; rounded to integers first: 1, 3, 0.
  // No point of the rule space rounds to an integer before the minifloat grid (1.25 is on the
  // grid, and the scale is given): nothing reproduces it.
  const auto rq2 = request("e4m3", {3}, {1.25f, 2.6f, 0.3f}, std::vector<float>{1});
  expect_diagnosis(rq2, codes({0x38, 0x44, 0x00}), 3, {});
}

BOOST_AUTO_TEST_CASE(packing_reversed) {
  // q4f packed 8 a u32, x = 0..7 with scale 1: the word is 0x76543210 (element 0 lowest), the
  // scale 1.0f. Reversed, the word is 0x01234567.
  const auto rq = request("q4f:packed-u32(0)", {8}, {0, 1, 2, 3, 4, 5, 6, 7}, std::vector<float>{1});
  Candidate right;
  right.kind = CandidateKind::bytes;
  right.bytes = {0x10, 0x32, 0x54, 0x76, 0x00, 0x00, 0x80, 0x3F};
  auto r = oracle::check(rq, right);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->identical);
  Candidate reversed = right;
  reversed.bytes = {0x67, 0x45, 0x23, 0x01, 0x00, 0x00, 0x80, 0x3F};
  r = oracle::check(rq, reversed);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(!r->identical);
  BOOST_TEST(r->differing_bytes == 4u);
  BOOST_TEST(r->differing_elements == 8u);
  BOOST_TEST(names(*r) == std::vector<std::string>{"exact with packing=reversed"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(two_level_product) {
  // g = f32(0.1) = 0x3DCCCCCD, s = f16 1 + 2^-10. g * s needs 35 bits; f32(g * s) = 0x3DCD0000 =
  // 0.10009765625. x = 1.5 * 0.10009765625 = 0.150146484375: exactly 1.5 against the rounded
  // product (tie -> 2), just below 1.5 against the exact one (-> 1): Burn's f32 product, f32
  // division and ties away.
  const auto rq = request("q8s:block[1]=f16:tensor=f32", {1}, {0.150146484375f}, std::vector<float>{1.0009765625f},
                          f(0x3DCCCCCDu));
  expect_diagnosis(rq, codes({2}), 1, {"burn"});
  // The same under burn with the exact product instead: the exact profile's 1.
  const auto burn = request("q8s:block[1]=f16:tensor=f32", {1}, {0.150146484375f}, std::vector<float>{1.0009765625f},
                            f(0x3DCCCCCDu), Profile::burn);
  expect_diagnosis(burn, codes({1}), 1, {"exact"});
}

BOOST_AUTO_TEST_CASE(burn_profile_deviations) {
  // Burn divides by f32(0.1) where the scale is 0: 1 / 0.1 = 10, 2 / 0.1 = 20. Codes 0 take two
  // changes: zero-scale=ieee alone divides by 0 (inf, saturated to 127), and needs ggml's guard
  // (quotient=f32-reciprocal-or-zero: r = 0) or saturation=none (inf converts to INT32_MIN,
  // whose low 8 bits are 0). No single change and no recipe of q8s gives them.
  const auto rq = request("q8s", {2}, {1, 2}, std::vector<float>{0}, std::nullopt, Profile::burn);
  auto r = oracle::check(rq, codes({0, 0}));
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->stage == 2);
  BOOST_TEST(names(*r) == (std::vector<std::string>{"burn with quotient=f32-reciprocal-or-zero, zero-scale=ieee",
                                                    "burn with saturation=none, zero-scale=ieee"}),
             boost::test_tools::per_element());
  // Burn rounds ties away: 0.5 -> 1, 2.5 -> 3; an implementation rounding to even gives 0, 2,
  // as the exact and onnx profiles do.
  const auto rq2 = request("q8s", {2}, {0.5f, 2.5f}, std::vector<float>{1}, std::nullopt, Profile::burn);
  expect_diagnosis(rq2, codes({0, 2}), 2, {"exact", "onnx"});
}

BOOST_AUTO_TEST_CASE(onnx_profile_deviations) {
  // ONNX divides in f32: 0.25 / f32(0.1) -> 2.5 -> 2 (even), 0.35f / f32(0.1) -> 3.5 -> 4.
  const auto rq = request("q8f", {2}, {0.25f, 0.35f}, std::vector<float>{f(0x3DCCCCCDu)}, std::nullopt, Profile::onnx);
  auto r = oracle::check(rq, codes({2, 4}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->identical);
  // An exact division gives 2.4999.. -> 2 and 3.4999.. -> 3 (the exact profile); ties away from
  // zero give 3 and 4 (Burn). torch's x * f32(1 / s) is 2.5 and f32(3.4999999 * 10) = 3.5 (numpy
  // float32): 2 and 4, neither.
  expect_diagnosis(rq, codes({2, 3}), 1, {"exact"});
  expect_diagnosis(rq, codes({3, 4}), 1, {"burn"});
}

BOOST_AUTO_TEST_CASE(dequantized_candidate) {
  // q8s, scale 1: the values are the codes. A ties-away implementation gives 1, 3 for 0.5, 2.5.
  const auto rq = request("q8s", {2}, {0.5f, 2.5f}, std::vector<float>{1});
  Candidate d;
  d.kind = CandidateKind::dequantized;
  d.values = {1, 3};
  expect_diagnosis(rq, d, 2, {"burn"});
}

BOOST_AUTO_TEST_CASE(unexplained_and_bad_candidates) {
  const auto rq = request("q8s", {2}, {0.5f, 2.5f}, std::vector<float>{1});
  expect_diagnosis(rq, codes({17, 2}), 1, {});
  BOOST_TEST(oracle::check(rq, codes({0})).status().code() == ErrorCode::size_mismatch);
  Candidate b;
  b.kind = CandidateKind::bytes;
  b.bytes = {0, 2, 0, 0, 0x80};
  BOOST_TEST(oracle::check(rq, b).status().code() == ErrorCode::size_mismatch);
}

BOOST_AUTO_TEST_CASE(many_differing_blocks_keep_the_diagnosis_exact) {
  // q8s in blocks of 2 with given scales of 1, 40 blocks: x = (0.5, b) in block b. To even the
  // first code is 0, away from zero 1 (burn). A point is tried on the first 16 differing blocks
  // and then, if it reproduces those, on the whole tensor.
  std::vector<float> x;
  for (int b = 0; b < 40; ++b) x.insert(x.end(), {0.5f, static_cast<float>(b)});
  const auto rq = request("q8s:block[2]=f32", {80}, x, std::vector<float>(40, 1.0f));
  std::vector<std::int32_t> away;
  for (int b = 0; b < 40; ++b) away.insert(away.end(), {1, b});
  expect_diagnosis(rq, codes(away), 40, {"burn"});
  // Away from zero in the first 20 blocks only: burn passes the trial blocks but not the
  // whole tensor, where blocks 20..39 hold ties too. No point reproduces it.
  std::vector<std::int32_t> half = away;
  for (int b = 20; b < 40; ++b) half[static_cast<std::size_t>(2 * b)] = 0;
  expect_diagnosis(rq, codes(half), 20, {});
  // The same as values, and as bytes (one byte a q8s code, then 40 f32 scales of 1.0).
  Candidate d;
  d.kind = CandidateKind::dequantized;
  d.values.assign(away.begin(), away.end());
  expect_diagnosis(rq, d, 40, {"burn"});
  Candidate b;
  b.kind = CandidateKind::bytes;
  for (std::int32_t c : away) b.bytes.push_back(static_cast<std::uint8_t>(c));
  for (int k = 0; k < 40; ++k) b.bytes.insert(b.bytes.end(), {0x00, 0x00, 0x80, 0x3F});
  expect_diagnosis(rq, b, 40, {"burn"});
  // Encoded codes and scales (what a Q.json candidate is read into): the same, without byte counts.
  Candidate e = b;
  e.kind = CandidateKind::quantized;
  e.encoded = true;
  auto r = oracle::check(rq, e);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->differing_elements == 40u);
  BOOST_TEST(r->bytes == 0u);
  BOOST_TEST(names(*r) == std::vector<std::string>{"burn"}, boost::test_tools::per_element());
  BOOST_REQUIRE(r->first.size() == 8u);  // the default max_shown
  BOOST_TEST(r->first[1].index == 2u);
  BOOST_TEST(r->first[1].block == 1u);
  BOOST_TEST(r->first[1].expected_code == 0);
  BOOST_TEST(*r->first[1].found_code == 1);
  BOOST_TEST(*r->first[1].found_value == 1.0f);
}

BOOST_AUTO_TEST_CASE(packing_reversed_over_several_blocks) {
  // q4f packed 8 a u32 in blocks of 8 with scales 1: three words 0x76543210, reversed 0x01234567.
  std::vector<float> x;
  for (int b = 0; b < 3; ++b) {
    for (int k = 0; k < 8; ++k) x.push_back(static_cast<float>(k));
  }
  const auto rq = request("q4f:packed-u32(0):block[8]=f32", {24}, x, std::vector<float>(3, 1.0f));
  Candidate reversed;
  reversed.kind = CandidateKind::bytes;
  reversed.bytes = {0x67, 0x45, 0x23, 0x01, 0x67, 0x45, 0x23, 0x01, 0x67, 0x45, 0x23, 0x01,
                    0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x80, 0x3F};
  auto r = oracle::check(rq, reversed);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->differing_bytes == 12u);
  BOOST_TEST(r->differing_elements == 24u);
  BOOST_TEST(names(*r) == std::vector<std::string>{"exact with packing=reversed"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_candidate_of_another_shape_is_a_size_mismatch_naming_both) {
  const auto rq = request("q8s", {2, 3}, {1, 2, 3, 4, 5, 6}, std::vector<float>{1});
  Candidate c = codes({1, 2, 3, 4, 5, 6});
  BOOST_TEST(oracle::check(rq, c).ok());
  c.shape = std::vector<std::uint64_t>{2, 3};
  BOOST_TEST(oracle::check(rq, c)->identical);
  c.shape = std::vector<std::uint64_t>{3, 2};
  const Status st = oracle::check(rq, c).status();
  BOOST_TEST(st.code() == ErrorCode::size_mismatch);
  BOOST_TEST(st.message().find("the candidate's shape [3,2] differs from the input's [2,3]") != std::string::npos,
             st.message());
  BOOST_TEST(st.message().find("transposed or reshaped") != std::string::npos, st.message());
  c.shape = std::vector<std::uint64_t>{6};
  BOOST_TEST(oracle::check(rq, c).status().code() == ErrorCode::size_mismatch);
}

// A recipe's point the fast engine does not run: the engine table's refusal sends check to the
// reference for the expected output. ggml q8_0 on a block of amax 127: d = 127 / 127 = 1 (f16
// 0x3C00), and 2.5 * (1 / d) rounds half away (roundf) to 3, where the exact profile's ties to
// even give 2.
BOOST_AUTO_TEST_CASE(a_recipe_point_the_fast_engine_refuses_is_checked_against_the_reference) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  CheckRequest rq = request("q8_0", {32}, x);
  rq.options = recipe_options(*find_recipe("ggml-q8_0").value());
  std::vector<std::int32_t> ggml(32, 0);
  ggml[0] = 127;
  ggml[1] = 3;
  Candidate c = codes(ggml);
  c.scale_bits = std::vector<std::uint32_t>{0x3C00u};
  auto r = oracle::check(rq, c);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->identical);

  Candidate values;
  values.kind = CandidateKind::dequantized;
  values.values.assign(32, 0.0f);
  values.values[0] = 127.0f;
  values.values[1] = 3.0f;
  r = oracle::check(rq, values);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->identical);

  // Ties to even differ in one element: the exact profile's f16 scale is 1 as well, and so is
  // ggml's x86 path (f32(127 / 127) = 1, ties to even).
  Candidate even = c;
  even.codes[1] = 2;
  r = oracle::check(rq, even);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(!r->identical);
  BOOST_TEST(r->differing_elements == 1u);
  BOOST_REQUIRE(r->first.size() == 1u);
  BOOST_TEST(r->first[0].expected_code == 3);
  BOOST_TEST(r->first[0].expected_value == 3.0f);
  BOOST_TEST(r->first[0].found_value.value_or(-1.0f) == 2.0f);
  BOOST_TEST(names(*r) == (std::vector<std::string>{"exact", "ggml-q8_0-x86"}), boost::test_tools::per_element());
  // Under the exact profile the ggml candidate is the one that differs.
  rq.options = {};
  r = oracle::check(rq, c);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->differing_elements == 1u);

  // The shape rule holds under a recipe too.
  rq.options = recipe_options(*find_recipe("ggml-q8_0").value());
  c.shape = std::vector<std::uint64_t>{2, 16};
  BOOST_TEST(oracle::check(rq, c).status().code() == ErrorCode::size_mismatch);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(check_report)

// q8s in blocks of 2, given scales 1, 40 blocks: x = (0.5, b) in block b; ties away from zero give
// 1 where the exact profile gives 0, in every block.
CheckRequest forty_blocks() {
  std::vector<float> x;
  for (int b = 0; b < 40; ++b) x.insert(x.end(), {0.5f, static_cast<float>(b)});
  return request("q8s:block[2]=f32", {80}, x, std::vector<float>(40, 1.0f));
}

Candidate forty_blocks_away() {
  std::vector<std::int32_t> away;
  for (int b = 0; b < 40; ++b) away.insert(away.end(), {1, b});
  return codes(away);
}

BOOST_AUTO_TEST_CASE(max_shown_limits_the_elements_and_blocks_listed) {
  CheckRequest rq = forty_blocks();
  rq.max_shown = 3;
  auto r = oracle::check(rq, forty_blocks_away());
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->differing_elements == 40u);
  BOOST_TEST(r->differing_blocks == 40u);
  BOOST_TEST(r->first.size() == 3u);
  BOOST_REQUIRE(r->blocks.size() == 3u);
  BOOST_TEST(r->blocks[2].block == 2u);
  BOOST_TEST(r->blocks[2].elements == 1u);
  rq.max_shown.reset();  // --all
  r = oracle::check(rq, forty_blocks_away());
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->first.size() == 40u);
  BOOST_TEST(r->blocks.size() == 40u);
  BOOST_TEST(r->first[39].index == 78u);
  BOOST_TEST(r->blocks[39].block == 39u);
}

// Away from zero in the first 20 blocks only. The recipes burn (f32 division by 1, ties away)
// and ggml-q8_0 (x * f32(1 / 1), roundf), and the exact profile with ties=half-away, all
// reproduce the first 16 differing blocks (the trial) and miss the 20 ties to even of blocks 20
// to 39 in the whole tensor. Nothing reproduces all of it; the closest point is the first of
// those, a recipe with no change: burn.
BOOST_AUTO_TEST_CASE(the_closest_point_names_the_blocks_it_misses) {
  Candidate half = forty_blocks_away();
  for (int b = 20; b < 40; ++b) half.codes[static_cast<std::size_t>(2 * b)] = 0;
  auto r = oracle::check(forty_blocks(), half);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->differing_elements == 20u);
  BOOST_TEST(r->diagnosis.empty());
  BOOST_REQUIRE(r->closest.has_value());
  BOOST_TEST(r->closest->name == "burn");
  BOOST_TEST(r->closest_elements == 20u);
  std::vector<std::uint64_t> missed;
  for (std::uint64_t b = 20; b < 40; ++b) missed.push_back(b);
  BOOST_TEST(r->closest_blocks == missed, boost::test_tools::per_element());
  BOOST_TEST(oracle::to_text(*r).find("closest: burn, reproduces all but 20 element(s) in blocks 20, 21, ") !=
                 std::string::npos,
             oracle::to_text(*r));
  // Each block of the first 16 is reproduced by that point on its own.
  BOOST_REQUIRE(!r->blocks.empty());
  BOOST_TEST(r->blocks[0].diagnosis.find("reproduced by burn") != std::string::npos,
             r->blocks[0].diagnosis);
}

// q8s in blocks of 2 with calibrated f32 scales: x = (3, 0.5) and (9, 2.2), scales 3/127 and 9/127
// rounded up (0x3CC18307, 0x3D912245). A candidate whose second scale is inf, and whose first
// block's codes are those of the exact profile: the inf is a difference, named with its block.
BOOST_AUTO_TEST_CASE(an_infinite_or_nan_candidate_scale_is_reported_with_its_block) {
  const auto rq = request("q8s:block[2]=f32", {4}, {3, 0.5f, 9, 2.2f});
  Candidate c = codes({127, 21, 127, 31});
  c.scale_bits = std::vector<std::uint32_t>{0x3CC18307u, 0x7F800000u};
  auto r = oracle::check(rq, c);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(!r->identical);
  BOOST_TEST(r->differing_scales == 1u);
  BOOST_TEST(r->non_finite_scales == std::vector<std::uint64_t>{1}, boost::test_tools::per_element());
  BOOST_REQUIRE(r->blocks.size() == 1u);
  BOOST_TEST(r->blocks[0].block == 1u);
  BOOST_TEST(r->blocks[0].diagnosis.find("the candidate's scale is inf") == 0u, r->blocks[0].diagnosis);
  BOOST_TEST(oracle::to_text(*r).find("the candidate's scale is inf or NaN in block 1\n") != std::string::npos,
             oracle::to_text(*r));
  c.scale_bits = std::vector<std::uint32_t>{0x7FC00000u, 0x3D912245u};
  r = oracle::check(rq, c);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->non_finite_scales == std::vector<std::uint64_t>{0}, boost::test_tools::per_element());
}

// The same request: scales rounded to nearest (0x3CC18306, 0x3D912245) leave the codes alone but
// move block 0's values (127 and 21 times the lower scale); truncated scales move both blocks'.
// A code changed under the right scale counts apart from codes whose scale differs.
BOOST_AUTO_TEST_CASE(codes_are_counted_apart_by_their_scale_and_values_beside_them) {
  const auto rq = request("q8s:block[2]=f32", {4}, {3, 0.5f, 9, 2.2f});
  Candidate nearest = codes({127, 21, 127, 31});
  nearest.scale_bits = std::vector<std::uint32_t>{0x3CC18306u, 0x3D912245u};
  auto r = oracle::check(rq, nearest);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->differing_elements == 0u);
  BOOST_TEST(r->differing_values == 2u);
  Candidate down = nearest;
  down.scale_bits = std::vector<std::uint32_t>{0x3CC18306u, 0x3D912244u};
  r = oracle::check(rq, down);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->differing_values == 4u);
  // Block 0's scale rounded to nearest and its second code 22 (a rounding error of its own);
  // block 1's second code 30 under the right scale.
  Candidate mixed = codes({127, 22, 127, 30});
  mixed.scale_bits = std::vector<std::uint32_t>{0x3CC18306u, 0x3D912245u};
  r = oracle::check(rq, mixed);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->differing_elements == 2u);
  BOOST_TEST(r->codes_with_scale_difference == 1u);
  BOOST_TEST(r->codes_under_same_scale == 1u);
  BOOST_TEST(r->differing_values == 3u);
}

// Integer codes have no sign of zero: a dequantized candidate's -0 for code 0 is the reference's
// +0, and the report says it compared them so. q8s, scale 1: -0.0 and -0.25 give code 0.
BOOST_AUTO_TEST_CASE(integer_kinds_take_plus_and_minus_zero_as_one_value) {
  const auto rq = request("q8s", {3}, {-0.0f, -0.25f, 2}, std::vector<float>{1});
  Candidate d;
  d.kind = CandidateKind::dequantized;
  d.values = {-0.0f, -0.0f, 2};
  auto r = oracle::check(rq, d);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->identical);
  BOOST_TEST(r->zero_signs_equal);
  const std::string text = oracle::to_text(*r);
  BOOST_TEST(text.find("identical under recipe exact: 3 values match bit for bit (an integer kind: +0 and -0 count as "
                       "the same value)") == 0u,
             text);
  BOOST_TEST(text.find("scale") == std::string::npos, text);
  // A float kind keeps the sign: e4m3 code 0x80 is -0.
  const auto rq8 = request("e4m3", {2}, {-0.0f, 1}, std::vector<float>{1});
  d.values = {0.0f, 1};
  r = oracle::check(rq8, d);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(!r->identical);
  BOOST_TEST(!r->zero_signs_equal);
  // Its scales are not known: no count of compared scales.
  BOOST_TEST(oracle::to_text(*r).find("scale(s)") == std::string::npos, oracle::to_text(*r));
  BOOST_TEST(oracle::to_text(*r).find("scales:") == std::string::npos, oracle::to_text(*r));
}

// Burn has no ue8m0 scales: checking an MX scheme under profile burn is refused, not run.
BOOST_AUTO_TEST_CASE(a_profile_that_cannot_describe_the_scheme_is_refused) {
  std::vector<float> x(32, 1.0f);
  auto rq = request("mxfp8", {32}, x, std::nullopt, std::nullopt, Profile::burn);
  const auto r = oracle::check(rq, codes(std::vector<std::int32_t>(32, 0x38)));
  BOOST_TEST(r.status().code() == ErrorCode::unsupported_profile);
  BOOST_TEST(r.status().message().find("Burn has no ue8m0 scales") != std::string::npos, r.status().message());
  rq.options.profile = Profile::exact;
  BOOST_TEST(oracle::check(rq, codes(std::vector<std::int32_t>(32, 0x38))).ok());
}

BOOST_AUTO_TEST_SUITE_END()

// Each peer's own output (tests/data/recipes: produced by the implementation, never by qscheme)
// checked against the exact profile: the search names the recipe, and checked against the recipe
// itself it is identical.
namespace {

namespace fs = std::filesystem;
const fs::path kRecipes = QSCHEME_RECIPES_DIR;

std::vector<std::uint8_t> file_bytes(const fs::path& p) {
  auto b = io::read_bytes(p.string());
  BOOST_REQUIRE_MESSAGE(b.ok(), b.status().to_string());
  return *b;
}

std::uint32_t le(const std::vector<std::uint8_t>& b, std::size_t at, int n) {
  std::uint32_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<std::uint32_t>(b.at(at + static_cast<std::size_t>(i))) << (8 * i);
  return v;
}

// ggml's blocks read as ggml-common.h lays them out: block_q8_0 is the f16 d then 32 int8 codes;
// block_q4_0 the f16 d then 16 bytes, byte j holding code j in its low nibble and code j + 16 in
// its high nibble, each offset by 8.
void read_ggml_blocks(const std::vector<std::uint8_t>& b, bool q4, Candidate& c) {
  const std::size_t size = q4 ? 18 : 34;
  c.scale_bits.emplace();
  for (std::size_t at = 0; at + size <= b.size(); at += size) {
    c.scale_bits->push_back(le(b, at, 2));
    std::vector<std::int32_t> block(32);
    for (std::size_t j = 0; j < 32; ++j) {
      if (q4) {
        const std::uint8_t byte = b[at + 2 + j % 16];
        block[j] = (j < 16 ? byte & 0x0F : byte >> 4) - 8;
      } else {
        block[j] = static_cast<std::int8_t>(b[at + 2 + j]);
      }
    }
    c.codes.insert(c.codes.end(), block.begin(), block.end());
  }
}

// One golden case as a candidate: codes (with scales and a global when the peer stores them),
// ggml's blocks, or the dequantized values when that is all the peer outputs.
Candidate golden_candidate(const fs::path& folder, const nlohmann::json& expect) {
  Candidate c;
  auto file = [&](const char* key) { return file_bytes(folder / expect.at(key).get<std::string>()); };
  if (expect.contains("ggml_bytes")) {
    read_ggml_blocks(file("ggml_bytes"), folder.filename() == "ggml-q4_0", c);
  } else if (expect.contains("codes_u8") || expect.contains("codes_i8")) {
    const bool is_signed = expect.contains("codes_i8");
    for (std::uint8_t b : file(is_signed ? "codes_i8" : "codes_u8")) {
      c.codes.push_back(is_signed ? static_cast<std::int8_t>(b) : b);
    }
    if (expect.contains("scales_u8")) {
      const std::vector<std::uint8_t> s = file("scales_u8");
      c.scale_bits = std::vector<std::uint32_t>(s.begin(), s.end());
    }
    if (expect.contains("global_f32")) c.global_bits = le(file("global_f32"), 0, 4);
  } else {
    c.kind = CandidateKind::dequantized;
    const std::vector<std::uint8_t> v = file("dequantized_f32");
    for (std::size_t i = 0; i + 4 <= v.size(); i += 4) c.values.push_back(f(le(v, i, 4)));
  }
  return c;
}

struct GoldenRequest {
  std::string name;
  CheckRequest request;  // under the exact profile, with the case's given scales
  Candidate candidate;
};

std::vector<GoldenRequest> golden_requests(const std::string& recipe) {
  std::vector<GoldenRequest> out;
  const fs::path folder = kRecipes / recipe;
  const auto cases = nlohmann::json::parse(file_bytes(folder / "cases.json"));
  for (const auto& c : cases.at("cases")) {
    if (c.value("each_row", false)) continue;  // the same rows as one tensor in another case
    auto input = io::npy::read_file((kRecipes / "inputs" / c.at("input").get<std::string>()).string());
    BOOST_REQUIRE(input.ok());
    std::optional<std::vector<float>> given;
    if (c.contains("given_scales")) given = c.at("given_scales").get<std::vector<float>>();
    CheckRequest rq = request(c.at("scheme").get<std::string>(), input->shape, input->f32, given);
    if (c.contains("given_zero_points")) {
      BOOST_REQUIRE(rq.options.scales.has_value());
      rq.options.scales->zero_points = c.at("given_zero_points").get<std::vector<std::int32_t>>();
    }
    out.push_back({c.at("name").get<std::string>(), std::move(rq), golden_candidate(folder, c.at("expect"))});
  }
  return out;
}

std::vector<std::string> golden_folders() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kRecipes)) {
    if (e.is_directory() && e.path().filename() != "inputs") out.push_back(e.path().filename());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(check_recipes)

BOOST_AUTO_TEST_CASE(each_peers_output_is_identical_under_its_recipe_and_named_under_the_exact_profile) {
  for (const std::string& recipe : golden_folders()) {
    std::size_t named = 0;
    for (GoldenRequest& g : golden_requests(recipe)) {
      BOOST_TEST_CONTEXT(recipe << " / " << g.name) {
        CheckRequest under_recipe = g.request;
        under_recipe.options = recipe_options(*find_recipe(recipe).value(), g.request.options);
        under_recipe.recipe = recipe;
        auto r = oracle::check(under_recipe, g.candidate);
        BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
        BOOST_TEST(r->identical, oracle::to_text(*r));
        BOOST_TEST(r->checked_against == recipe);

        // A zero given scale over non-zero input (torch's per-channel case) is an error under the
        // exact profile; burn, which divides by 0.1 there, is the profile that takes it in sym mode.
        CheckRequest profile = g.request;
        if (!reference::quantize(profile.scheme, profile.shape, profile.x, profile.options).ok()) {
          // burn refuses affine mode: no profile takes a zero scale there.
          if (profile.scheme.affine()) continue;
          profile.options.profile = Profile::burn;
        }
        r = oracle::check(profile, g.candidate);
        BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
        if (r->identical) continue;  // this input does not tell the recipe from the profile
        ++named;
        BOOST_TEST(r->stage == 0, oracle::to_text(*r));
        BOOST_TEST(contains(names(*r), recipe), oracle::to_text(*r));
        BOOST_TEST(oracle::to_text(*r).find("DIFFERS from recipe " + r->checked_against + ": ") == 0u, oracle::to_text(*r));
      }
    }
    BOOST_TEST(named > 0u, recipe << ": no golden case tells it from the exact profile");
  }
}

// Each recipe with one rule changed, on the first crafted row (one block of 32) where the change
// alters the output: the reference's output under the changed point, checked against the recipe,
// is named as that change, unless a recipe of the scheme gives the same output on that row: then
// the search stops at those recipes, and names exactly them. The candidates and the other
// recipes' outputs come from the reference engine, which tests/reference_recipes_test.cpp holds
// to the peers' bytes; the names come from the rule table.
BOOST_AUTO_TEST_CASE(a_single_rule_changed_from_each_recipe_is_named) {
  auto crafted = io::npy::read_file((kRecipes / "inputs" / "crafted.npy").string());
  BOOST_REQUIRE(crafted.ok());
  const std::size_t rows = crafted->shape.at(0);
  struct Start {
    std::string recipe;
    std::string scheme;
    std::optional<float> given;
  };
  const std::vector<Start> starts{
      {"exact", "q8_0", {}},          {"burn", "q8_0", {}},         {"onnx", "q8f", 0.1f},
      {"ocp-mx", "mxfp8", {}},        {"torchao-mx-ceil", "mxfp4", {}}, {"torchao-mx-even", "mxfp8", {}},
      {"torchao-mx-rceil", "mxfp8", {}}, {"microxcaling", "mxfp4", {}}, {"nvidia-nvfp4", "nvfp4", {}},
      {"ggml-q8_0", "q8_0", {}},      {"ggml-q8_0-x86", "q8_0", {}}, {"ggml-q4_0", "q4f:packed-u32(0):block[32]=f16", {}},
      {"torch-qint8", "q8f", 0.1f},   {"torch-quint8", "u8:affine", 0.1f},
  };
  const auto fields = rule_fields();
  std::size_t named = 0;
  std::size_t by_recipe = 0;
  for (const Start& s : starts) {
    const Recipe& recipe = *find_recipe(s.recipe).value();
    std::optional<std::vector<float>> given;
    if (s.given) given = std::vector<float>{*s.given};
    // The recipe's own output on each row (none where the row is an error under it), and every
    // other recipe's of the scheme.
    std::vector<CheckRequest> row_requests;
    std::vector<std::optional<QuantizedTensor>> own;
    std::vector<std::vector<std::pair<std::string, QuantizedTensor>>> others(rows);
    for (std::size_t row = 0; row < rows; ++row) {
      std::vector<float> x(crafted->f32.begin() + static_cast<std::ptrdiff_t>(row * 32),
                           crafted->f32.begin() + static_cast<std::ptrdiff_t>(row * 32 + 32));
      CheckRequest rq = request(s.scheme, {1, 32}, x, given);
      rq.options = recipe_options(recipe, rq.options);
      auto q = reference::quantize(rq.scheme, rq.shape, rq.x, rq.options);
      own.push_back(q ? std::optional<QuantizedTensor>(*q) : std::nullopt);
      for (const Recipe& other : recipes()) {
        if (other.rules == recipe.rules || !recipe_accepts(other, rq.scheme)) continue;
        if (profile_of(other.rules) == Profile::burn && rq.scheme.scale_dtype() == ScaleDtype::ue8m0) continue;
        auto oq = reference::quantize(rq.scheme, rq.shape, rq.x, recipe_options(other, rq.options));
        if (oq) others[row].emplace_back(other.name, *oq);
      }
      row_requests.push_back(std::move(rq));
    }
    const auto same = [](const QuantizedTensor& a, const QuantizedTensor& b) {
      return a.codes == b.codes && a.scale_bits == b.scale_bits && a.global_bits == b.global_bits;
    };
    for (std::size_t field = 0; field < fields.size(); ++field) {
      for (std::uint8_t v = 0; v < fields[field].choices.size(); ++v) {
        Rules changed = recipe.rules;
        if (field_value(changed, field) == v) continue;
        set_field_value(changed, field, v);
        const CheckRequest& any = row_requests.front();
        if (!validate_rules(changed, any.scheme, any.options.calibration, any.options.scales.has_value()).ok()) continue;
        // The name: the recipe whose point this is, else the change.
        std::string want = std::string(s.recipe) + " with " + std::string(fields[field].name) + "=" +
                           std::string(fields[field].choices[v].name);
        for (const Recipe& other : recipes()) {
          if (other.rules == changed && recipe_accepts(other, any.scheme)) want = other.name;
        }
        for (std::size_t row = 0; row < rows; ++row) {
          if (!own[row]) continue;
          QuantizeOptions o = row_requests[row].options;
          o.rules = changed;
          auto q = reference::quantize(row_requests[row].scheme, row_requests[row].shape, row_requests[row].x, o);
          if (!q || same(*q, *own[row])) continue;
          std::vector<std::string> recipes_alike;
          for (const auto& [name, oq] : others[row]) {
            if (same(*q, oq)) recipes_alike.push_back(name);
          }
          Candidate c = codes(q->codes);
          c.scale_bits = q->scale_bits;
          c.global_bits = q->global_bits;
          auto r = oracle::check(row_requests[row], c);
          BOOST_TEST_CONTEXT(s.recipe << " on " << s.scheme << ", crafted row " << row << ", " << want) {
            BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
            BOOST_TEST(!r->identical);
            if (recipes_alike.empty()) {
              BOOST_TEST(r->stage == 1, oracle::to_text(*r));
              BOOST_TEST(contains(names(*r), want), oracle::to_text(*r));
            } else {
              BOOST_TEST(r->stage == 0, oracle::to_text(*r));
              BOOST_TEST(names(*r) == recipes_alike, boost::test_tools::per_element());
              ++by_recipe;
            }
          }
          ++named;
          break;
        }
      }
    }
  }
  BOOST_TEST_MESSAGE(named << " single rule changes named, " << by_recipe << " of them by a recipe of the scheme");
  BOOST_TEST(named > 100u);
}

BOOST_AUTO_TEST_SUITE_END()
