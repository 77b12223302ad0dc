// reference::quantize: checks in a fixed order (docs/SEMANTICS.md section 1), then scales,
// then one code per element against its block's scale, all under the options' point of the rule
// space (a profile is one such point).
#include <string>

#include "reference/affine.hpp"
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
  if (options.scales) {
    QSCHEME_RETURN_IF_ERROR(check_given_scales(scheme, l, *options.scales));
    QSCHEME_RETURN_IF_ERROR(check_given_zero_points(scheme, l, *options.scales));
  }
  const Rules rules = rules_of(options);
  QSCHEME_RETURN_IF_ERROR(validate_rules(rules, scheme, options.calibration, options.scales.has_value()));
  QSCHEME_RETURN_IF_ERROR(check_global_amax(scheme, rules, options));
  for (std::size_t n = 0; n < x.size(); ++n) {
    if ((f32_bits(x[n]) & 0x7F800000u) == 0x7F800000u) return errors::non_finite_input(n);
  }

  const std::vector<std::uint64_t> block_of = block_of_elements(l);
  std::vector<std::int32_t> zero_points;
  Result<BlockScales> scales = [&]() -> Result<BlockScales> {
    if (!scheme.affine()) return block_scales(scheme, l, x, block_of, rules, options.calibration, options.scales,
                                                   options.global_amax);
    Result<AffineScales> a = affine_scales(scheme, l, x, block_of, rules, options.calibration, options.scales);
    if (!a) return a.status();
    zero_points = std::move(a->zero_points);
    return std::move(a->scales);
  }();
  if (!scales) return scales.status();
  const BlockScales& s = *scales;

  QuantizedTensor q;
  q.scheme = scheme;
  // A point that is a profile's is that profile (so equal requests give equal tensors).
  if (const std::optional<Profile> p = profile_of(rules)) {
    q.profile = *p;
  } else {
    q.rules = rules;
  }
  q.shape = l.shape;
  q.codes.resize(x.size());
  const Quotient no_amax{Integer(0), Integer(1), 0};
  for (std::size_t n = 0; n < x.size(); ++n) {
    const std::uint64_t b = block_of[n];
    Result<std::int32_t> code = quantize_element(scheme.value, rules, x[n], s.code_scale[b],
                                                 s.amax.empty() ? no_amax : s.amax[b],
                                                 zero_points.empty() ? 0 : zero_points[b]);
    if (!code) return code.status();
    q.codes[n] = *code;
  }
  q.scale_bits = s.stored.bits;
  q.global_bits = s.stored.global_bits;
  q.zero_points = std::move(zero_points);
  return q;
}

}  // namespace qscheme::reference
