// The kernel fuzzing kit (kit/kit.hpp) without a fuzzer: the target is checked once with errors
// that say what to set, every byte string is a case, and run_case reports a kernel that breaks its
// recipe (with check's diagnosis) and nothing for one that follows it. The kernels here are
// written for this test from ggml's scalar q8_0 (recipe ggml-q8_0: d = amax / 127, codes
// roundf(x * (1 / d)) into int8, d stored as f16) and TransformerEngine's NVFP4 reference
// quantizer with its amax input (recipe nvidia-nvfp4), not from qscheme.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kit/kit.hpp"
#include "scheme/ostream.hpp"

using namespace qscheme;

namespace {

enum class Bug { none, ties_to_even, truncated_scale };
Bug g_bug = Bug::none;

std::uint16_t f16_bits(float v) {
  const _Float16 h = static_cast<_Float16>(v);  // round to nearest even, inf past 65504
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

int q8_0_quantize(const float* x, std::uint64_t rows, std::uint64_t cols, std::uint8_t* out, std::size_t size) {
  if (cols % 32 || size != rows * cols / 32 * 34) return 7;
  for (std::uint64_t b = 0; b < rows * cols / 32; ++b, x += 32, out += 34) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    std::uint16_t stored = f16_bits(d);
    if (g_bug == Bug::truncated_scale) stored = static_cast<std::uint16_t>(f16_bits(d) - (d > 0 ? 1 : 0));
    out[0] = static_cast<std::uint8_t>(stored & 0xFF);
    out[1] = static_cast<std::uint8_t>(stored >> 8);
    for (int j = 0; j < 32; ++j) {
      const float t = x[j] * id;
      const float r = g_bug == Bug::ties_to_even ? std::nearbyint(t) : std::round(t);
      // ggml converts the rounded value to int8 as x86 does: through int32, whose conversion of
      // NaN, inf (1 / d overflows for a block of subnormals) or a value past int32 is INT32_MIN,
      // then the low byte.
      const std::int32_t i = r >= -2147483648.0f && r < 2147483648.0f ? static_cast<std::int32_t>(r) : INT32_MIN;
      out[2 + j] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(i) & 0xFF);
    }
  }
  return 0;
}

int q8_0_dequantize(const std::uint8_t* in, std::size_t size, std::uint64_t rows, std::uint64_t cols, float* out) {
  if (cols % 32 || size != rows * cols / 32 * 34) return 7;
  for (std::uint64_t b = 0; b < rows * cols / 32; ++b, in += 34, out += 32) {
    _Float16 h;
    std::memcpy(&h, in, 2);
    const float d = static_cast<float>(h);
    for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(static_cast<std::int8_t>(in[2 + j])) * d;
  }
  return 0;
}

int failing_quantize(const float*, std::uint64_t, std::uint64_t, std::uint8_t*, std::size_t) { return 5; }

// TransformerEngine's NVFP4 quantizer (reference_nvfp4.py) given the tensor's amax A, in f32:
// S = min(2688 / A, f32 max), stored g = 1 / S; per 16 elements v = min(a * f32(S * (1 / 6)),
// f32 max) to the nearest e4m3 (ties to the even pattern, saturating at 448), r = min(1 / (s *
// g), f32 max); codes of x * r clamped to +-6 by cast_to_fp4x2's thresholds, a zero product +0.
// Burn's layout: two codes a byte (the first in the low nibble), then the scales, then g.
bool g_ignore_amax = false;  // the bug: the tensor's own max |x| used instead of A

float e4m3_value(int c) {
  const int e = c >> 3, m = c & 7;
  return e == 0 ? std::ldexp(static_cast<float>(m) / 8, -6) : std::ldexp(1 + static_cast<float>(m) / 8, e - 7);
}

int e4m3_nearest_even(float v) {
  if (v >= 448) return 0x7E;
  int best = 0;
  for (int c = 1; c <= 0x7E; ++c) {
    const float d = std::fabs(e4m3_value(c) - v), b = std::fabs(e4m3_value(best) - v);
    if (d < b || (d == b && c % 2 == 0)) best = c;
  }
  return best;
}

int e2m1_code(float t) {
  const float a = std::min(std::fabs(t), 6.0f);
  const int m = a <= 0.25f ? 0 : a < 0.75f ? 1 : a <= 1.25f ? 2 : a < 1.75f ? 3 : a <= 2.5f ? 4 : a < 3.5f ? 5 : a <= 5 ? 6 : 7;
  return t == 0 ? 0 : (std::signbit(t) ? 8 : 0) | m;
}

