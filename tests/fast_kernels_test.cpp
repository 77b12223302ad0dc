// Every SIMD kernel of fast/ against its scalar twin (fast/kernels/scalar.h) on every compiled Highway
// target this CPU supports, over lengths 1, 3, 7, N/2, N, N+1, 3N, 8N+2 (N = f32 lanes of the
// target) crossed with misalignments 0, N/4, 3N/5. Results must be identical:
// codes equal, floats bit-equal.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fast/kernels/dispatch.h"
#include "fast/kernels/scalar.h"
#include "fast/support/prefetch_window.hpp"
#include "hwy/targets.h"
#include "scheme/float_bits.hpp"

namespace k = qscheme::fast::kernels;
namespace sc = qscheme::fast::scalar;

namespace {

struct TargetGuard {
  ~TargetGuard() { hwy::SetSupportedTargetsForTest(0); }
};

template <class Fn>
void ForEachTarget(Fn fn) {
  TargetGuard guard;
  const auto targets = k::AvailableTargetBits();
  BOOST_TEST_REQUIRE(!targets.empty());
  for (std::int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    BOOST_TEST_CONTEXT("target " << hwy::TargetName(t)) {
      BOOST_TEST(k::CurrentTarget() == std::string(hwy::TargetName(t)));
      fn();
    }
  }
}

std::vector<std::size_t> Lengths() {
  const std::size_t N = k::Get().lanes_f32();
  return {1, 3, 7, N / 2, N, N + 1, 3 * N, 8 * N + 2};
}
std::vector<std::size_t> Misaligns() {
  const std::size_t N = k::Get().lanes_f32();
  return {0, N / 4, 3 * N / 5};
}

template <class Fn>
void ForEachLenMis(Fn fn) {
  for (std::size_t len : Lengths()) {
    for (std::size_t mis : Misaligns()) {
      BOOST_TEST_CONTEXT("len " << len << " misalign " << mis) { fn(len, mis); }
    }
  }
}

template <class T>
bool BitEqual(const T* a, const T* b, std::size_t n, std::size_t* at) {
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(a + i, b + i, sizeof(T)) != 0) {
      *at = i;
      return false;
    }
  }
  return true;
}

#define EXPECT_SAME(a, b, n, xs)                                                                  \
  do {                                                                                            \
    std::size_t at_ = 0;                                                                          \
    const bool ok_ = BitEqual((a), (b), (n), &at_);                                               \
    BOOST_TEST(ok_, "first difference at " << at_ << " (input " << (xs)[at_] << "): simd "       \
                                            << +(a)[at_] << " scalar " << +(b)[at_]);          \
  } while (0)

// A pool of inputs mixing ties for scale e, neighbours of ties, subnormals, signed zeros, huge
// values and random values.
std::vector<float> Inputs(double e, std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int kind = static_cast<int>(rng() % 10);
    const int k = static_cast<int>(rng() % 300) - 150;
    float x;
    switch (kind) {
      case 0: x = static_cast<float>((k + 0.5) * e); break;                          // tie
      case 1: x = std::nextafter(static_cast<float>((k + 0.5) * e), 1e30f); break;   // tie + ulp
      case 2: x = std::nextafter(static_cast<float>((k + 0.5) * e), -1e30f); break;  // tie - ulp
      case 3: x = qscheme::f32_from_bits(rng() % 0x800000u) * ((rng() & 1) ? -1.f : 1.f); break;  // subnormal
      case 4: x = (rng() & 1) ? -0.0f : 0.0f; break;
      case 5: x = (rng() & 1) ? 3.4028235e38f : -3.4028235e38f; break;
      case 6: x = static_cast<float>(std::ldexp(static_cast<double>(rng() % 64), static_cast<int>(rng() % 20) - 10) * e); break;
      case 7: {
        std::uint32_t b = rng();
        if (((b >> 23) & 0xFF) == 0xFF) b &= 0xBFFFFFFFu;  // keep finite
        x = qscheme::f32_from_bits(b);
        break;
      }
      default: x = static_cast<float>(std::uniform_real_distribution<double>(-600, 600)(rng) * e); break;
    }
    v[i] = x;
  }
  return v;
}

// Exact effective scales the kernels are called with: dtype values and products s*g.
const std::vector<double>& ExactScales() {
  static const std::vector<double> s{1.0,
                                     static_cast<double>(0.1f),
                                     static_cast<double>(1.0f / 127),
                                     std::ldexp(1.0, -140),
                                     std::ldexp(1.0, 120),
                                     2047.0 * std::ldexp(static_cast<double>(0x00ABCDEF), -40),  // 35 bits
                                     448.0 * std::ldexp(1.0, -126),
                                     std::ldexp(3.0, -9)};
  return s;
}
const std::vector<float>& BurnScales() {
  static const std::vector<float> s{1.0f, 0.1f, 1.0f / 127, 1e-40f, 3e37f, 0.0078125f, 1.7e-5f};
  return s;
}

struct IntKind {
  int lo, hi;
};
const IntKind kInts[] = {{-128, 127}, {-127, 127}, {-8, 7}, {-7, 7}, {-2, 1}, {-1, 1}};

}  // namespace

BOOST_AUTO_TEST_CASE(targets_are_listed_and_forceable) {
  const auto names = k::AvailableTargets();
  BOOST_TEST(!names.empty());
  for (const auto& n : names) {
    BOOST_TEST(k::ForceTarget(n));
    BOOST_TEST(k::CurrentTarget() == n);
  }
  BOOST_TEST(!k::ForceTarget("NOT_A_TARGET"));
  BOOST_TEST(k::ForceTarget("auto"));
  BOOST_TEST(k::CurrentTarget() == names.front());
}

BOOST_AUTO_TEST_CASE(prefetch_window_starts_at_its_page_phase_within_a_page_of_the_least_lead) {
  // Every 4-byte page offset of the next unit's first float, and two minimum leads.
  alignas(4096) static float page[3 * 4096 / sizeof(float)];
  for (std::size_t min_lead : {std::size_t{1024}, std::size_t{1000}}) {
    for (std::size_t k = 0; k < 4096 / sizeof(float); ++k) {
      const float* next = page + k;
      const std::size_t lead = qscheme::fast::kernels::WindowLead(next, min_lead);
      BOOST_TEST(lead >= min_lead);
      BOOST_TEST(lead < min_lead + 4096 / sizeof(float));
      BOOST_TEST(reinterpret_cast<std::uintptr_t>(next + lead) % 4096 == qscheme::fast::kernels::kWindowPagePhase);
    }
  }
}

BOOST_AUTO_TEST_CASE(max_abs_bits) {
  ForEachTarget([] {
    ForEachLenMis([](std::size_t len, std::size_t mis) {
      auto buf = Inputs(0.37, len + mis, 7 + static_cast<std::uint32_t>(len));
      const float* x = buf.data() + mis;
      BOOST_TEST(k::Get().max_abs_bits(x, len) == sc::max_abs_bits(x, len));
      // A NaN or infinity at the last position is seen.
      buf[mis + len - 1] = std::numeric_limits<float>::infinity();
      BOOST_TEST(k::Get().max_abs_bits(x, len) >= 0x7F800000u);
      // Segmented form, widths up to 2N+1 and every power of two below N (each has its own tree).
      std::vector<std::size_t> widths;
      for (std::size_t w = 1; w <= 2 * k::Get().lanes_f32() + 1; w += 3) widths.push_back(w);
      for (std::size_t w = 2; w < k::Get().lanes_f32(); w *= 2) widths.push_back(w);
      for (std::size_t w : widths) {
        const std::size_t ns = (len + w - 1) / w;
        std::vector<std::uint32_t> a(ns, 5), b(ns, 5);
        k::Get().segment_max_abs_bits(x, len, w, a.data());
        for (std::size_t s = 0; s < ns; ++s) b[s] = std::max<std::uint32_t>(5, sc::max_abs_bits(x + s * w, std::min(w, len - s * w)));
        BOOST_TEST(a == b);
      }
      // Three rows sharing their segments: as three SegmentMaxAbsBits calls into one acc.
      const auto rows3 = Inputs(3.1, 3 * len, 11 + static_cast<std::uint32_t>(len));
      for (std::size_t w : {std::size_t{1}, std::size_t{5}, k::Get().lanes_f32(), std::size_t{1000}, std::size_t{1500}}) {
        const std::size_t ns = (len + w - 1) / w;
        std::vector<std::uint32_t> a(ns, 7), b(ns, 7);
        k::Get().rows_segment_max_abs_bits(rows3.data(), 3, len, w, a.data(), 1, 0);
        for (std::size_t r = 0; r < 3; ++r) k::Get().segment_max_abs_bits(rows3.data() + r * len, len, w, b.data());
        BOOST_TEST(a == b);
      }
      // Two groups of three rows, 4 rows apart: the row between them (huge values) is not read.
      std::vector<float> g2(7 * len, 1e30f);
      for (std::size_t r = 0; r < 3; ++r) {
        std::copy(rows3.begin() + r * len, rows3.begin() + (r + 1) * len, g2.begin() + r * len);
        std::copy(rows3.begin() + r * len, rows3.begin() + (r + 1) * len, g2.begin() + (4 + r) * len);
        for (std::size_t i = 0; i < len; ++i) g2[(4 + r) * len + i] *= 0.75f;
      }
      for (std::size_t w : {std::size_t{1}, std::size_t{5}, k::Get().lanes_f32(), std::size_t{1500}}) {
        const std::size_t ns = (len + w - 1) / w;
        std::vector<std::uint32_t> a(ns, 7), b(ns, 7);
        k::Get().rows_segment_max_abs_bits(g2.data(), 3, len, w, a.data(), 2, 4 * len);
        for (std::size_t r : {0, 1, 2, 4, 5, 6}) k::Get().segment_max_abs_bits(g2.data() + r * len, len, w, b.data());
        BOOST_TEST(a == b);
      }
    });
  });
}

