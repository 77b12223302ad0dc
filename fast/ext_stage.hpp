// The extension stage of the fast engine: the schemes over qscheme's extension kinds (u8, u4, u2,
// i16, u16) and every affine scheme (zero points), on the affine kernel family (codes
// clamp(round(t) + z, lo, hi), values (q - z) * s; kernels/affine-inl.h). Schemes over Burn's
// kinds in sym mode, per-axis ones included, run on the Burn stages (quantize_units.cc,
// quantize_whole.cc); the drivers (quantize.cc, dequantize.cc, codec.cc) route by
// extension_stage(). docs/SEMANTICS-fast.md section 11 has why the results are the reference's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fast/fast.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// Whether the extension stage runs scheme s.
inline bool extension_stage(const Scheme& s) { return info(s.value).extension || s.affine(); }

// Where ext_quantize writes: a QuantizedTensor's arrays (codes, scale_bits, *global_bits for two
// levels, zero_points for affine mode), or Burn's bytes (bytes, bytes_size: the layout's
// total_bytes, checked after the layout as quantize_to_bytes promises).
struct ExtOutput {
  std::int32_t* codes = nullptr;
  std::uint32_t* scale_bits = nullptr;
  std::uint32_t* global_bits = nullptr;
  std::int32_t* zero_points = nullptr;
  std::uint8_t* bytes = nullptr;
  std::size_t bytes_size = 0;
};

// quantize_into / quantize_to_bytes of an extension_stage() scheme: the reference's checks in its
// order (layout and sizes, given scales, given zero points, the point's rules, non-finite input,
// then each scale step's own), then the codes. Under untouched_on_error nothing is written on
// error; under single_pass (and into the arrays) a data error may leave part of the output written.
Status ext_quantize(const Scheme& scheme, Shape shape, const float* x, std::size_t n, const QuantizeOptions& options,
                    OutputPolicy policy, const ExtOutput& out);

// dequantize_into of such a tensor (its checks are check_quantized's, tensor_checks.hpp).
Status ext_dequantize(const QuantizedTensor& q, float* out, std::size_t n);

// dequantize_from_bytes of such a scheme. Precondition: the layout's bytes and element counts
// match len and n (the caller checked them).
Status ext_dequantize_bytes(const Scheme& scheme, Shape shape, const Layout& l, const std::uint8_t* bytes,
                            std::size_t len, Profile profile, float* out, std::size_t n, OutputPolicy policy);

}  // namespace qscheme::fast::detail
