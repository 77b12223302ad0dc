#include "scheme/layout.hpp"

#include <string>

#include "scheme/checked.hpp"

namespace qscheme {
namespace {

Status overflow(Shape shape, std::string_view what) {
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? "," : "") + std::to_string(shape[i]);
  return {ErrorCode::shape_overflow,
          "the " + std::string(what) + " of a [" + dims + "] tensor does not fit in 63 bits; use a smaller shape"};
}

std::optional<std::uint64_t> bounded(std::optional<std::uint64_t> v) {
  if (!v || *v > kMaxSize) return std::nullopt;
  return v;
}

}  // namespace

Result<Layout> make_layout(const Scheme& s, Shape shape) {
  QSCHEME_RETURN_IF_ERROR(validate_scheme(s));
  QSCHEME_RETURN_IF_ERROR(detail::validate_shape_rules(s, shape));
  const std::size_t rank = shape.size();
  Layout l;
  l.shape.assign(shape.begin(), shape.end());

  // Each extent on its own first: a zero extent elsewhere makes every product 0, and the shape
  // would still name an extent no index or file format can hold.
  for (std::size_t i = 0; i < rank; ++i) {
    if (shape[i] > kMaxSize) return overflow(shape, "extent of dim " + std::to_string(i));
  }
  std::optional<std::uint64_t> elements = 1;
  for (std::uint64_t d : shape) elements = bounded(elements ? checked_mul(*elements, d) : std::nullopt);
  if (!elements) return overflow(shape, "element count");
  l.elements = *elements;

  l.block.assign(rank, 1);
  l.blocks_per_dim.assign(rank, 1);
  if (s.block) {
    const auto ext = s.block->size.extents();
    const std::size_t offset = rank - ext.size();
    for (std::size_t i = 0; i < ext.size(); ++i) l.block[offset + i] = ext[i];
    std::optional<std::uint64_t> scales = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      l.blocks_per_dim[i] = ceil_div(shape[i], l.block[i]);
      scales = bounded(scales ? checked_mul(*scales, l.blocks_per_dim[i]) : std::nullopt);
    }
    if (!scales) return overflow(shape, "scale count");
    l.scales = *scales;
  } else if (s.axis) {
    // One block per index of the axis, spanning every other dim (an empty dim: extent 1).
    const std::size_t axis = rank - 1 - s.axis->dim;
    std::optional<std::uint64_t> scales = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      l.block[i] = i == axis || shape[i] == 0 ? 1 : shape[i];
      l.blocks_per_dim[i] = ceil_div(shape[i], l.block[i]);
      scales = bounded(scales ? checked_mul(*scales, l.blocks_per_dim[i]) : std::nullopt);
    }
    if (!scales) return overflow(shape, "scale count");
    l.scales = *scales;
  } else {
    // One block spans the tensor; an empty dim still gets extent 1 so no block is degenerate.
    for (std::size_t i = 0; i < rank; ++i) l.block[i] = shape[i] == 0 ? 1 : shape[i];
    l.scales = 1;
  }

  const int nq = codes_per_storage_element(s);
  l.codes_per_storage_element = nq;
  l.storage_element_bytes = (store_bits(s) + 7) / 8;
  if (nq > 1) {
    // Each line along the packed axis is padded on its own, as Burn's storage_elements does.
    l.packed_axis = static_cast<int>(rank) - 1 - s.store.dim;
    std::optional<std::uint64_t> storage = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      const std::uint64_t d = static_cast<int>(i) == l.packed_axis ? ceil_div(shape[i], nq) : shape[i];
      storage = bounded(storage ? checked_mul(*storage, d) : std::nullopt);
    }
    if (!storage) return overflow(shape, "storage element count");
    l.storage_elements = *storage;
  } else {
    l.storage_elements = l.elements;
  }

  const auto value_bytes = bounded(checked_mul(l.storage_elements, l.storage_element_bytes));
  const auto scale_bytes = bounded(checked_mul(l.scales, info(s.scale_dtype()).bytes));
  if (!value_bytes || !scale_bytes) return overflow(shape, "serialized byte count");
  l.value_bytes = *value_bytes;
  l.scale_bytes = *scale_bytes;
  l.global_bytes = s.two_level() ? 4 : 0;
  if (s.affine()) {
    l.zero_points = l.scales;
    const auto zp_bytes = bounded(checked_mul(l.scales, static_cast<std::uint64_t>((info(s.value).bits + 7) / 8)));
    if (!zp_bytes) return overflow(shape, "serialized byte count");
    l.zero_point_bytes = *zp_bytes;
  }
  const auto total = bounded(checked_add(l.value_bytes, l.scale_bytes));
  const auto total2 = total ? bounded(checked_add(*total, l.global_bytes)) : std::nullopt;
  const auto total3 = total2 ? bounded(checked_add(*total2, l.zero_point_bytes)) : std::nullopt;
  if (!total3) return overflow(shape, "serialized byte count");
  l.total_bytes = *total3;
  return l;
}

}  // namespace qscheme
