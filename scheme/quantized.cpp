#include "scheme/quantized.hpp"

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
  if (s == "exact") return Profile::exact;
  if (s == "burn") return Profile::burn;
  if (s == "onnx") return Profile::onnx;
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
