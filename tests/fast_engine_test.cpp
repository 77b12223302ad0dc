// fast/ engine behaviour beyond the arithmetic: error codes and their order, corruption
// detection, thread-count independence, the target API and the lower-level entry points (the
// bytes against an independent packer over the tuple space: engines_agree_test).
#include <boost/test/unit_test.hpp>

#include <cfloat>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "reference/reference.hpp"
#include "hwy/targets.h"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"

namespace fast = qscheme::fast;
using qscheme::ErrorCode;

namespace {

qscheme::Scheme S(const char* text) { return qscheme::parse_scheme(text).value(); }

std::vector<float> Random(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (auto& f : v) f = std::uniform_real_distribution<float>(-4, 4)(rng);
  if (n > 2) v[n / 2] = -0.0f;
  return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(error_codes) {
  const std::vector<std::uint64_t> shape{2, 8};
  const auto x = Random(16, 1);
  // validate() errors pass through.
  BOOST_TEST((fast::quantize(S("q4s:packed-native(0)"), shape, x).status().code() == ErrorCode::packed_native_unsupported));
  BOOST_TEST((fast::quantize(S("q8s:packed-u32(2)"), shape, x).status().code() == ErrorCode::packing_dim_out_of_range));
  // size mismatch.
  BOOST_TEST((fast::quantize(S("q8s"), shape, std::vector<float>(15)).status().code() == ErrorCode::size_mismatch));
  // non-finite: index of the first bad element.
  auto bad = x;
  bad[9] = NAN;
  bad[12] = INFINITY;
  const auto r = fast::quantize(S("q8s:block[4]=f32"), shape, bad);
  BOOST_TEST((r.status().code() == ErrorCode::non_finite_input));
  BOOST_TEST(r.status().index() == 9u);
  bad[3] = -INFINITY;
  BOOST_TEST(fast::quantize(S("q8s"), shape, bad).status().index() == 3u);
  // given scales: count, global presence, validity, zero scale.
  qscheme::QuantizeOptions o;
  o.scales = qscheme::GivenScales{{1.0f, 1.0f, 1.0f}, std::nullopt};
  BOOST_TEST((fast::quantize(S("q8s:block[8]=f32"), shape, x, o).status().code() == ErrorCode::size_mismatch));
  o.scales = qscheme::GivenScales{{1.0f, 1.0f}, 1.0f};
  BOOST_TEST((fast::quantize(S("q8s:block[8]=f32"), shape, x, o).status().code() == ErrorCode::size_mismatch));
  o.scales = qscheme::GivenScales{{1.0f, 1.0f}, std::nullopt};
  BOOST_TEST((fast::quantize(S("q8s:block[8]=ue4m3:tensor=f32"), shape, x, o).status().code() == ErrorCode::size_mismatch));
  o.scales = qscheme::GivenScales{{1.0f, -1.0f}, std::nullopt};
  auto rr = fast::quantize(S("q8s:block[8]=f32"), shape, x, o);
  BOOST_TEST((rr.status().code() == ErrorCode::invalid_scale));
  BOOST_TEST(rr.status().index() == 1u);
  o.scales = qscheme::GivenScales{{1.0f, NAN}, std::nullopt};
  BOOST_TEST((fast::quantize(S("q8s:block[8]=f32"), shape, x, o).status().code() == ErrorCode::invalid_scale));
  o.scales = qscheme::GivenScales{{1.0f, 0.0f}, std::nullopt};
  rr = fast::quantize(S("q8s:block[8]=f32"), shape, x, o);
  BOOST_TEST((rr.status().code() == ErrorCode::zero_scale_nonzero_input));
  BOOST_TEST(rr.status().index() == 1u);
  // ... but not over an all-zero block, and not under burn (0.1 substitute).
  std::vector<float> z = x;
  for (int i = 8; i < 16; ++i) z[i] = (i % 2) ? -0.0f : 0.0f;
  const auto qz = fast::quantize(S("e4m3:block[8]=f32"), shape, z, o);
  BOOST_TEST_REQUIRE(qz.ok());
  BOOST_TEST(qz->codes[9] == 0x80);  // -0 keeps its sign
  BOOST_TEST(qz->codes[8] == 0);
  o.profile = qscheme::Profile::burn;
  BOOST_TEST(fast::quantize(S("q8s:block[8]=f32"), shape, x, o).ok());
  // burn: absmean over two levels; 2*alpha overflow.
  qscheme::QuantizeOptions b;
  b.profile = qscheme::Profile::burn;
  b.calibration = qscheme::Calibration::absmean;
  BOOST_TEST((fast::quantize(S("q8s:block[8]=ue4m3:tensor=f32"), shape, x, b).status().code() == ErrorCode::unsupported_profile));
  b.calibration = qscheme::Calibration::minmax;
  auto big = x;
  big[0] = FLT_MAX;
  BOOST_TEST((fast::quantize(S("q8s"), shape, big, b).status().code() == ErrorCode::unsupported_profile));
  BOOST_TEST(fast::quantize(S("q8s"), shape, big).ok());  // exact has no such limit
}

BOOST_AUTO_TEST_CASE(dequantize_reports_the_first_bad_code_of_a_large_tensor) {
  // fast::dequantize checks codes piece by piece (and in parallel): the error must still name
  // the first bad code, and a corrupt scale still wins over any code.
  for (const char* text : {"q8s", "q8f:block[2,3,5]=f16", "e4m3:block[32]=ue4m3:tensor=f32"}) {
    const std::vector<std::uint64_t> shape{64, 64, 64};
    const auto q = fast::quantize(S(text), shape, Random(64 * 64 * 64, 9)).value();
    auto c = q;
    const int bad = q.scheme.value == qscheme::Value::e4m3 ? 0x7F : -129;  // NaN pattern / out of range
    c.codes[200000] = bad;
    c.codes[100001] = bad;
    c.codes[150000] = bad;
    for (unsigned t : {1u, 2u}) {
      BOOST_REQUIRE(fast::set_threads(t).ok());
      const auto r = fast::dequantize(c);
      BOOST_TEST_CONTEXT(text << " threads " << t) {
        BOOST_TEST((r.status().code() == ErrorCode::corrupt_bytes));
        BOOST_TEST(r.status().index() == 100001u);
      }
      auto cs = c;
      cs.scale_bits.back() = 0xFFFFFFFFu;  // no dtype's finite non-negative value
      BOOST_TEST(fast::dequantize(cs).status().index() == cs.scale_bits.size() - 1);
    }
    BOOST_REQUIRE(fast::set_threads(1).ok());
  }
  // block[2,3,5] on [64, 64, 64]: a run is rows i1 = 0..2 of i0 = 0 and 1 (two groups 4096
  // elements apart), so the run holding index 4103 (i0 = 1) is walked before the one holding 193
  // (i0 = 0, i1 = 3): the lower index must still win.
  const std::vector<std::uint64_t> shape{64, 64, 64};
  auto c = fast::quantize(S("q8f:block[2,3,5]=f16"), shape, Random(64 * 64 * 64, 9)).value();
  c.codes[4103] = -129;
  c.codes[193] = -129;
  for (unsigned t : {1u, 2u}) {
    BOOST_REQUIRE(fast::set_threads(t).ok());
    BOOST_TEST(fast::dequantize(c).status().index() == 193u);
  }
  BOOST_REQUIRE(fast::set_threads(1).ok());
}

BOOST_AUTO_TEST_CASE(dequantize_and_decode_reject_corrupt_input) {
  const std::vector<std::uint64_t> shape{2, 8};
  const auto q = fast::quantize(S("q8s:block[8]=ue4m3:tensor=f32"), shape, Random(16, 2)).value();
  auto c = q;
  c.codes[5] = -128;
  BOOST_TEST((fast::dequantize(c).status().code() == ErrorCode::corrupt_bytes));
  BOOST_TEST(fast::dequantize(c).status().index() == 5u);
  BOOST_TEST((fast::encode(c).status().code() == ErrorCode::corrupt_bytes));
  c = q;
  c.scale_bits[1] = 0x80;  // ue4m3 sign bit
  BOOST_TEST((fast::dequantize(c).status().code() == ErrorCode::corrupt_bytes));
  c = q;
  c.global_bits = qscheme::f32_bits(-1.0f);
  BOOST_TEST((fast::dequantize(c).status().code() == ErrorCode::corrupt_bytes));
  c = q;
  c.scale_bits.pop_back();
  BOOST_TEST((fast::dequantize(c).status().code() == ErrorCode::size_mismatch));
  c = q;
  c.global_bits.reset();
  BOOST_TEST((fast::dequantize(c).status().code() == ErrorCode::size_mismatch));
  // A symmetric tensor carrying zero points: a count mismatch, as the reference says.
  c = q;
  c.zero_points = {0};
  BOOST_TEST((fast::dequantize(c).status().code() == ErrorCode::size_mismatch));
  BOOST_TEST((fast::encode(c).status().code() == ErrorCode::size_mismatch));
  BOOST_TEST(fast::dequantize(c).status().to_string() == qscheme::reference::dequantize(c).status().to_string());

  auto bytes = fast::encode(q).value();
  BOOST_TEST((fast::decode(q.scheme, shape, std::span(bytes.data(), bytes.size() - 1)).status().code() == ErrorCode::size_mismatch));
  bytes[3] = 0x80;  // -128
  BOOST_TEST((fast::decode(q.scheme, shape, bytes).status().code() == ErrorCode::corrupt_bytes));
  // e4m3 NaN, e5m2 inf, native q4 with a non-canonical high nibble, e2m1 native high nibble,
  // non-zero padding, ue8m0 0xFF, f16 inf scale.
  struct Case {
    const char* scheme;
    std::vector<std::uint64_t> shape;
    std::size_t at;
    std::uint8_t byte;
  };
  const Case cases[] = {
      {"e4m3", {4}, 1, 0x7F},
      {"e4m3", {4}, 1, 0xFF},
      {"e5m2", {4}, 2, 0x7C},
      {"e5m2", {4}, 2, 0xFE},
      {"q4s", {4}, 0, 0x0F},
      {"q4f", {4}, 0, 0x08},
      {"q2s", {4}, 0, 0xFE},
      {"e2m1", {4}, 3, 0x10},
      {"q4s:packed-u32(0)", {3}, 1, 0x10},         // padding nibble of element 3
      {"e2m1:packed-native(0)", {3}, 1, 0x10},     // padding high nibble
      {"q8s:packed-u32(1)", {3, 2}, 4, 0x00},      // placeholder: no corruption (checked ok)
      {"q8s:block[4]=ue8m0", {4}, 4, 0xFF},
      {"q8s:block[4]=f16", {4}, 5, 0x7C},
  };
  for (const Case& cs : cases) {
    BOOST_TEST_CONTEXT(cs.scheme) {
      const auto s = S(cs.scheme);
      const auto l = qscheme::make_layout(s, cs.shape).value();
      std::vector<float> zeros(l.elements, 0.0f);
      auto ok = fast::encode(fast::quantize(s, cs.shape, zeros).value()).value();
      BOOST_TEST(fast::decode(s, cs.shape, ok).ok());
      ok[cs.at] = cs.byte;
      const auto r = fast::decode(s, cs.shape, ok);
      if (cs.byte == 0x00) {
        BOOST_TEST(r.ok());
      } else {
        BOOST_TEST((r.status().code() == ErrorCode::corrupt_bytes));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(output_does_not_depend_on_threads) {
  // Above the 2^15-element threshold for threads; rank 3, plus a rank-1 tensor (split by segments).
  for (const std::vector<std::uint64_t>& shape : {std::vector<std::uint64_t>{4, 60, 161}, std::vector<std::uint64_t>{100003}}) {
  const auto x = Random(shape.size() == 3 ? 4 * 60 * 161 : 100003, 9);
  const char* schemes[] = {"q8s:block[32]=f16", "q4f:packed-u32(0):block[4,4]=ue4m3:tensor=f32", "e2m1:packed-native(0):block[16]=ue4m3:tensor=f32",
                           "e4m3", "q8f:block[2,3,5]=bf16", "q2s:packed-u32(0):block[255]=ue8m0"};
  for (const char* t : schemes) {
    for (auto cal : {qscheme::Calibration::minmax, qscheme::Calibration::absmean}) {
      for (auto prof : {qscheme::Profile::exact, qscheme::Profile::burn}) {
        BOOST_TEST_CONTEXT(t << " " << qscheme::to_string(cal) << " " << qscheme::to_string(prof)) {
          qscheme::QuantizeOptions o;
          o.calibration = cal;
          o.profile = prof;
          BOOST_REQUIRE(fast::set_threads(1).ok());
          const auto a = fast::quantize(S(t), shape, x, o);
          if (!a.ok()) {
            BOOST_TEST((a.status().code() == ErrorCode::unsupported_profile ||
                        a.status().code() == ErrorCode::block_rank_exceeds_tensor));
            continue;
          }
          const auto da = fast::dequantize(*a).value();
          const auto ba = fast::encode(*a).value();
          for (unsigned th : {2u, 3u, 8u}) {
            BOOST_REQUIRE(fast::set_threads(th).ok());
            BOOST_TEST(fast::threads() == th);
            const auto q = fast::quantize(S(t), shape, x, o);
            BOOST_TEST_REQUIRE(q.ok());
            BOOST_TEST((*q == *a));
            BOOST_TEST((fast::dequantize(*q).value() == da));
            BOOST_TEST((fast::encode(*q).value() == ba));
          }
          BOOST_REQUIRE(fast::set_threads(1).ok());
        }
      }
    }
  }
  }
}

BOOST_AUTO_TEST_CASE(target_api) {
  const auto names = fast::available_targets();
  BOOST_TEST_REQUIRE(!names.empty());
  const auto x = Random(1000, 4);
  const auto ref = fast::quantize(S("e4m3:block[32]=ue4m3:tensor=f32"), std::vector<std::uint64_t>{1000}, x).value();
  for (const auto& n : names) {
    BOOST_TEST(fast::set_target(n));
    BOOST_TEST(fast::current_target() == n);
    BOOST_TEST((fast::quantize(S("e4m3:block[32]=ue4m3:tensor=f32"), std::vector<std::uint64_t>{1000}, x).value() == ref));
  }
  BOOST_TEST(!fast::set_target("NEON"));
  BOOST_TEST(fast::set_target(""));
  BOOST_TEST(fast::current_target() == names.front());
}

BOOST_AUTO_TEST_CASE(lower_level_entry_points) {
  const auto s = S("q4s:block[8]=f16");
  const std::vector<std::uint64_t> shape{3, 8};
  const auto x = Random(24, 5);
  std::vector<std::int32_t> codes(24);
  std::vector<std::uint32_t> sb(3);
  BOOST_TEST(fast::quantize_into(s, shape, x.data(), x.size(), {}, codes.data(), sb.data(), nullptr).ok());
  const auto q = fast::quantize(s, shape, x).value();
  BOOST_TEST(codes == q.codes);
  BOOST_TEST(sb == q.scale_bits);
  std::vector<float> out(24);
  BOOST_TEST(fast::dequantize_into(q, out.data(), out.size()).ok());
  BOOST_TEST((out == fast::dequantize(q).value()));
  BOOST_TEST((fast::dequantize_into(q, out.data(), 23).code() == ErrorCode::size_mismatch));
}

// Static calibration: a tensor's stored scales handed back as given scales store the same
// patterns again, and the codes of the same input are the calibrated ones, in both engines.
BOOST_AUTO_TEST_CASE(given_scales_of_a_tensor_store_its_scales_again) {
  const std::vector<std::uint64_t> shape{4, 64};
  const auto x = Random(256, 6);
  std::vector<std::string> texts;
  for (const auto& p : qscheme::presets()) texts.emplace_back(p.expansion);
  for (const char* t : {"q8s", "u8:affine", "u8:affine:axis(1)=f32", "q8s:axis(0)=bf16", "e5m2:block[16]=ue8m0"}) {
    texts.emplace_back(t);
  }
  for (const auto& text : texts) {
    BOOST_TEST_CONTEXT(text) {
      const auto s = S(text.c_str());
      const auto q = fast::quantize(s, shape, x).value();
      const auto g = fast::given_scales(q);
      BOOST_TEST_REQUIRE(g.ok(), g.status().to_string());
      BOOST_TEST(g->block.size() == q.scale_bits.size());
      BOOST_TEST(g->global.has_value() == s.two_level());
      qscheme::QuantizeOptions o;
      o.scales = *g;
      const auto again = fast::quantize(s, shape, x, o);
      BOOST_TEST_REQUIRE(again.ok(), again.status().to_string());
      BOOST_TEST((again->scale_bits == q.scale_bits));
      BOOST_TEST((again->global_bits == q.global_bits));
      BOOST_TEST((again->zero_points == q.zero_points));
      BOOST_TEST((again->codes == q.codes));
      BOOST_TEST((qscheme::reference::quantize(s, shape, x, o).value() == *again));
    }
  }
}

BOOST_AUTO_TEST_CASE(given_scales_of_a_bad_tensor_say_what_is_wrong) {
  const std::vector<std::uint64_t> shape{2, 32};
  const auto x = Random(64, 7);
  const auto q = fast::quantize(S("q8_0"), shape, x).value();  // two f16 block scales
  auto bad = q;
  bad.scale_bits.pop_back();
  BOOST_TEST((fast::given_scales(bad).status().code() == ErrorCode::size_mismatch));
  bad = q;
  bad.global_bits = 0x3F800000u;
  BOOST_TEST((fast::given_scales(bad).status().code() == ErrorCode::size_mismatch));
  for (std::uint32_t pattern : {0x7E00u, 0x7C00u, 0x8000u, 0xBC00u, 0x10000u}) {  // NaN, inf, -0, -1, too wide
    bad = q;
    bad.scale_bits[1] = pattern;
    const auto st = fast::given_scales(bad).status();
    BOOST_TEST((st.code() == ErrorCode::corrupt_bytes), pattern);
    BOOST_TEST(st.index() == 1u);
  }
  auto nv = fast::quantize(S("nvfp4"), shape, x).value();
  nv.global_bits = 0xFF800000u;  // -inf
  const auto st = fast::given_scales(nv).status();
  BOOST_TEST((st.code() == ErrorCode::corrupt_bytes));
  BOOST_TEST(st.index() == nv.scale_bits.size());
  auto affine = fast::quantize(S("u8:affine"), shape, x).value();
  affine.zero_points[0] = 256;
  BOOST_TEST((fast::given_scales(affine).status().code() == ErrorCode::corrupt_bytes));
  bad = q;
  bad.shape = {2, 33};
  BOOST_TEST(!fast::given_scales(bad).ok());
}
