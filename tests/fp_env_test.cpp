// Both engines give the same bits whatever floating-point environment the caller runs in
// (flush-to-zero and denormals-are-zero, another rounding mode, unmasked exceptions, x87 double
// precision), and hand the caller's environment back unchanged (scheme/fp_env.hpp).
#include <boost/test/unit_test.hpp>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "fast/qscheme.h"
#include "reference/reference.hpp"
#include "scheme/text.hpp"
#include "scheme/float_bits.hpp"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace {

using qscheme::Scheme;

// Schemes whose arithmetic touches the subnormal range: f32, f16, bf16, ue8m0 and ue4m3 scales,
// one and two levels, integer and minifloat values.
const char* const kSchemes[] = {
    "q8_0",          "nvfp4",           "mxfp8",          "mxfp4",          "q4_0",
    "q8s:block[32]=f32", "e4m3:block[32]=f32", "e5m2:block[16]=bf16", "q8f:block[8]=f32",
    "q4s:block[16]=f16:tensor=f32",    "e4m3:tensor=f32", "q2f:block[4]=ue8m0",
};

// Normal data, then magnitudes across the f32 subnormal range and just above it, zeros and
// maxima large enough for the saturating paths.
std::vector<float> Input(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> x(2048);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const int kind = static_cast<int>(i / 256);
    float v;
    if (kind == 0) {
      v = nd(rng);
    } else if (kind <= 4) {
      v = std::ldexp(1.0f + static_cast<float>(rng() % 4096) / 4096.0f, -150 + static_cast<int>(rng() % 40));
    } else if (kind == 5) {
      v = (rng() % 3 == 0) ? 0.0f : std::ldexp(1.0f, -126 - static_cast<int>(rng() % 24));
    } else {
      v = nd(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 250) - 125);
    }
    x[i] = (rng() & 1) ? -v : v;
  }
  return x;
}

struct Outputs {
  std::vector<std::uint8_t> ref_bytes, fast_bytes, fast_bytes_single, fast_encoded, capi_bytes;
  std::vector<float> ref_dq, fast_dq, fast_dq_bytes, capi_dq;
  bool operator==(const Outputs&) const = default;
};


// Every entry point, in the environment the caller has set.
Outputs RunAll(const char* text, const std::vector<float>& x, qscheme::Profile profile) {
  const Scheme s = qscheme::parse_scheme(text).value();
  const std::vector<std::uint64_t> shape{x.size()};
  qscheme::QuantizeOptions o;
  o.profile = profile;
  Outputs r;
  auto q = qscheme::reference::quantize(s, shape, x, o).value();
  r.ref_bytes = qscheme::reference::encode(q).value();
  r.ref_dq = qscheme::reference::dequantize(q).value();
  auto fq = qscheme::fast::quantize(s, shape, x, o).value();
  r.fast_encoded = qscheme::fast::encode(fq).value();
  r.fast_dq = qscheme::fast::dequantize(fq).value();
  r.fast_bytes.assign(r.ref_bytes.size(), 0xA5);
  r.fast_bytes_single.assign(r.ref_bytes.size(), 0xA5);
  BOOST_TEST(qscheme::fast::quantize_to_bytes(s, shape, x.data(), x.size(), o, r.fast_bytes.data(), r.fast_bytes.size())
                 .ok());
  BOOST_TEST(qscheme::fast::quantize_to_bytes(s, shape, x.data(), x.size(), o, r.fast_bytes_single.data(),
                                              r.fast_bytes_single.size(), qscheme::fast::OutputPolicy::single_pass)
                 .ok());
  r.fast_dq_bytes.assign(x.size(), -1.0f);
  BOOST_TEST(qscheme::fast::dequantize_from_bytes(s, shape, r.ref_bytes.data(), r.ref_bytes.size(), profile,
                                                  r.fast_dq_bytes.data(), r.fast_dq_bytes.size())
                 .ok());
  const int cprofile = profile == qscheme::Profile::burn ? QSCHEME_PROFILE_BURN : QSCHEME_PROFILE_EXACT;
  qscheme_quantize_options co{};
  co.profile = cprofile;
  r.capi_bytes.assign(r.ref_bytes.size(), 0xA5);
  std::size_t len = 0;
  std::uint64_t idx = 0;
  BOOST_TEST(qscheme_fast_quantize(text, shape.data(), 1, x.data(), x.size(), &co, r.capi_bytes.data(),
                                   r.capi_bytes.size(), &len, &idx) == QSCHEME_OK);
  r.capi_dq.assign(x.size(), -1.0f);
  BOOST_TEST(qscheme_fast_dequantize(text, shape.data(), 1, r.ref_bytes.data(), r.ref_bytes.size(), cprofile,
                                     r.capi_dq.data(), r.capi_dq.size(), &len, &idx) == QSCHEME_OK);
  return r;
}

