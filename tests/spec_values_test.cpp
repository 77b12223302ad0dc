// Values worked out by hand from the spec (Burn's model as docs/SEMANTICS.md states it), for
// rules that Burn's golden values and the ONNX node tests leave open. Each case runs on both
// engines: the engines are compared with each other elsewhere, so a rule both get wrong in the
// same way shows only against values like these. The arithmetic is in the comments.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "fast/fast.hpp"
#include "reference/reference.hpp"
#include "scheme/text.hpp"

using namespace qscheme;

namespace {

struct Engine {
  const char* name;
  Result<QuantizedTensor> (*quantize)(const Scheme&, Shape, std::span<const float>, const QuantizeOptions&);
};
const Engine kEngines[] = {{"reference", &reference::quantize}, {"fast", &fast::quantize}};

Scheme scheme(const char* text) {
  auto s = parse_scheme(text);
  BOOST_TEST_REQUIRE(s.ok(), text << ": " << s.status().to_string());
  return *s;
}

QuantizeOptions options(Profile p, std::optional<GivenScales> given = std::nullopt) {
  QuantizeOptions o;
  o.profile = p;
  o.scales = std::move(given);
  return o;
}

constexpr std::uint32_t kOneF32 = 0x3F800000u;

}  // namespace

// Calibrated minifloat scales (burn-model.md §2 and §4): scale = 2 max|x| / (b - a), with
// (a, b) = (-448, 448) for e4m3, (-57344, 57344) for e5m2 and (-6, 6) for e2m1. A tensor whose
// largest magnitude is the format's maximum gets 2 * 448 / 896 = 2 * 57344 / 114688 = 2 * 6 / 12
// = 1, an f32 already (so rounding up, exact, and the f32 division, burn, both keep it), and each
// code is the format's round-to-nearest-even encoding of x itself.
BOOST_AUTO_TEST_CASE(a_maximum_at_the_format_maximum_gives_minifloat_scale_one) {
  struct Case {
    const char* scheme;
    std::vector<float> x;
    std::vector<std::int32_t> codes;
  };
  const std::vector<Case> cases{
      // e4m3 = s.eeee.mmm, bias 7: 448 = 1.75 * 2^8 -> e 15, m 6 -> 0x7E; -1 = 2^0 -> e 7 -> 0x38 with
      // the sign 0x80 -> 0xB8; 0.5 = 2^-1 -> e 6 -> 0x30; 3 = 1.5 * 2^1 -> e 8, m 4 -> 0x44;
      // 2^-9 = the smallest subnormal (0.001 * 2^-6) -> 0x01.
      {"e4m3", {448.0f, -1.0f, 0.5f, 3.0f, 0x1p-9f}, {0x7E, 0xB8, 0x30, 0x44, 0x01}},
      // e5m2 = s.eeeee.mm, bias 15: 57344 = 1.75 * 2^15 -> e 30, m 3 -> 0x7B; -2 = 2^1 -> e 16 -> 0x40
      // with the sign -> 0xC0; 0.75 = 1.5 * 2^-1 -> e 14, m 2 -> 0x3A; 2^-16 = the smallest subnormal
      // (0.01 * 2^-14) -> 0x01.
      {"e5m2", {57344.0f, -2.0f, 0.75f, 0x1p-16f}, {0x7B, 0xC0, 0x3A, 0x01}},
      // e2m1 = s.ee.m, magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 for codes 0..7: 6 -> 0x7; -1.5 -> 0x8 | 0x3
      // = 0xB; 2.5 is the midpoint of 2 (0x4, mantissa bit 0) and 3 (0x5): even -> 0x4; 0.25 is the
      // midpoint of 0 and 0.5 (0x1): even -> 0x0.
      {"e2m1", {6.0f, -1.5f, 2.5f, 0.25f}, {0x7, 0xB, 0x4, 0x0}},
  };
  for (const Case& c : cases) {
    for (const Engine& e : kEngines) {
      for (Profile p : {Profile::exact, Profile::burn}) {
        BOOST_TEST_CONTEXT(c.scheme << ", " << e.name << ", profile " << to_string(p)) {
          const std::vector<std::uint64_t> shape{c.x.size()};
          const auto q = e.quantize(scheme(c.scheme), shape, c.x, options(p));
          BOOST_TEST_REQUIRE(q.ok(), q.status().to_string());
          BOOST_TEST(q->scale_bits == std::vector<std::uint32_t>{kOneF32}, boost::test_tools::per_element());
          BOOST_TEST(q->codes == c.codes, boost::test_tools::per_element());
        }
      }
    }
  }
}

// Two levels (docs/SEMANTICS.md §5, item 5): exact divides by the exact product s * g, burn by
// f32(g * s). Block scale s = 1 + 2^-10 (f16 0x3C01), global g = 1 + 2^-14:
//   s * g = 1 + 2^-10 + 2^-14 + 2^-24, 25 significant bits;
//   f32(s * g): 2^-24 is half an ulp of [1, 2), a tie, and the even neighbour (bit 2^-23 clear) is
//   e_r = 1 + 2^-10 + 2^-14.
// x = 1.5 * e_r = 1.5 + 1.5 * 2^-10 + 1.5 * 2^-14 = 0x1.8066p+0, an f32 (bits 2^0 .. 2^-15).
//   exact: x / (s * g) = 1.5 * e_r / (e_r + 2^-24) < 1.5, not a tie: code 1 (and -x: -1);
//   burn:  f32(x / e_r) = 1.5 exactly, a tie, away from zero: code 2 (and -x: -2).
BOOST_AUTO_TEST_CASE(two_level_codes_divide_by_the_exact_product_in_exact_and_its_f32_rounding_in_burn) {
  const float s = 0x1.004p+0f;  // 1 + 2^-10
  const float g = 0x1.0004p+0f;  // 1 + 2^-14
  const float x = 0x1.8066p+0f;  // 1.5 * (1 + 2^-10 + 2^-14)
  const std::vector<float> xs{x, -x};
  const std::vector<std::uint64_t> shape{2};
  for (const Engine& e : kEngines) {
    for (const auto& [p, expected] : {std::pair{Profile::exact, std::vector<std::int32_t>{1, -1}},
                                      std::pair{Profile::burn, std::vector<std::int32_t>{2, -2}}}) {
      BOOST_TEST_CONTEXT(e.name << ", profile " << to_string(p)) {
        const auto q = e.quantize(scheme("q8s:block[2]=f16:tensor=f32"), shape, xs, options(p, GivenScales{{s}, g}));
        BOOST_TEST_REQUIRE(q.ok(), q.status().to_string());
        BOOST_TEST(q->scale_bits == std::vector<std::uint32_t>{0x3C01u}, boost::test_tools::per_element());
        BOOST_TEST(q->codes == expected, boost::test_tools::per_element());
      }
    }
  }
}
