#include "fast/ggml_blocks.hpp"

#include <cstring>

#include "fast/codec.hpp"
#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/support/parallel.hpp"
#include "fast/tensor_checks.hpp"
#include "scheme/errors.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::fast::detail {

void put_ggml_codes(bool nibbles, const std::uint8_t* codes, std::uint8_t* dst) {
  if (!nibbles) {
    std::memcpy(dst, codes, kGgmlBlockCodes);
    return;
  }
  // Byte arithmetic on 16 lanes: the compiler makes it one vector.
  for (std::size_t i = 0; i < kGgmlBlockCodes / 2; ++i) {
    const auto lo = static_cast<std::uint8_t>((codes[i] + 8) & 0xF);
    const auto hi = static_cast<std::uint8_t>((codes[i + kGgmlBlockCodes / 2] + 8) << 4);
    dst[i] = static_cast<std::uint8_t>(lo | hi);
  }
}

void write_ggml(const GgmlLayout& g, const std::int32_t* codes, const std::uint32_t* scale_bits, std::uint8_t* out) {
  const kernels::Kernels& kf = kernels::Get();
  parallel_chunks(g.blocks, 1, g.blocks * kGgmlBlockCodes, [&](std::uint64_t b0, std::uint64_t b1) {
    std::uint8_t bytes[kGgmlBlockCodes];
    for (std::uint64_t b = b0; b < b1; ++b) {
      std::uint8_t* dst = out + b * g.block_bytes;
      put_le(dst, scale_bits[b], 2);
      kf.codes_to_bytes(codes + b * kGgmlBlockCodes, kGgmlBlockCodes, bytes);
      put_ggml_codes(g.nibbles, bytes, dst + 2);
    }
  });
}

Result<QuantizedTensor> read_ggml(QuantizedTensor q, Shape shape, std::span<const std::uint8_t> bytes,
                                  const StoredReading& r) {
  const Result<GgmlLayout> g = ggml_layout(q.scheme, shape);
  if (!g) return g.status();
  if (bytes.size() != g->total_bytes) {
    return errors::ggml_byte_count(bytes.size(), g->blocks, g->block_bytes, g->total_bytes);
  }
  q.shape.assign(shape.begin(), shape.end());
  q.codes.resize(g->blocks * kGgmlBlockCodes);
  q.scale_bits.resize(g->blocks);
  q.global_bits.reset();
  const CodeRange cr = code_range(q.scheme.value, r);
  for (std::uint64_t b = 0; b < g->blocks; ++b) {
    const std::uint8_t* p = bytes.data() + b * g->block_bytes;
    q.scale_bits[b] = get_le(p, 2);
    float v;
    if (!read_scale(q.scale_bits[b], ScaleDtype::f16, r, &v)) return errors::bad_scale(b, ScaleDtype::f16, q.scale_bits[b]);
    std::int32_t* c = q.codes.data() + b * kGgmlBlockCodes;
    for (std::uint64_t i = 0; i < kGgmlBlockCodes; ++i) {
      c[i] = g->nibbles ? ((i < 16 ? p[2 + i] & 0xF : p[2 + i - 16] >> 4) - 8) : static_cast<std::int8_t>(p[2 + i]);
      if (c[i] < cr.lo || c[i] > cr.hi) return errors::bad_code(b * kGgmlBlockCodes + i, q.scheme.value, c[i]);
    }
  }
  return q;
}

}  // namespace qscheme::fast::detail

namespace qscheme::fast {

Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q, ByteFormat format) {
  if (format == ByteFormat::burn) return encode(q);
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  const Result<detail::Reading> r = detail::reading_of(q);
  if (!r) return r.status();
  const Result<GgmlLayout> g = ggml_layout(q.scheme, q.shape);
  if (!g) return g.status();
  detail::BigBuffer<float> eb;
  float gs = 1.0f;
  QSCHEME_RETURN_IF_ERROR(detail::check_quantized(q, r->stored, r->l, &eb, &gs));
  std::vector<std::uint8_t> out(g->total_bytes);
  detail::write_ggml(*g, q.codes.data(), q.scale_bits.data(), out.data());
  return out;
}

Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               const Rules& rules, ByteFormat format) {
  if (format == ByteFormat::burn) return decode(scheme, shape, bytes, rules);
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  const Result<detail::StoredReading> r = detail::stored_reading(rules, scheme);
  if (!r) return r.status();
  QuantizedTensor q;
  q.scheme = scheme;
  if (const std::optional<Profile> p = profile_of(rules)) {
    q.profile = *p;
  } else {
    q.rules = rules;
  }
  return detail::read_ggml(std::move(q), shape, bytes, *r);
}

}  // namespace qscheme::fast
