// The finite tuple space of the enumeration proof and the fixed shape set it is checked on.
#pragma once

#include <cstdint>
#include <vector>

#include "scheme/scheme.hpp"

namespace qscheme {

// 9 values x 7 stores (native, packed-native(0..2), packed-u32(0..2)) x 2 modes x 6 tensor
// levels (none or one of 5 dtypes) x 26 block levels (none, or one of 5 dtypes with [16], [32],
// [4,4], [2,3,5] or [255]): 19,656 tuples, in a fixed order.
const std::vector<Scheme>& tuple_space();

// qscheme's extension beyond Burn, sampled rather than crossed with every field: the 5 extension
// kinds (u8, u4, u2, i16, u16) x 4 stores (native, packed-native(0), packed-u32(0..1)) x 2 modes x
// 3 tensor levels (none, f32, bf16) x 6 block levels (none, [32]=f32, [4,4]=f16, [2,3,5]=bf16,
// [16]=ue4m3, [255]=ue8m0): 720 tuples; then affine mode over all 14 kinds x 2 stores (native,
// packed-u32(0)) x 2 tensor levels (none, f32) x 4 block levels (none, [32]=f32, [4,4]=f16,
// [16]=ue4m3): 224 tuples; then per-axis scales over all 14 kinds x 2 modes (sym, affine) x 3
// axis levels (axis(0)=f32, axis(1)=f16, axis(1)=ue8m0): 84 tuples; 1,028 in a fixed order.
// Every store, mode, dtype and block shape of tuple_space() whose rules could depend on the kind
// meets every extension kind.
const std::vector<Scheme>& extension_space();

// [0], [1], [7], [3,5], [2,3,4], [64,64], plus a scalar [] and shapes that exercise partial
// blocks and padding along every packed dim.
const std::vector<std::vector<std::uint64_t>>& shape_set();

}  // namespace qscheme
