// fast/ against a second exact oracle written here with Boost.Multiprecision rationals,
// independent of reference/: every stored scale is found by binary search over the dtype's bit
// patterns with exact comparisons (reference/ rounds the exact ratio up instead), every code by
// exact rational rounding, every dequantized value by exact rounding to f32; it shares only
// scheme/'s layout. What it adds to the fast-vs-reference sweeps: a misreading of the spec that
// reference/ and fast/ share (one author wrote both) shows here as a disagreement. Exact profile,
// both calibrations, given scales, all values, one- and two-level schemes, N-D and partial
// blocks, on every compiled target. Also: burn-profile scales against a plain f32 transcription
// of the rules, error codes, encode/decode round trips and corruption, thread-count independence.
#include <boost/multiprecision/cpp_int.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "hwy/targets.h"
#include "oracle/edge_tensors.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "tests/support/sanitized.hpp"
#include "tests/support/scale_patterns.hpp"

namespace mp = boost::multiprecision;
using Q = mp::cpp_rational;
using qscheme::ScaleDtype;
using qscheme::Value;
namespace fast = qscheme::fast;
using qscheme::f32_bits;
using qscheme::f32_from_bits;
using qscheme::testing::ScalePatternValue;

namespace {

std::uint32_t DtypeMaxBits(ScaleDtype d) {
  switch (d) {
    case ScaleDtype::f32: return 0x7F7FFFFF;
    case ScaleDtype::bf16: return 0x7F7F;
    case ScaleDtype::f16: return 0x7BFF;
    case ScaleDtype::ue4m3: return 0x7E;
    case ScaleDtype::ue8m0: return 0xFE;
  }
  return 0;
}

// Smallest dtype bit pattern whose value is >= r (saturating at max): binary search.
std::uint32_t RoundUpBits(const Q& r, ScaleDtype d) {
  std::uint32_t lo = 0, hi = DtypeMaxBits(d);
  if (Q(ScalePatternValue(d, hi)) < r) return hi;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (Q(ScalePatternValue(d, mid)) >= r) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// Exact rational to f32, nearest-even, overflow to inf; sign handled by the caller. A double
// conversion only guesses the neighbouring patterns; exact comparisons decide, so the guess can be
// off by any number of ulps without changing the answer (it saves the binary search's ~30 rational
// comparisons per value).
float ToF32(const Q& r_abs) {
  if (r_abs == 0) return 0.0f;
  if (Q(FLT_MAX) <= r_abs) {
    const Q limit = Q(FLT_MAX) + Q(std::ldexp(1.0, 103));  // FLT_MAX + half ulp
    return r_abs >= limit ? INFINITY : FLT_MAX;
  }
  // lo: the largest finite pattern whose value is <= r.
  std::uint32_t lo = std::min<std::uint32_t>(f32_bits(static_cast<float>(r_abs.convert_to<double>())), 0x7F7FFFFF);
  while (lo > 0 && Q(f32_from_bits(lo)) > r_abs) --lo;
  while (lo < 0x7F7FFFFF && Q(f32_from_bits(lo + 1)) <= r_abs) ++lo;
  const Q a = Q(f32_from_bits(lo)), b = Q(f32_from_bits(lo + 1));
  const Q mid = (a + b) / 2;
  if (r_abs < mid) return f32_from_bits(lo);
  if (r_abs > mid) return f32_from_bits(lo + 1);
  return (lo & 1) ? f32_from_bits(lo + 1) : f32_from_bits(lo);
}

struct Mini {
  int m, emin, max_code, sign;
};
Mini MiniOf(Value v) {
  if (v == Value::e4m3) return {3, -6, 0x7E, 0x80};
  if (v == Value::e5m2) return {2, -14, 0x7B, 0x80};
  return {1, 0, 7, 0x8};
}
Q MiniMag(int c, const Mini& mi) {
  const int ef = c >> mi.m, man = c & ((1 << mi.m) - 1);
  return ef == 0 ? Q(std::ldexp(man, mi.emin - mi.m)) : Q(std::ldexp((1 << mi.m) + man, ef - 1 + mi.emin - mi.m));
}

// MiniMag of every non-negative code up to the largest finite one, built once per kind.
const std::vector<Q>& MiniMagnitudes(Value v) {
  static const auto build = [](Value k) {
    const Mini mi = MiniOf(k);
    std::vector<Q> out;
    for (int c = 0; c <= mi.max_code; ++c) out.push_back(MiniMag(c, mi));
    return out;
  };
  static const std::vector<Q> e4m3 = build(Value::e4m3), e5m2 = build(Value::e5m2), e2m1 = build(Value::e2m1);
  return v == Value::e4m3 ? e4m3 : v == Value::e5m2 ? e5m2 : e2m1;
}

std::int32_t OracleCode(float x, const Q& e, Value v) {
  const auto& vi = qscheme::info(v);
  const bool neg = std::signbit(x);
  if (e == 0) return vi.is_float && neg ? MiniOf(v).sign : 0;
  const Q r = Q(x) / e;
  if (!vi.is_float) {
    const mp::cpp_int num = mp::numerator(r), den = mp::denominator(r);
    mp::cpp_int fl = num / den;
    if (num < 0 && fl * den != num) fl -= 1;  // floor
    const Q frac = r - Q(fl);
    mp::cpp_int q = fl;
    if (frac > Q(1, 2) || (frac == Q(1, 2) && (fl % 2 != 0))) q += 1;
    if (q < vi.lo) q = vi.lo;
    if (q > vi.hi) q = vi.hi;
    return static_cast<std::int32_t>(q);
  }
  const Mini mi = MiniOf(v);
  const std::vector<Q>& mag = MiniMagnitudes(v);
  const Q a = r < 0 ? Q(-r) : r;
  // The first code c + 1 whose magnitude reaches a; a lies between codes c and c + 1.
  const auto up = std::lower_bound(mag.begin() + 1, mag.end(), a);
  int best = mi.max_code;
  if (up != mag.end()) {
    const int c = static_cast<int>(up - mag.begin()) - 1;
    const Q mid = (mag[c] + mag[c + 1]) / 2;
    best = a < mid ? c : a > mid ? c + 1 : (c % 2 == 0 ? c : c + 1);
  }
  return best | (neg ? mi.sign : 0);
}

// The oracle's exact quantization: codes, scale bits, global bits.
struct OracleOut {
  std::vector<std::int32_t> codes;
  std::vector<std::uint32_t> scale_bits;
  std::optional<std::uint32_t> global_bits;
  std::vector<float> deq;
  std::vector<Q> e;
};

// Block index of every element.
std::vector<std::uint64_t> BlockOf(const qscheme::Layout& l) {
  std::vector<std::uint64_t> out(l.elements);
  const std::size_t R = l.shape.size();
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    std::uint64_t rem = i, b = 0, stride = 1;
    for (std::size_t d = R; d-- > 0;) {
      const std::uint64_t c = rem % l.shape[d];
      rem /= l.shape[d];
      b += (c / l.block[d]) * stride;
      stride *= l.blocks_per_dim[d];
    }
    out[i] = R == 0 ? 0 : b;
  }
  return out;
}


OracleOut OracleQuantize(const qscheme::Scheme& s, const qscheme::Layout& l, const std::vector<float>& x,
                         qscheme::Calibration cal, const qscheme::GivenScales* given) {
  OracleOut o;
  const auto blk = BlockOf(l);
  const std::uint64_t nb = l.scales;
  const auto& vi = qscheme::info(s.value);
  const Q W = vi.hi - vi.lo;
  const ScaleDtype d = s.scale_dtype();
  const bool two = s.two_level();
  std::vector<Q> alpha(nb, Q(0));
  std::vector<std::uint64_t> cnt(nb, 0);
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    const Q a = Q(std::fabs(x[i]));
    ++cnt[blk[i]];
    if (cal == qscheme::Calibration::minmax) alpha[blk[i]] = std::max(alpha[blk[i]], a);
    else alpha[blk[i]] += a;
  }
  if (cal == qscheme::Calibration::absmean) {
    for (std::uint64_t j = 0; j < nb; ++j) {
      if (cnt[j]) alpha[j] /= cnt[j];
    }
  }
  o.scale_bits.resize(nb);
  std::vector<Q> stored(nb);
  Q g = 1;
  if (given) {
    for (std::uint64_t j = 0; j < nb; ++j) o.scale_bits[j] = RoundUpBits(Q(given->block[j]), d);
    if (two) g = Q(*given->global);
  } else if (!two) {
    for (std::uint64_t j = 0; j < nb; ++j) {
      const Q sstar = 2 * alpha[j] / W;
      o.scale_bits[j] = (sstar == 0 && d != ScaleDtype::ue8m0) ? 0 : RoundUpBits(sstar, d);
    }
  } else {
    Q smax = 0;
    for (std::uint64_t j = 0; j < nb; ++j) smax = std::max(smax, Q(2 * alpha[j] / W));
    const Q dmax = Q(ScalePatternValue(d, DtypeMaxBits(d)));
    g = smax == 0 ? Q(0) : Q(f32_from_bits(RoundUpBits(smax / dmax, ScaleDtype::f32)));
    if (g < Q(FLT_MIN)) g = Q(FLT_MIN);
    for (std::uint64_t j = 0; j < nb; ++j) {
      const Q r = 2 * alpha[j] / W / g;
      o.scale_bits[j] = r == 0 ? 0 : RoundUpBits(r, d);
    }
  }
  if (two) o.global_bits = f32_bits(static_cast<float>(static_cast<double>(g)));  // g is an f32 value
  o.e.resize(nb);
  for (std::uint64_t j = 0; j < nb; ++j) {
    const bool zero_bits = o.scale_bits[j] == 0 && d != ScaleDtype::ue8m0;
    stored[j] = zero_bits ? Q(0) : Q(ScalePatternValue(d, o.scale_bits[j]));
    o.e[j] = stored[j] * g;
  }
  o.codes.resize(l.elements);
  o.deq.resize(l.elements);
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    const Q& e = o.e[blk[i]];
    o.codes[i] = OracleCode(x[i], e, s.value);
    Q val;
    bool neg;
    if (vi.is_float) {
      const Mini mi = MiniOf(s.value);
      val = MiniMag(o.codes[i] & (mi.sign - 1), mi);
      neg = (o.codes[i] & mi.sign) != 0;
    } else {
      val = Q(std::abs(o.codes[i]));
      neg = o.codes[i] < 0;
    }
    const float f = ToF32(val * e);
    o.deq[i] = neg ? -f : f;
  }
  return o;
}

