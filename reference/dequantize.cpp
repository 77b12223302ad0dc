// reference::dequantize: every stored field is checked before anything is computed, so a
// corrupt tensor is an error, never a NaN.
#include <string>

#include "reference/calibrate.hpp"
#include "reference/check.hpp"
#include "reference/element.hpp"
#include "reference/reference.hpp"
#include "reference/scales.hpp"
#include "reference/values.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::reference {

Result<std::vector<float>> dequantize(const QuantizedTensor& q) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  Result<Layout> layout = make_layout(q.scheme, q.shape);
  if (!layout) return layout.status();
  const Layout& l = *layout;
  QSCHEME_RETURN_IF_ERROR(check_stored(q, l));

  Result<std::vector<SignedScale>> effective = stored_scale_values(q.scheme, rules_of(q), {q.scale_bits, q.global_bits});
  if (!effective) return effective.status();
  const std::vector<std::uint64_t> block_of = block_of_elements(l);
  std::vector<float> out(q.codes.size());
  for (std::size_t n = 0; n < q.codes.size(); ++n) {
    // Affine: (q - z) * s, with q - z exact (at most 17 bits) and the product rounded once.
    const std::int32_t code = q.zero_points.empty() ? q.codes[n] : q.codes[n] - q.zero_points[block_of[n]];
    out[n] = dequantize_element(q.scheme.value, code, (*effective)[block_of[n]]);
  }
  return out;
}

}  // namespace qscheme::reference
