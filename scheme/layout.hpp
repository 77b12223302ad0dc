// Sizes and shapes derived from a (scheme, shape) pair, as Burn lays them out: blocks per
// dimension, the scale grid, storage elements (a packed store pads each line of the packed
// dimension on its own) and the serialized bytes [values][block or tensor scales][f32 global]
// [zero points] (the last region: affine mode only).
#pragma once

#include <cstdint>
#include <vector>

#include "scheme/scheme.hpp"
#include "scheme/status.hpp"
#include "scheme/validate.hpp"

namespace qscheme {

struct Layout {
  std::vector<std::uint64_t> shape;
  // Block extents expanded to the tensor's rank (right-aligned, missing leading extents are 1).
  // A per-axis level is a block of extent 1 on its axis and the full extent elsewhere. Without
  // either, the whole tensor is one block: block == shape (an empty dim: 1).
  std::vector<std::uint64_t> block;
  // ceil(shape[i] / block[i]); all ones for a per-tensor scheme. A partial block takes a scale.
  std::vector<std::uint64_t> blocks_per_dim;
  std::uint64_t elements = 0;
  // Innermost-level scales: prod(blocks_per_dim) with a block or axis level, else 1.
  std::uint64_t scales = 0;
  // Axis (0 = outermost) along which codes are packed, or -1 when one code is one element.
  int packed_axis = -1;
  int codes_per_storage_element = 1;
  int storage_element_bytes = 1;
  std::uint64_t storage_elements = 0;
  std::uint64_t value_bytes = 0;
  std::uint64_t scale_bytes = 0;   // scales * bytes of the innermost dtype
  std::uint64_t global_bytes = 0;  // 4 for a two-level scheme, else 0
  // Affine mode: one zero point per scale, each in the bytes a native code of the kind takes
  // (1, or 2 for i16/u16), after the scales. 0 otherwise.
  std::uint64_t zero_points = 0;
  std::uint64_t zero_point_bytes = 0;
  std::uint64_t total_bytes = 0;
};

namespace detail {
// The structural shape rules of validate() (rank, packed dim, block rank), without sizes.
Status validate_shape_rules(const Scheme& s, Shape shape);
}  // namespace detail

// Validates, then computes the layout with overflow-checked arithmetic.
Result<Layout> make_layout(const Scheme& s, Shape shape);

// The first element, in row-major order, for which pred(element, block) holds, where block is
// the row-major index of the element's block (docs/SEMANTICS.md section 2); l.elements if none.
// One odometer step per element: for error paths, which name the first offending element.
template <class Pred>
std::uint64_t find_element(const Layout& l, Pred pred) {
  const std::size_t rank = l.shape.size();
  std::vector<std::uint64_t> idx(rank, 0);
  for (std::uint64_t e = 0; e < l.elements; ++e) {
    std::uint64_t b = 0;
    for (std::size_t d = 0; d < rank; ++d) b = b * l.blocks_per_dim[d] + idx[d] / l.block[d];
    if (pred(e, b)) return e;
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < l.shape[d]) break;
      idx[d] = 0;
    }
  }
  return l.elements;
}

}  // namespace qscheme
