// qscheme check (oracle/check.hpp): the reference's own output is "identical"; a candidate made
// by hand the way a known bug would make it is "differs", with the right count and a diagnosis
// that names that bug. Every candidate below is written out literally, computed by hand (or with
// Python's fractions, noted where so) from the rule it breaks, never with qscheme itself.
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <string>

#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/ostream.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"
#include "oracle/check.hpp"

using namespace qscheme;
using oracle::Candidate;
using oracle::CandidateKind;
using oracle::CheckRequest;

namespace {


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
  // x / 1 = 0.5, 1.5, 2.5, -0.5, -2.5: to even 0 2 2 0 -2; away 1 2 3 -1 -3.
  const auto rq = request("q8s", {6}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 3}, std::vector<float>{1});
  expect_diagnosis(rq, codes({1, 2, 3, -1, -3, 3}), 4, {"ties-away"});
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
  const auto rq = request("q8s", {2}, {f32_from_bits(0xC0500001u), f32_from_bits(0x40166666u)}, std::vector<float>{f32_from_bits(0x3DCCCCCDu)});
  expect_diagnosis(rq, codes({-32, 23}), 1, {"f32-quotient"});
  expect_diagnosis(rq, codes({-33, 24}), 1, {"reciprocal"});
}

BOOST_AUTO_TEST_CASE(scale_nearest_and_truncated) {
  // q8s, calibrated, blocks of 2: s* = 3/127 and 9/127 (Python fractions). Up: 0x3CC18307,
  // 0x3D912245. Nearest: 0x3CC18306 (below), 0x3D912245 (above). Down: 0x3CC18306, 0x3D912244.
  // The codes are the same under all three (127, 21, 127, 31).
  const auto rq = request("q8s:block[2]=f32", {4}, {3, 0.5f, 9, 2.2f});
  Candidate nearest = codes({127, 21, 127, 31});
  nearest.scale_bits = std::vector<std::uint32_t>{0x3CC18306u, 0x3D912245u};
  expect_diagnosis(rq, nearest, 0, {"scale-nearest"});
  Candidate down = codes({127, 21, 127, 31});
  down.scale_bits = std::vector<std::uint32_t>{0x3CC18306u, 0x3D912244u};
  auto r = oracle::check(rq, down);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->differing_scales == 2u);
  BOOST_TEST(r->differing_elements == 0u);
  BOOST_TEST(names(*r) == std::vector<std::string>{"scale-truncated"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(saturation) {
  // q8s, scale 1: 200 -> 127 and -200 -> -127; wrapping gives -56 and 56; the full int8 range
  // clamps -200 to -128.
  const auto rq = request("q8s", {3}, {200, -200, 5}, std::vector<float>{1});
  expect_diagnosis(rq, codes({-56, 56, 5}), 2, {"no-saturation"});
  expect_diagnosis(rq, codes({127, -128, 5}), 1, {"full-range-saturation"});
  // e4m3, scale 1: 500 and -1000 saturate to 0x7E / 0xFE; without saturation they are NaN.
  const auto rq8 = request("e4m3", {3}, {500, -1000, 1}, std::vector<float>{1});
  expect_diagnosis(rq8, codes({0x7F, 0xFF, 0x38}), 2, {"no-saturation"});
}

BOOST_AUTO_TEST_CASE(zero_sign_and_integer_before_cast) {
  // e4m3, scale 1: -0 -> 0x80, 1 -> 0x38, -0.0001 -> 0x80 (below half the smallest subnormal).
  const auto rq = request("e4m3", {3}, {-0.0f, 1, -0.0001f}, std::vector<float>{1});
  expect_diagnosis(rq, codes({0x00, 0x38, 0x00}), 2, {"zero-sign-dropped"});
  // 1.25 -> 0x3A, 2.6 -> 2.5 = 0x42, 0.3 -> 0.3125 = 0x2A; rounded to integers first: 1, 3, 0.
  const auto rq2 = request("e4m3", {3}, {1.25f, 2.6f, 0.3f}, std::vector<float>{1});
  expect_diagnosis(rq2, codes({0x38, 0x44, 0x00}), 3, {"integer-before-cast"});
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
  BOOST_TEST(names(*r) == std::vector<std::string>{"packing-reversed"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(two_level_product) {
  // g = f32(0.1) = 0x3DCCCCCD, s = f16 1 + 2^-10. g * s needs 35 bits; f32(g * s) = 0x3DCD0000 =
  // 0.10009765625. x = 1.5 * 0.10009765625 = 0.150146484375: exactly 1.5 against the rounded
  // product (tie -> 2), just below 1.5 against the exact one (-> 1). f32(x / (g s)) is 1.5 too,
  // so the f32 quotient and the reciprocal reproduce this candidate as well.
  const auto rq = request("q8s:block[1]=f16:tensor=f32", {1}, {0.150146484375f}, std::vector<float>{1.0009765625f},
                          f32_from_bits(0x3DCCCCCDu));
  expect_diagnosis(rq, codes({2}), 1, {"f32-quotient", "reciprocal", "two-level-f32-product"});
}

BOOST_AUTO_TEST_CASE(burn_profile_deviations) {
  // Burn divides by f32(0.1) where the scale is 0: 1 / 0.1 = 10, 2 / 0.1 = 20. Without that
  // substitution the codes are 0.
  const auto rq = request("q8s", {2}, {1, 2}, std::vector<float>{0}, std::nullopt, Profile::burn);
  expect_diagnosis(rq, codes({0, 0}), 2, {"no-zero-scale-substitution"});
  // Burn rounds ties away: 0.5 -> 1, 2.5 -> 3; an implementation rounding to even gives 0, 2.
  const auto rq2 = request("q8s", {2}, {0.5f, 2.5f}, std::vector<float>{1}, std::nullopt, Profile::burn);
  expect_diagnosis(rq2, codes({0, 2}), 2, {"ties-even"});
}

BOOST_AUTO_TEST_CASE(onnx_profile_deviations) {
  // ONNX divides in f32: 0.25 / f32(0.1) -> 2.5 -> 2 (even), 0.35f / f32(0.1) -> 3.5 -> 4.
  const auto rq = request("q8f", {2}, {0.25f, 0.35f}, std::vector<float>{f32_from_bits(0x3DCCCCCDu)}, std::nullopt, Profile::onnx);
  auto r = oracle::check(rq, codes({2, 4}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->identical);
  // An exact division gives 2.4999.. -> 2 and 3.4999.. -> 3; ties away from zero give 3 and 4.
  expect_diagnosis(rq, codes({2, 3}), 1, {"exact-quotient"});
  expect_diagnosis(rq, codes({3, 4}), 1, {"ties-away"});
}

BOOST_AUTO_TEST_CASE(dequantized_candidate) {
  // q8s, scale 1: the values are the codes. A ties-away implementation gives 1, 3 for 0.5, 2.5.
  const auto rq = request("q8s", {2}, {0.5f, 2.5f}, std::vector<float>{1});
  Candidate d;
  d.kind = CandidateKind::dequantized;
  d.values = {1, 3};
  expect_diagnosis(rq, d, 2, {"ties-away"});
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
  // first code is 0, away from zero 1. A deviation is tried on the first 16 differing blocks
  // and then, if it reproduces those, on the whole tensor.
  std::vector<float> x;
  for (int b = 0; b < 40; ++b) x.insert(x.end(), {0.5f, static_cast<float>(b)});
  const auto rq = request("q8s:block[2]=f32", {80}, x, std::vector<float>(40, 1.0f));
  std::vector<std::int32_t> away;
  for (int b = 0; b < 40; ++b) away.insert(away.end(), {1, b});
  expect_diagnosis(rq, codes(away), 40, {"ties-away"});
  // Away from zero in the first 20 blocks only: ties-away passes the trial blocks but not the
  // whole tensor, where blocks 20..39 hold ties too. No deviation reproduces it.
  std::vector<std::int32_t> half = away;
  for (int b = 20; b < 40; ++b) half[static_cast<std::size_t>(2 * b)] = 0;
  expect_diagnosis(rq, codes(half), 20, {});
  // The same as values, and as bytes (one byte a q8s code, then 40 f32 scales of 1.0).
  Candidate d;
  d.kind = CandidateKind::dequantized;
  d.values.assign(away.begin(), away.end());
  expect_diagnosis(rq, d, 40, {"ties-away"});
  Candidate b;
  b.kind = CandidateKind::bytes;
  for (std::int32_t c : away) b.bytes.push_back(static_cast<std::uint8_t>(c));
  for (int k = 0; k < 40; ++k) b.bytes.insert(b.bytes.end(), {0x00, 0x00, 0x80, 0x3F});
  expect_diagnosis(rq, b, 40, {"ties-away"});
  // Encoded codes and scales (what a Q.json candidate is read into): the same, without byte counts.
  Candidate e = b;
  e.kind = CandidateKind::quantized;
  e.encoded = true;
  auto r = oracle::check(rq, e);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->differing_elements == 40u);
  BOOST_TEST(r->bytes == 0u);
  BOOST_TEST(names(*r) == std::vector<std::string>{"ties-away"}, boost::test_tools::per_element());
  BOOST_REQUIRE(r->first.size() == oracle::kMaxShown);
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
  BOOST_TEST(names(*r) == std::vector<std::string>{"packing-reversed"}, boost::test_tools::per_element());
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

  // Ties to even (the exact profile's) differ in one element; no profile deviation is named.
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
  BOOST_TEST(r->diagnosis.empty());
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
