// fast/ == reference/ for every scheme of tuple_space() that validates, on the shapes of
// shape_set() and edge-case tensors, both profiles, both calibrations, given scales (with ties
// built against the resulting effective scales), on every compiled Highway target:
// QuantizedTensor ==, error code == on rejection, bytes ==, decode ==, dequantized f32 bits ==.
// Knobs: the full matrix runs on the best target; the other targets run every kOtherStride-th
// scheme. Large shapes (> kBigElements) run every kBigStride-th scheme.
#include <boost/test/unit_test.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "hwy/targets.h"
#include "reference/reference.hpp"
#include "scheme/layout.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "tests/support/edge_tensors.hpp"

namespace fast = qscheme::fast;
namespace ref = qscheme::reference;

namespace {

using qscheme::testing::BitsOf;
using qscheme::testing::Tensors;

constexpr std::size_t kOtherStride = 23;
constexpr std::uint64_t kBigElements = 300;
constexpr std::size_t kBigStride = 11;

void ExpectSame(const qscheme::Scheme& s, const std::vector<std::uint64_t>& shape, const std::vector<float>& x,
                const qscheme::QuantizeOptions& o) {
  const auto r = ref::quantize(s, shape, x, o);
  const auto f = fast::quantize(s, shape, x, o);
  BOOST_TEST_REQUIRE(r.ok() == f.ok(), "reference: " << r.status().to_string() << " fast: " << f.status().to_string());
  if (!r.ok()) {
    BOOST_TEST((r.status().code() == f.status().code()), r.status().to_string() << " vs " << f.status().to_string());
    BOOST_TEST(r.status().index() == f.status().index());
    BOOST_TEST(r.status().message() == f.status().message());
    return;
  }
  BOOST_TEST((*r == *f));
  if (!(*r == *f)) {
    BOOST_TEST(r->codes == f->codes, boost::test_tools::per_element());
    BOOST_TEST(r->scale_bits == f->scale_bits, boost::test_tools::per_element());
    return;
  }
  const auto fb = fast::encode(*f);
  BOOST_TEST_REQUIRE(fb.ok());
  const auto rb = ref::encode(*r);
  BOOST_TEST_REQUIRE(rb.ok());
  BOOST_TEST((*rb == *fb));
  const auto fd = fast::decode(s, shape, *fb, o.profile);
  BOOST_TEST_REQUIRE(fd.ok());
  BOOST_TEST((*fd == *r));
  const auto rd = ref::decode(s, shape, *rb, o.profile);
  BOOST_TEST_REQUIRE(rd.ok());
  BOOST_TEST((*rd == *r));
  const auto rdq = ref::dequantize(*r);
  const auto fdq = fast::dequantize(*f);
  BOOST_TEST_REQUIRE(rdq.ok());
  BOOST_TEST_REQUIRE(fdq.ok());
  BOOST_TEST(BitsOf(*rdq) == BitsOf(*fdq), boost::test_tools::per_element());
}

}  // namespace

