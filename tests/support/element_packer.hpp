// An independent model of Burn's serialized layout, element by element, for checking the
// engines' bytes: no shared code with either engine's packing.
#pragma once

#include <cstdint>
#include <vector>

#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"

namespace qscheme::testing {

// Independent packer: element i goes to storage element (coords with the packed coordinate
// divided by nq), slot (packed coordinate mod nq), then little-endian serialization.
inline std::vector<std::uint8_t> PackedByElement(const qscheme::QuantizedTensor& q, const qscheme::Layout& l) {
  std::vector<std::uint8_t> out(l.total_bytes, 0);
  const int bits = qscheme::info(q.scheme.value).bits;
  if (l.packed_axis < 0) {
    // One byte a code, two (little-endian) for the 16-bit kinds.
    const std::size_t width = bits > 8 ? 2 : 1;
    for (std::size_t i = 0; i < q.codes.size(); ++i) {
      for (std::size_t b = 0; b < width; ++b) out[i * width + b] = static_cast<std::uint8_t>(q.codes[i] >> (8 * b));
    }
  } else {
    const std::size_t R = l.shape.size();
    std::vector<std::uint64_t> sshape = l.shape;
    sshape[l.packed_axis] = (l.shape[l.packed_axis] + l.codes_per_storage_element - 1) / l.codes_per_storage_element;
    std::vector<std::uint32_t> words(l.storage_elements, 0);
    for (std::uint64_t i = 0; i < l.elements; ++i) {
      std::uint64_t rem = i, sidx = 0, stride = 1;
      std::uint64_t slot = 0;
      for (std::size_t d = R; d-- > 0;) {
        std::uint64_t c = rem % l.shape[d];
        rem /= l.shape[d];
        if (static_cast<int>(d) == l.packed_axis) {
          slot = c % l.codes_per_storage_element;
          c /= l.codes_per_storage_element;
        }
        sidx += c * stride;
        stride *= sshape[d];
      }
      words[sidx] |= (static_cast<std::uint32_t>(q.codes[i]) & ((1u << bits) - 1)) << (slot * bits);
    }
    for (std::uint64_t w = 0; w < l.storage_elements; ++w) {
      for (int b = 0; b < l.storage_element_bytes; ++b) out[w * l.storage_element_bytes + b] = static_cast<std::uint8_t>(words[w] >> (8 * b));
    }
  }
  const int sb = qscheme::info(q.scheme.scale_dtype()).bytes;
  for (std::size_t j = 0; j < q.scale_bits.size(); ++j) {
    for (int b = 0; b < sb; ++b) out[l.value_bytes + j * sb + b] = static_cast<std::uint8_t>(q.scale_bits[j] >> (8 * b));
  }
  if (q.global_bits) {
    for (int b = 0; b < 4; ++b) out[l.value_bytes + l.scale_bytes + b] = static_cast<std::uint8_t>(*q.global_bits >> (8 * b));
  }
  // Affine mode's zero points after everything else, each as a native code.
  const std::size_t zw = bits > 8 ? 2 : 1;
  for (std::size_t j = 0; j < q.zero_points.size(); ++j) {
    for (std::size_t b = 0; b < zw; ++b) {
      out[l.value_bytes + l.scale_bytes + l.global_bytes + j * zw + b] = static_cast<std::uint8_t>(q.zero_points[j] >> (8 * b));
    }
  }
  return out;
}

}  // namespace qscheme::testing
