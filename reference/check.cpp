#include "reference/check.hpp"

#include "scheme/errors.hpp"

namespace qscheme::reference {

Status check_counts(const QuantizedTensor& q, const Layout& l) {
  if (q.codes.size() != l.elements) return errors::code_count(q.codes.size(), l.elements);
  if (q.scale_bits.size() != l.scales) return errors::scale_count(q.scale_bits.size(), l.scales);
  if (q.global_bits.has_value() != q.scheme.two_level()) return errors::global_presence(q.scheme.two_level());
  if (q.zero_points.size() != l.zero_points) return errors::zero_point_count(q.zero_points.size(), l.zero_points);
  return {};
}

Status check_scales(const QuantizedTensor& q) {
  const ScaleDtype d = q.scheme.scale_dtype();
  const Rules r = rules_of(q);
  for (std::size_t i = 0; i < q.scale_bits.size(); ++i) {
    if (!scale_allowed(r, d, q.scale_bits[i])) return errors::bad_scale(i, d, q.scale_bits[i]);
  }
  if (q.global_bits && scale_problem(ScaleDtype::f32, *q.global_bits)) {
    return errors::bad_global(q.scale_bits.size(), *q.global_bits);
  }
  return errors::check_stored_zero_points(q.scheme.value, q.zero_points);
}

Status check_codes(const QuantizedTensor& q) {
  const Rules r = rules_of(q);
  for (std::size_t i = 0; i < q.codes.size(); ++i) {
    if (!code_allowed(r, q.scheme.value, q.codes[i])) return errors::bad_code(i, q.scheme.value, q.codes[i]);
  }
  return {};
}

Status check_stored(const QuantizedTensor& q, const Layout& l) {
  QSCHEME_RETURN_IF_ERROR(check_counts(q, l));
  QSCHEME_RETURN_IF_ERROR(check_scales(q));
  return check_codes(q);
}

}  // namespace qscheme::reference
