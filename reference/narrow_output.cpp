// reference::dequantize_16: dequantize's f32 values rounded once more to f16 or bf16, as ONNX's
// DequantizeLinear computes a float16 or bfloat16 output (docs/SEMANTICS.md section 16).
#include "reference/minifloat.hpp"
#include "reference/reference.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::reference {

std::uint16_t narrow_f32(float y, OutputDtype d) {
  const Format f = d == OutputDtype::bf16 ? Format::bf16 : Format::f16;
  const std::uint32_t bits = f32_bits(y);
  const bool negative = (bits >> 31) != 0;
  const std::uint32_t sign = negative ? sign_bit(f) : 0;
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {
    // NaN stays a quiet NaN of its sign (numpy's and ml_dtypes' casts keep the sign).
    return static_cast<std::uint16_t>(sign | (f == Format::f16 ? 0x7E00u : 0x7FC0u));
  }
  if (magnitude == 0x7F800000u) return static_cast<std::uint16_t>(sign | (f == Format::f16 ? 0x7C00u : 0x7F80u));
  const Magnitude m = code_magnitude(Format::f32, magnitude);
  const Quotient q{Integer(m.mant), Integer(1), m.exp2};
  return static_cast<std::uint16_t>(round_to_format(f, negative, q, RoundMode::half_even, Overflow::infinity));
}

Result<std::vector<std::uint16_t>> dequantize_16(const QuantizedTensor& q, OutputDtype d) {
  if (d == OutputDtype::f32) {
    return Status(ErrorCode::invalid_argument, "dequantize_16 writes f16 or bf16; dequantize gives f32");
  }
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  auto y = dequantize(q);
  if (!y) return y.status();
  std::vector<std::uint16_t> out(y->size());
  for (std::size_t i = 0; i < y->size(); ++i) out[i] = narrow_f32((*y)[i], d);
  return out;
}

}  // namespace qscheme::reference
