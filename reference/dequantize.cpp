// reference::dequantize: every stored field is checked before anything is computed, so a
// corrupt tensor is an error, never a NaN.
#include <string>

#include "reference/calibrate.hpp"
#include "reference/element.hpp"
#include "reference/reference.hpp"
#include "reference/scales.hpp"
#include "reference/values.hpp"
#include "scheme/errors.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::reference {

Result<std::vector<float>> dequantize(const QuantizedTensor& q) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  Result<Layout> layout = make_layout(q.scheme, q.shape);
  if (!layout) return layout.status();
  const Layout& l = *layout;
  if (q.codes.size() != l.elements) return errors::code_count(q.codes.size(), l.elements);
  if (q.scale_bits.size() != l.scales) return errors::scale_count(q.scale_bits.size(), l.scales);
  if (q.global_bits.has_value() != q.scheme.two_level()) return errors::global_presence(q.scheme.two_level());
  const ScaleDtype d = q.scheme.scale_dtype();
  for (std::size_t j = 0; j < q.scale_bits.size(); ++j) {
    if (!is_valid_scale(d, q.scale_bits[j])) return errors::bad_scale(j, d, q.scale_bits[j]);
  }
  if (q.global_bits && !is_valid_scale(ScaleDtype::f32, *q.global_bits)) {
    return errors::bad_global(q.scale_bits.size(), *q.global_bits);
  }
  for (std::size_t n = 0; n < q.codes.size(); ++n) {
    if (!is_valid_code(q.scheme.value, q.codes[n])) return errors::bad_code(n, q.scheme.value, q.codes[n]);
  }

  Result<std::vector<Dyadic>> effective = effective_scales(q.scheme, q.profile, {q.scale_bits, q.global_bits});
  if (!effective) return effective.status();
  const std::vector<std::uint64_t> block_of = block_of_elements(l);
  std::vector<float> out(q.codes.size());
  for (std::size_t n = 0; n < q.codes.size(); ++n) {
    out[n] = dequantize_element(q.scheme.value, q.codes[n], (*effective)[block_of[n]]);
  }
  return out;
}

}  // namespace qscheme::reference
