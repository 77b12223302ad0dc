#include "scheme/quantized.hpp"

#include <iterator>

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

Rules rules_of(const QuantizedTensor& q) { return q.rules ? *q.rules : profile_rules(q.profile); }

}  // namespace qscheme
