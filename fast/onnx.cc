#include "fast/onnx.h"

#include <cmath>
#include <string>
#include <vector>

#include "fast/kernels/scalar.h"
#include "scheme/errors.hpp"
#include "scheme/fp_env.hpp"
#include "scheme/layout.hpp"

namespace qscheme::fast::detail {
namespace {

// A scale the reference accepts: finite and >= 0 (-0 counts as 0).
bool acceptable(float v) {
  const std::uint32_t b = scalar::f32_bits(v);
  return (b & 0x7F800000u) != 0x7F800000u && (b >> 31 == 0 || (b & 0x7FFFFFFFu) == 0);
}

int fmt_of(Value v) { return v == Value::e4m3 ? 0 : (v == Value::e5m2 ? 1 : 2); }

}  // namespace

Status onnx_quantize(const Scheme& scheme, Shape shape, const float* x, std::size_t n, const QuantizeOptions& opt,
                     std::int32_t* codes, std::uint32_t* scale_bits) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  auto lr = layout_for_values(scheme, shape, n);
  if (!lr) return lr.status();
  const Layout& l = *lr;
  const bool two = scheme.two_level();
  if (opt.scales) {
    const GivenScales& g = *opt.scales;
    if (g.block.size() != l.scales) {
      return errors::given_scale_count(g.block.size(), l.scales);
    }
    if (g.global.has_value() != two) {
      return errors::given_global_presence(two);
    }
    for (std::size_t j = 0; j < g.block.size(); ++j) {
      if (!acceptable(g.block[j])) return errors::invalid_given_scale(j);
    }
    if (g.global && !acceptable(*g.global)) {
      return errors::invalid_given_global(g.block.size());
    }
  }
  if (!opt.scales || two || scheme.scale_dtype() != ScaleDtype::f32) {
    return errors::onnx_needs_given_f32_scales();
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return errors::non_finite_input(i);
  }
  // The block of every element (scheme/layout.hpp's numbering), in one walk that stops at the
  // first non-zero element of a block with a zero scale: that element names the error.
  const std::vector<float>& s = opt.scales->block;
  std::vector<std::uint64_t> block_of(n);
  const std::uint64_t bad = find_element(l, [&](std::uint64_t e, std::uint64_t b) {
    block_of[e] = b;
    return s[b] == 0.0f && x[e] != 0.0f;
  });
  if (bad != l.elements) return errors::zero_scale_nonzero_input(block_of[bad], bad);
  for (std::size_t j = 0; j < l.scales; ++j) scale_bits[j] = scalar::f32_bits(s[j] == 0.0f ? 0.0f : s[j]);

  const ValueInfo& vi = info(scheme.value);
  // Host f32 arithmetic is IEEE round-to-nearest-even here (fp_env above), as ONNX's float32
  // division is, with subnormal quotients kept.
  for (std::size_t i = 0; i < n; ++i) {
    const float e = s[block_of[i]];
    if (e == 0.0f) {  // zero block (x is +-0): the zero of x's sign, e2m1 always +0 (as the reference)
      const bool sign = vi.is_float && std::signbit(x[i]) && scheme.value != Value::e2m1;
      codes[i] = sign ? scalar::kMini[fmt_of(scheme.value)].sign : 0;
      continue;
    }
    const float t = x[i] / e;  // one IEEE f32 division, overflow to +-inf
    if (!vi.is_float) {
      const float r = std::nearbyint(t);  // ties to even under FE_TONEAREST; inf stays inf
      codes[i] = r <= static_cast<float>(vi.lo) ? vi.lo : (r >= static_cast<float>(vi.hi) ? vi.hi : static_cast<std::int32_t>(r));
    } else if (scheme.value == Value::e2m1 && t == 0.0f) {
      codes[i] = 0;  // ONNX's fp4 path adds the zero point: -0 + 0 = +0
    } else {
      codes[i] = scalar::mini_encode(static_cast<double>(t), std::signbit(t), fmt_of(scheme.value));
    }
  }
  return {};
}

}  // namespace qscheme::fast::detail