BOOST_AUTO_TEST_CASE(fast_equals_reference_on_the_tuple_space) {
  std::size_t n = 0;
  const auto targets = fast::kernels::AvailableTargetBits();
  for (std::int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    std::size_t si = 0;
    for (const auto& s : qscheme::tuple_space()) {
      ++si;
      if (!qscheme::validate_scheme(s).ok()) continue;
      if (t != targets.front() && si % kOtherStride != 0) continue;
      for (const auto& shape : qscheme::shape_set()) {
        const auto l = qscheme::make_layout(s, shape);
        if (!l.ok()) continue;
        if (l->elements > kBigElements && si % kBigStride != 0) continue;
        const auto xs = Tensors(l->elements, static_cast<std::uint32_t>(si));
        for (std::size_t ti = 0; ti < xs.size(); ++ti) {
          for (auto prof : {qscheme::Profile::exact, qscheme::Profile::burn}) {
            for (auto cal : {qscheme::Calibration::minmax, qscheme::Calibration::absmean}) {
              BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " scheme " << qscheme::format_scheme(s) << " shape rank "
                                           << shape.size() << " elements " << l->elements << " tensor " << ti << " "
                                           << qscheme::to_string(prof) << " " << qscheme::to_string(cal)) {
                qscheme::QuantizeOptions o;
                o.profile = prof;
                o.calibration = cal;
                ExpectSame(s, shape, xs[ti], o);
                ++n;
              }
            }
          }
        }
        // Given scales (some zero), then ties against the effective scales they produce.
        qscheme::GivenScales g;
        std::mt19937 rng(static_cast<std::uint32_t>(si * 7));
        for (std::uint64_t j = 0; j < l->scales; ++j) {
          g.block.push_back(j % 5 == 2 ? 0.0f : std::ldexp(1.0f + static_cast<float>(rng() % 16) / 16, static_cast<int>(rng() % 8) - 4));
        }
        if (s.two_level()) g.global = 0.3f;
        for (auto prof : {qscheme::Profile::exact, qscheme::Profile::burn}) {
          qscheme::QuantizeOptions o;
          o.profile = prof;
          o.scales = g;
          // Ties from the reference's reconstructions of a quantized ramp: x = value(code) * e,
          // and midpoints between neighbouring reconstructions (+- one f32 ulp).
          std::vector<float> ramp(l->elements);
          for (std::uint64_t i = 0; i < l->elements; ++i) ramp[i] = static_cast<float>(static_cast<int>(i % 41) - 20) * 0.37f;
          const auto q = ref::quantize(s, shape, ramp, o);
          if (!q.ok()) {
            BOOST_TEST_CONTEXT("given " << qscheme::format_scheme(s)) { ExpectSame(s, shape, ramp, o); }
            continue;
          }
          const auto d = ref::dequantize(*q).value();
          std::vector<float> ties(l->elements);
          for (std::uint64_t i = 0; i < l->elements; ++i) {
            const float a = d[i], b = d[(i + 1) % l->elements];
            float m = static_cast<float>((static_cast<double>(a) + b) / 2);
            if (i % 3 == 1) m = std::nextafter(m, 1e30f);
            if (i % 3 == 2) m = std::nextafter(m, -1e30f);
            ties[i] = (i % 4 == 0) ? a : m;
          }
          BOOST_TEST_CONTEXT("given-scale ties: target " << hwy::TargetName(t) << " scheme " << qscheme::format_scheme(s)
                                                        << " " << qscheme::to_string(prof)) {
            ExpectSame(s, shape, ramp, o);
            ExpectSame(s, shape, ties, o);
          }
          n += 2;
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  BOOST_TEST_MESSAGE("cases: " << n);
  BOOST_TEST(n > 10000u);
}

BOOST_AUTO_TEST_CASE(rejections_match_the_reference_in_code_index_and_message) {
  auto S = [](const char* t) { return qscheme::parse_scheme(t).value(); };
  const std::vector<std::uint64_t> shape{2, 8};
  std::vector<float> x(16, 0.5f);
  std::vector<float> nan = x;
  nan[5] = NAN;
  nan[3] = -INFINITY;
  std::vector<float> big = x;
  big[7] = FLT_MAX;
  struct Case {
    const char* scheme;
    const std::vector<float>* x;
    qscheme::Profile prof;
    qscheme::Calibration cal;
    std::optional<qscheme::GivenScales> given;
  };
  using GS = qscheme::GivenScales;
  const qscheme::Profile E = qscheme::Profile::exact, B = qscheme::Profile::burn;
  const qscheme::Calibration MM = qscheme::Calibration::minmax, AM = qscheme::Calibration::absmean;
  const std::vector<Case> cases{
      {"q8s:block[8]=f32", &nan, E, MM, std::nullopt},
      {"q8s:block[8]=f32", &nan, E, MM, GS{{1.0f}, std::nullopt}},
      {"q8s:block[8]=f32", &nan, E, MM, GS{{1.0f, -1.0f}, std::nullopt}},
      {"q8s:block[8]=f32", &nan, E, MM, GS{{1.0f, 1.0f}, 1.0f}},
      {"q8s:block[8]=ue4m3:tensor=f32", &nan, B, AM, std::nullopt},
      {"q8s:block[8]=ue4m3:tensor=f32", &x, B, AM, GS{{1.0f, 1.0f}, NAN}},
      {"q8s:block[8]=ue4m3:tensor=f32", &nan, B, AM, GS{{1.0f, 1.0f}, 1.0f}},
      {"q8s:block[8]=ue4m3:tensor=f32", &x, B, MM, GS{{448.0f, 1.0f}, FLT_MAX}},
      {"q8s", &big, B, MM, std::nullopt},
      {"q8s", &big, E, MM, std::nullopt},
      {"q8s:block[8]=f32", &x, E, MM, GS{{0.0f, 0.0f}, std::nullopt}},
      {"q8s:block[8]=f32", &x, B, MM, GS{{0.0f, 0.0f}, std::nullopt}},
      {"e2m1:block[8]=ue8m0", &x, E, MM, GS{{0.0f, 0.0f}, std::nullopt}},
      {"q4s:packed-native(0)", &x, E, MM, std::nullopt},
  };
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      qscheme::QuantizeOptions o;
      o.profile = c.prof;
      o.calibration = c.cal;
      o.scales = c.given;
      BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " case " << i << " " << c.scheme) {
        const auto r = ref::quantize(S(c.scheme), shape, *c.x, o);
        const auto f = fast::quantize(S(c.scheme), shape, *c.x, o);
        BOOST_TEST_REQUIRE(r.ok() == f.ok(), r.status().to_string() << " vs " << f.status().to_string());
        if (!r.ok()) {
          BOOST_TEST((r.status().code() == f.status().code()), r.status().to_string() << " vs " << f.status().to_string());
          BOOST_TEST(r.status().index() == f.status().index());
          BOOST_TEST(r.status().message() == f.status().message());
        } else {
          BOOST_TEST((*r == *f));
        }
      }
    }
    // Dequantize: a corrupt scale and a corrupt code together; then each alone.
    auto q = fast::quantize(S("q8s:block[8]=f16"), shape, x).value();
    for (int variant = 0; variant < 3; ++variant) {
      auto c = q;
      if (variant != 1) c.codes[9] = -128;
      if (variant != 2) c.scale_bits[1] = 0x7C00;  // f16 inf
      const auto r = ref::dequantize(c);
      const auto f = fast::dequantize(c);
      BOOST_TEST_REQUIRE(!r.ok());
      BOOST_TEST_REQUIRE(!f.ok());
      BOOST_TEST((r.status().code() == f.status().code()));
      BOOST_TEST(r.status().index() == f.status().index(), "variant " << variant);
      BOOST_TEST(r.status().message() == f.status().message(), "variant " << variant);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Three rejections whose error depends on which rule an engine follows:
// a zero given scale over N-D blocks, where the first offending element in row-major order lies
// in a later block than the first offending block; encode of a tensor with both a bad scale and
// a bad code (scales are checked first, as in dequantize); encode of a one-level tensor carrying
// a global scale (size-mismatch, as in dequantize).
BOOST_AUTO_TEST_CASE(engines_agree_on_rejections_they_once_disagreed_on) {
  auto S = [](const char* t) { return qscheme::parse_scheme(t).value(); };
  auto same = [](const qscheme::Status& r, const qscheme::Status& f) {
    BOOST_TEST(!r.ok());
    BOOST_TEST((r.code() == f.code()), r.to_string() << " vs " << f.to_string());
    BOOST_TEST(r.index() == f.index());
    BOOST_TEST(r.message() == f.message());
  };
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    BOOST_TEST_CONTEXT("target " << hwy::TargetName(t)) {
      // Blocks [2, 2] of a [4, 4] tensor: element 2 (row 0) lies in block 1, element 4 (row 1) in
      // block 0. Both blocks are given a zero scale.
      const std::vector<std::uint64_t> shape{4, 4};
      std::vector<float> x(16, 0.0f);
      x[2] = 1.0f;
      x[4] = 1.0f;
      for (const char* scheme : {"q8s:block[2,2]=f32", "e4m3:block[2,2]=f32", "q4s:block[2,2]=f16"}) {
        qscheme::QuantizeOptions o;
        o.scales = qscheme::GivenScales{{0.0f, 0.0f, 1.0f, 1.0f}, std::nullopt};
        const auto r = ref::quantize(S(scheme), shape, x, o);
        same(r.status(), fast::quantize(S(scheme), shape, x, o).status());
        BOOST_TEST(r.status().index() == 1u);
        BOOST_TEST(r.status().message().find("element 2") != std::string::npos, r.status().message());
      }
      const std::vector<std::uint64_t> flat{16};
      std::vector<float> y(16, 1.0f);
      auto q = fast::quantize(S("q8s:block[8]=f16"), flat, y).value();
      auto both = q;
      both.codes[3] = -128;
      both.scale_bits[1] = 0x7C00;
      same(ref::encode(both).status(), fast::encode(both).status());
      BOOST_TEST(fast::encode(both).status().index() == 1u);
      auto global = q;
      global.global_bits = 0x3F800000u;
      same(ref::encode(global).status(), fast::encode(global).status());
      BOOST_TEST((fast::encode(global).status().code() == qscheme::ErrorCode::size_mismatch));
      same(ref::dequantize(global).status(), fast::dequantize(global).status());
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

BOOST_AUTO_TEST_CASE(blocks_spanning_two_outer_axes_match_the_reference) {
  // fast/ walks the rows of one block along axes as one run (groups of rows a stride
  // apart): ranks 3-5, partial blocks on every axis, blocks along axes before R-3 too, 1 and 2
  // threads.
  struct Case {
    std::vector<std::uint64_t> shape;
    const char* block;
  };
  const Case cases[] = {{{3, 17, 9}, "2,3,5"}, {{3, 5, 7, 11}, "2,3,4"}, {{3, 5, 7, 11}, "2,2,3,4"},
                        {{2, 3, 4, 5, 6}, "2,2,2,2,3"}, {{5, 4, 33, 2}, "3,4,4,1"}, {{7, 2, 40}, "4,1,16"},
                        {{4, 9, 40, 25}, "2,3,5"}};  // the last one above the threads threshold (2^15)
  const char* kinds[] = {"q8f:block[{}]=f16", "e4m3:block[{}]=ue8m0:tensor=f32", "q4s:packed-u32(1):block[{}]=bf16",
                         "e2m1:block[{}]=ue4m3"};
  for (const auto& c : cases) {
    std::uint64_t n = 1;
    for (auto d : c.shape) n *= d;
    std::mt19937 rng(11);
    std::vector<float> x(n);
    for (auto& v : x) v = std::normal_distribution<float>(0.0f, 2.0f)(rng);
    for (const char* k : kinds) {
      std::string text = k;
      text.replace(text.find("{}"), 2, c.block);
      const auto s = qscheme::parse_scheme(text);
      BOOST_TEST_REQUIRE(s.ok(), text);
      for (unsigned th : {1u, 2u}) {
        BOOST_REQUIRE(fast::set_threads(th).ok());
        for (auto cal : {qscheme::Calibration::minmax, qscheme::Calibration::absmean}) {
          for (auto prof : {qscheme::Profile::exact, qscheme::Profile::burn}) {
            qscheme::QuantizeOptions o;
            o.calibration = cal;
            o.profile = prof;
            BOOST_TEST_CONTEXT(text << " shape rank " << c.shape.size() << " threads " << th << " "
                                    << qscheme::to_string(cal) << " " << qscheme::to_string(prof)) {
              ExpectSame(*s, c.shape, x, o);
            }
          }
        }
      }
      BOOST_REQUIRE(fast::set_threads(1).ok());
    }
  }
}
