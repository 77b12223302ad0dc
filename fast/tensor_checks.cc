#include "fast/tensor_checks.hpp"

#include <cmath>
#include <limits>

#include "fast/exact_scale.h"
#include "fast/kernels/dispatch.h"
#include "fast/points.hpp"
#include "fast/value_codes.hpp"
#include "scheme/errors.hpp"

namespace qscheme::fast::detail {

Result<Reading> reading_of(const QuantizedTensor& q) {
  auto l = make_layout(q.scheme, q.shape);
  if (!l) return l.status();
  const Result<StoredReading> r = q.rules ? stored_reading(*q.rules, q.scheme) : Result<StoredReading>(StoredReading{q.profile});
  if (!r) return r.status();
  return Reading{std::move(*l), r->profile, *r};
}

CodeRange code_range(Value v, const StoredReading& r) {
  if (r.full_range && !info(v).is_float) return {full_lo(v), full_hi(v), 0};
  return code_range(v);
}

bool read_scale(std::uint32_t bits, ScaleDtype d, const StoredReading& r, float* out) {
  const bool ieee = d == ScaleDtype::f32 || d == ScaleDtype::f16 || d == ScaleDtype::bf16;
  const std::uint32_t sign = d == ScaleDtype::f32 ? 0x80000000u : 0x8000u;
  if (!ieee || (d != ScaleDtype::f32 && bits > 0xFFFFu) || ((bits & sign) != 0 && !r.signed_scales)) {
    double v = 0;
    if (!scale_from_bits(bits, d, &v)) return false;
    *out = static_cast<float>(v);
    return true;
  }
  const std::uint32_t mag = bits & ~sign;
  const std::uint32_t inf = d == ScaleDtype::f32 ? 0x7F800000u : d == ScaleDtype::f16 ? 0x7C00u : 0x7F80u;
  float v = 0;
  if (mag == inf) {
    if (!r.inf_scales) return false;
    v = std::numeric_limits<float>::infinity();
  } else {
    double m = 0;
    if (!scale_from_bits(mag, d, &m)) return false;  // NaN
    v = static_cast<float>(m);
  }
  *out = (bits & sign) != 0 ? -v : v;
  return true;
}

Status bad_code(const QuantizedTensor& q, std::size_t i) { return errors::bad_code(i, q.scheme.value, q.codes[i]); }

Status scale_product_overflow(const StoredReading& r, const float* eb, std::size_t n) {
  if (r.profile != Profile::burn && !r.f32_product) return {};
  for (std::size_t j = 0; j < n; ++j) {
    if (std::isinf(eb[j])) {
      return r.profile == Profile::burn ? errors::burn_scale_product_overflow(j) : errors::f32_scale_product_overflow(j);
    }
  }
  return {};
}

Status check_quantized(const QuantizedTensor& q, const StoredReading& reading, const Layout& l, BigBuffer<float>* eb,
                       float* g, bool check_codes) {
  const Profile profile = reading.profile;
  const kernels::Kernels& kf = kernels::Get();
  if (q.codes.size() != l.elements) return errors::code_count(q.codes.size(), l.elements);
  if (q.scale_bits.size() != l.scales) return errors::scale_count(q.scale_bits.size(), l.scales);
  const bool two = q.scheme.two_level();
  if (q.global_bits.has_value() != two) return errors::global_presence(two);
  if (q.zero_points.size() != l.zero_points) return errors::zero_point_count(q.zero_points.size(), l.zero_points);
  const ScaleDtype sd = q.scheme.scale_dtype();
  BigBuffer<float> s(l.scales);  // every scale dtype's values are f32 values
  if (reading.signed_scales || reading.inf_scales) {
    for (std::size_t j = 0; j < l.scales; ++j) {
      if (!read_scale(q.scale_bits[j], sd, reading, &s[j])) return errors::bad_scale(j, sd, q.scale_bits[j]);
    }
  } else if (const std::size_t j = kf.scale_values_from_bits(q.scale_bits.data(), l.scales, static_cast<int>(sd), s.data());
             j != l.scales) {
    return errors::bad_scale(j, sd, q.scale_bits[j]);
  }
  double gv = 1.0;
  if (two && !scale_from_bits(*q.global_bits, ScaleDtype::f32, &gv)) {
    return errors::bad_global(l.scales, *q.global_bits);
  }
  QSCHEME_RETURN_IF_ERROR(errors::check_stored_zero_points(q.scheme.value, q.zero_points));
  const CodeRange cr = code_range(q.scheme.value, reading);
  const std::size_t bad =
      check_codes ? kf.first_invalid_code(q.codes.data(), q.codes.size(), cr.lo, cr.hi, cr.nan_mask) : q.codes.size();
  if (bad != q.codes.size()) return bad_code(q, bad);
  *g = 1.0f;
  if (reading.f32_product) {
    // product=f32: e_j = f32(s_j * g), an IEEE f32 product (inf where it overflows, which
    // dequantize reports: scale_product_overflow); values are then f32(value * e_j).
    const float gf = static_cast<float>(gv);
    for (std::size_t j = 0; j < l.scales; ++j) s[j] = gf * s[j];
  } else if (profile != Profile::burn) {
    // exact and onnx dequantize alike: f32_rne(value * s * g), which is f32(f32(value * s) * g)
    // as the first product is exact (SEMANTICS-fast.md section 4): f32 lanes suffice.
    if (two) *g = static_cast<float>(gv);
  } else {
    const float gf = static_cast<float>(gv);
    for (std::size_t j = 0; j < l.scales; ++j) {
      const float e = two ? gf * s[j] : s[j];
      s[j] = e == 0 ? 0.1f : e;
    }
  }
  *eb = std::move(s);
  return {};
}

}  // namespace qscheme::fast::detail
