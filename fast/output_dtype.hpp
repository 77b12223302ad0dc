// The fast engine's boundary for dequantize's output type: it writes f32 only. f16 and bf16
// output (ONNX DequantizeLinear with a float16 scale, docs/SEMANTICS.md section 16) is the
// reference engine's; here it is refused with unsupported-engine after the scheme and shape
// checks both engines share.
#pragma once

#include <cstdint>
#include <vector>

#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast {

// invalid-argument for d = f32 (that is dequantize), then make_layout's errors for q's scheme
// and shape, then unsupported-engine ("use --engine reference"); never a value.
Result<std::vector<std::uint16_t>> dequantize_16(const QuantizedTensor& q, OutputDtype d);

}  // namespace qscheme::fast
