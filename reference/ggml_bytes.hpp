// ggml's own blocks (scheme/byte_format.hpp) for reference::encode / decode: block_q8_0 and
// block_q4_0, one after the other along the innermost dim, each a little-endian f16 scale and
// then its 32 codes (int8, or offset-binary nibbles: byte j = code j + 8 | (code j + 16 + 8) << 4).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scheme/quantized.hpp"
#include "scheme/status.hpp"
#include "scheme/validate.hpp"

namespace qscheme::reference {

// The blocks of q. Errors: ggml_layout's, then encode's checks of the stored fields.
Result<std::vector<std::uint8_t>> encode_ggml(const QuantizedTensor& q);

// The tensor the blocks hold, q's scheme and profile or rules kept. Errors: ggml_layout's,
// size-mismatch for a byte count the layout does not have, then in byte order each block's
// scale (corrupt-bytes, index = block) and codes (corrupt-bytes, index = element) that q's rules
// cannot produce.
Result<QuantizedTensor> decode_ggml(QuantizedTensor q, Shape shape, std::span<const std::uint8_t> bytes);

}  // namespace qscheme::reference
