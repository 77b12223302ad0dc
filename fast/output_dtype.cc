#include "fast/output_dtype.hpp"

#include <string>

#include "scheme/layout.hpp"

namespace qscheme::fast {

Result<std::vector<std::uint16_t>> dequantize_16(const QuantizedTensor& q, OutputDtype d) {
  if (d == OutputDtype::f32) {
    return Status(ErrorCode::invalid_argument, "dequantize_16 writes f16 or bf16; dequantize gives f32");
  }
  if (auto l = make_layout(q.scheme, q.shape); !l) return l.status();
  return Status(ErrorCode::unsupported_engine, "the fast engine dequantizes to f32 only, not " +
                                                   std::string(to_string(d)) + "; use --engine reference");
}

}  // namespace qscheme::fast
