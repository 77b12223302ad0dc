// Reproduces every quantize, quantize_given and dequantize vector of Burn's published tests
// (tests/data/burn-golden.json) under each profile the vector names, bit for bit: codes,
// stored scale values, the global scale and the dequantized f32 patterns. The vectors are data
// from Burn/CubeCL/cubek tests, never generated from this code.
//
// Not checked here: ops pack and bytes (encode/decode, owned by the packing engine's tests) and
// blocks (scheme/layout's tests). They are counted so that a new op cannot slip by unnoticed.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/text.hpp"

#ifndef QSCHEME_GOLDEN_JSON
#error "QSCHEME_GOLDEN_JSON must name burn-golden.json (set by tests/CMakeLists.txt)"
#endif

namespace {

using namespace qscheme;
// float as the JSON float type: the lexer then parses each decimal straight to the nearest f32
// (strtof), the way the file's floats are meant to be read, with no double rounding.
using Json = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t,
                                  std::uint64_t, float>;

Json load_vectors() {
  std::ifstream in(QSCHEME_GOLDEN_JSON);
  BOOST_TEST_REQUIRE(in.good(), "golden vectors not found at " QSCHEME_GOLDEN_JSON
                                " (tests/CMakeLists.txt points there; the file is required, not optional)");
  return Json::parse(in);
}


std::vector<float> floats(const Json& j) {
  std::vector<float> out;
  for (const Json& v : j) out.push_back(v.get<float>());
  return out;
}

std::vector<std::uint64_t> shape_of(const Json& v) {
  std::vector<std::uint64_t> out;
  for (const Json& d : v.at("shape")) out.push_back(d.get<std::uint64_t>());
  return out;
}

Profile profile_of(const Json& p) {
  const auto prof = profile_from_string(p.get<std::string>());
  BOOST_TEST_REQUIRE(prof.has_value(), "unknown profile " << p);
  return *prof;
}

// The pattern of a scale value in dtype d: found by search over the dtype's codes, so that the
// test does not depend on the engine's round-up to build its own expectation.
std::uint32_t scale_pattern(ScaleDtype d, float value) {
  if (d == ScaleDtype::f32) return qscheme::f32_bits(value);
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const auto v = reference::scale_value(d, c);
    if (v && qscheme::f32_bits(v->f32) == qscheme::f32_bits(value)) return c;
  }
  BOOST_FAIL("scale " << value << " is not a value of " << to_string(d));
  return 0;
}

void check_scales(const Json& v, const QuantizedTensor& q) {
  const std::vector<float> expected = floats(v.at("block_scales"));
  BOOST_TEST_REQUIRE(q.scale_bits.size() == expected.size());
  for (std::size_t j = 0; j < expected.size(); ++j) {
    const auto got = reference::scale_value(q.scheme.scale_dtype(), q.scale_bits[j]);
    BOOST_TEST_REQUIRE(got.ok());
    BOOST_TEST(qscheme::f32_bits(got->f32) == qscheme::f32_bits(expected[j]), "scale " << j << ": " << got->f32 << " != " << expected[j]);
  }
  if (v.at("global_scale").is_null()) {
    BOOST_TEST(!q.global_bits.has_value());
  } else {
    BOOST_TEST_REQUIRE(q.global_bits.has_value());
    BOOST_TEST(*q.global_bits == qscheme::f32_bits(v.at("global_scale").get<float>()));
  }
}

void check_dequantized(const Json& v, const QuantizedTensor& q) {
  const auto out = reference::dequantize(q);
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  const std::vector<float> expected = floats(v.at("dequantized"));
  BOOST_TEST_REQUIRE(out->size() == expected.size());
  for (std::size_t n = 0; n < expected.size(); ++n) {
    BOOST_TEST(qscheme::f32_bits((*out)[n]) == qscheme::f32_bits(expected[n]), "element " << n << ": " << (*out)[n] << " != " << expected[n]);
  }
}

void check_quantize(const Json& v, Profile profile, const Scheme& scheme) {
  const std::vector<std::uint64_t> shape = shape_of(v);
  const std::vector<float> x = floats(v.at("input"));
  QuantizeOptions o;
  o.profile = profile;
  if (v.at("op") == "quantize_given") {
    GivenScales g;
    g.block = floats(v.at("given_scales"));
    if (!v.at("given_global").is_null()) g.global = v.at("given_global").get<float>();
    o.scales = g;
  }
  const auto q = reference::quantize(scheme, shape, x, o);
  BOOST_TEST_REQUIRE(q.ok(), q.status().to_string());
  std::vector<std::int32_t> expected;
  for (const Json& c : v.at("codes")) expected.push_back(c.get<std::int32_t>());
  BOOST_TEST(q->codes == expected, boost::test_tools::per_element());
  BOOST_TEST((q->profile == profile));
  BOOST_TEST(q->shape == shape, boost::test_tools::per_element());
  check_scales(v, *q);
  check_dequantized(v, *q);
}

void check_dequantize(const Json& v, Profile profile, const Scheme& scheme) {
  QuantizedTensor q;
  q.scheme = scheme;
  q.profile = profile;
  q.shape = shape_of(v);
  for (const Json& c : v.at("codes")) q.codes.push_back(c.get<std::int32_t>());
  for (float s : floats(v.at("block_scales"))) q.scale_bits.push_back(scale_pattern(scheme.scale_dtype(), s));
  if (!v.at("global_scale").is_null()) q.global_bits = qscheme::f32_bits(v.at("global_scale").get<float>());
  check_dequantized(v, q);
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_golden_quantize_and_dequantize_vector_is_reproduced_bit_exactly) {
  const Json doc = load_vectors();
  std::map<std::string, int> vectors;  // per op
  std::map<std::string, int> runs;     // per op, one per (vector, profile)
  for (const Json& v : doc.at("vectors")) {
    const std::string op = v.at("op").get<std::string>();
    ++vectors[op];
    if (op != "quantize" && op != "quantize_given" && op != "dequantize") continue;
    const auto scheme = parse_scheme(v.at("scheme").get<std::string>());
    BOOST_TEST_REQUIRE(scheme.ok(), scheme.status().to_string());
    for (const Json& p : v.at("profiles")) {
      BOOST_TEST_CONTEXT("vector " << v.at("name").get<std::string>() << ", profile " << p.get<std::string>()) {
        const Profile profile = profile_of(p);
        if (op == "dequantize") check_dequantize(v, profile, *scheme);
        else check_quantize(v, profile, *scheme);
        ++runs[op];
      }
    }
  }
  for (const auto& [op, n] : vectors) {
    BOOST_TEST_MESSAGE("op " << op << ": " << n << " vector(s), " << runs[op] << " profile run(s) checked here");
  }
  // The file's contents as of this test; a change to the file must be looked at, not absorbed.
  BOOST_TEST(vectors["quantize"] == 3);
  BOOST_TEST(vectors["quantize_given"] == 8);
  BOOST_TEST(vectors["dequantize"] == 1);
  BOOST_TEST(runs["quantize"] == 6);
  BOOST_TEST(runs["quantize_given"] == 16);
  BOOST_TEST(runs["dequantize"] == 2);
  // Owned elsewhere (see the header comment), counted so that none is silently new.
  BOOST_TEST(vectors["pack"] == 3);
  BOOST_TEST(vectors["bytes"] == 1);
  BOOST_TEST(vectors["blocks"] == 4);
  BOOST_TEST(vectors.size() == 6u);
}
