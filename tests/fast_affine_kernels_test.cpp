// The extension's SIMD entry points (min_max_keys, segment_min_max_keys, quantize_affine,
// dequant_affine, narrow_f32) against their scalar twins (fast/kernels/scalar_ext.h) on every compiled
// Highway target this CPU supports: every integer kind, zero points at both ends of the range and
// inside it, each op, inputs on and next to every rounding boundary, block widths that make the
// kernels broadcast, gather and load per element, misaligned starts and tails. Results must be
// identical: codes equal, floats bit-equal.
#include <boost/test/unit_test.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/scalar_ext.h"
#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "tests/support/targets.hpp"

namespace k = qscheme::fast::kernels;
namespace sc = qscheme::fast::scalar;
using qscheme::testing::ForEachTarget;

namespace {

struct Kind {
  const char* name;
  int lo, hi;
};
// Every integer kind of either space: Burn's signed ones and the extension's.
const Kind kKinds[] = {{"q8f", -128, 127}, {"q8s", -127, 127}, {"q4f", -8, 7},  {"q2s", -1, 1},
                       {"u8", 0, 255},     {"u4", 0, 15},      {"u2", 0, 3},    {"i16", -32768, 32767},
                       {"u16", 0, 65535}};

// Zero points at both ends, next to them and in the middle.
std::vector<std::int32_t> ZeroPoints(const Kind& kd) {
  return {kd.lo, kd.hi, kd.lo + (kd.hi - kd.lo) / 2, kd.lo + 1, kd.hi - 1};
}

// Scales of the exact op: f32 values (one level), 35-bit products (two levels), values whose
// reciprocal leaves f32's range (divided in f64), subnormal f32.
const std::vector<double>& ExactScales() {
  static const std::vector<double> s{1.0,
                                     static_cast<double>(0.1f),
                                     static_cast<double>(1.0f / 255),
                                     std::ldexp(1.0, -23),
                                     std::ldexp(1.0, -140),
                                     std::ldexp(1.0, 120),
                                     2047.0 * std::ldexp(static_cast<double>(0x00ABCDEF), -40),
                                     static_cast<double>(qscheme::f32_from_bits(0x00000123u)),
                                     std::ldexp(3.0, -9)};
  return s;
}

// Inputs against scale e and window w = hi - lo: every half-integer k + 1/2 of the window times e
// (sampled for the 16-bit kinds), 1 and 2 ulps either side, integers, and values far outside.
std::vector<float> BoundaryInputs(double e, int w, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v;
  const int step = w > 600 ? w / 300 : 1;
  for (int kk = -w - 1; kk <= w; kk += step) {
    const int k0 = step > 1 ? kk + static_cast<int>(rng() % step) : kk;
    const float tie = static_cast<float>((k0 + 0.5) * e);
    v.push_back(tie);
    float up = tie, down = tie;
    for (int u = 0; u < 2; ++u) {
      up = std::nextafter(up, FLT_MAX);
      down = std::nextafter(down, -FLT_MAX);
      v.push_back(up);
      v.push_back(down);
    }
    v.push_back(static_cast<float>(k0 * e));
  }
  for (float x : {0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_TRUE_MIN, -FLT_MIN, static_cast<float>(3.0 * w * e)}) v.push_back(x);
  for (float& x : v) {
    if (std::isinf(x)) x = std::copysign(FLT_MAX, x);  // inputs are finite
  }
  for (std::size_t i = v.size(); i-- > 1;) std::swap(v[i], v[rng() % (i + 1)]);  // mix boundaries across lanes
  return v;
}

// r of the exact op: InvF32 of the block's e.
float InvOf(double e) { return k::InvF32(e); }

}  // namespace

