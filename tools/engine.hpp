// The engines the command line can run. One row per engine: adding one (e.g. fast/) is one line
// in engines() in engine.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scheme/quantized.hpp"
#include "scheme/status.hpp"
#include "scheme/validate.hpp"

namespace qscheme::cli {

struct Engine {
  std::string_view name;
  Result<QuantizedTensor> (*quantize)(const Scheme&, Shape, std::span<const float>, const QuantizeOptions&);
  Result<std::vector<float>> (*dequantize)(const QuantizedTensor&);
};

inline constexpr std::string_view kDefaultEngine = "reference";

const std::vector<Engine>& engines();
// The engine called `name`; invalid-argument naming the choices when there is none.
Result<const Engine*> find_engine(std::string_view name);

}  // namespace qscheme::cli