int nvfp4_quantize_with_amax(const float* x, std::uint64_t rows, std::uint64_t cols, float amax, std::uint8_t* out,
                             std::size_t size) {
  const std::uint64_t n = rows * cols, blocks = n / 16;
  if (cols % 16 || size != n / 2 + blocks + 4) return 7;
  float a_tensor = amax;
  if (g_ignore_amax) {
    a_tensor = 0;
    for (std::uint64_t i = 0; i < n; ++i) a_tensor = std::max(a_tensor, std::fabs(x[i]));
  }
  const float S = std::min(2688.0f / a_tensor, FLT_MAX);
  const float g = 1.0f / S, mult = S * (1.0f / 6.0f);
  std::memset(out, 0, n / 2);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    float a = 0;
    for (int j = 0; j < 16; ++j) a = std::max(a, std::fabs(x[b * 16 + j]));
    const int s = e4m3_nearest_even(std::min(a * mult, FLT_MAX));
    out[n / 2 + b] = static_cast<std::uint8_t>(s);
    const float e = e4m3_value(s) * g;
    const float r = e == 0 ? FLT_MAX : std::min(1.0f / e, FLT_MAX);
    for (int j = 0; j < 16; ++j) {
      const std::uint64_t i = b * 16 + j;
      out[i / 2] = static_cast<std::uint8_t>(out[i / 2] | e2m1_code(x[i] * r) << (i % 2 ? 4 : 0));
    }
  }
  std::memcpy(out + n / 2 + blocks, &g, 4);
  return 0;
}

qscheme_kit_target nvfp4_amax_target() {
  qscheme_kit_target t{};
  t.recipe = "nvidia-nvfp4";
  t.quantize_with_global_amax = nvfp4_quantize_with_amax;
  return t;
}

qscheme_kit_target ggml_target() {
  qscheme_kit_target t{};
  t.recipe = "ggml-q8_0";
  t.quantize = q8_0_quantize;
  t.dequantize = q8_0_dequantize;
  return t;
}

kit::Target make(const qscheme_kit_target& fns) {
  auto t = kit::make_target(fns);
  BOOST_REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  return *t;
}

// The bytes that select shape [rows, 32 * blocks], seed 0 and edge-case tensor `input`.
std::vector<std::uint8_t> header(int rows, int blocks, int input) {
  return {static_cast<std::uint8_t>(rows - 1), static_cast<std::uint8_t>(blocks - 1), 0, 0, 0, 0,
          static_cast<std::uint8_t>(input)};
}

// The findings over every edge-case tensor of a few shapes.
std::vector<kit::Finding> findings(const kit::Target& t) {
  std::vector<kit::Finding> out;
  for (int rows : {1, 3}) {
    for (int blocks : {1, 4}) {
      for (int input = 0; input < 32; ++input) {
        const auto c = kit::make_case(t, header(rows, blocks, input));
        BOOST_REQUIRE(c.has_value());
        if (auto f = kit::run_case(t, *c)) out.push_back(*f);
      }
    }
  }
  return out;
}

void expect_error(qscheme_kit_target fns, const std::string& part) {
  auto t = kit::make_target(fns);
  BOOST_REQUIRE(!t.ok());
  BOOST_TEST(t.status().code() == ErrorCode::invalid_argument);
  BOOST_TEST(t.status().message().find(part) != std::string::npos, t.status().message());
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_target_that_cannot_run_is_refused_with_what_to_set) {
  qscheme_kit_target t = ggml_target();
  t.recipe = nullptr;
  expect_error(t, "qscheme recipes");
  t.recipe = "ggml-q9_0";
  expect_error(t, "ggml-q8_0");  // the error lists the recipes
  t = ggml_target();
  t.scheme = "q4_0";
  expect_error(t, "reproduces q8_0");  // the schemes the recipe reproduces
  t = ggml_target();
  t.quantize = nullptr;
  t.dequantize = nullptr;
  expect_error(t, "no kernel");
  t = ggml_target();
  t.quantize_with_global_amax = nvfp4_quantize_with_amax;
  expect_error(t, "two-level");
  t = ggml_target();
  t.max_cols = 16;
  expect_error(t, "less than one block");
}

