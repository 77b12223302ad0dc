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

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "hwy/targets.h"
#include "scheme/layout.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "tests/support/sanitized.hpp"

namespace mp = boost::multiprecision;
using Q = mp::cpp_rational;
using qscheme::ScaleDtype;
using qscheme::Value;
namespace fast = qscheme::fast;

namespace {

std::uint32_t Bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Value of a positive scale-dtype bit pattern, exactly (independent decoding by formula).
double DtypeValue(std::uint32_t b, ScaleDtype d) {
  switch (d) {
    case ScaleDtype::f32: return FromBits(b);
    case ScaleDtype::bf16: return FromBits(b << 16);
    case ScaleDtype::f16: {
      const int e = static_cast<int>(b >> 10), m = static_cast<int>(b & 1023);
      return e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    }
    case ScaleDtype::ue4m3: {
      const int e = static_cast<int>(b >> 3), m = static_cast<int>(b & 7);
      return e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
    }
    case ScaleDtype::ue8m0: return std::ldexp(1.0, static_cast<int>(b) - 127);
  }
  return 0;
}
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
  if (Q(DtypeValue(hi, d)) < r) return hi;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (Q(DtypeValue(mid, d)) >= r) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// Exact rational to f32, nearest-even, overflow to inf; sign handled by the caller.
float ToF32(const Q& r_abs) {
  if (r_abs == 0) return 0.0f;
  // Largest finite bits with value <= r.
  std::uint32_t lo = 0, hi = 0x7F7FFFFF;
  if (Q(FLT_MAX) <= r_abs) {
    const Q limit = Q(FLT_MAX) + Q(std::ldexp(1.0, 103));  // FLT_MAX + half ulp
    return r_abs >= limit ? INFINITY : FLT_MAX;
  }
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo + 1) / 2;
    if (Q(FromBits(mid)) <= r_abs) lo = mid;
    else hi = mid - 1;
  }
  const Q a = Q(FromBits(lo)), b = Q(FromBits(lo + 1));
  const Q mid = (a + b) / 2;
  if (r_abs < mid) return FromBits(lo);
  if (r_abs > mid) return FromBits(lo + 1);
  return (lo & 1) ? FromBits(lo + 1) : FromBits(lo);
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
  const Q a = r < 0 ? Q(-r) : r;
  int best = mi.max_code;
  for (int c = 0; c < mi.max_code; ++c) {
    const Q lo = MiniMag(c, mi), hi = MiniMag(c + 1, mi);
    if (a <= hi) {
      const Q mid = (lo + hi) / 2;
      best = a < mid ? c : a > mid ? c + 1 : (c % 2 == 0 ? c : c + 1);
      break;
    }
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
    const Q dmax = Q(DtypeValue(DtypeMaxBits(d), d));
    g = smax == 0 ? Q(0) : Q(FromBits(RoundUpBits(smax / dmax, ScaleDtype::f32)));
    if (g < Q(FLT_MIN)) g = Q(FLT_MIN);
    for (std::uint64_t j = 0; j < nb; ++j) {
      const Q r = 2 * alpha[j] / W / g;
      o.scale_bits[j] = r == 0 ? 0 : RoundUpBits(r, d);
    }
  }
  if (two) o.global_bits = Bits(static_cast<float>(static_cast<double>(g)));  // g is an f32 value
  o.e.resize(nb);
  for (std::uint64_t j = 0; j < nb; ++j) {
    const bool zero_bits = o.scale_bits[j] == 0 && d != ScaleDtype::ue8m0;
    stored[j] = zero_bits ? Q(0) : Q(DtypeValue(o.scale_bits[j], d));
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

// Test tensors for a shape: mixtures of the edge cases of the brief.
std::vector<std::vector<float>> Tensors(std::uint64_t n, std::uint32_t seed) {
  std::vector<std::vector<float>> out;
  std::mt19937 rng(seed);
  auto pick = [&](int kind) {
    switch (kind) {
      case 0: return std::uniform_real_distribution<float>(-3, 3)(rng);
      case 1: return FromBits(rng() % 0x800000u) * ((rng() & 1) ? -1.f : 1.f);            // subnormal
      case 2: return (rng() & 1) ? -0.0f : 0.0f;
      case 3: return static_cast<float>(static_cast<int>(rng() % 255) - 127) * 0.5f;     // halves
      case 4: return (rng() & 1) ? FLT_MAX : -FLT_MAX;
      case 5: return std::ldexp(static_cast<float>(rng() % 16), static_cast<int>(rng() % 40) - 20);
      default: return FromBits(rng() & 0x7F7FFFFFu) * ((rng() & 1) ? -1.f : 1.f);
    }
  };
  std::vector<float> v(n);
  for (int mode = 0; mode < 7; ++mode) {
    for (auto& f : v) {
      switch (mode) {
        case 0: f = pick(0); break;                        // random
        case 1: f = pick(static_cast<int>(rng() % 7)); break;  // everything mixed
        case 2: f = 0.0f; break;                           // all zero
        case 3: f = 1.5f; break;                           // constant
        case 4: f = pick(3); break;                        // ties of q8 at scale 1
        case 5: f = pick(1); break;                        // subnormals only
        default: f = pick(static_cast<int>(rng() % 3)); break;
      }
    }
    if (mode == 6 && n) v[rng() % n] = 1e30f;  // one outlier
    out.push_back(v);
  }
  return out;
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
        for (auto cal : {qscheme::Calibration::minmax, qscheme::Calibration::absmean}) {
          const auto xs = Tensors(l->elements, static_cast<std::uint32_t>(si * 131 + shape.size()));
          for (std::size_t ti = 0; ti < xs.size(); ++ti) {
            const auto& x = xs[ti];
            BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " scheme " << qscheme::format_scheme(s)
                                         << " shape rank " << shape.size() << " cal "
                                         << qscheme::to_string(cal) << " tensor " << ti) {
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
              std::vector<std::uint32_t> gb, wb;
              for (float f : *d) gb.push_back(Bits(f));
              for (float f : want.deq) wb.push_back(Bits(f));
              BOOST_TEST(gb == wb, boost::test_tools::per_element());
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
        for (std::size_t i = 0; i < d->size(); ++i) BOOST_TEST(Bits((*d)[i]) == Bits(want.deq[i]), "element " << i);
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}
