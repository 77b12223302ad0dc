// The fused bytes path (fast::quantize_to_bytes, fast::dequantize_from_bytes) beyond the
// engines-agree sweep (engines_agree_test): thread-count independence, its scale and block-max
// kernels against their scalar twins (exact_scale.h), streamed outputs, two-level dequantize at
// extreme globals, the kernel table under a forced target, the plan's walk, byte-size errors;
// on every compiled Highway target.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "fast/bytes_plan.hpp"
#include "fast/exact_scale.h"
#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/kernels/scalar.h"
#include "fast/log2f_thresholds.hpp"
#include "fast/points.hpp"
#include "fast/scales.hpp"
#include "hwy/cache_control.h"
#include "hwy/targets.h"
#include "oracle/edge_tensors.hpp"
#include "reference/exponent_scales.hpp"
#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "tests/support/bytes_plan_shapes.hpp"
#include "tests/support/sanitized.hpp"

namespace fast = qscheme::fast;
namespace ref = qscheme::reference;
using qscheme::f32_bits;
using qscheme::f32_from_bits;
using qscheme::oracle::EdgeSet;
using qscheme::oracle::edge_inputs;
using qscheme::testing::BytesPlanShapes;

namespace {

constexpr std::uint8_t kCanary = 0xA5;

}  // namespace

// The prepass takes each thread's rows in one call when the rows hold whole blocks, and row by
// row otherwise; both, split across 1-3 threads, give the one-thread bytes, and the same error;
// calibrated and with every given-scale edge input, under the exact and the burn profile. Given
// scales at these sizes are also held to quantize + encode (the general path).
BOOST_AUTO_TEST_CASE(fused_bytes_do_not_depend_on_threads) {
  const std::vector<std::vector<std::uint64_t>> shapes = {{97, 512}, {37, 1000}, {3, 7, 2048}};
  const char* schemes[] = {"nvfp4", "q8_0", "mxfp8", "q8s:block[48]=f16", "e2m1:block[16]=ue4m3:tensor=f32", "q8s"};
  for (const char* text : schemes) {
    const auto s = qscheme::parse_scheme(text).value();
    for (const auto& shape : shapes) {
      const auto l = qscheme::make_layout(s, shape);
      if (!l.ok()) continue;
      const auto inputs = edge_inputs(s, *l, 23);
      for (std::size_t ti = 0; ti < inputs.size(); ++ti) {
        const auto& x = inputs[ti].x;
        for (auto prof : {qscheme::Profile::exact, qscheme::Profile::burn}) {
          qscheme::QuantizeOptions o;
          o.profile = prof;
          o.scales = inputs[ti].scales;
          // Given scales: the general path's outcome (quantize + encode), the same under both policies.
          std::optional<qscheme::Result<std::vector<std::uint8_t>>> general;
          if (o.scales) {
            BOOST_REQUIRE(fast::set_threads(1).ok());
            auto q = fast::quantize(s, shape, x, o);
            general = q ? fast::encode(*q) : qscheme::Result<std::vector<std::uint8_t>>(q.status());
          }
          for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
            BOOST_REQUIRE(fast::set_threads(1).ok());
            std::vector<std::uint8_t> want(l->total_bytes, kCanary);
            const auto want_st = fast::quantize_to_bytes(s, shape, x.data(), x.size(), o, want.data(), want.size(), pol);
            BOOST_TEST_CONTEXT(text << " shape " << shape.size() << "-D " << l->elements << " input '" << inputs[ti].name
                                    << "' " << qscheme::to_string(prof) << " untouched "
                                    << (pol == fast::OutputPolicy::untouched_on_error)) {
              if (general) {
                BOOST_TEST(want_st.to_string() == (*general ? qscheme::Status() : general->status()).to_string());
                if (*general && want_st.ok()) BOOST_TEST((want == **general));
              }
              for (unsigned th : {2u, 3u}) {
                BOOST_REQUIRE(fast::set_threads(th).ok());
                std::vector<std::uint8_t> got(l->total_bytes, kCanary);
                const auto st = fast::quantize_to_bytes(s, shape, x.data(), x.size(), o, got.data(), got.size(), pol);
                BOOST_TEST_CONTEXT("threads " << th) {
                  BOOST_TEST(st.to_string() == want_st.to_string());
                  if (st.ok() || pol == fast::OutputPolicy::untouched_on_error) BOOST_TEST((got == want));
                }
              }
            }
          }
        }
      }
    }
  }
  BOOST_REQUIRE(fast::set_threads(1).ok());
}

// dequantize_from_bytes takes each thread's units in one call of the kernel when the rows follow
// each other in bytes and scales (fast/dequantize.cc): on 1-3 threads, so that a thread starts
// on a later row, it gives decode + the reference's dequantize, and the reference's error for a
// code no kind has in a late row (one set to 0x80, or 0xFF for minifloats; e2m1 has none).
BOOST_AUTO_TEST_CASE(fused_dequantize_does_not_depend_on_threads) {
  // Just above the threshold (the reference's dequantize is the cost under the sanitizers); rows of
  // whole blocks (one call per thread) and not (2000: unit by unit).
  const std::vector<std::vector<std::uint64_t>> shapes = {{33, 1024}, {17, 2000}, {3, 6, 2048}};
  const char* schemes[] = {"q8_0", "q4_0", "mxfp8", "nvfp4", "q8s:block[48]=f16"};
  std::mt19937 rng(5);
  int bad_codes_set = 0, bad_codes_seen = 0;
  for (const char* text : schemes) {
    const auto s = qscheme::parse_scheme(text).value();
    for (const auto& shape : shapes) {
      const auto l = qscheme::make_layout(s, shape);
      if (!l.ok()) continue;
      std::vector<float> x(l->elements);
      for (auto& v : x) v = std::normal_distribution<float>(0.0f, 3.0f)(rng);
      BOOST_REQUIRE(fast::set_threads(1).ok());
      std::vector<std::uint8_t> good(l->total_bytes);
      BOOST_TEST_REQUIRE(fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, good.data(), good.size()).ok());
      std::vector<std::uint8_t> bad = good;
      const bool mini = qscheme::info(s.value).is_float;
      bad[l->value_bytes - l->value_bytes / 5] = mini ? 0xFF : 0x80;
      if (s.value != qscheme::Value::e2m1) ++bad_codes_set;
      for (const auto* bytes : {&good, &bad}) {
        const auto q = qscheme::reference::decode(s, shape, *bytes);
        const auto want = q ? qscheme::reference::dequantize(*q) : qscheme::Result<std::vector<float>>(q.status());
        if (bytes == &bad && !want.ok()) ++bad_codes_seen;
        for (unsigned th : {1u, 2u, 3u}) {
          BOOST_REQUIRE(fast::set_threads(th).ok());
          for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
            std::vector<float> got(l->elements, -1.0f);
            const auto st = fast::dequantize_from_bytes(s, shape, bytes->data(), bytes->size(), qscheme::Profile::exact,
                                                        got.data(), got.size(), pol);
            BOOST_TEST_CONTEXT(text << " shape " << shape.size() << "-D " << l->elements << " threads " << th
                                    << (bytes == &bad ? " bad code" : "") << " untouched "
                                    << (pol == fast::OutputPolicy::untouched_on_error)) {
              BOOST_TEST(st.to_string() == (want ? qscheme::Status() : want.status()).to_string());
              if (st.ok() && want.ok()) BOOST_TEST((qscheme::f32_bits(got) == qscheme::f32_bits(*want)));
            }
          }
        }
      }
    }
  }
  BOOST_TEST(bad_codes_seen == bad_codes_set);  // every kind but e2m1 has no code 0x80 or 0xFF
  BOOST_TEST(bad_codes_set >= 9);
  BOOST_REQUIRE(fast::set_threads(1).ok());
}

