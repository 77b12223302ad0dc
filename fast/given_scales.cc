// fast::given_scales: a quantized tensor's stored scales handed back as given scales.
#include <cstdint>

#include "fast/exact_scale.h"
#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "scheme/errors.hpp"

namespace qscheme::fast {

Result<GivenScales> given_scales(const QuantizedTensor& q) {
  auto l = make_layout(q.scheme, q.shape);
  if (!l) return l.status();
  if (q.scale_bits.size() != l->scales) return errors::scale_count(q.scale_bits.size(), l->scales);
  const bool two = q.scheme.two_level();
  if (q.global_bits.has_value() != two) return errors::global_presence(two);
  if (q.zero_points.size() != l->zero_points) return errors::zero_point_count(q.zero_points.size(), l->zero_points);
  GivenScales g;
  g.block.resize(l->scales);
  // Every stored pattern's value is an f32 value (f16, bf16, ue8m0 down to 2^-127, ue4m3), so
  // each given scale is the stored one exactly and rounds up to the same pattern.
  const ScaleDtype sd = q.scheme.scale_dtype();
  const std::size_t bad =
      kernels::Get().scale_values_from_bits(q.scale_bits.data(), l->scales, static_cast<int>(sd), g.block.data());
  if (bad != l->scales) return errors::bad_scale(bad, sd, q.scale_bits[bad]);
  if (two) {
    double v = 0;
    if (!detail::scale_from_bits(*q.global_bits, ScaleDtype::f32, &v)) return errors::bad_global(l->scales, *q.global_bits);
    g.global = static_cast<float>(v);
  }
  QSCHEME_RETURN_IF_ERROR(errors::check_stored_zero_points(q.scheme.value, q.zero_points));
  g.zero_points = q.zero_points;
  return g;
}

}  // namespace qscheme::fast
