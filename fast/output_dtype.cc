#include "fast/output_dtype.hpp"

#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/support/parallel.hpp"

namespace qscheme::fast {

Result<std::vector<std::uint16_t>> dequantize_16(const QuantizedTensor& q, OutputDtype d) {
  if (d == OutputDtype::f32) {
    return Status(ErrorCode::invalid_argument, "dequantize_16 writes f16 or bf16; dequantize gives f32");
  }
  const Result<std::vector<float>> y = dequantize(q);
  if (!y) return y.status();
  std::vector<std::uint16_t> out(y->size());
  const kernels::Kernels& kf = kernels::Get();
  detail::parallel_chunks(out.size(), 1 << 14, out.size(), [&](std::uint64_t b, std::uint64_t e) {
    kf.narrow_f32(y->data() + b, e - b, d == OutputDtype::bf16, out.data() + b);
  });
  return out;
}

}  // namespace qscheme::fast
