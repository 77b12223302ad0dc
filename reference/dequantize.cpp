// reference::dequantize: every stored field is checked before anything is computed, so a
// corrupt tensor is an error, never a NaN.
#include <string>

#include "reference/calibrate.hpp"
#include "reference/element.hpp"
#include "reference/reference.hpp"
#include "reference/scales.hpp"
#include "reference/values.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::reference {

Result<std::vector<float>> dequantize(const QuantizedTensor& q) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  using R = Result<std::vector<float>>;
  Result<Layout> layout = make_layout(q.scheme, q.shape);
  if (!layout) return layout.status();
  const Layout& l = *layout;
  if (q.codes.size() != l.elements) {
    return R(ErrorCode::size_mismatch, "the shape holds " + std::to_string(l.elements) +
                                           " element(s), but there are " + std::to_string(q.codes.size()) + " codes");
  }
  if (q.scale_bits.size() != l.scales) {
    return R(ErrorCode::size_mismatch, "the scheme and shape take " + std::to_string(l.scales) +
                                           " scale(s), but there are " + std::to_string(q.scale_bits.size()));
  }
  if (q.global_bits.has_value() != q.scheme.two_level()) {
    return R(ErrorCode::size_mismatch, q.scheme.two_level()
                                           ? "a two-level scheme needs a global scale, there is none"
                                           : "only a two-level scheme has a global scale, there is one");
  }
  const ScaleDtype d = q.scheme.scale_dtype();
  for (std::size_t j = 0; j < q.scale_bits.size(); ++j) {
    if (is_valid_scale(d, q.scale_bits[j])) continue;
    const Status why = scale_value(d, q.scale_bits[j]).status();
    return R(ErrorCode::corrupt_bytes, "scale " + std::to_string(j) + ": " + why.message(), j);
  }
  if (q.global_bits && !is_valid_scale(ScaleDtype::f32, *q.global_bits)) {
    const Status why = scale_value(ScaleDtype::f32, *q.global_bits).status();
    return R(ErrorCode::corrupt_bytes, "global scale: " + why.message(), q.scale_bits.size());
  }
  for (std::size_t n = 0; n < q.codes.size(); ++n) {
    if (is_valid_code(q.scheme.value, q.codes[n])) continue;
    const Status why = code_value(q.scheme.value, q.codes[n]).status();
    return R(ErrorCode::corrupt_bytes, "element " + std::to_string(n) + ": " + why.message(), n);
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
