// dequantize's 16-bit outputs (ONNX DequantizeLinear with a float16 scale or output_dtype,
// docs/SEMANTICS.md section 16): the f32 values of dequantize rounded once more, to f16 or bf16.
#pragma once

#include <cstdint>
#include <vector>

#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast {

// The bit patterns of dequantize(q) rounded to nearest-even d (f16 or bf16). invalid-argument
// for d = f32 (that is dequantize), then dequantize's errors.
Result<std::vector<std::uint16_t>> dequantize_16(const QuantizedTensor& q, OutputDtype d);

}  // namespace qscheme::fast
