#include "reference/ggml_bytes.hpp"

#include <string>

#include "reference/check.hpp"
#include "scheme/byte_format.hpp"
#include "scheme/errors.hpp"
#include "scheme/layout.hpp"

namespace qscheme::reference {

Result<std::vector<std::uint8_t>> encode_ggml(const QuantizedTensor& q) {
  Result<GgmlLayout> g = ggml_layout(q.scheme, q.shape);
  if (!g) return g.status();
  Result<Layout> l = make_layout(q.scheme, q.shape);
  if (!l) return l.status();
  QSCHEME_RETURN_IF_ERROR(check_stored(q, *l));
  std::vector<std::uint8_t> out;
  out.reserve(g->total_bytes);
  for (std::uint64_t b = 0; b < g->blocks; ++b) {
    const std::uint32_t d = q.scale_bits[b];
    out.push_back(static_cast<std::uint8_t>(d));
    out.push_back(static_cast<std::uint8_t>(d >> 8));
    const std::int32_t* c = q.codes.data() + b * kGgmlBlockCodes;
    if (!g->nibbles) {
      for (std::uint64_t i = 0; i < kGgmlBlockCodes; ++i) out.push_back(static_cast<std::uint8_t>(c[i]));
      continue;
    }
    for (std::uint64_t i = 0; i < kGgmlBlockCodes / 2; ++i) {
      const auto lo = static_cast<std::uint8_t>(c[i] + 8);
      const auto hi = static_cast<std::uint8_t>(c[i + kGgmlBlockCodes / 2] + 8);
      out.push_back(static_cast<std::uint8_t>(lo | (hi << 4)));
    }
  }
  return out;
}

Result<QuantizedTensor> decode_ggml(QuantizedTensor q, Shape shape, std::span<const std::uint8_t> bytes) {
  Result<GgmlLayout> g = ggml_layout(q.scheme, shape);
  if (!g) return g.status();
  if (bytes.size() != g->total_bytes) return errors::ggml_byte_count(bytes.size(), g->blocks, g->block_bytes, g->total_bytes);
  q.shape.assign(shape.begin(), shape.end());
  q.codes.resize(g->blocks * kGgmlBlockCodes);
  q.scale_bits.resize(g->blocks);
  q.global_bits.reset();
  const Rules r = rules_of(q);
  const ScaleDtype d = q.scheme.scale_dtype();
  for (std::uint64_t b = 0; b < g->blocks; ++b) {
    const std::uint8_t* p = bytes.data() + b * g->block_bytes;
    q.scale_bits[b] = static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8);
    if (!scale_allowed(r, d, q.scale_bits[b])) return errors::bad_scale(b, d, q.scale_bits[b]);
    std::int32_t* c = q.codes.data() + b * kGgmlBlockCodes;
    if (!g->nibbles) {
      for (std::uint64_t i = 0; i < kGgmlBlockCodes; ++i) c[i] = static_cast<std::int8_t>(p[2 + i]);
    } else {
      for (std::uint64_t i = 0; i < kGgmlBlockCodes / 2; ++i) {
        c[i] = (p[2 + i] & 0xF) - 8;
        c[i + kGgmlBlockCodes / 2] = (p[2 + i] >> 4) - 8;
      }
    }
    for (std::uint64_t i = 0; i < kGgmlBlockCodes; ++i) {
      if (!code_allowed(r, q.scheme.value, c[i])) {
        return errors::bad_code(b * kGgmlBlockCodes + i, q.scheme.value, c[i]);
      }
    }
  }
  return q;
}

}  // namespace qscheme::reference
