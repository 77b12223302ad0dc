// reference::quantize: checks in a fixed order (docs/SEMANTICS.md "Errors"), then scales, then
// one code per element against its block's effective scale.
#include <string>

#include "reference/calibrate.hpp"
#include "reference/element.hpp"
#include "reference/reference.hpp"
#include "reference/scales.hpp"
#include "scheme/errors.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::reference {

Result<QuantizedTensor> quantize(const Scheme& scheme, Shape shape, std::span<const float> x,
                                 const QuantizeOptions& options) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  Result<Layout> layout = layout_for_values(scheme, shape, x.size());
  if (!layout) return layout.status();
  const Layout& l = *layout;
  StoredScales stored;
  if (options.scales) {
    Result<StoredScales> given = given_scales(scheme, l, *options.scales);
    if (!given) return given.status();
    stored = std::move(*given);
  } else if (options.profile == Profile::burn && options.calibration == Calibration::absmean &&
             scheme.two_level()) {
    return errors::burn_absmean_two_level();
  }
  // Profile onnx is ONNX QuantizeLinear: caller-supplied f32 scales, one level (docs/SEMANTICS.md).
  if (options.profile == Profile::onnx &&
      (!options.scales || scheme.two_level() || scheme.scale_dtype() != ScaleDtype::f32)) {
    return errors::onnx_needs_given_f32_scales();
  }
  for (std::size_t n = 0; n < x.size(); ++n) {
    if ((f32_bits(x[n]) & 0x7F800000u) == 0x7F800000u) {
      return errors::non_finite_input(n);
    }
  }

  const std::vector<std::uint64_t> block_of = block_of_elements(l);
  if (!options.scales) {
    const std::vector<Quotient> alpha = calibrate(l, x, block_of, options.calibration);
    if (options.profile == Profile::exact) {
      stored = exact_scales(scheme, alpha);
    } else {
      Result<StoredScales> burn = burn_scales(scheme, alpha);
      if (!burn) return burn.status();
      stored = std::move(*burn);
    }
  }
  Result<std::vector<Dyadic>> effective = effective_scales(scheme, options.profile, stored);
  if (!effective) return effective.status();
  const std::vector<Dyadic>& e = *effective;

  if (options.profile != Profile::burn) {
    // Only caller-supplied scales can be zero over non-zero data (a calibrated scale is zero
    // only for an all-zero block); there is no value to divide by, so it is an error. The first
    // such element in row-major order names it.
    for (std::size_t n = 0; n < x.size(); ++n) {
      const std::uint64_t b = block_of[n];
      if (e[b].is_zero() && (f32_bits(x[n]) & 0x7FFFFFFFu) != 0) {
        return errors::zero_scale_nonzero_input(b, n);
      }
    }
  }

  QuantizedTensor q;
  q.scheme = scheme;
  q.profile = options.profile;
  q.shape = l.shape;
  q.codes.resize(x.size());
  for (std::size_t n = 0; n < x.size(); ++n) {
    q.codes[n] = quantize_element(scheme.value, options.profile, x[n], e[block_of[n]]);
  }
  q.scale_bits = std::move(stored.bits);
  q.global_bits = stored.global_bits;
  return q;
}

}  // namespace qscheme::reference
