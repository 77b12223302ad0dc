// validate() is the single source of truth for what qscheme supports: both engines, the C API
// and the CLI ask it first and never second-guess it.
#pragma once

#include <cstdint>
#include <span>

#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme {

using Shape = std::span<const std::uint64_t>;

// Shape-independent rules, checked in this order (the first failing rule names the error):
//  0. malformed-scheme: both a block and an axis level (no text or binary form has both).
//  1. packed-native-unsupported: packed-native for a value without a native pair form.
//  2. zero-block-extent: a block extent of 0.
//  3. two-level-block-dtype: two levels whose block dtype reaches beyond f16's range
//     (f32, bf16, ue8m0).
//  4. two-level-global-dtype: two levels whose per-tensor dtype is not f32.
//  5. unsupported-profile: affine mode over a minifloat kind, or with two levels.
//  6. lookup-table-missing: lookup mode (no lookup tables are supplied yet).
Status validate_scheme(const Scheme& s);

// validate_scheme, then the rules that need the shape:
//  rank-too-large (rank > kMaxRank), packing-dim-out-of-range (a packed store's dim not below the
//  rank), block-rank-exceeds-tensor (a block of more dims than the tensor, or an axis level's
//  axis not below the rank), shape-overflow (element, storage, scale or byte count past
//  2^63 - 1).
Status validate(const Scheme& s, Shape shape);

// The rank-too-large rule of validate() alone: for a caller that holds a rank and a pointer
// (the C API) and must not form a shape from more entries than the engines take.
Status validate_rank(std::size_t rank);

}  // namespace qscheme