BOOST_AUTO_TEST_CASE(min_and_max_keys_match_the_scalar_twin) {
  ForEachTarget([] {
    const std::size_t N = k::Get().lanes_f32();
    std::mt19937 rng(3);
    const float specials[] = {0.0f,     -0.0f,  FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MAX, -FLT_MAX,
                              INFINITY, -INFINITY, NAN,       -NAN,          1.0f,    -1.0f};
    for (std::size_t len : {std::size_t{1}, std::size_t{3}, N - 1, N, N + 1, 3 * N + 2, 64 * N + 5}) {
      for (int variant = 0; variant < 4; ++variant) {
        std::vector<float> x(len);
        for (auto& v : x) v = qscheme::f32_from_bits(rng() & (variant == 0 ? 0x7F7FFFFFu : 0xFF7FFFFFu));
        if (variant >= 2) x[rng() % len] = specials[rng() % std::size(specials)];
        if (variant == 3) x[len - 1] = specials[rng() % std::size(specials)];
        BOOST_TEST_CONTEXT("len " << len << " variant " << variant) {
          const k::MinMaxKeys a = k::Get().min_max_keys(x.data(), len), b = sc::min_max_keys(x.data(), len);
          BOOST_TEST(a.lo == b.lo);
          BOOST_TEST(a.hi == b.hi);
          for (std::size_t w : {std::size_t{1}, std::size_t{2}, std::size_t{3}, N, N + 1, 2 * N, 5 * N + 3}) {
            const std::size_t ns = (len + w - 1) / w;
            std::vector<std::int32_t> lo(ns, 7), hi(ns, -7), lo2(ns, 7), hi2(ns, -7);
            k::Get().segment_min_max_keys(x.data(), len, w, lo.data(), hi.data());
            sc::segment_min_max_keys(x.data(), len, w, lo2.data(), hi2.data());
            BOOST_TEST(lo == lo2, "w " << w);
            BOOST_TEST(hi == hi2, "w " << w);
          }
        }
      }
    }
    BOOST_TEST(k::Get().min_max_keys(nullptr, 0).lo == k::kNoKeys.lo);
    // Keys order like the values, -0 below +0; non-finite values lie at or beyond the infinities.
    BOOST_TEST(k::OrderedKey(qscheme::f32_bits(-0.0f)) < k::OrderedKey(qscheme::f32_bits(0.0f)));
    BOOST_TEST(k::OrderedKey(qscheme::f32_bits(-1.0f)) < k::OrderedKey(qscheme::f32_bits(-FLT_TRUE_MIN)));
    BOOST_TEST(k::OrderedKey(qscheme::f32_bits(-INFINITY)) == k::kKeyNegInf);
    BOOST_TEST(k::OrderedKey(qscheme::f32_bits(INFINITY)) == k::kKeyPosInf);
    BOOST_TEST(k::OrderedKey(qscheme::f32_bits(-NAN)) < k::kKeyNegInf);
    BOOST_TEST(k::OrderedKey(qscheme::f32_bits(NAN)) > k::kKeyPosInf);
    for (std::uint32_t b : {0u, 0x80000000u, 0x3F800000u, 0xBF800000u, 0x7F7FFFFFu, 0xFF7FFFFFu}) {
      BOOST_TEST(k::BitsOfKey(k::OrderedKey(b)) == b);
    }
  });
}

