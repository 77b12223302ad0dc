// ggml's blocks (scheme/byte_format.hpp: block_q8_0, block_q4_0) in the fast engine: one block's
// bytes from one-byte codes (the ggml sink's units, sinks.hpp), the blocks from i32 codes and
// scale patterns (encode, the sink's whole-tensor output), and back (decode) with the
// reference's checks in its order; the fused dequantize of blocks is in ggml_dequantize.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fast/points.hpp"
#include "scheme/byte_format.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// The 32 one-byte codes (two's complement) of a block into its bytes after the scale: as they
// are (block_q8_0), or offset by 8, code i in byte i's low nibble and code i + 16 in its high
// one (block_q4_0).
void put_ggml_codes(bool nibbles, const std::uint8_t* codes, std::uint8_t* dst);

// The blocks of codes[g.blocks * 32] and scale_bits[g.blocks] (f16 patterns) into out[g.total_bytes].
void write_ggml(const GgmlLayout& g, const std::int32_t* codes, const std::uint32_t* scale_bits, std::uint8_t* out);

// The tensor the blocks hold under reading r, q's scheme and point kept (its codes, scales and
// shape filled in). Errors: ggml_layout's, size-mismatch, then block by block its scale
// (corrupt-bytes, index = block) and its codes (index = element) that r does not allow.
Result<QuantizedTensor> read_ggml(QuantizedTensor q, Shape shape, std::span<const std::uint8_t> bytes,
                                  const StoredReading& r);

}  // namespace qscheme::fast::detail
