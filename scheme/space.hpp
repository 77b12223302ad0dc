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

// [0], [1], [7], [3,5], [2,3,4], [64,64], plus a scalar [] and shapes that exercise partial
// blocks and padding along every packed dim.
const std::vector<std::vector<std::uint64_t>>& shape_set();

}  // namespace qscheme
