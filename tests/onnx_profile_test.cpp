// Profile onnx: hand-computed ONNX QuantizeLinear results (f32 quotient, ties to even,
// saturation, e2m1's unsigned zero), its errors, and the fast engine against the reference on
// seeded random tensors for every value kind, per-tensor, per-axis and blocked.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <vector>

#include "fast/fast.hpp"
#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/ostream.hpp"
#include "scheme/text.hpp"

using namespace qscheme;

namespace {

Scheme scheme(const char* text) {
  auto s = parse_scheme(text);
  BOOST_REQUIRE_MESSAGE(s.ok(), text);
  return *s;
}

QuantizeOptions onnx(std::vector<float> scales) {
  QuantizeOptions o;
  o.profile = Profile::onnx;
  o.scales = GivenScales{std::move(scales), std::nullopt};
  return o;
}

std::vector<std::int32_t> codes(const char* s, std::vector<std::uint64_t> shape, std::vector<float> x,
                                std::vector<float> scales) {
  auto r = reference::quantize(scheme(s), shape, x, onnx(scales));
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  auto f = fast::quantize(scheme(s), shape, x, onnx(scales));
  BOOST_REQUIRE_MESSAGE(f.ok(), f.status().to_string());
  BOOST_TEST(r->codes == f->codes, boost::test_tools::per_element());
  return r->codes;
}

// SplitMix64 (portable).
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(profile_names) {
  BOOST_TEST(to_string(Profile::onnx) == "onnx");
  BOOST_TEST((profile_from_string("onnx") == Profile::onnx));
}

BOOST_AUTO_TEST_CASE(f32_quotient_ties_to_even) {
  // Scale f32(0.1) = 0x3DCCCCCD. 0.25 / s = 2.49999996.. exactly, 2.5 in f32 -> even 2.
  // 0.35f / s = 3.4999998.. exactly, 3.5 in f32 -> 4 (the exact profile gives 3, burn 4).
  // 0.5 / 1 -> 0, 1.5 -> 2, -2.5 -> -2; 300 -> 127, -300 -> -128 (int8 = q8f).
  const float s = qscheme::f32_from_bits(0x3DCCCCCDu);
  BOOST_TEST(codes("q8f", {2}, {0.25f, 0.35f}, {s}) == (std::vector<std::int32_t>{2, 4}), boost::test_tools::per_element());
  BOOST_TEST(codes("q8f", {5}, {0.5f, 1.5f, -2.5f, 300, -300}, {1}) == (std::vector<std::int32_t>{0, 2, -2, 127, -128}),
             boost::test_tools::per_element());
  // int4 [-8, 7], int2 [-2, 1].
  BOOST_TEST(codes("q4f", {3}, {100, -100, 6.5f}, {1}) == (std::vector<std::int32_t>{7, -8, 6}), boost::test_tools::per_element());
  BOOST_TEST(codes("q2f", {4}, {5, -5, 0.5f, -1.5f}, {1}) == (std::vector<std::int32_t>{1, -2, 0, -2}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(minifloats_and_the_sign_of_zero) {
  // e4m3: -0 keeps its sign (0x80), 100 is a tie between 96 and 104 -> 96 (0x6C), 1e6 -> 448.
  BOOST_TEST(codes("e4m3", {3}, {-0.0f, 100, 1e6f}, {1}) == (std::vector<std::int32_t>{0x80, 0x6C, 0x7E}),
             boost::test_tools::per_element());
  // e2m1: -0 -> +0 (ONNX adds the zero point), -0.1 -> -0 (0x8; a negative value rounding to
  // zero keeps the sign), 1.25 -> 1 (tie to even, 0x2), -7 -> -6 (0xF).
  BOOST_TEST(codes("e2m1", {4}, {-0.0f, -0.1f, 1.25f, -7}, {1}) == (std::vector<std::int32_t>{0x0, 0x8, 0x2, 0xF}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(errors) {
  const std::vector<float> x{1, 2};
  const std::vector<std::uint64_t> shape{2};
  QuantizeOptions calibrated;
  calibrated.profile = Profile::onnx;
  BOOST_TEST(reference::quantize(scheme("q8f"), shape, x, calibrated).status().code() == ErrorCode::unsupported_profile);
  BOOST_TEST(fast::quantize(scheme("q8f"), shape, x, calibrated).status().code() == ErrorCode::unsupported_profile);
  BOOST_TEST(reference::quantize(scheme("q8f:block[2]=f16"), shape, x, onnx({1})).status().code() ==
             ErrorCode::unsupported_profile);
  BOOST_TEST(fast::quantize(scheme("q8f:block[2]=f16"), shape, x, onnx({1})).status().code() ==
             ErrorCode::unsupported_profile);
  BOOST_TEST(reference::quantize(scheme("q8f"), shape, x, onnx({0})).status().code() == ErrorCode::zero_scale_nonzero_input);
  BOOST_TEST(fast::quantize(scheme("q8f"), shape, x, onnx({0})).status().code() == ErrorCode::zero_scale_nonzero_input);
}

BOOST_AUTO_TEST_CASE(fast_matches_reference_on_random_tensors) {
  Rng rng{0x4F4E4E58ull};
  const char* schemes[] = {"q8f",           "q8s:block[5]=f32", "q4f:block[3,1]=f32", "q4s:packed-u32(0):block[8]=f32",
                           "q2f:block[4]=f32", "q2s",           "e4m3:block[7]=f32", "e5m2",
                           "e2m1:block[1,6]=f32", "e2m1:packed-native(0)"};
  int compared = 0;
  for (const char* text : schemes) {
    const Scheme s = scheme(text);
    for (int trial = 0; trial < 20; ++trial) {
      const std::vector<std::uint64_t> shape{1 + rng.next() % 9, 1 + rng.next() % 17};
      auto l = make_layout(s, shape);
      BOOST_REQUIRE(l.ok());
      std::vector<float> x(l->elements);
      for (float& v : x) {
        // Random f32 bit patterns of moderate exponent, some exact ties and zeros of both signs.
        const std::uint64_t r = rng.next();
        if (r % 11 == 0) v = (r & 16) ? -0.0f : 0.0f;
        else if (r % 7 == 0) v = static_cast<float>(static_cast<int>(r >> 8) % 40 - 20) + 0.5f;
        else v = qscheme::f32_from_bits(static_cast<std::uint32_t>(((r >> 32) & 0x807FFFFFu) | ((100u + (r >> 20) % 60) << 23)));
      }
      std::vector<float> scales(l->scales);
      for (float& v : scales) {
        const std::uint64_t r = rng.next();
        v = (r % 5 == 0) ? 1.0f : qscheme::f32_from_bits(static_cast<std::uint32_t>((r & 0x007FFFFFu) | ((115u + (r >> 24) % 30) << 23)));
      }
      auto rq = reference::quantize(s, shape, x, onnx(scales));
      auto fq = fast::quantize(s, shape, x, onnx(scales));
      BOOST_REQUIRE_MESSAGE(rq.ok(), rq.status().to_string());
      BOOST_REQUIRE_MESSAGE(fq.ok(), fq.status().to_string());
      BOOST_TEST_CONTEXT(text << " trial " << trial) {
        BOOST_TEST((*rq == *fq));
        auto rd = reference::dequantize(*rq);
        auto fd = fast::dequantize(*fq);
        BOOST_REQUIRE(rd.ok());
        BOOST_REQUIRE(fd.ok());
        BOOST_REQUIRE(rd->size() == fd->size());
        for (std::size_t i = 0; i < rd->size(); ++i) {
          BOOST_TEST(qscheme::f32_bits((*rd)[i]) == qscheme::f32_bits((*fd)[i]));
        }
      }
      ++compared;
    }
  }
  BOOST_TEST(compared == 200);
}
