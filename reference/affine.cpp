#include "reference/affine.hpp"

#include <string>

#include "reference/minifloat.hpp"
#include "reference/values.hpp"
#include "scheme/errors.hpp"

namespace qscheme::reference {
namespace {

// torch.finfo(torch.float32).eps, MinMaxObserver's floor under the scale.
const Rational kTorchEps = pow2(-23);

std::int32_t clamp_to(const Integer& v, std::int32_t lo, std::int32_t hi) {
  if (v < lo) return lo;
  if (v > hi) return hi;
  return v.convert_to<std::int32_t>();
}

}  // namespace

Status check_given_zero_points(const Scheme& s, const Layout& l, const GivenScales& given) {
  if (given.zero_points.empty()) return {};
  if (!s.affine() || given.zero_points.size() != l.zero_points) {
    return errors::given_zero_point_count(given.zero_points.size(), l.zero_points, s.affine());
  }
  const ValueInfo& vi = info(s.value);
  for (std::size_t j = 0; j < given.zero_points.size(); ++j) {
    const std::int32_t z = given.zero_points[j];
    if (z < vi.lo || z > vi.hi) return errors::invalid_given_zero_point(j, s.value, z);
  }
  return {};
}

Result<AffineScales> affine_scales(const Scheme& s, const Layout& l, std::span<const float> x,
                                   std::span<const std::uint64_t> block_of, const Rules& r, Calibration c,
                                   const std::optional<GivenScales>& given) {
  AffineScales out;
  const std::size_t blocks = static_cast<std::size_t>(l.scales);
  if (given) {
    Result<BlockScales> b = block_scales(s, l, x, block_of, r, c, given);
    if (!b) return b.status();
    out.scales = std::move(*b);
    out.zero_points = given->zero_points.empty() ? std::vector<std::int32_t>(blocks, 0) : given->zero_points;
    return out;
  }
  // min and max per block as f32 patterns compared by value; an empty block keeps 0 and 0.
  std::vector<float> lo(blocks, 0.0f);
  std::vector<float> hi(blocks, 0.0f);
  for (std::size_t n = 0; n < x.size(); ++n) {
    const std::uint64_t b = block_of[n];
    if (x[n] < lo[b]) lo[b] = x[n];
    if (x[n] > hi[b]) hi[b] = x[n];
  }
  const ValueInfo& vi = info(s.value);
  const ScaleDtype d = s.scale_dtype();
  const bool onnx = profile_of(r) == Profile::onnx;
  out.scales.stored.bits.resize(blocks);
  out.zero_points.resize(blocks);
  for (std::size_t j = 0; j < blocks; ++j) {
    // lo' <= 0 <= hi' (both exact f32 values): the range always holds 0, so 0 has a code.
    const Rational lo_v = to_rational(lo[j]);
    const Rational hi_v = to_rational(hi[j]);
    if (!onnx) {
      Rational u = (hi_v - lo_v) / Rational(vi.hi - vi.lo);
      if (u < kTorchEps) u = kTorchEps;
      const std::uint32_t bits = round_up_to_dtype(u, d);
      const Rational scale = to_rational(scale_of_pattern(d, bits).mag);
      out.scales.stored.bits[j] = bits;
      out.zero_points[j] = clamp_to(Integer(vi.lo) - round_half_even_to_int(lo_v / scale), vi.lo, vi.hi);
      continue;
    }
    float scale = 1.0f;
    if (hi[j] != lo[j]) {
      const float range = round_to_f32(hi_v - lo_v, Overflow::infinity);
      if (f32_bits(range) == 0x7F800000u) return errors::onnx_affine_range_overflow(j);
      scale = round_to_f32(to_rational(range) / Rational(vi.hi - vi.lo), Overflow::infinity);
      if (scale == 0.0f) return errors::onnx_affine_scale_underflow(j);
    }
    const float quotient = round_to_f32(lo_v / to_rational(scale), Overflow::infinity);
    const float initial = round_to_f32(Rational(vi.lo) - to_rational(quotient), Overflow::infinity);
    // clamp, then rint (ties to even); the clamp keeps the value finite and in range.
    Rational z = to_rational(initial);
    if (z < vi.lo) z = vi.lo;
    if (z > vi.hi) z = vi.hi;
    out.scales.stored.bits[j] = f32_bits(scale);
    out.zero_points[j] = round_half_even_to_int(z).convert_to<std::int32_t>();
  }
  Result<std::vector<SignedScale>> e = stored_scale_values(s, r, out.scales.stored);
  if (!e) return e.status();
  out.scales.code_scale = std::move(*e);
  return out;
}

}  // namespace qscheme::reference
