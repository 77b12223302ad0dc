#include "reference/pack.hpp"

namespace qscheme::reference {
namespace {

// A line along the packed axis: the tensor is seen as [outer, n, inner] around that axis.
struct Lines {
  std::uint64_t outer = 1;
  std::uint64_t n = 1;      // extent of the packed axis
  std::uint64_t inner = 1;
  std::uint64_t words = 1;  // storage elements a line takes: ceil(n / nq)
};

Lines lines_of(const Layout& l) {
  Lines out;
  const int axis = l.packed_axis;
  const std::uint64_t nq = static_cast<std::uint64_t>(l.codes_per_storage_element);
  if (axis < 0) {
    // Native: every element is its own line of one.
    out.outer = l.elements;
    return out;
  }
  for (int i = 0; i < axis; ++i) out.outer *= l.shape[static_cast<std::size_t>(i)];
  out.n = l.shape[static_cast<std::size_t>(axis)];
  for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < l.shape.size(); ++i) out.inner *= l.shape[i];
  out.words = out.n / nq + (out.n % nq != 0);
  return out;
}

}  // namespace

// A native code takes a whole byte, or two for the 16-bit kinds.
int field_bits(const Scheme& s) {
  return s.store.kind == StoreKind::native ? (info(s.value).bits > 8 ? 16 : 8) : info(s.value).bits;
}

std::uint32_t field_of_code(const Scheme& s, std::int32_t code) {
  const int bits = field_bits(s);
  const std::uint32_t mask = bits == 32 ? ~0u : ((1u << bits) - 1u);
  return static_cast<std::uint32_t>(code) & mask;
}

std::int32_t code_of_field(const Scheme& s, std::uint32_t field) {
  const int bits = field_bits(s);
  if (info(s.value).is_float || info(s.value).is_unsigned) return static_cast<std::int32_t>(field);
  // Two's complement sign extension from `bits`.
  const std::uint32_t sign = 1u << (bits - 1);
  return static_cast<std::int32_t>(field ^ sign) - static_cast<std::int32_t>(sign);
}

std::vector<std::uint32_t> pack_codes(const Scheme& s, const Layout& l, std::span<const std::int32_t> codes) {
  std::vector<std::uint32_t> storage(l.storage_elements, 0);
  // An empty tensor has no storage; its other dims may still be huge (loops would not end).
  if (l.elements == 0) return storage;
  const Lines ln = lines_of(l);
  const std::uint64_t nq = static_cast<std::uint64_t>(l.codes_per_storage_element);
  const int bits = field_bits(s);
  // Element e = (o * n + k) * inner + r sits in storage element (o * words + k / nq) * inner + r,
  // field k % nq.
  for (std::uint64_t o = 0; o < ln.outer; ++o) {
    for (std::uint64_t k = 0; k < ln.n; ++k) {
      for (std::uint64_t r = 0; r < ln.inner; ++r) {
        const std::uint64_t e = (o * ln.n + k) * ln.inner + r;
        const std::uint64_t w = (o * ln.words + k / nq) * ln.inner + r;
        const int slot = static_cast<int>(k % nq);
        storage[w] |= field_of_code(s, codes[e]) << (slot * bits);
      }
    }
  }
  return storage;
}

std::vector<std::int32_t> unpack_codes(const Scheme& s, const Layout& l, std::span<const std::uint32_t> storage,
                                       std::optional<BadPadding>* bad_padding) {
  std::vector<std::int32_t> codes(l.elements, 0);
  if (bad_padding) bad_padding->reset();
  // An empty tensor has no storage; its other dims may still be huge (loops would not end).
  if (l.elements == 0) return codes;
  const Lines ln = lines_of(l);
  const std::uint64_t nq = static_cast<std::uint64_t>(l.codes_per_storage_element);
  const int bits = field_bits(s);
  const std::uint32_t mask = bits == 32 ? ~0u : ((1u << bits) - 1u);
  if (bad_padding) bad_padding->reset();
  for (std::uint64_t o = 0; o < ln.outer; ++o) {
    for (std::uint64_t wk = 0; wk < ln.words; ++wk) {
      for (std::uint64_t r = 0; r < ln.inner; ++r) {
        const std::uint64_t w = (o * ln.words + wk) * ln.inner + r;
        for (std::uint64_t slot = 0; slot < nq; ++slot) {
          const std::uint32_t field = (storage[w] >> (slot * bits)) & mask;
          const std::uint64_t k = wk * nq + slot;
          if (k < ln.n) {
            codes[(o * ln.n + k) * ln.inner + r] = code_of_field(s, field);
          } else if (field != 0 && bad_padding && !bad_padding->has_value()) {
            *bad_padding = BadPadding{w, static_cast<int>(slot)};
          }
        }
        // Bits above the last field of a native byte or packed element: none exist (fields fill
        // the element exactly: 8 = 1x8, 8 = 2x4, 32 = 4x8 = 8x4 = 16x2).
      }
    }
  }
  return codes;
}

}  // namespace qscheme::reference
