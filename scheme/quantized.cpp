#include "scheme/quantized.hpp"

#include <cmath>
#include <iterator>

#include "scheme/errors.hpp"

namespace qscheme {

std::string_view to_string(Profile p) {
  switch (p) {
    case Profile::exact: return "exact";
    case Profile::burn: return "burn";
    case Profile::onnx: return "onnx";
  }
  return "?";
}
std::string_view to_string(Calibration c) { return c == Calibration::minmax ? "minmax" : "absmean"; }

std::optional<Profile> profile_from_string(std::string_view s) {
  for (Profile p : kAllProfiles) {
    if (to_string(p) == s) return p;
  }
  return std::nullopt;
}

std::string profile_list() {
  std::string out;
  constexpr std::size_t n = std::size(kAllProfiles);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) out += i + 1 == n ? " or " : ", ";
    out += to_string(kAllProfiles[i]);
  }
  return out;
}

std::string_view to_string(OutputDtype d) {
  switch (d) {
    case OutputDtype::f32: return "f32";
    case OutputDtype::f16: return "f16";
    case OutputDtype::bf16: return "bf16";
  }
  return "?";
}

std::optional<OutputDtype> output_dtype_from_string(std::string_view s) {
  for (OutputDtype d : kAllOutputDtypes) {
    if (to_string(d) == s) return d;
  }
  return std::nullopt;
}

std::optional<Calibration> calibration_from_string(std::string_view s) {
  if (s == "minmax") return Calibration::minmax;
  if (s == "absmean") return Calibration::absmean;
  return std::nullopt;
}

Rules rules_of(const QuantizeOptions& options) { return options.rules ? *options.rules : profile_rules(options.profile); }

Status check_global_amax(const Scheme& s, const Rules& r, const QuantizeOptions& options) {
  if (!options.global_amax) return {};
  if (!s.two_level()) {
    return errors::global_amax_misplaced(
        "a global amax sets the per-tensor scale of a two-level scheme, and this one has one level; give its "
        "scales (--scales) or let it calibrate");
  }
  if (options.scales) {
    return errors::global_amax_misplaced(
        "a global amax and given scales were both set; give the global amax alone (the block scales then follow "
        "the data) or both levels of scales");
  }
  if (s.affine()) {
    return errors::global_amax_unsupported("affine scales follow min and max, not max |x|; drop the global amax");
  }
  if (options.calibration != Calibration::minmax || r.statistic != rule::Statistic::magnitude) {
    return errors::global_amax_unsupported(
        "a global amax is a max |x|: it needs calibration minmax and statistic=magnitude");
  }
  if (r.two_level == rule::TwoLevel::burn || r.arithmetic == rule::Arithmetic::burn) {
    return errors::global_amax_unsupported(
        "the burn profile computes its global from the data only; use profile exact or recipe nvidia-nvfp4, or "
        "give both levels of scales");
  }
  const float a = *options.global_amax;
  if (!std::isfinite(a) || a < 0.0f) return errors::invalid_global_amax(a);  // -0 passes: it is 0
  return {};
}

Rules rules_of(const QuantizedTensor& q) { return q.rules ? *q.rules : profile_rules(q.profile); }

}  // namespace qscheme