BOOST_AUTO_TEST_CASE(quantize_exact_int) {
  ForEachTarget([] {
    for (double e : ExactScales()) {
      for (const IntKind& ik : kInts) {
        BOOST_TEST_CONTEXT("e " << e << " range " << ik.lo << ".." << ik.hi) {
          ForEachLenMis([&](std::size_t len, std::size_t mis) {
            const auto buf = Inputs(e, len + mis, static_cast<std::uint32_t>(len * 31 + mis));
            const float* x = buf.data() + mis;
            std::vector<std::int32_t> a(len + 1, 99), b(len + 1, 99);
            k::Get().quantize_exact_int(x, len, e, ik.lo, ik.hi, a.data());
            sc::quantize_exact_int(x, len, e, ik.lo, ik.hi, b.data());
            EXPECT_SAME(a.data(), b.data(), len + 1, x);  // incl. the untouched guard element
          });
        }
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(quantize_exact_float) {
  ForEachTarget([] {
    for (double e : ExactScales()) {
      for (int fmt = 0; fmt < 3; ++fmt) {
        BOOST_TEST_CONTEXT("e " << e << " fmt " << fmt) {
          ForEachLenMis([&](std::size_t len, std::size_t mis) {
            // Inputs scaled so that x/e covers the format's whole range, subnormals included.
            auto buf = Inputs(e * sc::kMini[fmt].max / 256, len + mis, static_cast<std::uint32_t>(len * 17 + mis));
            const float* x = buf.data() + mis;
            std::vector<std::int32_t> a(len + 1, 99), b(len + 1, 99);
            k::Get().quantize_exact_float(x, len, e, fmt, a.data());
            sc::quantize_exact_float(x, len, e, fmt, b.data());
            EXPECT_SAME(a.data(), b.data(), len + 1, x);
          });
        }
      }
    }
  });
}

namespace {

// Every code value of minifloat fmt, both signs, each followed by the midpoint to the next value
// and that midpoint's two f32 neighbours; with past_max, also past the largest value (the midpoint
// to where the next value would lie).
std::vector<float> GridPointsAndMidpoints(int fmt, bool past_max) {
  const auto& mi = sc::kMini[fmt];
  std::vector<float> xs;
  for (int c = 0; c <= mi.max_code; ++c) {
    const double v = sc::mini_value(c, fmt);
    for (double sgn : {1.0, -1.0}) {
      xs.push_back(static_cast<float>(sgn * v));
      if (c == mi.max_code && !past_max) continue;
      const double next = c < mi.max_code ? sc::mini_value(c + 1, fmt) : 2 * mi.max - sc::mini_value(c - 1, fmt);
      const float mid = static_cast<float>(sgn * (v + next) / 2);
      xs.push_back(mid);
      xs.push_back(std::nextafter(mid, 1e30f));
      xs.push_back(std::nextafter(mid, -1e30f));
    }
  }
  return xs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(quantize_exact_float_every_grid_point_and_midpoint) {
  // Every code value, every midpoint between neighbours and its f32 neighbours, at e = 1.
  ForEachTarget([] {
    for (int fmt = 0; fmt < 3; ++fmt) {
      const auto& mi = sc::kMini[fmt];
      std::vector<float> xs = GridPointsAndMidpoints(fmt, false);
      xs.push_back(static_cast<float>(mi.max * 1.0625));
      xs.push_back(-1e30f);
      std::vector<std::int32_t> a(xs.size()), b(xs.size());
      k::Get().quantize_exact_float(xs.data(), xs.size(), 1.0, fmt, a.data());
      sc::quantize_exact_float(xs.data(), xs.size(), 1.0, fmt, b.data());
      BOOST_TEST_CONTEXT("fmt " << fmt) { EXPECT_SAME(a.data(), b.data(), xs.size(), xs); }
    }
  });
}

BOOST_AUTO_TEST_CASE(byte_codes_match_the_scalar_twin_within_ulps_of_every_rounding_boundary) {
  // The one-byte minifloat codes of the fused path (QuantizeCodes: r = x * f32(1/e) and a flag
  // for lanes near a boundary; e2m1 by a table on AVX-512) at every grid value and midpoint, and
  // 1 to 12 f32 ulps either side: the flag's margin must cover r's error, and nothing past it
  // may be flagged wrongly. Scales on and off the f32 grid (e = s * g of two levels).
  ForEachTarget([] {
    const std::size_t N = k::Get().lanes_f32();
    std::vector<double> scales{1.0, 0.375, 448.0 * std::ldexp(static_cast<double>(0x00ABCDEF), -40),
                               std::ldexp(5.0, -60), std::ldexp(7.0, 40)};
    // Two-level products s * g (s with 4 significant bits, g any f32): r's error reaches its bound
    // only for some of them.
    std::mt19937 rng(7);
    for (int i = 0; i < 40; ++i) {
      const double g = std::ldexp(static_cast<double>(0x800000 | (rng() & 0x7FFFFF)), -23 - static_cast<int>(rng() % 8));
      scales.push_back(g * std::ldexp(static_cast<double>(8 + rng() % 8), -3 - static_cast<int>(rng() % 4)));
    }
    for (double e : scales) {
      for (int fmt = 0; fmt < 3; ++fmt) {
        const auto& mi = sc::kMini[fmt];
        std::vector<float> xs;
        for (int c = 0; c <= mi.max_code; ++c) {
          const double v = sc::mini_value(c, fmt);
          std::vector<double> points{v};
          if (c < mi.max_code) points.push_back((v + sc::mini_value(c + 1, fmt)) / 2);
          for (double t : points) {
            for (double sgn : {1.0, -1.0}) {
              const float x0 = static_cast<float>(sgn * t * e);
              xs.push_back(x0);
              float up = x0, down = x0;
              for (int u = 1; u <= 12; ++u) {
                up = std::nextafter(up, 1e30f);
                down = std::nextafter(down, -1e30f);
                xs.push_back(up);
                xs.push_back(down);
              }
            }
          }
        }
        for (float x : {0.0f, -0.0f, static_cast<float>(mi.max * e * 1.1), -3.4028235e38f}) xs.push_back(x);
        while (xs.size() % N) xs.push_back(0.0f);
        k::CodeSpec cs;  // a minifloat's lo and hi are not used
        cs.fmt = fmt;
        const float inv = k::InvF32(e);
        std::vector<std::uint8_t> a(xs.size() + 1, 0x5A);
        std::vector<std::int32_t> b(xs.size());
        k::Get().quantize_codes(xs.data(), xs.size(), 0, 0, &inv, &e, std::isnan(inv), cs, a.data(), nullptr);
        sc::quantize_exact_float(xs.data(), xs.size(), e, fmt, b.data());
        std::vector<std::uint8_t> bb(xs.size() + 1, 0x5A);
        for (std::size_t i = 0; i < xs.size(); ++i) bb[i] = static_cast<std::uint8_t>(b[i]);
        BOOST_TEST_CONTEXT("e " << e << " fmt " << fmt) { EXPECT_SAME(a.data(), bb.data(), xs.size() + 1, xs); }
        if (fmt == sc::kE2M1) {
          // Unclamped (the caller knows no scale saturated, so |x / e| <= 6): AVX-512 then takes
          // max(|r|, 0.2) in one vrangeps instead of clamping at 6.5 too.
          for (float& x : xs) x = static_cast<float>(std::clamp(static_cast<double>(x), -6.0 * e, 6.0 * e));
          cs.clamp = false;
          std::fill(a.begin(), a.end(), 0x5A);
          k::Get().quantize_codes(xs.data(), xs.size(), 0, 0, &inv, &e, std::isnan(inv), cs, a.data(), nullptr);
          sc::quantize_exact_float(xs.data(), xs.size(), e, fmt, b.data());
          for (std::size_t i = 0; i < xs.size(); ++i) bb[i] = static_cast<std::uint8_t>(b[i]);
          BOOST_TEST_CONTEXT("e " << e << " e2m1 unclamped") { EXPECT_SAME(a.data(), bb.data(), xs.size() + 1, xs); }
        }
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(nibble_codes_are_the_packed_byte_codes_on_every_target) {
  // QuantizeCodes with a nibbles output (4-bit kinds) against its own byte codes packed by PackRow:
  // whole-vector groups, the near-boundary redo, the tail loop, a partial last block, any_far
  // blocks and a uniform scale, with nothing written past len / 2.
  ForEachTarget([] {
    std::mt19937 rng(11);
    struct Kind {
      int fmt, lo, hi;
      bool clamp;
    };
    const Kind kinds[] = {{sc::kE2M1, 0, 0, true}, {sc::kE2M1, 0, 0, false}, {-1, -7, 7, false}, {-1, -7, 7, true},
                          {-1, -8, 7, true}};
    for (const Kind& kind : kinds) {
      for (std::size_t bw : {std::size_t{0}, std::size_t{16}, std::size_t{32}, std::size_t{64}}) {
        for (std::size_t len : {std::size_t{2}, std::size_t{30}, std::size_t{64}, std::size_t{250}, std::size_t{2048}}) {
          for (bool far : {false, true}) {
            const std::size_t nb = bw ? (len + bw - 1) / bw : 1;
            std::vector<double> e(nb);
            std::vector<float> inv(nb);
            for (std::size_t b = 0; b < nb; ++b) {
              e[b] = std::ldexp(1.0 + static_cast<double>(rng() % 64) / 64, static_cast<int>(rng() % 20) - 10);
              inv[b] = k::InvF32(e[b]);
            }
            if (far) inv[nb - 1] = std::numeric_limits<float>::quiet_NaN();  // divided exactly instead
            // Runs of 64 values: near the rounding boundaries of their block (half-integers; e2m1's
            // 0.25, 0.75, ...), a few ulps off or on them, so that groups are redone; or all
            // between boundaries (k/8 + 1/16), so that whole groups go straight from the registers.
            const double bounds[] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 0.5, 1.5, 4.5, 6.5};
            std::vector<float> x(len);
            bool near = false;
            for (std::size_t i = 0; i < len; ++i) {
              if (i % 64 == 0) near = rng() % 2 == 0;
              const double eb = e[bw ? i / bw : 0];
              float v;
              if (near) {
                v = static_cast<float>(bounds[rng() % 11] * eb);
                for (int u = static_cast<int>(rng() % 7) - 3; u != 0; u += u > 0 ? -1 : 1) {
                  v = std::nextafter(v, u > 0 ? 1e30f : -1e30f);
                }
              } else {
                v = static_cast<float>((static_cast<double>(rng() % 64) / 8 + 1.0 / 16) * eb);
              }
              x[i] = (rng() & 1) ? -v : v;
            }
            k::CodeSpec cs;
            cs.fmt = kind.fmt;
            cs.lo = kind.lo;
            cs.hi = kind.hi;
            cs.bits = 4;
            cs.clamp = kind.clamp;
            if (!kind.clamp) {  // the caller's promise: no |x / e| beyond hi
              for (std::size_t i = 0; i < len; ++i) {
                const double lim = (kind.fmt == sc::kE2M1 ? 6 : kind.hi) * e[bw ? i / bw : 0];
                x[i] = static_cast<float>(std::clamp(static_cast<double>(x[i]), -lim, lim));
              }
            }
            std::vector<std::uint8_t> codes(len), scratch(len), want(len / 2 + 1, 0xA5), got(len / 2 + 1, 0xA5);
            k::Get().quantize_codes(x.data(), len, 0, bw, inv.data(), e.data(), far, cs, codes.data(), nullptr);
            k::Get().pack_row(codes.data(), len, 4, 2, 1, want.data());
            k::Get().quantize_codes(x.data(), len, 0, bw, inv.data(), e.data(), far, cs, scratch.data(), got.data());
            BOOST_TEST_CONTEXT("fmt " << kind.fmt << " lo " << kind.lo << " clamp " << kind.clamp << " bw " << bw
                                      << " len " << len << " far " << far) {
              BOOST_TEST(got == want, boost::test_tools::per_element());
            }
          }
        }
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(quantize_zero_scale) {
  ForEachTarget([] {
    for (int sign : {0, 0x80, 0x08}) {
      ForEachLenMis([&](std::size_t len, std::size_t mis) {
        const auto buf = Inputs(1.0, len + mis, static_cast<std::uint32_t>(len + 3 * mis));
        const float* x = buf.data() + mis;
        std::vector<std::int32_t> a(len), b(len);
        k::Get().quantize_zero_scale(x, len, sign, a.data());
        for (std::size_t i = 0; i < len; ++i) b[i] = std::signbit(x[i]) ? sign : 0;
        EXPECT_SAME(a.data(), b.data(), len, x);
      });
    }
  });
}

// The f32-step family against step_code on every rule, block width and start, both outputs.
// Operands: the scale itself (divide) or its f32 reciprocal (multiply), the other blocks cycling
// through the other scales' operands; +inf (torch's 1 / 0) too under the rule that sends NaN to lo.
BOOST_AUTO_TEST_CASE(quantize_steps) {
  std::vector<k::StepSpec> specs;
  for (k::StepOp op : {k::StepOp::divide, k::StepOp::multiply}) {
    for (k::StepTie tie : {k::StepTie::even, k::StepTie::away}) {
      for (k::StepSaturation sat : {k::StepSaturation::clamp, k::StepSaturation::int64_min_then_clamp}) {
        for (const IntKind& ik : kInts) specs.push_back({op, tie, sat, false, ik.lo, ik.hi, -1});
      }
    }
    for (int fmt = 0; fmt < 3; ++fmt) {
      for (k::StepTie tie : {k::StepTie::even, k::StepTie::away}) {
        for (bool zero_plus : {false, true}) specs.push_back({op, tie, k::StepSaturation::clamp, zero_plus, 0, 0, fmt});
      }
    }
    // ggml's rules: x86's conversion wrapped to the kind's bits or clamped to its full range, and
    // q4_0's offset code (q4f, q2f) clamped above.
    for (k::StepTie tie : {k::StepTie::even, k::StepTie::away}) {
      for (int bits : {8, 4, 2}) {
        const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
        specs.push_back({op, tie, k::StepSaturation::x86_wrap, false, lo, hi, -1, false, bits});
        specs.push_back({op, tie, k::StepSaturation::x86_full_range, false, lo, hi, -1, false, bits});
      }
    }
    for (const IntKind ik : {IntKind{-8, 7}, IntKind{-2, 1}}) {
      specs.push_back({op, k::StepTie::half_up_offset, k::StepSaturation::upper_only, false, ik.lo, ik.hi, -1});
    }
  }
  ForEachTarget([&] {
    const std::size_t N = k::Get().lanes_f32();
    for (float e : BurnScales()) {
      BOOST_TEST_CONTEXT("e " << e) {
        ForEachLenMis([&](std::size_t len, std::size_t mis) {
          const auto buf = Inputs(e, len + mis, static_cast<std::uint32_t>(len * 7 + mis));
          const float* x = buf.data() + mis;
          for (const k::StepSpec& sp : specs) {
            const bool mul = sp.op == k::StepOp::multiply;
            std::vector<float> pool;
            // No operand gives a NaN t where that is outside the spec's domain (1 / 1e-40 is inf).
            const bool nan_ok = sp.saturation != k::StepSaturation::clamp;
            const float own = mul ? 1.0f / e : e;
            if (!nan_ok && std::isinf(own)) continue;
            pool.push_back(own);
            for (float v : BurnScales()) {
              const float o = mul ? 1.0f / v : v;
              if (o != own && (nan_ok || std::isfinite(o))) pool.push_back(o);
            }
            if (nan_ok) pool.push_back(std::numeric_limits<float>::infinity());
            if (nan_ok) pool.push_back(0.0f);  // ggml's zero operand of a zero scale
            // 2N and 4N: whole blocks of 2 and 4 vectors, the kernel's walk without a loop per block.
            for (std::size_t bw : {std::size_t{0}, std::size_t{3}, N, 2 * N, 4 * N, 2 * N + 1}) {
              for (std::size_t start : {std::size_t{0}, std::size_t{2}}) {
                BOOST_TEST_CONTEXT("op " << int(sp.op) << " tie " << int(sp.tie) << " sat " << int(sp.saturation)
                                         << " lo " << sp.lo << " bits " << sp.bits << " fmt " << sp.fmt
                                         << " zero_plus " << sp.zero_plus
                                         << " bw " << bw << " start " << start) {
                  std::vector<float> r(len + 2);
                  for (std::size_t j = 0; j < r.size(); ++j) r[j] = pool[j % pool.size()];
                  std::vector<std::int32_t> a(len), b(len);
                  std::vector<std::uint8_t> a8(len), b8(len);
                  k::Get().quantize_steps(x, len, start, bw, r.data(), sp, a.data(), nullptr, nullptr);
                  sc::quantize_steps(x, len, start, bw, r.data(), sp, b.data(), nullptr);
                  EXPECT_SAME(a.data(), b.data(), len, x);
                  k::Get().quantize_steps(x, len, start, bw, r.data(), sp, nullptr, a8.data(), nullptr);
                  sc::quantize_steps(x, len, start, bw, r.data(), sp, nullptr, b8.data());
                  EXPECT_SAME(a8.data(), b8.data(), len, x);
                  if (sp.fmt == 2 && len % 2 == 0) {
                    // e2m1's codes two a byte, written by the kernel itself.
                    std::vector<std::uint8_t> an(len / 2, 0xA5), bn(len / 2, 0x5A);
                    k::Get().quantize_steps(x, len, start, bw, r.data(), sp, nullptr, a8.data(), an.data());
                    sc::quantize_steps(x, len, start, bw, r.data(), sp, nullptr, b8.data(), bn.data());
                    EXPECT_SAME(an.data(), bn.data(), len / 2, x);
                  }
                }
              }
            }
          }
        });
      }
    }
  });
}

// The f32-step kernel's minifloat roundings, to even (onnx's, nvidia-nvfp4's codes and block
// scales) and microxcaling's, at every code value, every midpoint between neighbours and their f32
// neighbours, both signs, past the largest value, +-inf, f32's subnormals and 2^-149: the scalar
// twin's codes, bytes and (e2m1) nibbles on every target.
BOOST_AUTO_TEST_CASE(quantize_steps_rounds_at_every_grid_point_and_midpoint) {
  ForEachTarget([] {
    for (int fmt = 0; fmt < 3; ++fmt) {
      std::vector<float> xs = GridPointsAndMidpoints(fmt, true);
      for (float v : {3.4028235e38f, -3.4028235e38f, 0x1p-149f, -0x1p-149f, 0x1p-127f, 1e30f}) xs.push_back(v);
      xs.push_back(std::numeric_limits<float>::infinity());
      xs.push_back(-std::numeric_limits<float>::infinity());
      if (xs.size() % 2) xs.push_back(0.0f);
      for (int variant = 0; variant < 4; ++variant) {
        const bool zero_plus = variant % 2 == 1;
        const k::StepTie tie = variant < 2 ? k::StepTie::even : k::StepTie::away;
        const k::StepSpec sp{k::StepOp::multiply, tie, k::StepSaturation::clamp, zero_plus, 0, 0, fmt};
        const float r = 1.0f;
        std::vector<std::int32_t> a(xs.size()), b(xs.size());
        k::Get().quantize_steps(xs.data(), xs.size(), 0, 0, &r, sp, a.data(), nullptr, nullptr);
        sc::quantize_steps(xs.data(), xs.size(), 0, 0, &r, sp, b.data(), nullptr);
        BOOST_TEST_CONTEXT("fmt " << fmt << " zero_plus " << zero_plus << " tie " << int(tie)) {
          EXPECT_SAME(a.data(), b.data(), xs.size(), xs);
          const std::size_t N = k::Get().lanes_f32();
          const std::size_t n = xs.size() / N * N;  // whole vectors, then the tail
          std::vector<float> rs(n / N + 1, 1.0f);
          std::vector<std::uint8_t> a8(xs.size()), b8(xs.size()), an(xs.size() / 2), bn(xs.size() / 2);
          k::Get().quantize_steps(xs.data(), xs.size(), 0, N, rs.data(), sp, nullptr, a8.data(), fmt == 2 ? an.data() : nullptr);
          sc::quantize_steps(xs.data(), xs.size(), 0, N, rs.data(), sp, nullptr, b8.data(), fmt == 2 ? bn.data() : nullptr);
          if (fmt == 2) {
            EXPECT_SAME(an.data(), bn.data(), an.size(), xs);
          } else {
            EXPECT_SAME(a8.data(), b8.data(), xs.size(), xs);
          }
        }
      }
    }
  });
  // The twin at points worked by hand: e2m1's 0.25 (between 0 and 0.5) to 0, 0.75 to 1 (code 2),
  // 5 (between 4 and 6) to 4 (code 6), 7 saturates to 6 (7); e4m3's 1.0625 to 1 (0x38), 464 to 448.
  const k::StepSpec e2m1{k::StepOp::multiply, k::StepTie::even, k::StepSaturation::clamp, true, 0, 0, 2};
  const k::StepSpec e4m3{k::StepOp::multiply, k::StepTie::even, k::StepSaturation::clamp, false, 0, 0, 0};
  BOOST_TEST(sc::step_code(0.25f, 1.0f, e2m1) == 0);
  BOOST_TEST(sc::step_code(0.75f, 1.0f, e2m1) == 2);
  BOOST_TEST(sc::step_code(5.0f, 1.0f, e2m1) == 6);
  BOOST_TEST(sc::step_code(-7.0f, 1.0f, e2m1) == 0xF);
  BOOST_TEST(sc::step_code(-0.0f, 1.0f, e2m1) == 0);
  BOOST_TEST(sc::step_code(1.0625f, 1.0f, e4m3) == 0x38);
  BOOST_TEST(sc::step_code(464.0f, 1.0f, e4m3) == 0x7E);
  BOOST_TEST(sc::step_code(-0.0f, 1.0f, e4m3) == 0x80);
}

// ggml's blocks written by the f32-step kernel against its scalar twin, on ggml's rules (both ties
// of x86's conversion, wrapped or clamped, at 8 and 4 bits, and q4_0's offset code), both block
// layouts, 1 to 9 blocks of inputs mixing ties, neighbours, subnormals and huge values, with
// operands from the scales' reciprocals, 0 (a zero scale) and +inf (the reciprocal of a
// subnormal d). The scale bytes the kernel leaves alone stay as they were.
BOOST_AUTO_TEST_CASE(quantize_steps_ggml) {
  std::vector<k::StepSpec> specs;
  for (k::StepTie tie : {k::StepTie::even, k::StepTie::away}) {
    for (int bits : {8, 4}) {
      const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
      specs.push_back({k::StepOp::multiply, tie, k::StepSaturation::x86_wrap, false, lo, hi, -1, true, bits});
      specs.push_back({k::StepOp::multiply, tie, k::StepSaturation::x86_full_range, false, lo, hi, -1, true, bits});
    }
  }
  // x86_wrap to 4 bits is stored as nibbles only (the kernel's precondition: kind q4).
  auto allowed = [](const k::StepSpec& sp, bool nibbles) {
    return nibbles || sp.saturation != k::StepSaturation::x86_wrap || sp.bits == 8;
  };
  specs.push_back({k::StepOp::multiply, k::StepTie::half_up_offset, k::StepSaturation::upper_only, false, -8, 7, -1});
  specs.push_back(
      {k::StepOp::multiply, k::StepTie::half_up_offset, k::StepSaturation::upper_only, false, -128, 127, -1});
  std::vector<float> pool{0.0f, std::numeric_limits<float>::infinity()};
  for (float v : BurnScales()) pool.push_back(1.0f / v);
  ForEachTarget([&] {
    for (float e : BurnScales()) {
      for (std::size_t nb : {std::size_t{1}, std::size_t{2}, std::size_t{9}}) {
        const auto x = Inputs(e, 32 * nb, static_cast<std::uint32_t>(nb * 13));
        for (const k::StepSpec& sp : specs) {
          for (bool nibbles : {false, true}) {
            if (!allowed(sp, nibbles)) continue;
            BOOST_TEST_CONTEXT("e " << e << " blocks " << nb << " tie " << int(sp.tie) << " sat "
                                    << int(sp.saturation) << " bits " << sp.bits << " nibbles " << nibbles) {
              std::vector<float> r(nb);
              for (std::size_t j = 0; j < nb; ++j) r[j] = j == 0 ? 1.0f / e : pool[(j + nb) % pool.size()];
              const std::size_t bytes = nb * (nibbles ? 18 : 34);
              std::vector<std::uint8_t> a(bytes, 0xA5), b(bytes, 0xA5);
              k::Get().quantize_steps_ggml(x.data(), nb, r.data(), sp, nibbles, a.data());
              sc::quantize_steps_ggml(x.data(), nb, r.data(), sp, nibbles, b.data());
              std::size_t at = 0;
              BOOST_TEST(BitEqual(a.data(), b.data(), bytes, &at), "first difference at byte " << at);
              for (std::size_t j = 0; j < nb; ++j) {
                const std::uint8_t* blk = a.data() + j * (nibbles ? 18 : 34);
                BOOST_TEST((blk[0] == 0xA5 && blk[1] == 0xA5));
              }
            }
          }
        }
      }
    }
  });
}

// microxcaling's rounding (StepTie::away on a minifloat) where the f32 addition decides: e4m3's
// codes worked by hand (subnormal quantum 2^-9, so q = 2^9 a there), on every target. A quotient
// q = 0.5 - 2^-25 gives f32(q + 0.5) = 1 (a tie, to even), so code 1 where exact rounding half
// away gives 0; q = 0.5 - 2^-24 gives 1 - 2^-24, code 0; ties in the normal binades go away from
// zero (1.0625 to 1.125, 0x39, where ties to even give 0x38), as do the subnormal binade's (q =
// 4.5 to 5); beyond 448, 0x7E; a negative t that rounds to 0 keeps -0, a zero t gives +0. And
// e2m1's (subnormal quantum 1/2, q = 2a below 1): the f32 value below 0.25 (q = 0.5 - 2^-25) to
// code 1, the one below it to 0; 0.25, 1.25, 2.5 and 5 away from zero (1, 3, 5, 7, where ties to
// even give 0, 2, 4, 6); 0.75 to 2; beyond 6, 7.
BOOST_AUTO_TEST_CASE(microxcaling_rounding_at_the_f32_addition_edges) {
  struct Want {
    float x;
    std::int32_t code;
  };
  const std::vector<Want> e2m1_wants = {
      {0.25f * (1.0f - 0x1p-24f), 0x1}, {0.25f * (1.0f - 0x1p-23f), 0x0}, {0.25f, 0x1}, {-0.25f, 0x9},
      {1.25f, 0x3},  {2.5f, 0x5},  {5.0f, 0x7},  {0.75f, 0x2},  {0.75f * (1.0f - 0x1p-24f), 0x1},
      {6.5f, 0x7},   {1e30f, 0x7}, {-0.1f, 0x8}, {0.0f, 0x0},   {-0.0f, 0x0},
  };
  const k::StepSpec e2m1{k::StepOp::multiply, k::StepTie::away, k::StepSaturation::clamp, true, 0, 0, 2};
  const std::vector<Want> wants = {
      {0x1p-10f, 0x01},       {0x1p-10f * (1.0f - 0x1p-24f), 0x01}, {0x1p-10f * (1.0f - 0x1p-23f), 0x00},
      {-0x1p-10f * (1.0f - 0x1p-23f), 0x80}, {-0.0f, 0x00},    {0.0f, 0x00},
      {1.0625f, 0x39},        {1.1875f, 0x3A},                     {-1.0625f, 0xB9},
      {464.0f, 0x7E},         {0x1p-9f * 4.5f, 0x05},                   {0x1p-6f * (1.0f - 0x1p-24f), 0x08},
      {3e38f, 0x7E},          {0x1p-149f, 0x00},
  };
  const k::StepSpec e4m3{k::StepOp::multiply, k::StepTie::away, k::StepSaturation::clamp, true, 0, 0, 0};
  ForEachTarget([&] {
    // Repeated so that every lane position and the padded tail meet each value.
    for (std::size_t rep : {std::size_t{1}, std::size_t{5}, std::size_t{2}, std::size_t{7}}) {
      const bool small = rep == 2 || rep == 7;
      const k::StepSpec& sp = small ? e2m1 : e4m3;
      std::vector<float> x;
      std::vector<std::int32_t> want;
      for (std::size_t i = 0; i < rep; ++i) {
        for (const Want& w : small ? e2m1_wants : wants) {
          x.push_back(w.x);
          want.push_back(w.code);
        }
      }
      const float r = 1.0f;
      std::vector<std::int32_t> got(x.size()), twin(x.size());
      k::Get().quantize_steps(x.data(), x.size(), 0, 0, &r, sp, got.data(), nullptr, nullptr);
      sc::quantize_steps(x.data(), x.size(), 0, 0, &r, sp, twin.data(), nullptr);
      for (std::size_t i = 0; i < x.size(); ++i) {
        BOOST_TEST_CONTEXT("x " << x[i]) {
          BOOST_TEST(got[i] == want[i]);
          BOOST_TEST(twin[i] == want[i]);
        }
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(quantize_burn) {
  ForEachTarget([] {
    for (float e : BurnScales()) {
      BOOST_TEST_CONTEXT("e " << e) {
        ForEachLenMis([&](std::size_t len, std::size_t mis) {
          const auto buf = Inputs(e, len + mis, static_cast<std::uint32_t>(len * 5 + mis));
          const float* x = buf.data() + mis;
          for (const IntKind& ik : kInts) {
            std::vector<std::int32_t> a(len), b(len);
            k::Get().quantize_burn_int(x, len, e, ik.lo, ik.hi, a.data());
            sc::quantize_burn_int(x, len, e, ik.lo, ik.hi, b.data());
            EXPECT_SAME(a.data(), b.data(), len, x);
          }
          for (int fmt = 0; fmt < 3; ++fmt) {
            std::vector<std::int32_t> a(len), b(len);
            k::Get().quantize_burn_float(x, len, e, fmt, a.data());
            sc::quantize_burn_float(x, len, e, fmt, b.data());
            EXPECT_SAME(a.data(), b.data(), len, x);
          }
        });
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(dequantize) {
  std::vector<double> es = ExactScales();
  es.push_back(0.0);
  es.push_back(static_cast<double>(3.4028235e38f));
  ForEachTarget([&] {
    ForEachLenMis([&](std::size_t len, std::size_t mis) {
      std::mt19937 rng(static_cast<std::uint32_t>(len * 7 + mis));
      for (const IntKind& ik : kInts) {
        std::vector<std::int32_t> c(len + mis);
        for (auto& v : c) v = ik.lo + static_cast<int>(rng() % static_cast<unsigned>(ik.hi - ik.lo + 1));
        for (double e : es) {
          std::vector<float> a(len), b(len);
          k::Get().dequant_exact_int(c.data() + mis, len, e, a.data());
          sc::dequant_exact_int(c.data() + mis, len, e, b.data());
          EXPECT_SAME(a.data(), b.data(), len, c.data() + mis);
          const float ef = static_cast<float>(e);
          k::Get().dequant_burn_int(c.data() + mis, len, ef, a.data());
          sc::dequant_burn_int(c.data() + mis, len, ef, b.data());
          EXPECT_SAME(a.data(), b.data(), len, c.data() + mis);
        }
      }
      for (int fmt = 0; fmt < 3; ++fmt) {
        const auto& mi = sc::kMini[fmt];
        std::vector<std::int32_t> c(len + mis);
        for (auto& v : c) {
          v = static_cast<int>(rng() % static_cast<unsigned>(mi.max_code + 1)) | ((rng() & 1) ? mi.sign : 0);
        }
        for (double e : es) {
          std::vector<float> a(len), b(len);
          k::Get().dequant_exact_float(c.data() + mis, len, e, fmt, a.data());
          sc::dequant_exact_float(c.data() + mis, len, e, fmt, b.data());
          EXPECT_SAME(a.data(), b.data(), len, c.data() + mis);
          const float ef = static_cast<float>(e);
          k::Get().dequant_burn_float(c.data() + mis, len, ef, fmt, a.data());
          sc::dequant_burn_float(c.data() + mis, len, ef, fmt, b.data());
          EXPECT_SAME(a.data(), b.data(), len, c.data() + mis);
        }
      }
    });
  });
}

BOOST_AUTO_TEST_CASE(dequant_unit_matches_its_scalar_twin_on_every_target) {
  // One byte or one nibble per code; blocks of one to three vectors and one scale for all, units
  // that start at a block or inside one; lengths around the kernel's steps of 4N and 8N codes (a
  // buffered tail); scales from subnormal to huge and a global; every field valid, or one bad
  // field planted anywhere; nothing written past len.
  ForEachTarget([] {
    const std::size_t N = k::Get().lanes_f32();
    std::mt19937 rng(17);
    struct Kind {
      int fmt, lo, hi, bits;
    };
    // (Native stores of sub-byte kinds: one code per byte, 8-bit fields, e2m1's above 15 bad.
    // Nibbles: -8 alone bad, none, and a range no kind has, whose bad fields take the kernel's
    // general table.)
    const Kind kinds[] = {{-1, -127, 127, 8}, {-1, -128, 127, 8}, {sc::kE4M3, 0, 255, 8}, {sc::kE5M2, 0, 255, 8},
                          {-1, -7, 7, 8},     {sc::kE2M1, 0, 15, 8}, {-1, -7, 7, 4},     {-1, -8, 7, 4},
                          {sc::kE2M1, 0, 15, 4}, {-1, -6, 5, 4}};
    const float scales[] = {1.0f, 0.1f, 1e-40f, 3e37f, 0.0f, 0.0078125f, 448.0f, 1.5e-5f};
    for (const Kind& kind : kinds) {
      k::CodeSpec cs;
      cs.fmt = kind.fmt;
      cs.lo = kind.lo;
      cs.hi = kind.hi;
      cs.bits = kind.bits;
      cs.nan_mask = kind.fmt >= 0 ? sc::kMini[kind.fmt].nan_mask : 0;
      auto valid = [&](int f) {
        if (kind.fmt >= 0) return f <= kind.hi && (cs.nan_mask == 0 || (f & cs.nan_mask) != cs.nan_mask);
        const int q = f >= (1 << (kind.bits - 1)) ? f - (1 << kind.bits) : f;
        return q >= kind.lo && q <= kind.hi;
      };
      for (std::size_t bw : {std::size_t{0}, N, 2 * N, 3 * N}) {
        for (std::size_t start : {std::size_t{0}, bw, N}) {
          if (bw == 0 && start != 0) continue;
          for (std::size_t len : {std::size_t{2}, N, 4 * N - 2, 4 * N, 8 * N, 8 * N + 2, 24 * N + 6, std::size_t{2048}}) {
            for (float g : {1.0f, 0x1p-10f, 3.0f}) {
              for (bool plant : {false, true}) {
                const std::size_t nb = bw ? (start % bw + len + bw - 1) / bw : 1;
                std::vector<float> s(nb);
                for (float& v : s) v = scales[rng() % 8];
                std::vector<int> f(len);
                for (int& v : f) {
                  do v = static_cast<int>(rng() % (1u << kind.bits));
                  while (!valid(v));
                }
                const std::size_t at = rng() % len;
                if (plant) {
                  std::vector<int> bad;
                  for (int v = 0; v < (1 << kind.bits); ++v) {
                    if (!valid(v)) bad.push_back(v);
                  }
                  if (bad.empty()) continue;  // every field is a code of the kind
                  f[at] = bad[rng() % bad.size()];
                }
                std::vector<std::uint8_t> bytes(kind.bits == 4 ? (len + 1) / 2 : len, 0);
                for (std::size_t i = 0; i < len; ++i) {
                  if (kind.bits == 4) bytes[i / 2] |= static_cast<std::uint8_t>(f[i] << (4 * (i % 2)));
                  else bytes[i] = static_cast<std::uint8_t>(f[i]);
                }
                std::vector<float> a(len + 1, 7.0f), b(len + 1, 7.0f);
                BOOST_TEST_CONTEXT("fmt " << kind.fmt << " lo " << kind.lo << " bits " << kind.bits << " bw " << bw
                                          << " start " << start << " len " << len << " g " << g << " bad at "
                                          << (plant ? static_cast<long>(at) : -1L)) {
                  const bool oa = k::Get().dequant_unit(bytes.data(), len, start, bw, s.data(), g, cs, a.data());
                  const bool ob = sc::dequant_unit(bytes.data(), len, start, bw, s.data(), g, cs, b.data());
                  BOOST_TEST(oa == ob);
                  BOOST_TEST(oa == !plant);
                  BOOST_TEST(std::bit_cast<std::uint32_t>(a[len]) == std::bit_cast<std::uint32_t>(7.0f));
                  if (oa && ob) EXPECT_SAME(a.data(), b.data(), len, f);
                }
              }
            }
          }
        }
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(bytes_and_packing) {
  ForEachTarget([] {
    ForEachLenMis([&](std::size_t len, std::size_t mis) {
      std::mt19937 rng(static_cast<std::uint32_t>(len * 11 + mis));
      std::vector<std::int32_t> c(len + mis);
      for (auto& v : c) v = static_cast<int>(rng() % 256) - 128;
      std::vector<std::uint8_t> a(len), b(len);
      k::Get().codes_to_bytes(c.data() + mis, len, a.data());
      sc::codes_to_bytes(c.data() + mis, len, b.data());
      EXPECT_SAME(a.data(), b.data(), len, c.data() + mis);
      for (bool sgn : {false, true}) {
        std::vector<std::int32_t> ca(len), cb(len);
        k::Get().bytes_to_codes(a.data(), len, sgn, ca.data());
        sc::bytes_to_codes(a.data(), len, sgn, cb.data());
        EXPECT_SAME(ca.data(), cb.data(), len, a);
      }
      for (int bits : {2, 4, 8}) {
        for (std::size_t count : {std::size_t{1}, std::size_t{2}, static_cast<std::size_t>(32 / bits)}) {
          const std::size_t inner = len, stride = len + mis;
          std::vector<std::int32_t> codes(count * stride);
          for (auto& v : codes) v = static_cast<int>(rng() % (1u << bits)) - (1 << (bits - 1));
          std::vector<std::uint32_t> wa(inner), wb(inner);
          k::Get().pack_words(codes.data(), inner, count, stride, bits, wa.data());
          sc::pack_words(codes.data(), inner, count, stride, bits, wb.data());
          EXPECT_SAME(wa.data(), wb.data(), inner, codes);
          for (bool sgn : {false, true}) {
            std::vector<std::int32_t> ua(count * stride, 7), ub(count * stride, 7);
            k::Get().unpack_words(wa.data(), inner, count, stride, bits, sgn, ua.data());
            sc::unpack_words(wa.data(), inner, count, stride, bits, sgn, ub.data());
            EXPECT_SAME(ua.data(), ub.data(), count * stride, wa);
            if (sgn) {
              std::size_t at = 0;
              BOOST_TEST(BitEqual(ua.data(), codes.data(), count * stride > 0 ? inner : 0, &at));
            }
          }
        }
      }
      // First invalid code: plant one at every position class.
      std::vector<std::int32_t> v(len + mis, 0);
      BOOST_TEST(k::Get().first_invalid_code(v.data() + mis, len, -127, 127, 0) == len);
      const std::size_t pos = len / 2;
      v[mis + pos] = -128;
      BOOST_TEST(k::Get().first_invalid_code(v.data() + mis, len, -127, 127, 0) == pos);
      BOOST_TEST(k::Get().first_invalid_code(v.data() + mis, len, -127, 127, 0) ==
                 sc::first_invalid_code(v.data() + mis, len, -127, 127, 0));
      v[mis + pos] = 0x7F;
      BOOST_TEST(k::Get().first_invalid_code(v.data() + mis, len, 0, 255, 0x7F) == pos);
      v[mis + pos] = 0xFE;
      BOOST_TEST(k::Get().first_invalid_code(v.data() + mis, len, 0, 255, 0x7C) == pos);
      BOOST_TEST(k::Get().first_invalid_code(v.data() + mis, len, 0, 255, 0x7F) == len);
    });
  });
}

// ggml q4_0's statistic against its scalar twin: blocks of one to four vectors and of three,
// a partial last block, blocks holding +a and -a both (either first), blocks of zeros and -0,
// blocks of one sign, and an infinity.
BOOST_AUTO_TEST_CASE(block_signed_max_bits) {
  ForEachTarget([] {
    const std::size_t N = k::Get().lanes_f32();
    for (std::size_t bw : {N, 2 * N, 3 * N, 4 * N, std::size_t{32}}) {
      if (bw % N != 0) continue;
      for (std::size_t nblocks : {std::size_t{1}, std::size_t{5}, N, N + 3, 3 * N + 1}) {
        for (std::size_t rest : {std::size_t{0}, std::size_t{1}, N - 1, N + 2}) {
          if (rest >= bw) continue;
          const std::size_t len = nblocks * bw + rest;
          const std::uint32_t seed = static_cast<std::uint32_t>(len * 13 + bw);
          std::vector<float> x = Inputs(0.7, len, seed);
          std::mt19937 rng(seed);
          for (std::size_t b = 0; b * bw < len; ++b) {
            const std::size_t n = std::min(bw, len - b * bw);
            float* xb = x.data() + b * bw;
            const unsigned kind = rng() % 7;
            switch (kind) {
              case 0: {  // +a and -a, at random places; the larger |x| elsewhere made smaller
                const float a = std::ldexp(1.0f + static_cast<float>(rng() % 64) / 64.0f, static_cast<int>(rng() % 40) - 20);
                for (std::size_t i = 0; i < n; ++i) xb[i] = std::fmin(std::fabs(xb[i]), a / 2) * ((rng() & 1) ? -1.0f : 1.0f);
                xb[rng() % n] = a;
                xb[rng() % n] = -a;
                break;
              }
              case 1:  // zeros of both signs
                for (std::size_t i = 0; i < n; ++i) xb[i] = (rng() & 1) ? -0.0f : 0.0f;
                break;
              case 2:  // all equal magnitudes
                for (std::size_t i = 0; i < n; ++i) xb[i] = (rng() & 1) ? -3.0f : 3.0f;
                break;
              case 3:  // one sign only: no element with the sign bit clear, or none with it set
              case 4:
                for (std::size_t i = 0; i < n; ++i) xb[i] = std::copysign(xb[i], kind == 3 ? -1.0f : 1.0f);
                break;
              default: break;
            }
          }
          BOOST_TEST_CONTEXT("bw " << bw << " len " << len) {
            const std::size_t nb = (len + bw - 1) / bw;
            std::vector<std::uint32_t> a(nb, 1), b(nb, 2);
            BOOST_TEST(k::Get().block_signed_max_bits(x.data(), len, bw, a.data()) ==
                       sc::block_signed_max_bits(x.data(), len, bw, b.data()));
            BOOST_TEST(a == b, boost::test_tools::per_element());
            x[len - 1] = -std::numeric_limits<float>::infinity();
            BOOST_TEST(k::Get().block_signed_max_bits(x.data(), len, bw, a.data()) == 0x7F800000u);
            sc::block_signed_max_bits(x.data(), len, bw, b.data());
            BOOST_TEST(a == b, boost::test_tools::per_element());
          }
        }
      }
    }
  });
}

// The f32-step recipes' calibrated scales against their scalar twin (step_scale, narrow_scale_bits
// in f64): statistics around f16's and bf16's rounding boundaries (their midpoints and an ulp either
// side, the subnormal range, 65504 to 65520 and beyond), f32's extremes, zeros, random patterns,
// both signs; every divisor and dtype the recipes use, both operands.
BOOST_AUTO_TEST_CASE(step_scales) {
  std::vector<std::uint32_t> stats = {0u, 0x80000000u, 1u, 0x80000001u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x00800000u};
  std::mt19937 rng(5);
  for (const double divisor : {127.0, 7.5, 8.0, 1.0}) {
    for (const int man : {10, 7}) {
      for (int e = -30; e <= 17; ++e) {
        // The midpoint between two neighbours of the grid of man bits at exponent e, times the divisor.
        const double mid = std::ldexp(static_cast<double>((rng() % (1u << man)) | (1u << man)) + 0.5, e - man);
        const float f = static_cast<float>(mid * divisor);
        for (int d = -2; d <= 2; ++d) stats.push_back(qscheme::f32_bits(f) + static_cast<std::uint32_t>(d));
      }
    }
    for (const double v : {65504.0, 65519.0, 65520.0, 65536.0, 0x1p-14, 0x1p-24, 0x1p-25, 0x1.8p-25, 0x1p-133, 0x1p-134}) {
      const float f = static_cast<float>(v * divisor);
      for (int d = -2; d <= 2; ++d) stats.push_back(qscheme::f32_bits(f) + static_cast<std::uint32_t>(d));
    }
  }
  for (int i = 0; i < 300; ++i) {
    std::uint32_t b = rng();
    if (((b >> 23) & 0xFF) == 0xFF) b &= 0xBFFFFFFFu;  // finite
    stats.push_back(b);
  }
  std::vector<k::StepScaleSpec> specs;
  for (const float divisor : {127.0f, 7.5f, 7.0f, 1.5f, -8.0f, -2.0f}) {
    for (int dt = 0; dt < 3; ++dt) {
      specs.push_back({divisor, dt, k::StepOperand::reciprocal_or_zero, 127.0f});
      specs.push_back({divisor, dt, k::StepOperand::hi_over_amax, divisor == 7.5f ? 7.0f : 127.0f});
    }
  }
  ForEachTarget([&] {
    for (const k::StepScaleSpec& sp : specs) {
      for (std::size_t mis : {std::size_t{0}, std::size_t{3}}) {
        BOOST_TEST_CONTEXT("divisor " << sp.divisor << " dt " << sp.dt << " operand " << int(sp.operand) << " mis " << mis) {
          const std::size_t n = stats.size() - mis;
          // Statistics of the signed rule may be negative; those of max |x| are not.
          std::vector<std::uint32_t> st(stats.begin() + static_cast<std::ptrdiff_t>(mis), stats.end());
          if (sp.divisor > 0) for (std::uint32_t& b : st) b &= 0x7FFFFFFFu;
          std::vector<std::uint32_t> a(n), b(n);
          std::vector<float> ao(n), bo(n);
          k::Get().step_scales(st.data(), n, sp, a.data(), ao.data());
          for (std::size_t i = 0; i < n; ++i) sc::step_scale(st[i], sp, &b[i], &bo[i]);
          std::size_t at = 0;
          BOOST_TEST(BitEqual(a.data(), b.data(), n, &at), "pattern of stat " << std::hex << st[at] << ": simd " << a[at]
                                                                               << " scalar " << b[at]);
          BOOST_TEST(BitEqual(ao.data(), bo.data(), n, &at), "operand of stat " << std::hex << st[at]);
        }
      }
    }
  });
  // The twin itself at a few points worked out by hand: f16 65504 stays, 65519.99 rounds down to
  // it, 65520 (the midpoint) goes to inf; 2^-25 is the tie between 0 and f16's least subnormal
  // (to 0, even), 1.5 * 2^-25 rounds up to it; bf16 of f32 max is inf.
  std::uint32_t bits = 0;
  float op = 0;
  const k::StepScaleSpec f16{1.0f, 1, k::StepOperand::reciprocal_or_zero, 127.0f};
  const auto pattern = [&](float v, const k::StepScaleSpec& spec) {
    sc::step_scale(qscheme::f32_bits(v), spec, &bits, &op);
    return bits;
  };
  BOOST_TEST(pattern(65504.0f, f16) == 0x7BFFu);
  BOOST_TEST(pattern(std::nextafter(65520.0f, 0.0f), f16) == 0x7BFFu);
  BOOST_TEST(pattern(65520.0f, f16) == 0x7C00u);
  BOOST_TEST(pattern(0x1p-25f, f16) == 0x0000u);
  BOOST_TEST(pattern(0x1.8p-25f, f16) == 0x0001u);
  BOOST_TEST(pattern(0x1.ffcp-15f, f16) == 0x0400u);  // the largest subnormal's midpoint above: even, up
  BOOST_TEST(pattern(-1.0f, {-8.0f, 1, k::StepOperand::reciprocal_or_zero, 7.0f}) == 0x3000u);  // -1 / -8 = 0.125
  BOOST_TEST(pattern(1.0f, {-8.0f, 1, k::StepOperand::reciprocal_or_zero, 7.0f}) == 0xB000u);
  BOOST_TEST(pattern(0.0f, {-8.0f, 1, k::StepOperand::reciprocal_or_zero, 7.0f}) == 0x8000u);  // -0
  BOOST_TEST(op == 0.0f);
  BOOST_TEST(pattern(3.4028235e38f, {1.0f, 2, k::StepOperand::reciprocal_or_zero, 127.0f}) == 0x7F80u);
}

// nvidia-nvfp4's scales against the scalar twin on every target: maxima on e4m3's grid, at its
// midpoints (normal and subnormal, 2^-10 between 0 and the least subnormal) and an ulp either side,
// past 448 (464 the tie to 448, then saturation), zero, f32 subnormals and f32 max; multipliers
// 2^-m (then v = a), 1, f32(1 / 6) and a random one; globals that make e zero, subnormal or
// infinite (the returned index). The twin itself at points worked by hand.
BOOST_AUTO_TEST_CASE(te_scales) {
  std::vector<std::uint32_t> maxima = {0u, 1u, 0x00400000u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu};
  std::mt19937 rng(11);
  for (int e = -10; e <= 9; ++e) {
    for (int man = 0; man < 16; ++man) {
      // (16 + man) 2^(e - 4): the grid's points (even man) and midpoints (odd man).
      const float v = std::ldexp(static_cast<float>(16 + man), e - 4);
      for (int d = -2; d <= 2; ++d) maxima.push_back(qscheme::f32_bits(v) + static_cast<std::uint32_t>(d));
    }
  }
  for (int i = 0; i < 300; ++i) maxima.push_back(rng() & 0x7F7FFFFFu);
  std::vector<k::TeScaleSpec> specs;
  for (const float mult : {1.0f, 0x1p-20f, 0x1p20f, 1.0f / 6.0f, 0.3716f}) {
    for (const float g : {1.0f, 1.0f / 448.0f, 0x1p-140f, 0.0f, 3.4028235e38f, 1e35f}) specs.push_back({mult, g});
  }
  ForEachTarget([&] {
    for (const k::TeScaleSpec& sp : specs) {
      for (std::size_t mis : {std::size_t{0}, std::size_t{3}}) {
        BOOST_TEST_CONTEXT("mult " << sp.mult << " g " << sp.g << " mis " << mis) {
          const std::size_t n = maxima.size() - mis;
          const std::uint32_t* a0 = maxima.data() + mis;
          std::vector<std::uint32_t> a(n), b(n);
          std::vector<float> ar(n), br(n);
          const std::size_t first = k::Get().te_scales(a0, n, sp, a.data(), ar.data());
          std::size_t want_first = n;
          for (std::size_t i = 0; i < n; ++i) {
            if (sc::te_scale(a0[i], sp, &b[i], &br[i]) && want_first == n) want_first = i;
          }
          std::size_t at = 0;
          BOOST_TEST(BitEqual(a.data(), b.data(), n, &at), "pattern of max " << std::hex << a0[at] << ": simd " << a[at]
                                                                             << " scalar " << b[at]);
          BOOST_TEST(BitEqual(ar.data(), br.data(), n, &at), "multiplier of max " << std::hex << a0[at]);
          BOOST_TEST(first == want_first);
        }
      }
    }
  });
  std::uint32_t bits = 0;
  float r = 0;
  const auto pattern = [&](float v) {
    sc::te_scale(qscheme::f32_bits(v), {1.0f, 1.0f}, &bits, &r);
    return bits;
  };
  BOOST_TEST(pattern(448.0f) == 0x7Eu);
  BOOST_TEST(pattern(464.0f) == 0x7Eu);  // the tie beyond 448: to 448's even pattern
  BOOST_TEST(pattern(3.4028235e38f) == 0x7Eu);
  BOOST_TEST(pattern(1.0625f) == 0x38u);  // a tie between 1 (0x38) and 1.125: even
  BOOST_TEST(pattern(1.1875f) == 0x3Au);  // between 1.125 and 1.25: even is 1.25
  BOOST_TEST(pattern(0x1p-10f) == 0x00u);  // between 0 and 2^-9: even is 0
  BOOST_TEST(r == 3.4028235e38f);          // e = 0: f32 max
  BOOST_TEST(pattern(0x1.8p-9f) == 0x02u);  // 1.5 quanta: even is 2
  BOOST_TEST(pattern(0x1.fp-7f) == 0x08u);  // 7.75 quanta rounds up to 8, the least normal 2^-6
  BOOST_TEST(sc::te_scale(qscheme::f32_bits(448.0f), {1.0f, 3.4028235e38f}, &bits, &r));  // 448 g overflows
}

// ggml's blocks to values against the scalar twin: every f16 scale class (zero, subnormal, normal,
// the largest, inf, NaN, either sign) under every reading, codes at the fields' ends, and the
// check alone agreeing with the values' verdict; calls of 1 to 130 blocks (the kernel takes its
// scales 64 blocks at a time).
BOOST_AUTO_TEST_CASE(dequant_ggml) {
  std::mt19937 rng(11);
  const std::uint16_t scales[] = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0x7BFF, 0x7C00, 0xFC00, 0x7C01,
                                  0x7E00, 0xBC00, 0x83FF, 0x2E66};
  ForEachTarget([&] {
    for (bool nibbles : {false, true}) {
      const std::size_t bytes = nibbles ? 18 : 34;
      for (std::size_t nb : {std::size_t{1}, std::size_t{3}, std::size_t{16}, std::size_t{37}, std::size_t{130}}) {
        for (int trial = 0; trial < 6; ++trial) {
          std::vector<std::uint8_t> in(nb * bytes);
          for (std::uint8_t& b : in) b = static_cast<std::uint8_t>(rng());
          for (std::size_t k = 0; k < nb; ++k) {
            // Mostly scales every reading allows; now and then one of the classes above.
            const std::uint16_t h = rng() % 3 == 0 ? scales[rng() % std::size(scales)] : static_cast<std::uint16_t>(rng() % 0x7C00);
            in[k * bytes] = static_cast<std::uint8_t>(h);
            in[k * bytes + 1] = static_cast<std::uint8_t>(h >> 8);
            // Mostly codes above the standard range's least.
            if (rng() % 2) for (std::size_t i = 2; i < bytes; ++i) if (in[k * bytes + i] == 0x80 || (nibbles && ((in[k * bytes + i] & 0xF) == 0 || (in[k * bytes + i] >> 4) == 0))) in[k * bytes + i] = 0x99;
          }
          for (int lo : {nibbles ? -8 : -128, nibbles ? -7 : -127}) {
            for (int flags = 0; flags < 4; ++flags) {
              const k::GgmlSpec sp{nibbles, lo, (flags & 1) != 0, (flags & 2) != 0};
              BOOST_TEST_CONTEXT("nibbles " << nibbles << " nb " << nb << " lo " << lo << " flags " << flags) {
                std::vector<float> a(nb * 32, 1.0f), b(nb * 32, 2.0f);
                const bool ka = k::Get().dequant_ggml(in.data(), nb, sp, a.data());
                const bool kb = sc::dequant_ggml(in.data(), nb, sp, b.data());
                BOOST_TEST(ka == kb);
                BOOST_TEST(k::Get().dequant_ggml(in.data(), nb, sp, nullptr) == kb);
                if (ka && kb) {
                  std::size_t at = 0;
                  BOOST_TEST(BitEqual(a.data(), b.data(), a.size(), &at),
                             "value " << at << ": simd " << std::hex << qscheme::f32_bits(a[at]) << " scalar "
                                      << qscheme::f32_bits(b[at]));
                }
              }
            }
          }
        }
      }
    }
  });
  // The twin at points worked out by hand: d = -1 (0xBC00) and code 0 give -0; d = inf and code 0
  // x86's default NaN; a q4_0 byte 0x1F holds codes 15 - 8 = 7 (low) and 1 - 8 = -7 (high).
  std::vector<std::uint8_t> q4(18, 0x88);
  q4[0] = 0x00;
  q4[1] = 0xBC;
  q4[2] = 0x1F;
  std::vector<float> v(32);
  BOOST_TEST(sc::dequant_ggml(q4.data(), 1, {true, -8, true, false}, v.data()));
  BOOST_TEST(qscheme::f32_bits(v[1]) == 0x80000000u);
  BOOST_TEST(v[0] == -7.0f);
  BOOST_TEST(v[16] == 7.0f);
  q4[1] = 0x7C;
  BOOST_TEST(sc::dequant_ggml(q4.data(), 1, {true, -8, false, true}, v.data()));
  BOOST_TEST(qscheme::f32_bits(v[1]) == 0xFFC00000u);
  BOOST_TEST(!sc::dequant_ggml(q4.data(), 1, {true, -8, true, false}, v.data()));
}

BOOST_AUTO_TEST_CASE(rows_segment_max_across_its_chunks) {
  // Rows longer than the kernel's 1024-float fold buffer, segment widths that do not divide it.
  ForEachTarget([] {
    for (std::size_t len : {std::size_t{1024}, std::size_t{2500}}) {
      const auto x = Inputs(2.3, 4 * len, static_cast<std::uint32_t>(len));
      for (std::size_t w : {std::size_t{1}, std::size_t{3}, std::size_t{5}, std::size_t{7}, std::size_t{11}, std::size_t{13}, std::size_t{48}, std::size_t{1023}}) {
        const std::size_t ns = (len + w - 1) / w;
        std::vector<std::uint32_t> a(ns, 0), b(ns, 0);
        k::Get().rows_segment_max_abs_bits(x.data(), 4, len, w, a.data(), 1, 0);
        for (std::size_t r = 0; r < 4; ++r) k::Get().segment_max_abs_bits(x.data() + r * len, len, w, b.data());
        BOOST_TEST_CONTEXT("len " << len << " w " << w) { BOOST_TEST(a == b); }
        // And both against the scalar twin, segment by segment.
        std::vector<std::uint32_t> want(ns, 0);
        for (std::size_t r = 0; r < 4; ++r) {
          for (std::size_t s = 0; s < ns; ++s) {
            want[s] = std::max(want[s], sc::max_abs_bits(x.data() + r * len + s * w, std::min(w, len - s * w)));
          }
        }
        BOOST_TEST_CONTEXT("scalar len " << len << " w " << w) { BOOST_TEST(a == want); }
      }
    }
  });
}

BOOST_AUTO_TEST_CASE(whole_row_puts_the_lowest_code_back_where_its_pattern_matches) {
  // An asymmetric kind (lo = -(hi + 1)) clamped at -hi, with `lowest` naming per segment the bits
  // of -a, where W e == 2a: such x divide to -W/2 exactly, a tie that rounds to the even lo. So
  // the codes must be the kind's own (lo included) in the segments with a pattern, and the
  // clamped ones elsewhere. Segments of a far scale (inv out of range) take the exact redo path.
  ForEachTarget([] {
    ForEachLenMis([](std::size_t len, std::size_t mis) {
      const std::size_t N = k::Get().lanes_f32();
      for (const int hi : {1, 7, 127}) {
        const int lo = -hi - 1;
        const double W = hi - lo;
        for (std::size_t bw : {std::size_t{1}, std::size_t{4}, N / 2 + 1, N, 2 * N + 3, len}) {
          if (bw == 0) continue;
          const std::size_t ns = (len + bw - 1) / bw;
          std::vector<double> ee(ns);
          std::vector<float> ei(ns);
          std::vector<std::uint32_t> pat(ns);
          auto buf = Inputs(1.0, 7 * len + mis, static_cast<std::uint32_t>(len * 7 + bw + hi));
          float* x = buf.data() + mis;
          std::mt19937 rng(static_cast<std::uint32_t>(len + bw));
          for (std::size_t s = 0; s < ns; ++s) {
            ee[s] = std::ldexp(1.0, s % 5 == 4 ? 110 : static_cast<int>(s % 7) - 3);
            ei[s] = k::InvF32(ee[s]);
            const float a = static_cast<float>(W / 2 * ee[s]);
            pat[s] = s % 3 == 0 ? 0xFFFFFFFFu : qscheme::f32_bits(-a);
            // Every row: values within [-a, a], with -a, a and the neighbours of -a among them.
            for (std::size_t r = 0; r < 7; ++r) {
              float* seg = x + r * len + s * bw;
              const std::size_t cnt = std::min(bw, len - s * bw);
              for (std::size_t i = 0; i < cnt; ++i) {
                const float v = std::isfinite(seg[i] * a) ? std::clamp(seg[i] * a, -a, a) : 0.0f;
                switch (rng() % 6) {
                  case 0: seg[i] = -a; break;
                  case 1: seg[i] = a; break;
                  case 2: seg[i] = std::nextafter(-a, 0.0f); break;
                  default: seg[i] = v; break;
                }
              }
            }
          }
          auto want_row = [&](const float* xr, std::int32_t* o) {
            for (std::size_t i = 0; i < len; ++i) {
              const std::size_t s = i / bw;
              sc::quantize_exact_int(xr + i, 1, ee[s], pat[s] == 0xFFFFFFFFu ? -hi : lo, hi, o + i);
            }
          };
          std::vector<std::int32_t> a(7 * len, 12345), b(7 * len, 12345);
          k::Get().quantize_row(x, len, bw, ee.data(), ei.data(), 1.0, nullptr, 0, -hi, hi, 0, a.data(), 1, 1, 0, pat.data());
          want_row(x, b.data());
          BOOST_TEST_CONTEXT("hi " << hi << " bw " << bw << " one row") { EXPECT_SAME(a.data(), b.data(), len, x); }
          // Two groups of three rows, four rows apart; the row between them stays untouched.
          std::fill(a.begin(), a.end(), 12345);
          std::fill(b.begin(), b.end(), 12345);
          k::Get().quantize_row(x, len, bw, ee.data(), ei.data(), 1.0, nullptr, 0, -hi, hi, 0, a.data(), 3, 2, 4 * len, pat.data());
          for (std::size_t r : {0, 1, 2, 4, 5, 6}) want_row(x + r * len, b.data() + r * len);
          BOOST_TEST_CONTEXT("hi " << hi << " bw " << bw << " 2 groups of 3 rows") {
            EXPECT_SAME(a.data(), b.data(), 7 * len, x);
          }
        }
      }
    });
  });
}

BOOST_AUTO_TEST_CASE(whole_row_kernels) {
  // QuantizeRow / DequantRow against the scalar twins applied segment by segment, segment widths
  // below, at and above the vector width, with a zero exact scale in the mix.
  ForEachTarget([] {
    ForEachLenMis([](std::size_t len, std::size_t mis) {
      const std::size_t N = k::Get().lanes_f32();
      for (std::size_t bw : {std::size_t{1}, N / 2 + 1, N, 2 * N + 3, len}) {
        if (bw == 0) continue;
        const std::size_t ns = (len + bw - 1) / bw;
        std::vector<double> ee(ns);
        std::vector<float> ei(ns), eb(ns);
        for (std::size_t s = 0; s < ns; ++s) {
          ee[s] = s % 4 == 1 ? 0.0 : ExactScales()[s % ExactScales().size()];
          ei[s] = k::InvF32(ee[s]);
          eb[s] = BurnScales()[s % BurnScales().size()];
        }
        const auto buf = Inputs(0.25, len + mis, static_cast<std::uint32_t>(len * 3 + bw));
        const float* x = buf.data() + mis;
        for (int mode = 0; mode < 4; ++mode) {
          const int fmt = 1;
          const int sign = (mode % 2) ? 0x80 : 0;
          std::vector<std::int32_t> a(len), b(len);
          k::Get().quantize_row(x, len, bw, ee.data(), ei.data(), 1.0, eb.data(), mode, -8, 7, fmt, a.data(), 1, 1, 0, nullptr);
          for (std::size_t s = 0; s < ns; ++s) {
            const std::size_t off = s * bw, cnt = std::min(bw, len - off);
            for (std::size_t i = 0; i < cnt; ++i) {
              const float v = x[off + i];
              std::int32_t& o = b[off + i];
              if (mode < 2 && ee[s] == 0) o = std::signbit(v) ? sign : 0;
              else if (mode == 0) sc::quantize_exact_int(&v, 1, ee[s], -8, 7, &o);
              else if (mode == 1) sc::quantize_exact_float(&v, 1, ee[s], fmt, &o);
              else if (mode == 2) sc::quantize_burn_int(&v, 1, eb[s], -8, 7, &o);
              else sc::quantize_burn_float(&v, 1, eb[s], fmt, &o);
            }
          }
          BOOST_TEST_CONTEXT("bw " << bw << " mode " << mode) { EXPECT_SAME(a.data(), b.data(), len, x); }
          // e = s_j * g with s_j an f16 value (the FMA path's operands), two levels and one (g = 1).
          for (const float gl : {0.3f, 1.0f}) {
            if (mode != 0) break;
            const double sj[] = {0.5, 0.0999755859375, std::ldexp(1.0, -15), 2047.0 / 64, 0.0};
            std::vector<double> e2(ns);
            std::vector<float> i2(ns);
            for (std::size_t s = 0; s < ns; ++s) {
              e2[s] = sj[s % 5] * static_cast<double>(gl);
              i2[s] = k::InvF32(e2[s]);
            }
            std::vector<std::int32_t> a2(len), b2(len);
            k::Get().quantize_row(x, len, bw, e2.data(), i2.data(), gl, eb.data(), 0, -8, 7, fmt, a2.data(), 1, 1, 0, nullptr);
            for (std::size_t i = 0; i < len; ++i) {
              const double e = e2[i / bw];
              if (e == 0) b2[i] = 0;
              else sc::quantize_exact_int(x + i, 1, e, -8, 7, &b2[i]);
            }
            BOOST_TEST_CONTEXT("g " << gl << " bw " << bw) { EXPECT_SAME(a2.data(), b2.data(), len, x); }
          }
          std::vector<float> da(len), db(len);
          k::Get().dequant_row(a.data(), len, bw, ee.data(), eb.data(), 1.0f, mode, fmt, da.data(), 1, 1, 0);
          for (std::size_t s = 0; s < ns; ++s) {
            const std::size_t off = s * bw, cnt = std::min(bw, len - off);
            if (mode == 0) sc::dequant_exact_int(a.data() + off, cnt, ee[s], db.data() + off);
            else if (mode == 1) sc::dequant_exact_float(a.data() + off, cnt, ee[s], fmt, db.data() + off);
            else if (mode == 2) sc::dequant_burn_int(a.data() + off, cnt, eb[s], db.data() + off);
            else sc::dequant_burn_float(a.data() + off, cnt, eb[s], fmt, db.data() + off);
          }
          BOOST_TEST_CONTEXT("dequant bw " << bw << " mode " << mode) { EXPECT_SAME(da.data(), db.data(), len, a); }
          if (mode >= 2) {  // a global: f32(f32(eb * value) * g)
            const float gl = 0.3f;
            k::Get().dequant_row(a.data(), len, bw, ee.data(), eb.data(), gl, mode, fmt, da.data(), 1, 1, 0);
            for (std::size_t i = 0; i < len; ++i) db[i] *= gl;
            BOOST_TEST_CONTEXT("dequant g bw " << bw << " mode " << mode) { EXPECT_SAME(da.data(), db.data(), len, a); }
          }
          // Three rows sharing their scales in one call equal three one-row calls.
          const auto x3 = Inputs(0.5, 3 * len, static_cast<std::uint32_t>(len * 5 + bw + mode));
          std::vector<std::int32_t> q3(3 * len), q1(3 * len);
          std::vector<float> d3(3 * len), d1(3 * len);
          k::Get().quantize_row(x3.data(), len, bw, ee.data(), ei.data(), 1.0, eb.data(), mode, -8, 7, fmt, q3.data(), 3, 1, 0, nullptr);
          k::Get().dequant_row(q3.data(), len, bw, ee.data(), eb.data(), 1.0f, mode, fmt, d3.data(), 3, 1, 0);
          for (std::size_t r = 0; r < 3; ++r) {
            k::Get().quantize_row(x3.data() + r * len, len, bw, ee.data(), ei.data(), 1.0, eb.data(), mode, -8, 7, fmt,
                           q1.data() + r * len, 1, 1, 0, nullptr);
            k::Get().dequant_row(q3.data() + r * len, len, bw, ee.data(), eb.data(), 1.0f, mode, fmt, d1.data() + r * len, 1, 1, 0);
          }
          BOOST_TEST_CONTEXT("3 rows bw " << bw << " mode " << mode) {
            EXPECT_SAME(q3.data(), q1.data(), 3 * len, x3.data());
            EXPECT_SAME(d3.data(), d1.data(), 3 * len, q3);
          }
          // Two groups of those three rows, 4 rows apart (x3 again, then x3 scaled by -0.5): as
          // six one-row calls, and the row between the groups stays untouched.
          std::vector<float> x6(7 * len, 0.0f);
          for (std::size_t i = 0; i < 3 * len; ++i) {
            x6[i] = x3[i];
            x6[4 * len + i] = -0.5f * x3[i];
          }
          std::vector<std::int32_t> q6(7 * len, 12345), q6r(7 * len, 12345);
          std::vector<float> d6(7 * len, 7.0f), d6r(7 * len, 7.0f);
          k::Get().quantize_row(x6.data(), len, bw, ee.data(), ei.data(), 1.0, eb.data(), mode, -8, 7, fmt, q6.data(), 3, 2, 4 * len, nullptr);
          k::Get().dequant_row(q6.data(), len, bw, ee.data(), eb.data(), 1.0f, mode, fmt, d6.data(), 3, 2, 4 * len);
          for (std::size_t r : {0, 1, 2, 4, 5, 6}) {
            k::Get().quantize_row(x6.data() + r * len, len, bw, ee.data(), ei.data(), 1.0, eb.data(), mode, -8, 7, fmt,
                           q6r.data() + r * len, 1, 1, 0, nullptr);
            k::Get().dequant_row(q6.data() + r * len, len, bw, ee.data(), eb.data(), 1.0f, mode, fmt, d6r.data() + r * len, 1, 1, 0);
          }
          BOOST_TEST_CONTEXT("2 groups of 3 rows bw " << bw << " mode " << mode) {
            EXPECT_SAME(q6.data(), q6r.data(), 7 * len, x6.data());
            EXPECT_SAME(d6.data(), d6r.data(), 7 * len, q6);
          }
        }
      }
    });
  });
}
