// Profile onnx in the fast engine: ONNX QuantizeLinear with zero point 0 and given f32 scales.
// A scalar loop on host IEEE f32 arithmetic, which is exactly what ONNX specifies (x / scale
// divided in float32, np.rint, clip; float8/float4 by a saturating round-to-nearest-even cast).
#pragma once

#include <cstddef>
#include <cstdint>

#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// Same checks, order and results as reference::quantize under Profile::onnx. codes and
// scale_bits as quantize_into. Precondition: opt.profile == Profile::onnx.
Status onnx_quantize(const Scheme& scheme, Shape shape, const float* x, std::size_t n, const QuantizeOptions& opt,
                     std::int32_t* codes, std::uint32_t* scale_bits);

}  // namespace qscheme::fast::detail
