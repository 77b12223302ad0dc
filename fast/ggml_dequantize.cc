// dequantize_from_bytes under a point of the rule space, in either byte format: Burn's layout as
// the profile its point reads as (dequantize.cc), or through decode where the point's patterns are
// wider than a profile's; ggml's blocks through the fused block kernel (kernels::dequant_ggml),
// chunks of blocks over the threads, else decode and the i32 path, which report every error.
#include <atomic>

#include "fast/fast.hpp"
#include "fast/ggml_blocks.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/points.hpp"
#include "fast/support/parallel.hpp"
#include "fast/tensor_checks.hpp"
#include "scheme/errors.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::fast {
namespace {

Status elements_fit(const Layout& l, std::size_t n) {
  if (n == l.elements) return {};
  return Status(ErrorCode::size_mismatch, "out has room for " + std::to_string(n) + " values, the shape has " +
                                              std::to_string(l.elements) + " elements");
}

// decode, then the i32 path: every error in the reference's order.
Status through_decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes, const Rules& rules,
                      ByteFormat format, float* out, std::size_t n) {
  const Result<QuantizedTensor> q = decode(scheme, shape, bytes, rules, format);
  if (!q) return q.status();
  return dequantize_into(*q, out, n);
}

}  // namespace

Status dequantize_from_bytes(const Scheme& scheme, Shape shape, const std::uint8_t* bytes, std::size_t len,
                             const Rules& rules, ByteFormat format, float* out, std::size_t n, OutputPolicy policy) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  const Result<detail::StoredReading> r = detail::stored_reading(rules, scheme);
  if (!r) return r.status();
  const std::span<const std::uint8_t> in(bytes, len);
  if (format == ByteFormat::burn) {
    if (!r->wider()) return dequantize_from_bytes(scheme, shape, bytes, len, r->profile, out, n, policy);
    const Result<Layout> l = layout_for_bytes(scheme, shape, len);
    if (!l) return l.status();
    QSCHEME_RETURN_IF_ERROR(elements_fit(*l, n));
    return through_decode(scheme, shape, in, rules, format, out, n);
  }
  const Result<GgmlLayout> g = ggml_layout(scheme, shape);
  if (!g) return g.status();
  if (len != g->total_bytes) return errors::ggml_byte_count(len, g->blocks, g->block_bytes, g->total_bytes);
  if (n != g->blocks * kGgmlBlockCodes) {
    return Status(ErrorCode::size_mismatch, "out has room for " + std::to_string(n) + " values, the shape has " +
                                                std::to_string(g->blocks * kGgmlBlockCodes) + " elements");
  }
  // Burn's zero scale reads as 0.1: the i32 path's.
  if (r->profile == Profile::burn) return through_decode(scheme, shape, in, rules, format, out, n);
  const kernels::Kernels& kf = kernels::Get();
  kernels::GgmlSpec spec;
  spec.nibbles = g->nibbles;
  spec.lo = detail::code_range(scheme.value, *r).lo;
  spec.signed_scales = r->signed_scales;
  spec.inf_scales = r->inf_scales;
  // Chunks of blocks, each thread's cut into pieces whose values stay in L1 before they are stored.
  constexpr std::uint64_t kPiece = 64;
  std::atomic<bool> failed{false};
  auto pass = [&](float* dst) {
    detail::parallel_chunks(g->blocks, 1, g->blocks * kGgmlBlockCodes, [&](std::uint64_t b0, std::uint64_t b1) {
      for (std::uint64_t b = b0; b < b1 && !failed.load(std::memory_order_relaxed); b += kPiece) {
        const std::uint64_t cnt = std::min(kPiece, b1 - b);
        if (!kf.dequant_ggml(bytes + b * g->block_bytes, cnt, spec, dst ? dst + b * kGgmlBlockCodes : nullptr)) {
          failed = true;
        }
      }
    });
  };
  // untouched_on_error: every block checked before the first value is written.
  if (policy == OutputPolicy::untouched_on_error) pass(nullptr);
  if (!failed.load()) pass(out);
  // Only single_pass gets here with bad bytes after writing; out is then unspecified (fast.hpp).
  if (failed.load()) return through_decode(scheme, shape, in, rules, format, out, n);
  return {};
}

}  // namespace qscheme::fast
