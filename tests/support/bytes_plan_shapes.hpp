// Shapes that reach every branch of the fused bytes plan (fast/bytes_plan.hpp): one row, several
// rows, rank 3, rows longer than a chunk (2048 columns) with a partial last chunk, row counts that
// leave partial packing groups, rows of 37, 100 and 2090 elements ending in partial vectors and
// partial blocks.
#pragma once

#include <cstdint>
#include <vector>

namespace qscheme::testing {

inline const std::vector<std::vector<std::uint64_t>>& BytesPlanShapes() {
  static const std::vector<std::vector<std::uint64_t>> s{{64},   {3, 96},    {5, 2, 64}, {17, 32}, {2, 2112},
                                                         {9, 48}, {7, 3, 16}, {37},       {3, 100}, {2, 2090}};
  return s;
}

}  // namespace qscheme::testing