BOOST_AUTO_TEST_CASE(every_byte_string_is_a_case_of_whole_blocks) {
  const kit::Target t = make(ggml_target());
  const auto empty = kit::make_case(t, {});
  BOOST_REQUIRE(empty.has_value());
  BOOST_TEST((empty->shape == std::vector<std::uint64_t>{1, 32}));
  auto bytes = header(4, 8, 3);
  // Element 40 set to 2.5, and an infinity that is not kept.
  for (float v : {2.5f, INFINITY}) {
    bytes.push_back(40);
    bytes.push_back(0);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + 4);
  }
  const auto c = kit::make_case(t, bytes);
  BOOST_REQUIRE(c.has_value());
  BOOST_TEST((c->shape == std::vector<std::uint64_t>{4, 256}));
  BOOST_TEST(c->x.size() == 1024u);
  BOOST_TEST(c->x[40] == 2.5f);
  BOOST_TEST(c->overwritten == 1u);
  for (float v : c->x) BOOST_TEST_REQUIRE(std::isfinite(v));
  BOOST_TEST(kit::describe(*c).find("shape [4, 256]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_kernel_that_follows_its_recipe_has_no_finding) {
  g_bug = Bug::none;
  const auto f = findings(make(ggml_target()));
  BOOST_TEST(f.empty(), (f.empty() ? "" : f[0].kernel + ": " + f[0].report));
}

BOOST_AUTO_TEST_CASE(ties_rounded_to_even_are_found_and_named) {
  g_bug = Bug::ties_to_even;
  const auto f = findings(make(ggml_target()));
  g_bug = Bug::none;
  BOOST_REQUIRE(!f.empty());
  BOOST_TEST(f[0].kernel == "quantize");
  BOOST_TEST(f[0].report.find("DIFFERS from recipe ggml-q8_0") != std::string::npos, f[0].report);
  // Named as the recipe that rounds ties to even (on ties the rest of its rules agree), or as
  // the one rule changed.
  const bool named = f[0].report.find("ggml-q8_0-x86") != std::string::npos ||
                     f[0].report.find("ties=half-even") != std::string::npos;
  BOOST_TEST(named, f[0].report);
}

BOOST_AUTO_TEST_CASE(a_scale_stored_one_pattern_low_is_found) {
  g_bug = Bug::truncated_scale;
  const auto f = findings(make(ggml_target()));
  g_bug = Bug::none;
  BOOST_REQUIRE(!f.empty());
  BOOST_TEST(f[0].report.find("scales:") != std::string::npos, f[0].report);
}

BOOST_AUTO_TEST_CASE(a_dequantize_kernel_is_held_to_the_reference_values) {
  qscheme_kit_target fns = ggml_target();
  fns.quantize = nullptr;
  fns.dequantize = [](const std::uint8_t* in, std::size_t size, std::uint64_t rows, std::uint64_t cols, float* out) {
    const int rc = q8_0_dequantize(in, size, rows, cols, out);
    out[rows * cols - 1] = -out[rows * cols - 1] + 1.0f;  // the last value wrong
    return rc;
  };
  const auto f = findings(make(fns));
  BOOST_REQUIRE(!f.empty());
  BOOST_TEST(f[0].kernel == "dequantize");
  BOOST_TEST(f[0].report.find("DIFFERS") != std::string::npos, f[0].report);
}

// Every amax the case bytes pick (the seed's high byte), over every edge-case tensor.
BOOST_AUTO_TEST_CASE(a_known_amax_kernel_is_checked_under_each_amax_the_cases_pick) {
  const kit::Target t = make(nvfp4_amax_target());
  std::vector<kit::Finding> found;
  std::size_t cases = 0;
  for (bool bug : {false, true}) {
    g_ignore_amax = bug;
    found.clear();
    for (int pick = 0; pick < 6; ++pick) {
      for (int input = 0; input < 32; ++input) {
        std::vector<std::uint8_t> bytes = header(2, 3, input);
        bytes[5] = static_cast<std::uint8_t>(pick);
        const auto c = kit::make_case(t, bytes);
        BOOST_REQUIRE(c.has_value());
        if (auto f = kit::run_case(t, *c)) found.push_back(*f);
        cases += !bug;
      }
    }
    if (!bug) BOOST_TEST(found.empty(), (found.empty() ? "" : found[0].kernel + ": " + found[0].report));
  }
  g_ignore_amax = false;
  BOOST_TEST(cases == 192u);
  BOOST_REQUIRE(!found.empty());
  BOOST_TEST(found[0].kernel == "quantize_with_global_amax");
  BOOST_TEST(found[0].report.find("DIFFERS from recipe nvidia-nvfp4") != std::string::npos, found[0].report);
}

BOOST_AUTO_TEST_CASE(a_kernel_that_returns_an_error_is_a_finding) {
  qscheme_kit_target fns = ggml_target();
  fns.quantize = failing_quantize;
  const kit::Target t = make(fns);
  const auto c = kit::make_case(t, header(1, 1, 0));
  const auto f = kit::run_case(t, *c);
  BOOST_REQUIRE(f.has_value());
  BOOST_TEST(f->report.find("returned 5") != std::string::npos, f->report);
}