#if defined(__x86_64__)
std::uint16_t X87Control() {
  std::uint16_t cw;
  __asm__ volatile("fnstcw %0" : "=m"(cw));
  return cw;
}
void SetX87Control(std::uint16_t cw) { __asm__ volatile("fldcw %0" : : "m"(cw)); }

// The caller environments tried: each is set, the body runs, the default comes back.
struct Env {
  const char* name;
  std::function<void()> set;
};
std::vector<Env> Environments() {
  return {
      {"FTZ and DAZ", [] { _mm_setcsr(_mm_getcsr() | 0x8040u); }},
      {"round upward", [] { std::fesetround(FE_UPWARD); }},
      {"round downward", [] { std::fesetround(FE_DOWNWARD); }},
      {"round toward zero", [] { std::fesetround(FE_TOWARDZERO); }},
      // Unmasked overflow, invalid, division by zero and underflow: a trap would kill the test.
      {"exceptions unmasked", [] { _mm_setcsr(_mm_getcsr() & ~(0x0200u | 0x0080u | 0x0400u | 0x0800u)); }},
      {"x87 double precision", [] { SetX87Control(static_cast<std::uint16_t>((X87Control() & ~0x0300u) | 0x0200u)); }},
      {"all at once", [] {
         std::fesetround(FE_DOWNWARD);
         _mm_setcsr((_mm_getcsr() | 0x8040u) & ~0x0200u);
       }},
  };
}
void Reset() {
  std::fesetround(FE_TONEAREST);
  _mm_setcsr(0x1F80);
  SetX87Control(0x037F);
}
#endif

}  // namespace

BOOST_AUTO_TEST_CASE(results_do_not_depend_on_the_callers_floating_point_environment) {
#if defined(__x86_64__)
  Reset();
  for (const char* text : kSchemes) {
    for (auto profile : {qscheme::Profile::exact, qscheme::Profile::burn}) {
      const auto x = Input(static_cast<std::uint32_t>(std::strlen(text)) * 31 + static_cast<std::uint32_t>(profile));
      const Outputs want = RunAll(text, x, profile);
      // The engines agree with each other in the default environment (what the rest of the suite
      // checks), so one comparison per environment covers both.
      BOOST_TEST((want.fast_bytes == want.ref_bytes && want.fast_encoded == want.ref_bytes &&
                  want.capi_bytes == want.ref_bytes && want.fast_bytes_single == want.ref_bytes));
      BOOST_TEST((qscheme::f32_bits(want.fast_dq) == qscheme::f32_bits(want.ref_dq) && qscheme::f32_bits(want.fast_dq_bytes) == qscheme::f32_bits(want.ref_dq) &&
                  qscheme::f32_bits(want.capi_dq) == qscheme::f32_bits(want.ref_dq)));
      for (const Env& env : Environments()) {
        BOOST_TEST_CONTEXT("scheme " << text << " profile " << static_cast<int>(profile) << " under " << env.name) {
          env.set();
          const Outputs got = RunAll(text, x, profile);
          Reset();
          BOOST_TEST((got.ref_bytes == want.ref_bytes), "reference bytes");
          BOOST_TEST((qscheme::f32_bits(got.ref_dq) == qscheme::f32_bits(want.ref_dq)), "reference dequantize");
          BOOST_TEST((got.fast_bytes == want.ref_bytes && got.fast_bytes_single == want.ref_bytes), "fast bytes");
          BOOST_TEST((got.fast_encoded == want.ref_bytes), "fast quantize + encode");
          BOOST_TEST((qscheme::f32_bits(got.fast_dq) == qscheme::f32_bits(want.ref_dq) && qscheme::f32_bits(got.fast_dq_bytes) == qscheme::f32_bits(want.ref_dq)),
                     "fast dequantize");
          BOOST_TEST((got.capi_bytes == want.ref_bytes && qscheme::f32_bits(got.capi_dq) == qscheme::f32_bits(want.ref_dq)), "C API");
        }
      }
    }
  }
#else
  BOOST_TEST_MESSAGE("x86-64 only: the environments are set through MXCSR and the x87 control word");
#endif
}

