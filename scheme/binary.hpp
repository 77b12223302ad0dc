// A compact, versioned binary form of a scheme, for fuzzers and file headers.
//
//   byte 0   version (kBinarySchemeVersion)
//   byte 1   value       (Value enumerator, 0..8 Burn's, 9..13 the extension)
//   byte 2   store kind  (StoreKind enumerator, 0..2)
//   byte 3   store dim   (0..kMaxRank-1; 0 for native)
//   byte 4   mode        (Mode enumerator, 0..1 Burn's, 2 = affine, the extension)
//   byte 5   tensor level: 0 = none, 1 + ScaleDtype
//   byte 6   block level:  0 = none, 1 + ScaleDtype (of the block or the axis level)
//   byte 7   block rank r (0 when there is no block level, else 1..kMaxBlockDims), or
//            0x80 + D for a per-axis level on axis D (the extension), no extents following
//   bytes 8..8+r  block extents, outermost first, canonical (no leading 1 unless r == 1)
//
// Every field has one encoding, so decode is the exact inverse of encode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme {

inline constexpr std::uint8_t kBinarySchemeVersion = 1;
inline constexpr std::size_t kBinarySchemeMaxBytes = 8 + kMaxBlockDims;

std::vector<std::uint8_t> encode_scheme(const Scheme& s);

// Decodes a scheme from the front of `bytes`; returns it with the number of bytes consumed.
// Errors: unsupported-binary-version, malformed-binary-scheme (index = offending byte).
Result<std::pair<Scheme, std::size_t>> decode_scheme_prefix(std::span<const std::uint8_t> bytes);
// As decode_scheme_prefix, but trailing bytes are an error.
Result<Scheme> decode_scheme(std::span<const std::uint8_t> bytes);

}  // namespace qscheme