BOOST_AUTO_TEST_CASE(affine_codes_match_the_scalar_twin_on_every_rounding_boundary) {
  ForEachTarget([] {
    const std::size_t N = k::Get().lanes_f32();
    std::uint32_t seed = 1;
    for (const Kind& kd : kKinds) {
      const int w = kd.hi - kd.lo;
      for (const k::AffineOp op : {k::AffineOp::exact, k::AffineOp::divide, k::AffineOp::multiply}) {
        for (const bool away : {false, true}) {
          if (away && op != k::AffineOp::divide) continue;
          k::AffineSpec s;
          s.op = op;
          s.away = away;
          s.lo = kd.lo;
          s.hi = kd.hi;
          for (const double e : ExactScales()) {
            const std::vector<float> xs = BoundaryInputs(e, w, seed++);
            const std::size_t len = xs.size();
            // Per-block parameters: this scale, and (every third block) another, so that blocks
            // of one call differ; zero points turning through the kind's edges.
            const auto zps = ZeroPoints(kd);
            std::vector<double> ee(len + 2);
            std::vector<float> r(len + 2);
            std::vector<std::int32_t> z(len + 2);
            for (std::size_t j = 0; j < ee.size(); ++j) {
              ee[j] = j % 3 == 2 ? ExactScales()[j % ExactScales().size()] : e;
              r[j] = op == k::AffineOp::exact      ? InvOf(ee[j])
                     : op == k::AffineOp::divide   ? static_cast<float>(ee[j])
                                                   : 1.0f / static_cast<float>(ee[j]);
              if (op == k::AffineOp::divide && !(r[j] > 0)) r[j] = FLT_TRUE_MIN;  // f32(e) underflowed
              z[j] = zps[j % zps.size()];
            }
            for (std::size_t bw : {std::size_t{0}, std::size_t{1}, std::size_t{3}, N, N + 1, 2 * N}) {
              for (std::size_t start : {std::size_t{0}, std::size_t{2}}) {
                for (std::size_t n : {len, len - 1, std::size_t{5}}) {
                  BOOST_TEST_CONTEXT(kd.name << " op " << int(op) << " away " << away << " e " << e << " bw " << bw
                                             << " start " << start << " n " << n) {
                    std::vector<std::int32_t> a(n + 1, 12345), b(n + 1, 12345);
                    k::Get().quantize_affine(xs.data(), n, start, bw, r.data(), ee.data(), z.data(), s, a.data(), nullptr);
                    sc::quantize_affine(xs.data(), n, start, bw, r.data(), ee.data(), z.data(), s, b.data(), nullptr);
                    std::size_t at = 0;
                    while (at < n + 1 && a[at] == b[at]) ++at;
                    BOOST_TEST(at == n + 1, "first difference at " << at << " x " << xs[at] << " simd " << a[at]
                                                                   << " scalar " << b[at]);
                    if (w <= 255) {
                      std::vector<std::uint8_t> a8(n + 1, 0x5A), b8(n + 1, 0x5A);
                      k::Get().quantize_affine(xs.data(), n, start, bw, r.data(), ee.data(), z.data(), s, nullptr, a8.data());
                      sc::quantize_affine(xs.data(), n, start, bw, r.data(), ee.data(), z.data(), s, nullptr, b8.data());
                      BOOST_TEST(a8 == b8);
                    }
                    // No zero points: all 0.
                    k::Get().quantize_affine(xs.data(), n, start, bw, r.data(), ee.data(), nullptr, s, a.data(), nullptr);
                    sc::quantize_affine(xs.data(), n, start, bw, r.data(), ee.data(), nullptr, s, b.data(), nullptr);
                    BOOST_TEST(a == b);
                  }
                }
              }
            }
          }
          // A zero scale over zeros (exact) and torch's infinite multiplier give the zero point
          // and lo.
          std::vector<float> zeros(3 * N + 1, 0.0f);
          zeros[1] = -0.0f;
          const double e0 = 0.0;
          const float r0 = op == k::AffineOp::multiply ? INFINITY : op == k::AffineOp::exact ? 0.0f : 1.0f;
          for (std::int32_t zp : ZeroPoints(kd)) {
            std::vector<std::int32_t> a(zeros.size()), b(zeros.size());
            k::Get().quantize_affine(zeros.data(), zeros.size(), 0, 0, &r0, &e0, &zp, s, a.data(), nullptr);
            sc::quantize_affine(zeros.data(), zeros.size(), 0, 0, &r0, &e0, &zp, s, b.data(), nullptr);
            BOOST_TEST(a == b, kd.name << " zero scale, op " << int(op) << " z " << zp);
            BOOST_TEST(a[1] == (op == k::AffineOp::multiply ? kd.lo : zp));
          }
        }
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(affine_values_match_the_scalar_twin) {
  ForEachTarget([] {
    const std::size_t N = k::Get().lanes_f32();
    std::mt19937 rng(5);
    const float scales[] = {1.0f, 0.1f, FLT_TRUE_MIN, 3e38f, 0.0f, 65504.0f, 1.0f / 255, 448.0f};
    for (const Kind& kd : kKinds) {
      for (std::size_t len : {std::size_t{1}, std::size_t{7}, N, N + 3, 9 * N + 1}) {
        std::vector<std::int32_t> q(len);
        for (auto& c : q) c = kd.lo + static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(kd.hi - kd.lo + 1));
        q[0] = kd.lo;
        std::vector<std::uint8_t> q8(len);
        for (std::size_t i = 0; i < len; ++i) q8[i] = static_cast<std::uint8_t>(q[i] & 0xFF);
        std::vector<float> s(len + 2);
        std::vector<std::int32_t> z(len + 2);
        const auto zps = ZeroPoints(kd);
        for (std::size_t j = 0; j < s.size(); ++j) {
          s[j] = scales[(j + len) % std::size(scales)];
          z[j] = zps[j % zps.size()];
        }
        for (std::size_t bw : {std::size_t{0}, std::size_t{1}, std::size_t{3}, N, N + 1}) {
          for (std::size_t start : {std::size_t{0}, std::size_t{5}}) {
            for (double g : {1.0, 0.3, static_cast<double>(FLT_MAX), static_cast<double>(FLT_TRUE_MIN)}) {
              BOOST_TEST_CONTEXT(kd.name << " len " << len << " bw " << bw << " start " << start << " g " << g) {
                const std::int32_t* zz = g == 1.0 ? z.data() : nullptr;  // two levels: sym only
                std::vector<float> a(len + 1, 7.0f), b(len + 1, 7.0f);
                k::Get().dequant_affine(q.data(), nullptr, false, len, start, bw, s.data(), zz, g, a.data());
                sc::dequant_affine(q.data(), nullptr, false, len, start, bw, s.data(), zz, g, b.data());
                BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
                if (kd.hi - kd.lo <= 255) {
                  const bool sgn = kd.lo < 0;
                  k::Get().dequant_affine(nullptr, q8.data(), sgn, len, start, bw, s.data(), zz, g, a.data());
                  sc::dequant_affine(nullptr, q8.data(), sgn, len, start, bw, s.data(), zz, g, b.data());
                  BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
                  // The bytes read as the i32 codes they hold.
                  sc::dequant_affine(q.data(), nullptr, false, len, start, bw, s.data(), zz, g, b.data());
                  BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
                }
              }
            }
          }
        }
      }
    }
  });
}

// The 16-bit outputs of dequantize: every f16 and bf16 value, the midpoints between neighbours
// and a few ulps either side of each, the subnormal and overflow edges, NaN, infinities and
// zeros of both signs, and random patterns, against the scalar twin; the twin against the
// reference's rounding (reference::narrow_f32) on all of them.
BOOST_AUTO_TEST_CASE(narrowing_to_f16_and_bf16_matches_the_scalar_twin_and_the_reference) {
  std::vector<float> ys;
  auto around = [&](double v) {
    float f = static_cast<float>(v);
    ys.push_back(f);
    ys.push_back(-f);
    float up = f, down = f;
    for (int u = 0; u < 3; ++u) {
      up = std::nextafter(up, INFINITY);
      down = std::nextafter(down, -INFINITY);
      ys.push_back(up);
      ys.push_back(-down);
    }
  };
  for (std::uint32_t h = 0; h < 0x7C00; h += 7) {  // f16: value and midpoint to the next (step 7: a sample)
    const double v = h < 0x400 ? std::ldexp(static_cast<double>(h), -24)
                               : std::ldexp(1.0 + static_cast<double>(h & 0x3FF) / 1024, static_cast<int>(h >> 10) - 15);
    around(v);
    around(v + (h < 0x400 ? std::ldexp(1.0, -25) : std::ldexp(1.0, static_cast<int>(h >> 10) - 26)));
  }
  for (std::uint32_t b = 0; b < 0x7F80; b += 13) around(qscheme::f32_from_bits(b << 16) + 0.0);  // bf16 values
  for (double v : {65504.0, 65520.0, 65536.0, std::ldexp(1.0, -14), std::ldexp(1.0, -24), std::ldexp(1.0, -25),
                   std::ldexp(3.0, -26), static_cast<double>(FLT_MAX), std::ldexp(1.0, -126), std::ldexp(1.0, -149)}) {
    around(v);
  }
  for (float v : {INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f, qscheme::f32_from_bits(0x7F800001u),
                  qscheme::f32_from_bits(0xFFBFFFFFu)}) {
    ys.push_back(v);
  }
  std::mt19937 rng(17);
  for (int i = 0; i < 100000; ++i) ys.push_back(qscheme::f32_from_bits(rng()));
  for (const bool bf16 : {false, true}) {
    std::vector<std::uint16_t> want(ys.size());
    sc::narrow_f32(ys.data(), ys.size(), bf16, want.data());
    std::size_t off = 0;
    for (std::size_t i = 0; i < ys.size(); ++i) {
      const std::uint16_t r = qscheme::reference::narrow_f32(ys[i], bf16 ? qscheme::OutputDtype::bf16 : qscheme::OutputDtype::f16);
      if (r != want[i] && off++ < 5) {
        BOOST_TEST(r == want[i], "bf16 " << bf16 << " y bits " << std::hex << qscheme::f32_bits(ys[i]));
      }
    }
    BOOST_TEST(off == 0u);
    ForEachTarget([&] {
      for (std::size_t mis : {std::size_t{0}, std::size_t{3}}) {
        std::vector<std::uint16_t> got(ys.size() - mis + 1, 0xABCD);
        k::Get().narrow_f32(ys.data() + mis, ys.size() - mis, bf16, got.data());
        BOOST_TEST(got.back() == 0xABCD);  // nothing past n
        got.pop_back();
        BOOST_TEST((got == std::vector<std::uint16_t>(want.begin() + static_cast<std::ptrdiff_t>(mis), want.end())),
                   "bf16 " << bf16 << " misalign " << mis);
      }
    });
  }
}