// Given scales go through scales_from_max as maxima with wg = 2 (quantize_units.cc): c is the
// given value rounded up to the grid, e = c * g under any f32 global, inv = InvF32(e).
BOOST_AUTO_TEST_CASE(scales_from_max_rounds_given_scales_up_on_every_target) {
  using qscheme::ScaleDtype;
  std::mt19937 rng(11);
  std::vector<std::uint32_t> given = {0u, 1u, 0x00400000u, 0x00800000u, 0x3F800000u, 0x7F7FFFFFu, 0x477FE000u,
                                      0x477FF000u, 0x43E00000u, 0x33800000u, 0x2F800000u, 0x40400000u, 0x40A00000u};
  for (int i = 0; i < 3000; ++i) given.push_back(rng() % 0x7F800000u);
  // Every grid's values, from its subnormals to past its max, and an f32 ulp either side: the
  // round-up's edges (exact arithmetic on the bits: a value stays, the next f32 goes up a step).
  for (auto sd : {ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue8m0, ScaleDtype::ue4m3}) {
    const auto grid = qscheme::fast::detail::grid_of(sd);
    for (int i = 0; i < 300; ++i) {
      const int e = grid.emin - grid.m - 1 + static_cast<int>(rng() % static_cast<unsigned>(std::log2(grid.max) - grid.emin + grid.m + 3));
      const double v = std::ldexp(1.0 + (rng() % 64) / 64.0, e);
      const float c = static_cast<float>(qscheme::fast::detail::grid_round_up(v, grid));
      if (!(c > 0) || !std::isfinite(c)) continue;
      for (float f : {c, std::nextafter(c, 0.0f), std::nextafter(c, INFINITY)}) given.push_back(f32_bits(f));
    }
  }
  // A set sign bit is ignored (a given -0 is +0; the checks let no other negative through).
  given.push_back(0x80000000u);
  given.push_back(0xBF800000u);
  // Globals g whose c * g lies next to an end of InvF32's range [2^-100, 2^100] (c = 1, 3, 5): the
  // f32 product can round onto the end while the exact one lies outside it.
  std::vector<float> globals = {1.0f, 0.0f, 0.5f, 0x1p-70f, 0x1p70f, 0.0015958354f, 3.3e20f, 1.7e-38f, 3e38f, 0.75f,
                                0x1p-100f, 0x1p100f};
  for (float c : {3.0f, 5.0f}) {
    for (float end : {0x1p-100f, 0x1p100f}) {
      const float g0 = end / c;
      for (float g : {std::nextafter(std::nextafter(g0, 0.0f), 0.0f), std::nextafter(g0, 0.0f), g0,
                      std::nextafter(g0, INFINITY), std::nextafter(std::nextafter(g0, INFINITY), INFINITY)}) {
        globals.push_back(g);
      }
    }
  }
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    for (auto sd : {ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue8m0, ScaleDtype::ue4m3}) {
      const auto grid = qscheme::fast::detail::grid_of(sd);
      for (float g : globals) {
        fast::kernels::ScaleSpec sp = qscheme::fast::detail::scale_spec(sd, 2.0, g);
        sp.count_tight = false;
        std::vector<std::uint32_t> bits(given.size());
        std::vector<double> e(given.size());
        std::vector<float> inv(given.size());
        const auto facts = fast::kernels::Get().scales_from_max(given.data(), given.size(), sp, bits.data(), e.data(),
                                                                inv.data(), nullptr, nullptr);
        std::size_t bad = 0;
        bool want_far = false;
        for (std::size_t k = 0; k < given.size(); ++k) {
          const double c = qscheme::fast::detail::grid_round_up(std::fabs(f32_from_bits(given[k])), grid);
          const double we = c * g;
          const bool far = we != 0 && (we < 0x1p-100 || we > 0x1p100);
          want_far = want_far || far;
          const bool inv_ok = far ? std::isnan(inv[k]) : f32_bits(inv[k]) == f32_bits(fast::kernels::InvF32(we));
          if (bits[k] != qscheme::fast::detail::scale_to_bits(c, sd) || e[k] != we || !inv_ok) {
            if (++bad < 5) {
              BOOST_ERROR("target " << hwy::TargetName(t) << " dtype " << qscheme::to_string(sd) << " g " << g
                                    << " given 0x" << std::hex << given[k] << " bits 0x" << bits[k] << std::dec
                                    << " e " << e[k] << " want " << we);
            }
          }
        }
        BOOST_TEST(bad == 0u);
        BOOST_TEST(facts.any_far == want_far);
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Burn's scale steps over a unit's blocks (kernels::burn_scales) against the block-by-block twin
// (detail::burn_block_scale: host f32 steps, grid_round_up in f64): every dtype, the value kinds'
// widths, one level and globals (Burn's floor 2^-126, full-width ones, ones whose products
// overflow), calibrated and given; maxima whose f32 scale f32(f32(2a) / W) (over g) lands on a grid
// value or an f32 ulp either side, subnormal scales, zeros (0.1), 2a at f32's overflow, random
// patterns; every count up to three vectors and more, so each tail is taken.
BOOST_AUTO_TEST_CASE(burn_scales_match_their_scalar_twin_on_every_target) {
  using qscheme::ScaleDtype;
  std::mt19937 rng(13);
  std::vector<std::uint32_t> base = {0u, 1u, 0x00400000u, 0x00800000u, 0x3F800000u, 0x7EFFFFFFu, 0x7F000000u,
                                     0x7F7FFFFFu, 0x33800000u, 0x80000000u};
  for (int i = 0; i < 1500; ++i) base.push_back(rng() % 0x7F800000u);
  for (int i = 0; i < 500; ++i) base.push_back(0x30000000u + rng() % 0x18000000u);  // near 1
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    for (auto sd : {ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue8m0, ScaleDtype::ue4m3}) {
      const auto grid = qscheme::fast::detail::grid_of(sd);
      for (float W : {254.0f, 255.0f, 14.0f, 15.0f, 2.0f, 3.0f, 896.0f, 114688.0f, 12.0f}) {
        for (float g : {1.0f, 0x1p-126f, 0.0015958354f, 0.3125f, 3.3e20f, 3e38f}) {
          for (bool given : {false, true}) {
            const bool two = g != 1.0f;
            if (given && W != 254.0f && W != 12.0f) continue;  // W plays no part
            std::vector<std::uint32_t> a = base;
            // Maxima whose Burn scale is a grid value (over g), and their f32 neighbours.
            for (int i = 0; i < 200; ++i) {
              const double v = std::ldexp(1.0 + (rng() % 1024) / 1024.0, grid.emin - grid.m - 2 + static_cast<int>(rng() % 60));
              const float c = static_cast<float>(qscheme::fast::detail::grid_round_up(v, grid));
              const float am = given ? c : c * (two ? g : 1.0f) * W / 2.0f;
              if (!(am > 0) || !std::isfinite(am)) continue;
              for (float f : {am, std::nextafter(am, 0.0f), std::nextafter(am, INFINITY)}) a.push_back(f32_bits(f));
            }
            fast::kernels::BurnScaleSpec sp;
            sp.grid = qscheme::fast::detail::scale_spec(sd, 2.0, 1.0);
            sp.W = W;
            sp.g = g;
            sp.two = two;
            sp.given = given;
            for (std::size_t n : {a.size(), std::size_t{1}, std::size_t{7}, std::size_t{16}, std::size_t{33}}) {
              // Calibrated maxima are magnitudes; a given scale's sign bit is ignored.
              std::vector<std::uint32_t> in(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n));
              if (!given) for (std::uint32_t& b : in) b &= 0x7FFFFFFFu;
              std::vector<std::uint32_t> bits(n), wbits(n);
              std::vector<float> d(n), wd(n);
              const bool over = fast::kernels::Get().burn_scales(in.data(), n, sp, bits.data(), d.data());
              bool want_over = false;
              std::size_t bad = 0;
              for (std::size_t k = 0; k < n; ++k) {
                if (!qscheme::fast::detail::burn_block_scale(in[k], sp, sd, &wbits[k], &wd[k])) {
                  want_over = true;
                  continue;
                }
                if (bits[k] != wbits[k] || f32_bits(d[k]) != f32_bits(wd[k])) {
                  if (++bad < 5) {
                    BOOST_ERROR("target " << hwy::TargetName(t) << " dtype " << qscheme::to_string(sd) << " W " << W
                                          << " g " << g << " given " << given << " a 0x" << std::hex << in[k] << " bits 0x"
                                          << bits[k] << " want 0x" << wbits[k] << std::dec << " divisor " << d[k]
                                          << " want " << wd[k]);
                  }
                }
              }
              BOOST_TEST(bad == 0u);
              BOOST_TEST(over == want_over);
            }
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  // The twin at points worked out by hand: q8s (W 254), f16 scales, one level. a = 127: 2a / W = 1,
  // stored 0x3C00, divisor 1. a = 0: scale 0, stored 0, divisor 0.1. a = 1: 2 / 254 = 0.007874016
  // (f32 0x3C010204), rounded up onto f16's 2^-8 binade (step 2^-18): 0x2008 = 0.00787353515625 is
  // below it, so 0x2009 = 0.0078773498535...; the divisor is that value.
  fast::kernels::BurnScaleSpec sp;
  sp.grid = qscheme::fast::detail::scale_spec(ScaleDtype::f16, 2.0, 1.0);
  sp.W = 254.0f;
  std::uint32_t b = 0;
  float dv = 0;
  BOOST_TEST(qscheme::fast::detail::burn_block_scale(f32_bits(127.0f), sp, ScaleDtype::f16, &b, &dv));
  BOOST_TEST(b == 0x3C00u);
  BOOST_TEST(dv == 1.0f);
  BOOST_TEST(qscheme::fast::detail::burn_block_scale(0u, sp, ScaleDtype::f16, &b, &dv));
  BOOST_TEST(b == 0u);
  BOOST_TEST(f32_bits(dv) == f32_bits(0.1f));
  BOOST_TEST(qscheme::fast::detail::burn_block_scale(f32_bits(1.0f), sp, ScaleDtype::f16, &b, &dv));
  BOOST_TEST(b == 0x2009u);
  BOOST_TEST(dv == static_cast<float>(std::ldexp(1.0 + 9.0 / 1024.0, -7)));
  // 2a overflows f32 (a > f32max / 2): Burn's error.
  BOOST_TEST(!qscheme::fast::detail::burn_block_scale(0x7F000000u, sp, ScaleDtype::f16, &b, &dv));
}

// The clamp test of a unit's blocks (kernels::blocks_within) against its twin: maxima on 2a = W e
// and an f32 ulp either side, every count up to three vectors, one block out of range anywhere.
BOOST_AUTO_TEST_CASE(blocks_within_matches_its_scalar_twin_on_every_target) {
  std::mt19937 rng(17);
  std::vector<std::uint32_t> a;
  std::vector<double> e;
  for (int i = 0; i < 200; ++i) {
    const double ek = std::ldexp(1.0 + (rng() % 2048) / 2048.0, static_cast<int>(rng() % 40) - 20) * 0.0015958354f;
    const float at = static_cast<float>(6.0 * ek);  // 2a = 12 e, rounded to f32
    for (float f : {at, std::nextafter(at, 0.0f), std::nextafter(at, INFINITY), 0.0f}) {
      a.push_back(f32_bits(f));
      e.push_back(ek);
    }
  }
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    for (std::size_t n = 1; n <= a.size(); n += (n < 50 ? 1 : 37)) {
      BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " n " << n) {
        BOOST_TEST(fast::kernels::Get().blocks_within(a.data(), e.data(), n, 12.0) ==
                   fast::scalar::blocks_within(a.data(), e.data(), n, 12.0));
        // Every block within (each e doubled), then one block past it at each position.
        std::vector<double> e2(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(n));
        for (double& v : e2) v *= 2;
        BOOST_TEST(fast::kernels::Get().blocks_within(a.data(), e2.data(), n, 12.0));
        for (std::size_t k = 0; k < n; k += (n < 20 ? 1 : 7)) {
          std::vector<double> e3 = e2;
          e3[k] = 0x1p-149;
          std::vector<std::uint32_t> a3(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n));
          a3[k] = f32_bits(1.0f);
          BOOST_TEST(!fast::kernels::Get().blocks_within(a3.data(), e3.data(), n, 12.0));
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

BOOST_AUTO_TEST_CASE(scales_from_max_matches_its_scalar_twin_on_every_target) {
  using qscheme::ScaleDtype;
  std::mt19937 rng(7);
  std::vector<std::uint32_t> base;
  // 127.5 and 7.5: 2a / W is exactly 1 for W = 255 and 15 (a tight f32 scale at g = 1).
  for (std::uint32_t b : {0u, 1u, 2u, 0x00400000u, 0x00800000u, 0x3F800000u, 0x7F7FFFFFu, 0x7F000000u, 0x33800000u,
                          0x42FF0000u, 0x40F00000u}) {
    base.push_back(b);
  }
  for (int i = 0; i < 4000; ++i) base.push_back(rng() % 0x7F800000u);
  for (int i = 0; i < 2000; ++i) base.push_back(0x30000000u + rng() % 0x18000000u);  // near 1
  for (std::uint32_t b = 1; b < 200; b += 7) base.push_back(b);  // 2a / W an f32 subnormal
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    for (auto sd : {ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue8m0, ScaleDtype::ue4m3}) {
      for (double W : {254.0, 255.0, 14.0, 15.0, 2.0, 3.0, 896.0, 114688.0, 12.0}) {
        // Maxima on the boundary of a grid value c (a = c W g / 2, where the scale lands exactly on
        // c, or the f32 nearest to it) and one f32 ulp either side, over the grid's whole range,
        // subnormals and its max included: the estimate-and-check kernels must step to the exact
        // neighbour. The globals: 1 (one level); 0.3125, whose few bits make many c W g / 2 exact
        // f32 ties; full-width f32 globals (the f32-lane kernel's exact comparison by an fma); the
        // ends of the range that kernel takes (2^-70, 2^70) and just outside; and far ones.
        for (double g : {1.0, 0.3125, static_cast<double>(0.0015958354f), static_cast<double>(1.7e-5f),
                         static_cast<double>(3.3e20f), 0x1p-70, 0x1p70, 0x1.000002p-71, 0x1p71, std::ldexp(1.0, -126),
                         3.0e30}) {
          const auto grid = qscheme::fast::detail::grid_of(sd);
          std::vector<std::uint32_t> amax = base;
          // Only where the expectation below, from the f64 quotient 2a / (W g), is exact: the
          // distance of a grid value c from 2a / (W g) is then a multiple of 2^-52 of c or zero (c of
          // at most 11 bits, W of 17, g an f32), wider than the quotient's rounding.
          if (g == 1.0 || (sd != ScaleDtype::f32 && static_cast<double>(static_cast<float>(g)) == g)) {
            std::mt19937 r2(static_cast<std::uint32_t>(W) * 7 + static_cast<std::uint32_t>(sd));
            const int lo = std::max(grid.emin - grid.m - 2, -149), hi = std::min(static_cast<int>(std::log2(grid.max)) + 2, 127);
            for (int i = 0; i < 600; ++i) {
              const double v = std::ldexp(1.0 + (r2() % 1024) / 1024.0, lo + static_cast<int>(r2() % static_cast<unsigned>(hi - lo)));
              const float a = static_cast<float>(qscheme::fast::detail::grid_round_up(v, grid) * (W / 2) * g);
              if (!(a > 0) || !std::isfinite(a)) continue;
              amax.push_back(f32_bits(a));
              amax.push_back(f32_bits(std::nextafter(a, INFINITY)));
              amax.push_back(f32_bits(std::nextafter(a, 0.0f)));
            }
          }
          const fast::kernels::ScaleSpec sp = qscheme::fast::detail::scale_spec(sd, W * g, g);
          std::vector<std::uint32_t> bits(amax.size());
          std::vector<double> e(amax.size());
          std::vector<float> inv(amax.size());
          std::vector<std::uint32_t> tight_k(amax.size(), 7u), lowest_k(amax.size(), 7u);
          const fast::kernels::ScaleFacts facts = fast::kernels::Get().scales_from_max(
              amax.data(), amax.size(), sp, bits.data(), e.data(), inv.data(), tight_k.data(), lowest_k.data());
          // Tight, as documented: a > 0 and W e <= 2a with e = c g, compared exactly (long double
          // holds W c g: at most 8 + 24 + 24 bits). The kernel's W e is exact where the schemes
          // put it, e of at most 35 bits: not for an f32 grid under a full-width g (no scheme has
          // f32 block scales under a global), which is left out of the tight check.
          const bool tight_exact = sd != ScaleDtype::f32 || g == 1.0;
          auto tight = [&](std::uint32_t am) {
            const long double a = f32_from_bits(am);
            const long double c = qscheme::fast::detail::grid_round_up(2.0 * static_cast<double>(a) / (W * g), grid);
            return a > 0 && static_cast<long double>(W) * c * static_cast<long double>(g) <= 2 * a;
          };
          // Of those, W e == 2a: the pattern of -a (QuantizeRow's `lowest`); W e < 2a: below.
          auto tie = [&](std::uint32_t am) {
            const long double a = f32_from_bits(am);
            const long double c = qscheme::fast::detail::grid_round_up(2.0 * static_cast<double>(a) / (W * g), grid);
            return a > 0 && static_cast<long double>(W) * c * static_cast<long double>(g) == 2 * a;
          };
          bool want_far = false;
          std::size_t want_tight = 0, want_below = 0;
          std::size_t bad = 0;
          for (std::size_t k = 0; k < amax.size(); ++k) {
            const double a = f32_from_bits(amax[k]);
            const double c = qscheme::fast::detail::grid_round_up(2.0 * a / (W * g), grid);
            const std::uint32_t wb = qscheme::fast::detail::scale_to_bits(c, sd);
            const double we = c * g;
            const bool far = we != 0 && (we < 0x1p-100 || we > 0x1p100);
            want_far = want_far || far;
            want_tight += tight(amax[k]) ? 1 : 0;
            want_below += tight(amax[k]) && !tie(amax[k]) ? 1 : 0;
            if (tight_exact && tight_k[k] != (tight(amax[k]) ? 1u : 0u)) ++bad;
            if (tight_exact && lowest_k[k] != (tie(amax[k]) ? (amax[k] | 0x80000000u) : 0xFFFFFFFFu)) {
              if (++bad < 5) BOOST_ERROR("lowest pattern of amax 0x" << std::hex << amax[k] << ": 0x" << lowest_k[k]);
            }
            const float wi = we == 0 ? 0.0f : 1.0f / static_cast<float>(we);  // RN32(1 / RN32(e))
            const bool inv_ok = far ? std::isnan(inv[k]) : f32_bits(inv[k]) == f32_bits(wi);
            if (bits[k] != wb || std::bit_cast<std::uint64_t>(e[k]) != std::bit_cast<std::uint64_t>(we) || !inv_ok) {
              if (++bad < 5) {
                BOOST_ERROR("target " << hwy::TargetName(t) << " dtype " << qscheme::to_string(sd) << " W " << W << " g "
                                      << g << " amax 0x" << std::hex << amax[k] << " bits 0x" << bits[k] << " want 0x" << wb
                                      << std::dec << " e " << e[k] << " want " << we);
              }
            }
          }
          BOOST_TEST(bad == 0u);
          BOOST_TEST(facts.any_far == want_far);
          if (tight_exact) {
            BOOST_TEST(facts.tight == want_tight);
            BOOST_TEST(facts.below == want_below);
          }
          {  // Without the counts (minifloats, symmetric kinds): the same scales, no counts.
            fast::kernels::ScaleSpec nc = sp;
            nc.count_tight = false;
            std::vector<std::uint32_t> bits2(amax.size());
            std::vector<double> e2(amax.size());
            std::vector<float> inv2(amax.size());
            const fast::kernels::ScaleFacts f2 =
                fast::kernels::Get().scales_from_max(amax.data(), amax.size(), nc, bits2.data(), e2.data(), inv2.data(), nullptr, nullptr);
            BOOST_TEST((bits2 == bits && e2 == e));
            BOOST_TEST(std::memcmp(inv2.data(), inv.data(), inv.size() * sizeof(float)) == 0);
            BOOST_TEST(f2.any_far == facts.any_far);
            BOOST_TEST(f2.tight == 0u);
            BOOST_TEST(f2.below == 0u);
          }
          // Each maximum alone: the result names exactly the calls with an out-of-range scale, and
          // with a tight one (the first ones of amax are exact quotients or saturate).
          for (std::size_t k = 0; k < amax.size(); k += (k < 16 ? 1 : 97)) {
            std::uint32_t b1;
            double e1;
            float i1;
            const fast::kernels::ScaleFacts f1 = fast::kernels::Get().scales_from_max(&amax[k], 1, sp, &b1, &e1, &i1, nullptr, nullptr);
            BOOST_TEST(f1.any_far == std::isnan(i1));
            if (tight_exact) BOOST_TEST(f1.tight == (tight(amax[k]) ? 1u : 0u));
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// The MX recipes' exponent rules over every block of a unit at once (kernels::exponent_scales)
// against the rule one block at a time (detail::ExponentRule) and InvF32: every rule and element
// kind, maxima at the rules' edges (zero, subnormals and the pattern that rounds into the normals,
// powers of two and their neighbours, the largest f32) and random ones, every count up to three
// vectors so that each tail length is taken.
BOOST_AUTO_TEST_CASE(exponent_scales_match_their_scalar_twin_on_every_target) {
  using qscheme::fast::detail::ExponentRule;
  using qscheme::fast::detail::ScalePick;
  std::vector<std::uint32_t> amax = {0u, 1u, 2u, 3u, 0x00400000u, 0x00400001u, 0x0077FFFFu, 0x00780000u,
                                     0x007FFFFFu, 0x00800000u, 0x00800001u, 0x7F7FFFFFu, 0x7F000000u, 0x7F7C0000u,
                                     0x7F780000u, 0x43E00000u, 0x43DFFFFFu, 0x43E00001u, 0x40C00000u, 0x47600000u};
  for (int ex = 1; ex < 255; ex += 3) {
    for (std::uint32_t m : {0u, 1u, 0x3FFFFu, 0x40000u, 0x7FFFFu, 0x80000u, 0x100000u, 0x200000u, 0x3FFFFFu, 0x7FFFFFu}) {
      amax.push_back(static_cast<std::uint32_t>(ex) << 23 | m);
    }
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) amax.push_back(rng() % 0x7F800000u);
  // log2f-floor's thresholds and their neighbours in every binade.
  const std::uint32_t* thr = fast::detail::log2f_thresholds();
  for (std::uint32_t field = 1; field < 255; ++field) {
    for (std::uint32_t m : {thr[field] - 1, thr[field], thr[field] + 1}) {
      if (m < 0x800000u) amax.push_back(field << 23 | m);
    }
  }
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    const std::size_t N = fast::kernels::Get().lanes_f32();
    for (ScalePick pick : {ScalePick::ocp_floor, ScalePick::torchao_ceil, ScalePick::torchao_even, ScalePick::rceil,
                           ScalePick::log2f_floor}) {
      for (auto v : {qscheme::Value::e4m3, qscheme::Value::e5m2, qscheme::Value::e2m1}) {
        const ExponentRule rule(pick, v);
        for (std::size_t off = 0; off + 1 < amax.size(); off += 37) {
          const std::size_t n = std::min(amax.size() - off, 1 + off % (3 * N));
          std::vector<std::uint32_t> bits(n, 7u);
          std::vector<double> e(n, -1.0);
          std::vector<float> inv(n, -1.0f);
          const auto facts =
              fast::kernels::Get().exponent_scales(amax.data() + off, n, rule.spec(), bits.data(), e.data(), inv.data());
          bool nan_scale = false, far = false, out_of_range = false;
          std::size_t bad = 0;
          for (std::size_t k = 0; k < n; ++k) {
            const std::uint32_t a = amax[off + k], p = rule(a);
            nan_scale = nan_scale || p == 0xFFu;
            const double we = std::ldexp(1.0, static_cast<int>(p) - 127);
            const bool f = !(we >= 0x1p-100 && we <= 0x1p100);
            far = far || f;
            out_of_range = out_of_range || 2.0 * static_cast<double>(f32_from_bits(a)) > rule.spec().W * we;
            const bool inv_ok = f ? std::isnan(inv[k]) : f32_bits(inv[k]) == f32_bits(fast::kernels::InvF32(we));
            if (bits[k] != p || e[k] != we || !inv_ok) {
              if (++bad < 4) {
                BOOST_ERROR("target " << hwy::TargetName(t) << " rule " << static_cast<int>(pick) << " kind "
                                      << qscheme::to_string(v) << " amax 0x" << std::hex << a << ": 0x" << bits[k]
                                      << ", want 0x" << p << std::dec << " (e " << e[k] << ", inv " << inv[k] << ")");
              }
            }
          }
          BOOST_TEST(bad == 0u);
          BOOST_TEST(facts.nan_scale == nan_scale);
          BOOST_TEST(facts.any_far == far);
          BOOST_TEST(facts.out_of_range == out_of_range);
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// microxcaling's exponent rule against the reference's, which decides floor(f32(log2 a)) with 40
// digits of ln 2: in every binade at the fast engine's threshold and the pattern below it (the
// rule is monotonic in a, so these two settle the binade), its ends, and for every element kind.
BOOST_AUTO_TEST_CASE(log2f_floor_thresholds_agree_with_the_reference_in_every_binade) {
  using qscheme::fast::detail::ExponentRule;
  using qscheme::fast::detail::ScalePick;
  const std::uint32_t* thr = fast::detail::log2f_thresholds();
  int with_threshold = 0;
  for (auto v : {qscheme::Value::e4m3, qscheme::Value::e5m2, qscheme::Value::e2m1}) {
    const ExponentRule rule(ScalePick::log2f_floor, v);
    std::vector<std::uint32_t> cases = {0u, 1u, 0x7FFFFFu};
    for (std::uint32_t field = 1; field < 255; ++field) {
      cases.push_back(field << 23);
      cases.push_back(field << 23 | 0x7FFFFFu);
      if (thr[field] < 0x800000u) {
        cases.push_back(field << 23 | thr[field]);
        cases.push_back(field << 23 | (thr[field] - 1));
        if (v == qscheme::Value::e4m3) ++with_threshold;
      }
    }
    for (std::uint32_t a : cases) {
      const auto want = ref::exponent_scale(qscheme::rule::ScaleRounding::log2f_floor, v, f32_from_bits(a), 0);
      BOOST_REQUIRE_MESSAGE(want.ok(), want.status().message());
      BOOST_TEST_CONTEXT(qscheme::to_string(v) << " amax 0x" << std::hex << a) { BOOST_TEST(rule(a) == *want); }
    }
  }
  // Every binade below 2^n has one but for n = -1, 0, 1, 2, where half the f32 step below n is
  // worth less than one unit of a's mantissa (computed apart, with 60 digits).
  BOOST_TEST(with_threshold == 250);
}

// The range of given scales decides whether the units stage takes them (quantize_units.cc): the
// kernel against its scalar twin over signed zeros, negatives, NaNs and infinities of both signs,
// subnormals and random patterns, every count up to three vectors, on every target.
BOOST_AUTO_TEST_CASE(scale_range_matches_its_scalar_twin_on_every_target) {
  std::vector<std::uint32_t> pats = {0u,          0x80000000u, 1u,          0x80000001u, 0x7F7FFFFFu, 0x7F800000u,
                                     0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x3F800000u, 0xBF800000u, 0x00400000u};
  std::mt19937 rng(3);
  for (int i = 0; i < 600; ++i) pats.push_back(rng() % 0x7F800000u);
  for (int i = 0; i < 30; ++i) pats.push_back(rng());
  std::vector<float> v(pats.size());
  for (std::size_t i = 0; i < pats.size(); ++i) v[i] = f32_from_bits(pats[i]);
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    const std::size_t N = fast::kernels::Get().lanes_f32();
    std::size_t bad = 0;
    for (std::size_t off = 0; off < v.size(); ++off) {
      const std::size_t n = std::min(v.size() - off, off % (3 * N + 1));
      const fast::kernels::ScaleRange got = fast::kernels::Get().scale_range(v.data() + off, n);
      std::int32_t top = 0, least = 0;
      qscheme::fast::scalar::scale_range(v.data() + off, n, &top, &least);
      if (got.top != top || got.least != least) {
        if (++bad < 4) BOOST_ERROR("target " << hwy::TargetName(t) << " at " << off << " n " << n << ": " << got.top
                                             << ", " << got.least << " want " << top << ", " << least);
      }
    }
    BOOST_TEST(bad == 0u);
  }
  hwy::SetSupportedTargetsForTest(0);
}

BOOST_AUTO_TEST_CASE(scales_from_bytes_matches_its_scalar_twin_on_every_target) {
  using qscheme::ScaleDtype;
  std::mt19937 rng(11);
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    for (auto sd : {ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue8m0, ScaleDtype::ue4m3}) {
      const int sb = qscheme::info(sd).bytes;
      std::vector<std::uint32_t> pats;
      if (sb < 4) {
        for (std::uint32_t p = 0; p < (1u << (8 * sb)); ++p) pats.push_back(p);
        // One-byte dtypes: then a run of valid patterns in random order, whole chunks of them
        // after the last invalid one (every pattern of these fits in one chunk).
        if (sb == 1) {
          for (int i = 0; i < 4000; ++i) pats.push_back(static_cast<std::uint32_t>(rng() % (sd == ScaleDtype::ue8m0 ? 0xFF : 0x7F)));
        }
      } else {
        for (std::uint32_t p : {0u, 0x80000000u, 0x7F800000u, 0x7F7FFFFFu, 0x7FC00000u, 1u}) pats.push_back(p);
        for (int i = 0; i < 100000; ++i) pats.push_back(static_cast<std::uint32_t>(rng()));
      }
      // Each pattern alone (so an invalid one is the first), at every position of a vector.
      std::vector<std::uint8_t> buf;
      for (std::uint32_t p : pats) {
        for (int i = 0; i < sb; ++i) buf.push_back(static_cast<std::uint8_t>(p >> (8 * i)));
      }
      std::vector<float> v(pats.size());
      std::size_t k0 = 0;
      while (k0 < pats.size()) {
        const std::size_t first = fast::kernels::Get().scales_from_bytes(buf.data() + k0 * sb, pats.size() - k0,
                                                                 static_cast<int>(sd), v.data() + k0);
        for (std::size_t k = k0; k < k0 + first; ++k) {
          double want;
          BOOST_TEST_REQUIRE(qscheme::fast::detail::scale_from_bits(pats[k], sd, &want));
          BOOST_TEST_REQUIRE(static_cast<double>(v[k]) == want, "pattern 0x" << std::hex << pats[k]);
        }
        if (k0 + first == pats.size()) break;
        double dummy;
        BOOST_TEST_REQUIRE(!qscheme::fast::detail::scale_from_bits(pats[k0 + first], sd, &dummy),
                           "pattern 0x" << std::hex << pats[k0 + first] << " reported invalid");
        k0 += first + 1;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

BOOST_AUTO_TEST_CASE(block_max_abs_bits_matches_its_scalar_twin_on_every_target) {
  // Block widths of 1, 2, 3, 4 and 8 vectors (the first three and 4 have their own leaves), lengths
  // with several groups of N blocks, a partial group and a partial last block; a NaN or an
  // infinity in one block shows in that block only.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> x(8 * 16 * 16 * 3 + 40);
  for (float& v : x) v = u(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    const std::size_t N = fast::kernels::Get().lanes_f32();
    for (std::size_t vpb : {1, 2, 3, 4, 8}) {
      const std::size_t bw = vpb * N;
      for (std::size_t len : {bw, 5 * bw, 16 * bw, 37 * bw, 37 * bw + N + 3, 2 * N * bw + 1}) {
        if (len > x.size()) continue;
        for (int poison = 0; poison < 3; ++poison) {
          std::vector<float> y(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(len));
          const std::size_t at = len / 2 + 1;
          if (poison == 1) y[at] = std::numeric_limits<float>::quiet_NaN();
          if (poison == 2) y[at] = -std::numeric_limits<float>::infinity();
          const std::size_t nb = (len + bw - 1) / bw;
          std::vector<std::uint32_t> got(nb + 1, 0xDEADBEEF), want(nb + 1, 0xDEADBEEF);
          std::uint32_t top = 0;
          for (std::size_t b = 0; b < nb; ++b) {
            for (std::size_t i = b * bw; i < std::min(len, (b + 1) * bw); ++i) {
              want[b] = std::max(b * bw == i ? 0u : want[b], f32_bits(y[i]) & 0x7FFFFFFFu);
            }
            top = std::max(top, want[b]);
          }
          // The prepass variant differs only in how far ahead it prefetches.
          const fast::kernels::Kernels& kt = fast::kernels::Get();
          for (auto* kernel : {kt.block_max_abs_bits, kt.prepass_block_max_abs_bits}) {
            std::fill(got.begin(), got.end(), 0xDEADBEEF);
            const std::uint32_t got_top = kernel(y.data(), len, bw, got.data());
            BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " bw " << bw << " len " << len << " poison "
                                         << poison << " prepass " << (kernel != kt.block_max_abs_bits)) {
              BOOST_TEST(got == want);
              BOOST_TEST(got_top == top);
              if (poison != 0) BOOST_TEST(got[at / bw] >= 0x7F800000u);
            }
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

BOOST_AUTO_TEST_CASE(stream_copy_equals_memcpy_at_every_alignment_on_every_target) {
  std::vector<std::uint8_t> src(700);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 37 + 11);
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    for (std::size_t n : {0, 1, 15, 16, 63, 64, 65, 200, 511}) {
      for (std::size_t off = 0; off < 64; off += (off < 8 ? 1 : 9)) {
        std::vector<std::uint8_t> a(n + 192, kCanary), b(n + 192, kCanary);
        fast::kernels::Get().stream_copy(a.data() + 64 + off, src.data() + off, n);
        hwy::FlushStream();
        std::memcpy(b.data() + 64 + off, src.data() + off, n);
        BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " n " << n << " offset " << off) { BOOST_TEST(a == b); }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

BOOST_AUTO_TEST_CASE(streamed_outputs_equal_plain_ones_for_fused_schemes) {
  // With the streaming threshold at 0 every output of dequantize_from_bytes goes through
  // StreamCopy; the floats must be those of plain stores, also when the output is not aligned.
  // (quantize_to_bytes does not stream: at 1 B per element it gained nothing, docs/PERFORMANCE.md.)
  struct Restore {
    std::size_t was = fast::kernels::StreamBytes();
    ~Restore() {
      fast::kernels::SetStreamBytes(was);
      hwy::SetSupportedTargetsForTest(0);
    }
  } restore;
  std::size_t checked = 0, vertical = 0;
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    std::size_t si = 0;
    for (const auto& s : qscheme::tuple_space()) {
      if (++si % qscheme::testing::SanitizerStride(29) != 0 || !qscheme::validate_scheme(s).ok()) continue;
      for (const auto& shape : BytesPlanShapes()) {
        const auto l = qscheme::make_layout(s, shape);
        if (!l.ok()) continue;
        const auto plan = fast::detail::make_bytes_plan(s, *l);
        if (!plan.fused) continue;
        const auto x = edge_inputs(s, *l, static_cast<std::uint32_t>(si), EdgeSet::every_size).front().x;
        for (std::size_t mis : {0, 1, 3}) {
          BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " scheme " << qscheme::format_scheme(s) << " elements "
                                       << l->elements << " misaligned by " << mis) {
            std::vector<std::uint8_t> plain(l->total_bytes);
            BOOST_TEST_REQUIRE(fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, plain.data(), plain.size()).ok());
            std::vector<float> yp(l->elements), ys(l->elements + 4, 7.0f);
            fast::kernels::SetStreamBytes(SIZE_MAX);
            BOOST_TEST_REQUIRE(fast::dequantize_from_bytes(s, shape, plain.data(), plain.size(), qscheme::Profile::exact,
                                                           yp.data(), yp.size())
                                   .ok());
            fast::kernels::SetStreamBytes(0);
            float* yo = ys.data() + mis;  // output misaligned by mis floats
            BOOST_TEST_REQUIRE(fast::dequantize_from_bytes(s, shape, plain.data(), plain.size(), qscheme::Profile::exact,
                                                           yo, yp.size())
                                   .ok());
            BOOST_TEST(std::memcmp(yp.data(), yo, yp.size() * sizeof(float)) == 0);
            BOOST_TEST(yo[yp.size()] == 7.0f);
            ++checked;
            vertical += plan.vertical ? 1 : 0;
          }
        }
      }
    }
  }
  BOOST_TEST_MESSAGE("streamed cases: " << checked << ", packed across rows: " << vertical);
  BOOST_TEST(checked > 50u);
  BOOST_TEST(vertical > 0u);
}

BOOST_AUTO_TEST_CASE(two_level_dequantize_rounds_once_at_extreme_globals) {
  // Two levels with f16 or ue4m3 block scales dequantize in f32 lanes, f32(f32(value * s) * g)
  // (kernels::TwoLevelInF32): one rounding only if value * s is exact. The global is patched to
  // extremes -- the largest f32 (products overflow), the least normal and subnormal ones
  // (products underflow) -- and the floats must be the reference's, bit for bit.
  std::size_t checked = 0;
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    std::size_t si = 0;
    for (const auto& s : qscheme::tuple_space()) {
      ++si;
      if (!s.tensor || !s.block || !qscheme::validate_scheme(s).ok()) continue;
      if (si % qscheme::testing::SanitizerStride(3) != 0) continue;
      const std::vector<std::uint64_t> shape{8, 256};
      const auto l = qscheme::make_layout(s, shape);
      if (!l.ok() || !fast::detail::make_bytes_plan(s, *l).fused) continue;
      const auto x = edge_inputs(s, *l, static_cast<std::uint32_t>(si), EdgeSet::every_size).front().x;
      std::vector<std::uint8_t> bytes(l->total_bytes);
      BOOST_TEST_REQUIRE(fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, bytes.data(), bytes.size()).ok());
      for (std::uint32_t gb : {0x7F7FFFFFu, 0x7E800000u, 0x3F800000u, 0x00800000u, 0x00000001u, 0x0B000000u, 0x3EAAAAABu}) {
        auto b = bytes;
        for (int i = 0; i < 4; ++i) b[l->value_bytes + l->scale_bytes + i] = static_cast<std::uint8_t>(gb >> (8 * i));
        BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " scheme " << qscheme::format_scheme(s) << " global 0x"
                                     << std::hex << gb) {
          auto q = ref::decode(s, shape, b, qscheme::Profile::exact);
          std::vector<float> got(l->elements, 7.0f);
          const auto st = fast::dequantize_from_bytes(s, shape, b.data(), b.size(), qscheme::Profile::exact, got.data(),
                                                      got.size());
          BOOST_TEST_REQUIRE(st.ok() == q.ok());
          if (!q.ok()) continue;
          const auto want = ref::dequantize(*q);
          BOOST_TEST_REQUIRE(want.ok());
          BOOST_TEST(f32_bits(got) == f32_bits(*want), boost::test_tools::per_element());
          ++checked;
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  BOOST_TEST_MESSAGE("two-level cases: " << checked);
  BOOST_TEST(checked > 20u);
}

BOOST_AUTO_TEST_CASE(kernel_table_follows_the_forced_target) {
  // The drivers look their kernels up once per call (kernels::Get): a forced target must still
  // change them, or the every-target tests of the drivers would all run one target.
  std::vector<const void*> seen;
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    const fast::kernels::Kernels& k = fast::kernels::Get();
    const void* codes = reinterpret_cast<const void*>(k.quantize_codes);
    BOOST_TEST_CONTEXT("target " << hwy::TargetName(t)) {
      BOOST_TEST((std::find(seen.begin(), seen.end(), codes) == seen.end()));
    }
    seen.push_back(codes);
  }
  hwy::SetSupportedTargetsForTest(0);
  BOOST_TEST(seen.size() == fast::kernels::AvailableTargetBits().size());
}

BOOST_AUTO_TEST_CASE(walking_the_units_in_order_gives_each_unit_as_found_directly) {
  // The drivers step a BytesPlan::Walk; unit(u) starts one at u (with divisions). Horizontal and
  // vertical packings, several chunks per row, partial groups of rows.
  std::size_t vertical = 0, horizontal = 0;
  for (const char* text : {"q8_0", "q4_0", "nvfp4", "mxfp4", "q4s:packed-u32(1):block[32]=f16", "q2s:packed-u32(0)"}) {
    const auto s = qscheme::parse_scheme(text).value();
    for (const std::vector<std::uint64_t>& shape :
         {std::vector<std::uint64_t>{3, 5000}, {2, 11, 4160}, {17, 64}, {9, 3, 2048}, {33, 2, 4096}, {4096}}) {
      const auto l = qscheme::make_layout(s, shape);
      if (!l.ok()) continue;
      const auto plan = fast::detail::make_bytes_plan(s, *l);
      if (!plan.fused) continue;
      (plan.vertical ? vertical : horizontal) += plan.units;
      BOOST_TEST_CONTEXT(text << " shape of " << shape.size() << " dims, last " << shape.back()) {
        for (std::uint64_t u0 : {std::uint64_t{0}, plan.units / 3}) {
          fast::detail::BytesPlan::Walk w(plan, u0);
          for (std::uint64_t u = u0; u < plan.units; ++u, ++w) {
            const auto want = plan.unit(u);
            const auto& got = *w;
            BOOST_TEST(got.count == want.count);
            BOOST_TEST(got.c0 == want.c0);
            BOOST_TEST(got.len == want.len);
            BOOST_TEST(got.value_offset == want.value_offset);
            for (std::uint64_t i = 0; i < want.count && i < got.count; ++i) BOOST_TEST(got.row[i] == want.row[i]);
          }
        }
      }
    }
  }
  BOOST_TEST(vertical > 50u);
  BOOST_TEST(horizontal > 50u);
}

BOOST_AUTO_TEST_CASE(byte_sizes_and_rejections_leave_out_untouched) {
  const auto s = qscheme::parse_scheme("q8_0").value();
  const std::vector<std::uint64_t> shape{4, 64};
  std::vector<float> x(256, 0.5f);
  std::vector<std::uint8_t> out(300, kCanary);
  auto st = fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, out.data(), out.size());
  BOOST_TEST((st.code() == qscheme::ErrorCode::size_mismatch));
  st = fast::quantize_to_bytes(s, shape, x.data(), x.size() - 1, {}, out.data(), 272);
  BOOST_TEST((st.code() == qscheme::ErrorCode::size_mismatch));
  const auto bad = qscheme::parse_scheme("q4s:packed-native(0)").value();
  st = fast::quantize_to_bytes(bad, shape, x.data(), x.size(), {}, out.data(), out.size());
  BOOST_TEST((st.code() == qscheme::ErrorCode::packed_native_unsupported));
  BOOST_TEST(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == kCanary; }));
  std::vector<float> f(256, 1.0f);
  std::vector<std::uint8_t> good(272);
  BOOST_TEST_REQUIRE(fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, good.data(), good.size()).ok());
  st = fast::dequantize_from_bytes(s, shape, good.data(), good.size(), qscheme::Profile::exact, f.data(), 255);
  BOOST_TEST((st.code() == qscheme::ErrorCode::size_mismatch));
  st = fast::dequantize_from_bytes(s, shape, good.data(), 271, qscheme::Profile::exact, f.data(), 256);
  BOOST_TEST((st.code() == qscheme::ErrorCode::size_mismatch));
  BOOST_TEST(std::all_of(f.begin(), f.end(), [](float v) { return v == 1.0f; }));
}