// A representative subset of tuple_space(): native store (values), every level combination.
std::vector<qscheme::Scheme> Schemes() {
  std::vector<qscheme::Scheme> out;
  for (const auto& s : qscheme::tuple_space()) {
    if (s.store.kind != qscheme::StoreKind::native || s.mode != qscheme::Mode::sym) continue;
    if (!qscheme::validate_scheme(s).ok()) continue;
    if (s.block && s.block->size.extents().size() == 1 && s.block->size[0] == 32) continue;  // like [16]
    out.push_back(s);
  }
  return out;
}

const std::vector<std::vector<std::uint64_t>> kShapes{{}, {7}, {3, 5}, {2, 3, 4}, {33}, {3, 17, 9}, {5, 0}};

}  // namespace

BOOST_AUTO_TEST_CASE(exact_profile_matches_the_rational_oracle) {
  std::size_t cases = 0;
  const auto schemes = Schemes();
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    const bool full = t == fast::kernels::AvailableTargetBits().front();
    for (std::size_t si = 0; si < schemes.size(); ++si) {
      const auto& s = schemes[si];
      if (!full && si % 10 != 0) continue;  // the other targets run a tenth of the schemes
      if (si % qscheme::testing::SanitizerStride(3) != 0) continue;
      for (const auto& shape : kShapes) {
        if (shape.size() == 3 && shape[1] == 17 && si % 4 != 0) continue;  // the big shape: a quarter
        const auto l = qscheme::make_layout(s, shape);
        if (!l.ok()) continue;
        const auto inputs = qscheme::oracle::edge_inputs(s, *l, static_cast<std::uint32_t>(si * 131 + shape.size()));
        for (auto cal : {qscheme::Calibration::minmax, qscheme::Calibration::absmean}) {
          for (std::size_t ti = 0; ti < inputs.size(); ++ti) {
            // Each scheme runs every other input, alternating, so that every input meets every
            // kind of scheme at the cost of about seven per scheme.
            // The oracle judges calibrated, finite inputs (given scales have their own case
            // below; it has no error paths).
            if (!qscheme::oracle::calibrated_and_finite(inputs[ti]) || (ti + si) % 2 != 0) continue;
            const auto& x = inputs[ti].x;
            BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " scheme " << qscheme::format_scheme(s)
                                         << " shape rank " << shape.size() << " cal "
                                         << qscheme::to_string(cal) << " " << inputs[ti].name) {
              qscheme::QuantizeOptions o;
              o.calibration = cal;
              const auto q = fast::quantize(s, shape, x, o);
              BOOST_TEST_REQUIRE(q.ok(), q.status().to_string());
              const OracleOut want = OracleQuantize(s, *l, x, cal, nullptr);
              BOOST_TEST(q->scale_bits == want.scale_bits, boost::test_tools::per_element());
              BOOST_TEST((q->global_bits == want.global_bits));
              BOOST_TEST(q->codes == want.codes, boost::test_tools::per_element());
              const auto d = fast::dequantize(*q);
              BOOST_TEST_REQUIRE(d.ok());
              BOOST_TEST(f32_bits(*d) == f32_bits(want.deq), boost::test_tools::per_element());
              ++cases;
            }
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  BOOST_TEST_MESSAGE("oracle cases: " << cases);
  BOOST_TEST(cases > 1000u);
}

BOOST_AUTO_TEST_CASE(given_scales_ties_match_the_oracle) {
  // Given scales put x/e exactly on ties, and one f32 ulp either side.
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    const bool full = t == fast::kernels::AvailableTargetBits().front();
    std::size_t si = 0;
    for (const auto& s : Schemes()) {
      if (!full && (si++ % 10) != 0) continue;
      const std::vector<std::uint64_t> shape{3, 7, 9};
      const auto l = qscheme::make_layout(s, shape);
      if (!l.ok()) continue;
      qscheme::GivenScales g;
      std::mt19937 rng(static_cast<std::uint32_t>(l->scales));
      for (std::uint64_t j = 0; j < l->scales; ++j) {
        g.block.push_back(j % 7 == 3 ? 0.0f : std::ldexp(1.0f + static_cast<float>(rng() % 8) / 8, static_cast<int>(rng() % 6) - 3));
      }
      if (s.two_level()) g.global = 0.75f;
      // Quantize once to learn the effective scales, then build ties against them.
      std::vector<float> x(l->elements, 0.0f);
      const OracleOut probe = OracleQuantize(s, *l, x, qscheme::Calibration::minmax, &g);
      const auto blk = BlockOf(*l);
      for (std::uint64_t i = 0; i < l->elements; ++i) {
        const Q& e = probe.e[blk[i]];
        if (e == 0) {
          x[i] = (i % 2) ? -0.0f : 0.0f;
          continue;
        }
        const double k = static_cast<double>(static_cast<int>(rng() % 64) - 32) + 0.5;
        float v = static_cast<float>(k * static_cast<double>(e) / (qscheme::info(s.value).is_float ? 4.0 : 1.0));
        if (i % 3 == 1) v = std::nextafter(v, 1e30f);
        if (i % 3 == 2) v = std::nextafter(v, -1e30f);
        x[i] = v;
      }
      qscheme::QuantizeOptions o;
      o.scales = g;
      BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " scheme " << qscheme::format_scheme(s)) {
        const auto q = fast::quantize(s, shape, x, o);
        BOOST_TEST_REQUIRE(q.ok(), q.status().to_string());
        const OracleOut want = OracleQuantize(s, *l, x, qscheme::Calibration::minmax, &g);
        BOOST_TEST(q->scale_bits == want.scale_bits, boost::test_tools::per_element());
        BOOST_TEST(q->codes == want.codes, boost::test_tools::per_element());
        const auto d = fast::dequantize(*q);
        BOOST_TEST_REQUIRE(d.ok());
        for (std::size_t i = 0; i < d->size(); ++i) BOOST_TEST(f32_bits((*d)[i]) == f32_bits(want.deq[i]), "element " << i);
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}
