// Burn's serialized layout from and to i32 codes and scale patterns: [values][block or tensor
// scales][f32 global][zero points], little-endian (docs/SEMANTICS.md sections 5 and 14). encode and
// decode, the bytes sink's whole-tensor output (sinks.hpp) and the extension stage write through
// here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "scheme/layout.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::fast::detail {

void put_le(std::uint8_t* p, std::uint32_t v, int bytes);
std::uint32_t get_le(const std::uint8_t* p, int bytes);

// Whether the values part is one byte per element in row-major order (a native store of a kind of
// at most 8 bits), so that one-byte codes can go there as they are made.
bool direct_bytes(const Scheme& s, const Layout& l);
// The values part of the bytes: codes[l.elements] packed as the layout says (a native 16-bit code
// takes two bytes).
void write_values(const Scheme& s, const Layout& l, const std::int32_t* codes, std::uint8_t* out);
// The scales part: scale_bits[l.scales] at out + l.value_bytes, then *global_bits (two levels).
void write_scales(const Scheme& s, const Layout& l, const std::uint32_t* scale_bits, const std::uint32_t* global_bits,
                  std::uint8_t* out);
// The zero points part (affine mode): zps[l.zero_points], each as a native code of the kind (one
// byte, or two for the 16-bit kinds; two's complement for the signed ones).
void write_zero_points(const Scheme& s, const Layout& l, const std::int32_t* zps, std::uint8_t* out);
// And back, sign-extended for the signed kinds (not range-checked).
void read_zero_points(const Scheme& s, const Layout& l, const std::uint8_t* in, std::int32_t* zps);
// Unpacks the values into codes[l.elements] (sign-extended for the signed kinds); returns the byte offset of the first storage
// element (in storage order) holding a non-zero padding field, or kNoIndex (reference/bytes.cpp
// reports the same offset).
std::size_t read_values(const Scheme& s, const Layout& l, const std::uint8_t* in, std::int32_t* codes);

}  // namespace qscheme::fast::detail
