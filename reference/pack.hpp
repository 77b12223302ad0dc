// Storage packing of codes, as Burn lays values out (spec burn-model.md §6): the bit field a code
// occupies, and codes <-> storage elements (one byte per code for native, two e2m1 codes a byte
// for packed-native, 32/bits codes a u32 word for packed-u32). These are the primitives under
// encode()/decode(); they move bits and check only what the bits themselves can tell (padding,
// canonical sign extension), not whether a code is one the scheme can produce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scheme/layout.hpp"
#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme::reference {

// Width in bits of the field one code takes inside a storage element: 8 for native (one byte a
// code, sub-byte integers sign-extended), the value's bits for the packed stores.
int field_bits(const Scheme& s);

// The field of a code: its two's complement (integer kinds) or bit pattern (float kinds)
// truncated to field_bits(s). `code` may be anything; out-of-range bits are dropped.
std::uint32_t field_of_code(const Scheme& s, std::int32_t code);

// The code a field holds: sign-extended from field_bits(s) for integer kinds, the pattern itself
// for float kinds. For native integer kinds the byte is read as an int8.
std::int32_t code_of_field(const Scheme& s, std::uint32_t field);

// Packs one code a element (row-major over l.shape) into storage elements, row-major over the
// storage shape (l.shape with the packed axis shrunk to ceil(n / codes_per_storage_element)).
// Code k of a line along the packed axis lands in element k / nq at bits [(k % nq) * bits, ...):
// element 0 in the low bits. Each line is padded on its own with zero fields.
// Preconditions: l == make_layout(s, shape), codes.size() == l.elements.
std::vector<std::uint32_t> pack_codes(const Scheme& s, const Layout& l, std::span<const std::int32_t> codes);

// Where unpack_codes found padding that is not zero.
struct BadPadding {
  std::uint64_t storage_element;  // index of the storage element holding it
  int slot;                       // which field of that element
};

// Inverse of pack_codes: the codes (via code_of_field) and the first non-zero padding field, if
// any. Preconditions: l == make_layout(s, shape), storage.size() == l.storage_elements.
std::vector<std::int32_t> unpack_codes(const Scheme& s, const Layout& l, std::span<const std::uint32_t> storage,
                                       std::optional<BadPadding>* bad_padding = nullptr);

// Why `code` is not a code quantization under value kind v can produce, or nullopt if it is one:
// an integer outside [lo, hi] (q8s -128, q4s -8, q2s -2; the f kinds take their full range), an
// e4m3 NaN (0x7F/0xFF), an e5m2 with an all-ones exponent (inf/NaN), or a float pattern wider
// than the value's bits.
std::optional<std::string> code_problem(Value v, std::int32_t code);

// Why `bits` is not a storable scale pattern of dtype d, or nullopt: wider than the dtype, sign
// bit set (negative or -0), NaN or inf (all-ones exponent of f32/f16/bf16), ue4m3 0x7F (NaN),
// ue8m0 0xFF (NaN). Zero is storable (an all-zero block); ue8m0 has no zero at all.
std::optional<std::string> scale_problem(ScaleDtype d, std::uint32_t bits);

}  // namespace qscheme::reference
