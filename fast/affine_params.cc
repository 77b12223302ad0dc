#include "fast/affine_params.hpp"

#include <algorithm>
#include <cmath>

#include "fast/kernels/scalar.h"

namespace qscheme::fast::detail {
namespace {

// The sign of c * W - (s + t), where s + t is the exact range (TwoSum) and c a grid value: c * W
// is exact in f64 (c has at most 24 significant bits, W at most 16). Where c * W != s the sign is
// that of c * W - s, since |t| is at most half the spacing of f64 values next to s (a quarter
// below a power of two) and c * W is an f64 value itself; where c * W == s, that of -t.
int compare_to_range(double c, double W, double s, double t) {
  const double p = c * W;
  if (p != s) return p < s ? -1 : 1;
  return t > 0 ? -1 : (t < 0 ? 1 : 0);
}

}  // namespace

AffineBlock exact_affine_block(float lo, float hi, std::int32_t a, std::int32_t b, const Grid& grid, ScaleDtype d) {
  // lo' <= 0 <= hi' (both f32 values): 0 always has a code.
  const double lo_p = lo < 0 ? lo : 0.0, hi_p = hi > 0 ? hi : 0.0;
  const double W = static_cast<double>(b) - static_cast<double>(a);
  // hi' - lo' exactly as s + t (Knuth's TwoSum; two f32 of up to 277 bits apart need not fit one f64).
  const double s = hi_p - lo_p;
  const double bv = s - hi_p;
  const double t = (hi_p - (s - bv)) + (-lo_p - bv);
  // s / W is within 2^-52 of (hi' - lo') / W, far below the grid's spacing: the least grid value
  // at or above the range over W is the estimate's round-up or a neighbour, decided exactly.
  double c = grid_round_up(s / W, grid);
  while (c < grid.max && compare_to_range(c, W, s, t) < 0) c = grid_next_up(c, grid);
  for (double p = 0; grid_prev(c, grid, &p) && compare_to_range(p, W, s, t) >= 0;) c = p;
  // torch.finfo(float32).eps under the scale; rounding up commutes with the max.
  c = std::max(c, grid_round_up(0x1p-23, grid));
  AffineBlock out;
  out.bits = scale_to_bits(c, d);
  out.scale = c;
  // lo' / c rounded by the f64 division: a boundary K/2 that matters has |K/2| <= b - a + 1/2 <
  // 2^16 and is missed by at least 2^-41 of it (lo' and c have at most 24 significant bits).
  const double z = static_cast<double>(a) - std::nearbyint(lo_p / c);
  out.zero_point = static_cast<std::int32_t>(std::clamp(z, static_cast<double>(a), static_cast<double>(b)));
  return out;
}

OnnxAffine onnx_affine_block(float lo, float hi, std::int32_t a, std::int32_t b, AffineBlock* out) {
  // Host f32 arithmetic, one IEEE rounding per step under the drivers' FpEnvGuard.
  const float lo_p = lo < 0 ? lo : 0.0f, hi_p = hi > 0 ? hi : 0.0f;
  float scale = 1.0f;
  if (hi_p != lo_p) {
    const float range = hi_p - lo_p;
    if (std::isinf(range)) return OnnxAffine::range_overflow;
    scale = range / static_cast<float>(b - a);
    if (scale == 0.0f) return OnnxAffine::scale_underflow;
  }
  const float initial = static_cast<float>(a) - lo_p / scale;
  const float z = std::clamp(initial, static_cast<float>(a), static_cast<float>(b));
  out->bits = scalar::f32_bits(scale);
  out->scale = scale;
  out->zero_point = static_cast<std::int32_t>(std::nearbyint(z));
  return OnnxAffine::ok;
}

}  // namespace qscheme::fast::detail
