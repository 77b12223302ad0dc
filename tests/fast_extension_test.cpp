// The extension stage of the fast engine (fast/ext_stage.hpp) on tensors of many units: the
// one-pass units path against the whole-tensor path and the reference, on both outputs, at 1 to 3
// threads; and the issue's own case, a [4096, 4096] u8 affine quantize with a scale and zero
// point per row, round-tripping through both engines identically.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"
#include "tests/support/sanitized.hpp"

namespace fast = qscheme::fast;
using qscheme::Profile;
using Shape = std::vector<std::uint64_t>;

namespace {

std::vector<float> Normal(std::size_t n, std::uint32_t seed, float sigma = 1.0f, float mean = 0.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(mean, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = nd(rng);
  return x;
}

std::vector<std::uint32_t> Bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = qscheme::f32_bits(v[i]);
  return b;
}

struct ThreadsGuard {
  ~ThreadsGuard() { (void)fast::set_threads(1); }
};

}  // namespace

// quantize_to_bytes in one pass (the units path, where it takes the tensor) and under
// untouched-on-error (the whole-tensor path) give the same bytes as quantize + encode (i32 codes
// through the units path) and the reference, for every unit layout: one scale (given), a scale
// per row, per block of 32, per column; calibrated and given, exact and onnx; 1, 2 and 3 threads.
// Rows of 1000 (37,000 elements: units of whole rows, and given-scale units of 2048 that start
// inside a row, threads split them) and of 5000 (rows wider than a given-scale unit).
BOOST_AUTO_TEST_CASE(units_and_whole_tensor_paths_give_the_reference_bytes_on_tensors_of_many_units) {
  ThreadsGuard guard;
  struct Case {
    const char* scheme;
    Profile profile;
    bool given;
    bool wide = false;
  };
  const Case cases[] = {{"u8:affine", Profile::exact, true},          {"u8:affine", Profile::onnx, true},
                        {"u8:affine:axis(1)=f32", Profile::exact, false}, {"u8:affine:axis(1)=f32", Profile::onnx, false},
                        {"u8:affine:axis(1)=bf16", Profile::exact, false}, {"u8:affine:block[40]=f16", Profile::exact, false},
                        {"u4:affine:block[8]=f32", Profile::exact, false}, {"q8f:affine:axis(1)=f32", Profile::exact, true},
                        {"u8:affine:axis(0)=f32", Profile::exact, false}, {"u8:axis(1)=f32", Profile::onnx, true},
                        {"i16:affine:axis(1)=f32", Profile::exact, false}, {"u8:affine", Profile::exact, false},
                        {"u8:affine:axis(1)=f32", Profile::exact, true, true}, {"u8:affine:axis(1)=f32", Profile::onnx, true, true},
                        {"u8:affine:axis(1)=f32", Profile::exact, false, true}};
  for (const Case& c : cases) {
    const Shape shape = c.wide ? Shape{9, 5000} : Shape{37, 1000};
    const std::vector<float> x = Normal(c.wide ? 45000 : 37000, 5, 3.0f, 0.5f);
    const qscheme::Scheme s = qscheme::parse_scheme(c.scheme).value();
    const qscheme::Layout l = qscheme::make_layout(s, shape).value();
    qscheme::QuantizeOptions o;
    o.profile = c.profile;
    if (c.given) {
      // The input's own calibrated scales and zero points (an unsigned kind in sym mode has no
      // calibration: scales of 0.05).
      const auto q = fast::quantize(s, shape, x);
      qscheme::GivenScales g;
      if (q.ok()) {
        for (std::uint32_t b : q->scale_bits) g.block.push_back(qscheme::f32_from_bits(b));
        g.zero_points = q->zero_points;
      } else {
        g.block.assign(l.scales, 0.05f);
      }
      o.scales = g;
    }
    const auto want_q = qscheme::reference::quantize(s, shape, x, o);
    BOOST_TEST_REQUIRE(want_q.ok(), c.scheme << ": " << want_q.status().to_string());
    const auto want = qscheme::reference::encode(*want_q).value();
    const auto want_y = qscheme::reference::dequantize(*want_q).value();
    for (unsigned threads : {1u, 2u, 3u}) {
      BOOST_REQUIRE(fast::set_threads(threads).ok());
      BOOST_TEST_CONTEXT(c.scheme << " " << qscheme::to_string(c.profile) << (c.given ? " given" : "") << " threads "
                                  << threads) {
        const auto q = fast::quantize(s, shape, x, o);
        BOOST_TEST_REQUIRE(q.ok(), q.status().to_string());
        BOOST_TEST((*q == *want_q));
        BOOST_TEST((fast::encode(*q).value() == want));
        for (auto pol : {fast::OutputPolicy::single_pass, fast::OutputPolicy::untouched_on_error}) {
          std::vector<std::uint8_t> out(l.total_bytes, 0xA5);
          BOOST_TEST_REQUIRE(fast::quantize_to_bytes(s, shape, x.data(), x.size(), o, out.data(), out.size(), pol).ok());
          BOOST_TEST((out == want));
          std::vector<float> y(l.elements);
          BOOST_TEST_REQUIRE(
              fast::dequantize_from_bytes(s, shape, want.data(), want.size(), Profile::exact, y.data(), y.size(), pol).ok());
          BOOST_TEST((Bits(y) == Bits(want_y)));
        }
      }
    }
  }
}

