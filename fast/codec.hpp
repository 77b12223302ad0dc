// Burn's serialized layout from and to i32 codes and scale patterns: [values][block or tensor
// scales][f32 global], little-endian (docs/SEMANTICS.md section 5). encode and decode, and the
// bytes sink's whole-tensor output (sinks.hpp), write through here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "scheme/layout.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::fast::detail {

void put_le(std::uint8_t* p, std::uint32_t v, int bytes);
std::uint32_t get_le(const std::uint8_t* p, int bytes);

// The values part of the bytes: codes[l.elements] packed as the layout says.
void write_values(const Scheme& s, const Layout& l, const std::int32_t* codes, std::uint8_t* out);
// The scales part: scale_bits[l.scales] at out + l.value_bytes, then *global_bits (two levels).
void write_scales(const Scheme& s, const Layout& l, const std::uint32_t* scale_bits, const std::uint32_t* global_bits,
                  std::uint8_t* out);
// Unpacks the values into codes[l.elements]; returns the byte offset of the first storage
// element (in storage order) holding a non-zero padding field, or kNoIndex (reference/bytes.cpp
// reports the same offset).
std::size_t read_values(const Scheme& s, const Layout& l, const std::uint8_t* in, std::int32_t* codes);

}  // namespace qscheme::fast::detail