BOOST_AUTO_TEST_CASE(the_callers_floating_point_environment_is_restored) {
#if defined(__x86_64__)
  const auto x = Input(5);
  // FTZ, DAZ, round upward, and the inexact and underflow flags already raised; x87 rounding down
  // at double precision.
  const std::uint32_t csr = (0x1F80u | 0x8040u | 0x4000u | 0x0020u | 0x0010u) & ~0x2000u;
  const std::uint16_t cw = static_cast<std::uint16_t>((0x037Fu & ~0x0F00u) | 0x0200u | 0x0400u);
  const std::vector<std::uint64_t> shape{x.size()}, bad_shape{x.size() + 1};
  for (const char* text : {"q8_0", "nvfp4", "q8s:block[32]=f32"}) {
    const Scheme s = qscheme::parse_scheme(text).value();
    std::vector<std::uint8_t> bytes(qscheme::make_layout(s, shape).value().total_bytes);
    std::vector<float> out(x.size());
    std::size_t len = 0;
    std::uint64_t idx = 0;
    const std::vector<std::pair<const char*, std::function<void()>>> calls{
        {"fast::quantize_to_bytes", [&] { (void)qscheme::fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, bytes.data(), bytes.size()); }},
        {"fast::quantize_to_bytes, an error", [&] { (void)qscheme::fast::quantize_to_bytes(s, bad_shape, x.data(), x.size(), {}, bytes.data(), bytes.size()); }},
        {"fast::quantize + encode", [&] { (void)qscheme::fast::encode(qscheme::fast::quantize(s, shape, x).value()); }},
        {"fast::dequantize_from_bytes", [&] { (void)qscheme::fast::dequantize_from_bytes(s, shape, bytes.data(), bytes.size(), qscheme::Profile::exact, out.data(), out.size()); }},
        {"fast::decode + dequantize", [&] { (void)qscheme::fast::dequantize(qscheme::fast::decode(s, shape, bytes).value()); }},
        {"reference::quantize + encode", [&] { (void)qscheme::reference::encode(qscheme::reference::quantize(s, shape, x).value()); }},
        {"reference::decode + dequantize", [&] { (void)qscheme::reference::dequantize(qscheme::reference::decode(s, shape, bytes).value()); }},
        {"qscheme_fast_quantize", [&] { (void)qscheme_fast_quantize(text, shape.data(), 1, x.data(), x.size(), nullptr, bytes.data(), bytes.size(), &len, &idx); }},
        {"qscheme_fast_dequantize", [&] { (void)qscheme_fast_dequantize(text, shape.data(), 1, bytes.data(), bytes.size(), 0, out.data(), out.size(), &len, &idx); }},
    };
    for (const auto& [name, call] : calls) {
      BOOST_TEST_CONTEXT(text << ": " << name) {
        _mm_setcsr(csr);
        SetX87Control(cw);
        call();
        const std::uint32_t csr_after = _mm_getcsr();
        const std::uint16_t cw_after = X87Control();
        Reset();
        BOOST_TEST(csr_after == csr);
        BOOST_TEST(cw_after == cw);
      }
    }
  }
#else
  BOOST_TEST_MESSAGE("x86-64 only");
#endif
}

// Tensors large enough to be split across threads (fast::threads() = 2): the workers inherit the
// environment the entry point set, not the caller's.
BOOST_AUTO_TEST_CASE(worker_threads_compute_in_the_default_environment_too) {
#if defined(__x86_64__)
  Reset();
  const unsigned was = qscheme::fast::threads();
  BOOST_REQUIRE(qscheme::fast::set_threads(2).ok());
  std::vector<float> x;
  for (std::uint32_t k = 0; k < 64; ++k) {
    const auto part = Input(100 + k);
    x.insert(x.end(), part.begin(), part.end());
  }
  for (const char* text : {"nvfp4", "mxfp8", "q8s:block[32]=f32"}) {
    BOOST_TEST_CONTEXT(text << ", " << x.size() << " elements on 2 threads under FTZ and DAZ") {
      const Scheme s = qscheme::parse_scheme(text).value();
      const std::vector<std::uint64_t> shape{x.size()};
      const auto q = qscheme::reference::quantize(s, shape, x).value();
      const auto want = qscheme::reference::encode(q).value();
      const auto want_dq = qscheme::f32_bits(qscheme::reference::dequantize(q).value());
      std::vector<std::uint8_t> got(want.size()), got_single(want.size());
      std::vector<float> dq(x.size());
      _mm_setcsr(_mm_getcsr() | 0x8040u);
      const bool ok =
          qscheme::fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, got.data(), got.size()).ok() &&
          qscheme::fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, got_single.data(), got_single.size(),
                                           qscheme::fast::OutputPolicy::single_pass)
              .ok() &&
          qscheme::fast::dequantize_from_bytes(s, shape, want.data(), want.size(), qscheme::Profile::exact, dq.data(), dq.size())
              .ok();
      Reset();
      BOOST_TEST(ok);
      BOOST_TEST((got == want && got_single == want));
      BOOST_TEST((qscheme::f32_bits(dq) == want_dq));
    }
  }
  BOOST_REQUIRE(qscheme::fast::set_threads(was).ok());
#else
  BOOST_TEST_MESSAGE("x86-64 only");
#endif
}