// A unit that meets bad input stops the one-pass path; the whole-tensor path then names the
// reference's error: the first non-finite element, in whichever unit, even when a later unit
// holds one too; the first element of a zero-scale block over non-zero input.
BOOST_AUTO_TEST_CASE(errors_found_by_a_unit_are_the_references) {
  ThreadsGuard guard;
  const Shape shape{10, 4096};
  const qscheme::Scheme s = qscheme::parse_scheme("u8:affine:axis(1)=f32").value();
  std::vector<float> x = Normal(40960, 9);
  x[9 * 4096 + 7] = -INFINITY;
  x[3 * 4096 + 100] = NAN;
  qscheme::QuantizeOptions given;
  given.scales = qscheme::GivenScales{std::vector<float>(10, 0.25f), std::nullopt, std::vector<std::int32_t>(10, 128)};
  std::vector<float> y = Normal(40960, 10);
  given.scales->block[6] = 0.0f;
  for (unsigned threads : {1u, 3u}) {
    BOOST_REQUIRE(fast::set_threads(threads).ok());
    for (const auto* in : {&x, &y}) {
      for (const auto& o : {qscheme::QuantizeOptions{}, given}) {
        if (in == &y && !o.scales) continue;
        const auto r = qscheme::reference::quantize(s, shape, *in, o);
        BOOST_TEST_REQUIRE(!r.ok());
        std::vector<std::uint8_t> out(qscheme::make_layout(s, shape)->total_bytes);
        const qscheme::Status st = fast::quantize_to_bytes(s, shape, in->data(), in->size(), o, out.data(), out.size(),
                                                           fast::OutputPolicy::single_pass);
        BOOST_TEST((st.code() == r.status().code()), st.to_string() << " vs " << r.status().to_string());
        BOOST_TEST(st.index() == r.status().index());
        BOOST_TEST(st.message() == r.status().message());
        const auto f = fast::quantize(s, shape, *in, o);
        BOOST_TEST(f.status().message() == r.status().message());
      }
    }
  }
}

