// The serialized byte formats qscheme writes and reads, and the layout arithmetic of each:
//  burn: Burn's layout, [values][block or tensor scales][f32 global] (scheme/layout.hpp);
//  ggml: ggml's own blocks, row after row along the innermost dim (ggml-common.h):
//        block_q8_0 = f16 d (little-endian), then 32 int8 codes;
//        block_q4_0 = f16 d, then 16 bytes, byte j holding code j + 8 in its low nibble and
//        code j + 16 + 8 in its high nibble.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "scheme/scheme.hpp"
#include "scheme/status.hpp"
#include "scheme/validate.hpp"

namespace qscheme {

enum class ByteFormat : std::uint8_t { burn, ggml };

std::string_view to_string(ByteFormat f);
std::optional<ByteFormat> byte_format_from_string(std::string_view s);

// ggml's blocks hold 32 codes each.
inline constexpr std::uint64_t kGgmlBlockCodes = 32;

struct GgmlLayout {
  bool nibbles = false;          // block_q4_0 (two codes a byte) rather than block_q8_0
  std::uint64_t blocks = 0;      // elements / 32, row-major: blocks of a row are consecutive
  std::uint64_t block_bytes = 0; // 34 (block_q8_0) or 18 (block_q4_0)
  std::uint64_t total_bytes = 0;
};

// The ggml layout of (scheme, shape), overflow-checked. Validates the scheme and shape first
// (make_layout's errors), then invalid-argument unless the scheme is one of ggml's blocks
// (q8s or q8f with block[32]=f16 for block_q8_0, q4s or q4f with block[32]=f16 for block_q4_0,
// any store: the store is Burn's packing, which ggml's format replaces) and the innermost dim is
// a multiple of 32 (ggml has no partial blocks).
Result<GgmlLayout> ggml_layout(const Scheme& s, Shape shape);

// The bytes a tensor of (scheme, shape) takes in format f: Burn's layout's total_bytes, or ggml's
// blocks'. Errors as make_layout, then (ggml) as ggml_layout.
Result<std::uint64_t> total_bytes(const Scheme& s, Shape shape, ByteFormat f);

}  // namespace qscheme
