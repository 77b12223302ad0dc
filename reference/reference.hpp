// The reference engine: the specification in code. Exact arithmetic (Boost.Multiprecision),
// one explicit, named rounding per stored quantity; docs/SEMANTICS.md states the rules this
// implements. Written to be read and trusted, not to be fast.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference/values.hpp"
#include "scheme/byte_format.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::reference {

// Quantizes row-major f32 `x` of `shape` under `scheme`, with the rules options select (a
// profile, or options.rules: scheme/rules.hpp). Errors: every validate() error,
// size-mismatch (x.size() != element count), non-finite-input (index = first bad element),
// invalid-scale / zero-scale-nonzero-input / size-mismatch for given scales, unsupported-profile
// (rules that do not define the request: validate_rules, or Burn's f32 arithmetic overflowing).
// The order of the checks is in docs/SEMANTICS.md section 1.
Result<QuantizedTensor> quantize(const Scheme& scheme, Shape shape, std::span<const float> x,
                                 const QuantizeOptions& options = {});

// Dequantizes under q's rules (q.rules, else q.profile's). Errors: validate() errors,
// size-mismatch, corrupt-bytes for a code or scale bit pattern the rules cannot produce,
// unsupported-profile when an f32 product g * s_j overflows (burn). A product past f32 max gives
// +-inf (IEEE), by design (docs/SEMANTICS.md section 6).
Result<std::vector<float>> dequantize(const QuantizedTensor& q);

// Dequantizes to f16 or bf16 bit patterns as ONNX's DequantizeLinear does for a float16 scale
// (or output_dtype): dequantize's f32 value, then rounded to d nearest-even, overflow to +-inf,
// NaN to a quiet NaN of its sign (two roundings, docs/SEMANTICS.md section 16). The errors of
// dequantize; invalid-argument for d = f32 (that is dequantize).
Result<std::vector<std::uint16_t>> dequantize_16(const QuantizedTensor& q, OutputDtype d);
// One f32 rounded to d (f16 or bf16) as dequantize_16 rounds it.
std::uint16_t narrow_f32(float y, OutputDtype d);

// Serialized bytes in Burn's layout: [values][block or tensor scales][f32 global].
Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q);
// Inverse of encode; checks the length against scheme and shape and every field (corrupt-bytes,
// size-mismatch), never reads past `bytes`. The profile is not part of the bytes.
Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               Profile profile = Profile::exact);

// The same in either byte format (scheme/byte_format.hpp), under a point of the rule space: the
// patterns accepted are those `rules` can produce (scheme/rules.hpp code_allowed, scale_allowed).
// A profile's point gives that profile's tensor. ggml: ggml_layout's errors, then size-mismatch,
// then each block's scale and codes in byte order (corrupt-bytes).
Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               const Rules& rules, ByteFormat format = ByteFormat::burn);
// q's bytes in either format: Burn's as encode(q); ggml's blocks (ggml_layout's errors first).
Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q, ByteFormat format);

}  // namespace qscheme::reference