// The case: a [4096, 4096] f32 weight quantized to u8 with a calibrated scale and zero
// point per row (axis(1)) gives the same tensor, bytes and dequantized bits in both engines, and
// quantizing those values again gives the same tensor back.
BOOST_AUTO_TEST_CASE(a_4096_by_4096_per_row_u8_affine_quantize_round_trips_through_both_engines_identically) {
  ThreadsGuard guard;
  const std::uint64_t rows = qscheme::testing::kSanitized ? 256 : 4096;
  const Shape shape{rows, 4096};
  const qscheme::Scheme s = qscheme::parse_scheme("u8:affine:axis(1)=f32").value();
  // Rows of different spread and offset, so that scales and zero points differ from row to row.
  std::vector<float> x = Normal(rows * 4096, 1);
  for (std::uint64_t r = 0; r < rows; ++r) {
    const float a = std::ldexp(1.0f + static_cast<float>(r % 7) / 8, static_cast<int>(r % 9) - 4);
    for (std::uint64_t c = 0; c < 4096; ++c) x[r * 4096 + c] = x[r * 4096 + c] * a + static_cast<float>(r % 5) * a;
  }
  const auto ref = qscheme::reference::quantize(s, shape, x);
  BOOST_TEST_REQUIRE(ref.ok(), ref.status().to_string());
  BOOST_REQUIRE(fast::set_threads(2).ok());
  const auto f = fast::quantize(s, shape, x);
  BOOST_TEST_REQUIRE(f.ok(), f.status().to_string());
  BOOST_TEST((f->zero_points == ref->zero_points));
  BOOST_TEST((f->scale_bits == ref->scale_bits));
  BOOST_TEST((f->codes == ref->codes));
  const auto bytes = qscheme::reference::encode(*ref).value();
  std::vector<std::uint8_t> out(bytes.size());
  BOOST_TEST_REQUIRE(fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, out.data(), out.size()).ok());
  BOOST_TEST((out == bytes));
  const auto ry = qscheme::reference::dequantize(*ref).value();
  std::vector<float> fy(x.size());
  BOOST_TEST_REQUIRE(fast::dequantize_from_bytes(s, shape, out.data(), out.size(), Profile::exact, fy.data(), fy.size()).ok());
  BOOST_TEST((Bits(fy) == Bits(ry)));
  // Requantized under the stored scales and zero points, the values give the codes back.
  qscheme::QuantizeOptions again;
  again.scales = qscheme::GivenScales{{}, std::nullopt, f->zero_points};
  for (std::uint32_t b : f->scale_bits) again.scales->block.push_back(qscheme::f32_from_bits(b));
  const auto f2 = fast::quantize(s, shape, fy, again);
  BOOST_TEST_REQUIRE(f2.ok());
  BOOST_TEST((f2->codes == f->codes));
  // 255 codes over each row's range: the scales differ from row to row, zero points too.
  std::size_t distinct_z = 0;
  for (std::size_t r = 1; r < f->zero_points.size(); ++r) distinct_z += f->zero_points[r] != f->zero_points[r - 1];
  BOOST_TEST(distinct_z > rows / 2);
}

// torch's point (recipes torch-qint8, torch-quint8): a zero given scale multiplies by an infinite
// reciprocal, so a zero x has a NaN quotient and any other x an infinite one; both become
// INT64_MIN and then lo, whatever the zero point.
BOOST_AUTO_TEST_CASE(torch_zero_scales_give_lo_whatever_the_zero_point) {
  for (const char* text : {"q8s:affine:block[4]=f32", "u8:affine:block[4]=f32", "q8f:affine:block[4]=f32"}) {
    const qscheme::Scheme s = qscheme::parse_scheme(text).value();
    const Shape shape{8};
    const std::vector<float> x{0.0f, -0.0f, 1.0f, -3.0f, 0.0f, 0.5f, 2.0f, -0.0f};
    qscheme::QuantizeOptions o = qscheme::recipe_options(*qscheme::find_recipe("torch-qint8").value(), {});
    o.scales = qscheme::GivenScales{{0.0f, 0.25f}, std::nullopt, {qscheme::info(s.value).hi, 3}};
    const auto r = qscheme::reference::quantize(s, shape, x, o);
    const auto f = fast::quantize(s, shape, x, o);
    BOOST_TEST_REQUIRE(r.ok(), r.status().to_string());
    BOOST_TEST_REQUIRE(f.ok(), f.status().to_string());
    BOOST_TEST((f->codes == r->codes), text);
    const std::int32_t lo = qscheme::info(s.value).lo;
    BOOST_TEST((std::vector<std::int32_t>(r->codes.begin(), r->codes.begin() + 4) == std::vector<std::int32_t>(4, lo)), text);
  }
}
