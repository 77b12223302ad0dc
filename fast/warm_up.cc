// fast::warm_up(): a process's first calls, made when the host chooses rather than when its first
// tensor arrives (docs/PERFORMANCE.md, "First calls").
#include <cmath>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "fast/fast.hpp"
#include "scheme/byte_format.hpp"
#include "scheme/layout.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"

namespace qscheme::fast {
namespace {

// Four rows of 4096 (64 KiB of f32): every block extent the schemes below use divides a row, a
// per-axis scale has rows to cover, and each units stage takes units of its full size, so that
// the scratch it keeps per thread (fast/support/unit_scratch.hpp) is as large as a larger
// tensor's units need.
constexpr std::uint64_t kRows = 4;
constexpr std::uint64_t kCols = 4096;
constexpr std::size_t kGroup = 32;

// Besides the presets, the schemes deployments quantize to that no preset names: per-tensor and
// per-row int8 and uint8 (ONNX's and PyTorch's), f32 blocks (torch's per-group).
constexpr std::string_view kOtherSchemes[] = {
    "q8s",          "q8f",          "q8f:tensor=f32",         "q8f:block[32]=f32", "q4f:packed-u32(0):block[32]=f16",
    "u8",           "u8:affine",    "u8:affine:axis(1)=f32",  "q8f:affine",        "q8f:affine:block[32]=f32",
    "q8s:axis(1)=f32", "e4m3:tensor=f32",
};

// The values of a group whose block maximum is `top` that land where the kernels branch: the
// midpoints between neighbouring codes once the scale is 1 or a power of two (ties), their f32
// neighbours (the near-tie redo), and subnormal midpoints for the minifloats.
std::vector<float> midpoints(float top) {
  std::vector<float> v;
  auto grid = [&](int mantissa_bits, int lowest_exp, int highest_exp) {
    const int steps = 1 << mantissa_bits;
    for (int e = lowest_exp; e <= highest_exp; ++e) {
      for (int j = 0; j < steps; ++j) {
        const float m = std::ldexp(1.0f + (2.0f * static_cast<float>(j) + 1.0f) / (2.0f * static_cast<float>(steps)), e);
        if (m < top) v.push_back(m);  // the group's maximum stays its block's
      }
    }
    for (int j = 0; j < steps; ++j) {  // between the subnormals
      v.push_back(std::ldexp(2.0f * static_cast<float>(j) + 1.0f, lowest_exp - mantissa_bits - 1));
    }
  };
  if (top == 448.0f) {
    grid(3, -6, 8);  // e4m3
  } else if (top == 57344.0f) {
    grid(2, -14, 15);  // e5m2
  } else if (top == 6.0f) {
    v = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};  // e2m1
  } else {
    for (float k = 0; k + 1 <= top; ++k) v.push_back(k + 0.5f);  // integer kinds: 127, 7, 1
  }
  return v;
}

// 32-element groups, each one of the kinds' block maxima at its first and 17th element (so that
// blocks of 16 see it too) and that kind's midpoints around it, taken as they are, one f32 step
// below and one above, signs alternating, with a +0 and a -0; then a group of pseudo-random
// values, one of zeros (the zero-scale branch) and one constant group.
std::vector<float> warm_up_input() {
  constexpr float kTops[] = {127.0f, 7.0f, 1.0f, 448.0f, 57344.0f, 6.0f};
  std::vector<float> mids_of[std::size(kTops)];
  for (std::size_t t = 0; t < std::size(kTops); ++t) mids_of[t] = midpoints(kTops[t]);
  std::vector<float> x;
  x.reserve(kRows * kCols);
  std::uint32_t state = 12345;
  for (std::size_t g = 0; x.size() < kRows * kCols; ++g) {
    const std::size_t family = g % (std::size(kTops) + 3);
    if (family == std::size(kTops)) {
      for (std::size_t i = 0; i < kGroup; ++i) {
        state = state * 1664525u + 1013904223u;
        x.push_back(static_cast<float>(static_cast<std::int32_t>(state)) * 0x1p-29f);
      }
      continue;
    }
    if (family > std::size(kTops)) {
      const float c = family == std::size(kTops) + 1 ? 0.0f : -3.0f;
      x.insert(x.end(), kGroup, c);
      continue;
    }
    const float top = kTops[family];
    const std::vector<float>& mids = mids_of[family];
    for (std::size_t i = 0; i < kGroup; ++i) {
      float v = 0;
      if (i == 0 || i == kGroup / 2) {
        v = g % 2 ? -top : top;
      } else if (i == 1 || i == kGroup / 2 + 1) {
        v = i == 1 ? 0.0f : -0.0f;
      } else {
        const std::size_t k = (g * 7 + i) % (3 * mids.size());
        v = mids[k / 3];
        if (k % 3 == 1) v = std::nextafter(v, 0.0f);
        if (k % 3 == 2) v = std::nextafter(v, 2.0f * top);
        if (i % 2) v = -v;
      }
      x.push_back(v);
    }
  }
  return x;
}

// Every call the byte pipeline makes for (recipe, scheme) on x: quantize calibrated and over given
// scales, in both output policies, and dequantize the bytes in both. A call the recipe refuses
// (calibration under onnx and torch's, which take given scales only; a point the fast engine does
// not run on this scheme) is left unwarmed and not reported: none fails for a reason its real
// counterpart would not report itself.
void warm(const Recipe& r, const Scheme& s, std::span<const float> x) {
  constexpr std::uint64_t kShape[] = {kRows, kCols};
  const Shape shape(kShape);
  const auto total = total_bytes(s, shape, r.format);
  if (!total) return;
  std::vector<std::uint8_t> bytes(*total);
  std::vector<float> out(x.size());
  QuantizeOptions options = recipe_options(r);
  bool written = false;  // bytes the recipe reads back
  auto quantize_both = [&] {
    for (OutputPolicy p : {OutputPolicy::single_pass, OutputPolicy::untouched_on_error}) {
      written = quantize_to_bytes(s, shape, x.data(), x.size(), options, r.format, bytes.data(), bytes.size(), p).ok() ||
                written;
    }
  };
  quantize_both();
  // The given-scale kernels, over the scales the exact profile calibrates.
  const QuantizeOptions exact;
  if (auto q = quantize(s, shape, x, exact)) {
    if (auto given = given_scales(*q)) {
      options.scales = std::move(*given);
      quantize_both();
    }
  }
  if (!written) return;
  for (OutputPolicy p : {OutputPolicy::single_pass, OutputPolicy::untouched_on_error}) {
    (void)dequantize_from_bytes(s, shape, bytes.data(), bytes.size(), r.rules, r.format, out.data(), out.size(), p);
  }
}

}  // namespace

void warm_up() noexcept {
  try {
    const std::vector<float> x = warm_up_input();
    std::vector<Scheme> schemes;
    for (const Preset& p : presets()) {
      if (auto s = parse_scheme(p.name)) schemes.push_back(*s);
    }
    for (std::string_view text : kOtherSchemes) {
      if (auto s = parse_scheme(text)) schemes.push_back(*s);
    }
    for (const Recipe& r : recipes()) {
      for (const Scheme& s : schemes) {
        if (recipe_accepts(r, s)) warm(r, s, x);
      }
    }
  } catch (const std::exception&) {
    // Out of memory: whatever was warmed stays warm; the real calls report their own errors.
  }
}

}  // namespace qscheme::fast
