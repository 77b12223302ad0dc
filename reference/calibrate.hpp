// Blocks and calibration: which block each element belongs to, and the per-block statistic
// alpha the scale is derived from (exact: max |x| or the mean of |x|).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference/rational.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"

namespace qscheme::reference {

// The row-major block index of every row-major element: blocks are N-D rectangles of extents
// Layout::block, numbered row-major over Layout::blocks_per_dim; a partial block at the end of
// a dimension is a block of its own. A per-tensor layout maps everything to block 0.
std::vector<std::uint64_t> block_of_elements(const Layout& l);

// alpha per block, exactly (as unreduced quotients: a gcd per block would dominate the cost): minmax = max |x|; absmean = (sum |x|) / (elements in the block),
// counting a partial block's actual elements. A block with no elements (an empty per-tensor
// tensor) has alpha 0. Precondition: every x is finite.
std::vector<Quotient> calibrate(const Layout& l, std::span<const float> x,
                                std::span<const std::uint64_t> block_of, Calibration c);

}  // namespace qscheme::reference
