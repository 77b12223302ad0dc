// The reference engine: the specification in code. Exact arithmetic (Boost.Multiprecision),
// one explicit, named rounding per stored quantity; docs/SEMANTICS.md states the rules this
// implements. Written to be read and trusted, not to be fast.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference/values.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::reference {

// Quantizes row-major f32 `x` of `shape` under `scheme`. Errors: every validate() error,
// size-mismatch (x.size() != element count), non-finite-input (index = first bad element),
// invalid-scale / zero-scale-nonzero-input / size-mismatch for given scales, unsupported-profile
// (a profile that does not define the request: burn with absmean over two levels, or where
// Burn's f32 arithmetic overflows). The order of the checks is in docs/SEMANTICS.md section 1.
Result<QuantizedTensor> quantize(const Scheme& scheme, Shape shape, std::span<const float> x,
                                 const QuantizeOptions& options = {});

// Dequantizes under q.profile. Errors: validate() errors, size-mismatch, corrupt-bytes for a code
// or scale bit pattern the scheme cannot hold, unsupported-profile when burn's f32(g * s_j)
// overflows. A product past f32 max gives +-inf (IEEE), by design (docs/SEMANTICS.md section 6).
Result<std::vector<float>> dequantize(const QuantizedTensor& q);

// Serialized bytes in Burn's layout: [values][block or tensor scales][f32 global].
Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q);
// Inverse of encode; checks the length against scheme and shape and every field (corrupt-bytes,
// size-mismatch), never reads past `bytes`. The profile is not part of the bytes.
Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               Profile profile = Profile::exact);

}  // namespace qscheme::reference
