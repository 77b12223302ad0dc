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

// Why a code or a scale pattern is invalid: code_problem and scale_problem in scheme/errors.hpp,
// shared with fast/.

}  // namespace qscheme::reference
