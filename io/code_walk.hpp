// The codes of Burn's serialized value section (reference/pack.hpp) visited in row-major element
// order, one at a time and without unpacking the tensor: where each element's field lies, and
// the code it holds. The streaming Q.json reader writes codes through it, the writer and the
// oracle's comparisons read them.
#pragma once

#include <cstdint>
#include <span>

#include "reference/pack.hpp"
#include "scheme/layout.hpp"

namespace qscheme::io {

class CodeWalk {
 public:
  // Precondition: l == make_layout(s, shape).
  CodeWalk(const Scheme& s, const Layout& l)
      : eb_(static_cast<std::uint64_t>(l.storage_element_bytes)),
        nq_(static_cast<std::uint64_t>(l.codes_per_storage_element)),
        bits_(reference::field_bits(s)),
        mask_(bits_ >= 32 ? ~0u : (1u << bits_) - 1u) {
    // The tensor seen as [outer, n, inner] around the packed axis (native: n = inner = 1).
    if (l.packed_axis >= 0) {
      const auto axis = static_cast<std::size_t>(l.packed_axis);
      for (std::size_t i = 0; i < axis; ++i) outer_ *= l.shape[i];
      n_ = l.shape[axis];
      for (std::size_t i = axis + 1; i < l.shape.size(); ++i) inner_ *= l.shape[i];
    } else {
      outer_ = l.elements;
    }
    words_ = n_ / nq_ + (n_ % nq_ != 0);
  }

  // The current element's storage element (its index) and the field's bit offset inside it.
  std::uint64_t storage_element() const { return w_; }
  int shift() const { return static_cast<int>(slot_) * bits_; }

  // The current element's field in `values` (the value section, little-endian elements).
  std::uint32_t field(std::span<const std::uint8_t> values) const {
    const std::uint8_t* p = values.data() + w_ * eb_;
    std::uint32_t word = p[0];
    for (std::uint64_t i = 1; i < eb_; ++i) word |= static_cast<std::uint32_t>(p[i]) << (8 * i);
    return word >> shift() & mask_;
  }
  // Puts `field` (already masked) into the current element's place, whose bits must be zero.
  void put(std::span<std::uint8_t> values, std::uint32_t field) const {
    std::uint8_t* p = values.data() + w_ * eb_;
    const std::uint32_t bits = field << shift();
    for (std::uint64_t i = 0; i < eb_; ++i) p[i] |= static_cast<std::uint8_t>(bits >> (8 * i));
  }
  std::uint32_t mask() const { return mask_; }

  // On to the next element in row-major order.
  void next() {
    if (++r_ < inner_) {
      ++w_;
      return;
    }
    r_ = 0;
    if (++k_ == n_) {
      k_ = 0;
      ++o_;
    }
    slot_ = k_ % nq_;
    w_ = (o_ * words_ + k_ / nq_) * inner_;
  }

 private:
  std::uint64_t eb_;
  std::uint64_t nq_;
  int bits_;
  std::uint32_t mask_;
  std::uint64_t outer_ = 1, n_ = 1, inner_ = 1, words_ = 1;
  std::uint64_t o_ = 0, k_ = 0, r_ = 0, slot_ = 0, w_ = 0;
};

// Random access for a few elements: the field of row-major element n, read from the value
// section, with the fields of each storage element in reverse order when `reversed` (the
// reversed packing order oracle/rule_search.hpp can name). Precondition: l == make_layout(s, shape),
// n < l.elements.
inline std::uint32_t field_at(const Scheme& s, const Layout& l, std::span<const std::uint8_t> values, std::uint64_t n,
                              bool reversed = false) {
  const auto nq = static_cast<std::uint64_t>(l.codes_per_storage_element);
  std::uint64_t w = n;
  std::uint64_t slot = 0;
  if (l.packed_axis >= 0) {
    const auto axis = static_cast<std::size_t>(l.packed_axis);
    std::uint64_t inner = 1;
    for (std::size_t i = axis + 1; i < l.shape.size(); ++i) inner *= l.shape[i];
    const std::uint64_t len = l.shape[axis];
    const std::uint64_t words = len / nq + (len % nq != 0);
    const std::uint64_t r = n % inner;
    const std::uint64_t k = n / inner % len;
    const std::uint64_t o = n / inner / len;
    w = (o * words + k / nq) * inner + r;
    slot = k % nq;
  }
  if (reversed) slot = nq - 1 - slot;
  const int bits = reference::field_bits(s);
  const auto eb = static_cast<std::uint64_t>(l.storage_element_bytes);
  std::uint32_t word = 0;
  for (std::uint64_t i = 0; i < eb; ++i) word |= static_cast<std::uint32_t>(values[w * eb + i]) << (8 * i);
  const std::uint32_t mask = bits >= 32 ? ~0u : (1u << bits) - 1u;
  return word >> (static_cast<int>(slot) * bits) & mask;
}

}  // namespace qscheme::io
