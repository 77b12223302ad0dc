#include "fast/codec.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "fast/exact_scale.h"
#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/points.hpp"
#include "fast/support/parallel.hpp"
#include "fast/tensor_checks.hpp"
#include "fast/value_codes.hpp"
#include "scheme/errors.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::fast {
namespace detail {

static_assert(std::endian::native == std::endian::little, "serialized bytes are written with host stores");

void put_le(std::uint8_t* p, std::uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint32_t get_le(const std::uint8_t* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

namespace {
// Packed-axis view: outer x n_p x inner, groups of nq along n_p.
struct PackGeo {
  std::uint64_t outer = 1, np = 1, inner = 1, groups = 1;
  int nq = 1, bits = 8, ebytes = 1;
};
PackGeo pack_geo(const Layout& l, const Scheme& s) {
  PackGeo p;
  const int ax = l.packed_axis;
  for (int d = 0; d < ax; ++d) p.outer *= l.shape[d];
  p.np = l.shape[ax];
  for (std::size_t d = ax + 1; d < l.shape.size(); ++d) p.inner *= l.shape[d];
  p.nq = l.codes_per_storage_element;
  p.bits = info(s.value).bits;
  p.ebytes = l.storage_element_bytes;
  p.groups = (p.np + p.nq - 1) / p.nq;
  return p;
}

}  // namespace

bool direct_bytes(const Scheme& s, const Layout& l) { return l.packed_axis < 0 && info(s.value).bits <= 8; }

void write_values(const Scheme& s, const Layout& l, const std::int32_t* c, std::uint8_t* out) {
  if (l.elements == 0) return;  // no values (and no storage elements)
  const kernels::Kernels& kf = kernels::Get();
  if (l.packed_axis < 0 && info(s.value).bits > 8) {
    detail::parallel_chunks(l.elements, 1 << 16, l.elements, [&](std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t i = b; i < e; ++i) put_le(out + 2 * i, static_cast<std::uint32_t>(c[i]), 2);
    });
    return;
  }
  if (l.packed_axis < 0) {
    detail::parallel_chunks(l.elements, 1 << 16, l.elements, [&](std::uint64_t b, std::uint64_t e) { kf.codes_to_bytes(c + b, e - b, out + b); });
    return;
  }
  const PackGeo p = pack_geo(l, s);
  const std::uint32_t mask = (1u << p.bits) - 1;
  detail::parallel_chunks(p.outer, 1, l.elements, [&](std::uint64_t ob, std::uint64_t oe) {
    std::vector<std::uint32_t> words(p.inner);
    for (std::uint64_t o = ob; o < oe; ++o) {
      for (std::uint64_t gi = 0; gi < p.groups; ++gi) {
        const std::uint64_t first = gi * p.nq;
        const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(p.nq, p.np - first));
        const std::int32_t* src = c + (o * p.np + first) * p.inner;
        std::uint8_t* dst = out + (o * p.groups + gi) * p.inner * p.ebytes;
        if (p.inner == 1) {
          std::uint32_t w = 0;
          for (std::size_t i = 0; i < count; ++i) w |= (static_cast<std::uint32_t>(src[i]) & mask) << (i * p.bits);
          put_le(dst, w, p.ebytes);
          continue;
        }
        kf.pack_words(src, p.inner, count, p.inner, p.bits, words.data());
        if (p.ebytes == 4) {
          std::memcpy(dst, words.data(), p.inner * 4);  // little-endian host (x86-64)
        } else {
          for (std::uint64_t j = 0; j < p.inner; ++j) dst[j] = static_cast<std::uint8_t>(words[j]);
        }
      }
    }
  });
}

// Unpacks the values; returns the byte offset of the first storage element (in storage order)
// holding a non-zero padding field, or kNoIndex (reference/bytes.cpp reports the same offset).
std::size_t read_values(const Scheme& s, const Layout& l, const std::uint8_t* in, std::int32_t* c) {
  const ValueInfo& vi = info(s.value);
  const bool is_signed = !vi.is_float && !vi.is_unsigned;
  if (l.elements == 0) return kNoIndex;
  const kernels::Kernels& kf = kernels::Get();
  if (l.packed_axis < 0 && vi.bits > 8) {
    for (std::uint64_t i = 0; i < l.elements; ++i) {
      const std::uint32_t f = get_le(in + 2 * i, 2);
      c[i] = is_signed ? static_cast<std::int16_t>(f) : static_cast<std::int32_t>(f);
    }
    return kNoIndex;
  }
  if (l.packed_axis < 0) {
    kf.bytes_to_codes(in, l.elements, is_signed, c);
    return kNoIndex;
  }
  const PackGeo p = pack_geo(l, s);
  std::size_t bad = kNoIndex;
  std::vector<std::uint32_t> words(p.inner);
  for (std::uint64_t o = 0; o < p.outer; ++o) {
    for (std::uint64_t gi = 0; gi < p.groups; ++gi) {
      const std::uint64_t first = gi * p.nq;
      const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(p.nq, p.np - first));
      const std::uint8_t* src = in + (o * p.groups + gi) * p.inner * p.ebytes;
      std::int32_t* dst = c + (o * p.np + first) * p.inner;
      if (p.ebytes == 4) std::memcpy(words.data(), src, p.inner * 4);
      else for (std::uint64_t j = 0; j < p.inner; ++j) words[j] = src[j];
      if (count < static_cast<std::size_t>(p.nq)) {
        for (std::uint64_t j = 0; j < p.inner; ++j) {
          if ((words[j] >> (count * p.bits)) != 0 && bad == kNoIndex) {
            bad = ((o * p.groups + gi) * p.inner + j) * static_cast<std::uint64_t>(p.ebytes);
          }
        }
      }
      kf.unpack_words(words.data(), p.inner, count, p.inner, p.bits, is_signed, dst);
    }
  }
  return bad;
}

void write_scales(const Scheme& s, const Layout& l, const std::uint32_t* scale_bits, const std::uint32_t* global_bits,
                  std::uint8_t* out) {
  const int sb = info(s.scale_dtype()).bytes;
  std::uint8_t* p = out + l.value_bytes;
  for (std::size_t j = 0; j < l.scales; ++j) put_le(p + j * sb, scale_bits[j], sb);
  if (global_bits) put_le(out + l.value_bytes + l.scale_bytes, *global_bits, 4);
}

namespace {
int zero_point_width(const Scheme& s) { return info(s.value).bits > 8 ? 2 : 1; }
std::uint64_t zero_point_offset(const Layout& l) { return l.value_bytes + l.scale_bytes + l.global_bytes; }
}  // namespace

void write_zero_points(const Scheme& s, const Layout& l, const std::int32_t* zps, std::uint8_t* out) {
  const int w = zero_point_width(s);
  std::uint8_t* p = out + zero_point_offset(l);
  for (std::size_t j = 0; j < l.zero_points; ++j) put_le(p + j * w, static_cast<std::uint32_t>(zps[j]), w);
}

void read_zero_points(const Scheme& s, const Layout& l, const std::uint8_t* in, std::int32_t* zps) {
  const int w = zero_point_width(s);
  const bool is_signed = !info(s.value).is_unsigned;
  const std::uint8_t* p = in + zero_point_offset(l);
  for (std::size_t j = 0; j < l.zero_points; ++j) {
    const std::uint32_t f = get_le(p + j * w, w);
    zps[j] = !is_signed ? static_cast<std::int32_t>(f) : w == 1 ? static_cast<std::int8_t>(f) : static_cast<std::int16_t>(f);
  }
}

}  // namespace detail

Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  const Result<detail::Reading> r = detail::reading_of(q);
  if (!r) return r.status();
  const Layout& l = r->l;
  detail::BigBuffer<float> eb;
  float gs = 1.0f;
  QSCHEME_RETURN_IF_ERROR(detail::check_quantized(q, r->stored, l, &eb, &gs));
  std::vector<std::uint8_t> out(l.total_bytes);
  detail::write_values(q.scheme, l, q.codes.data(), out.data());
  detail::write_scales(q.scheme, l, q.scale_bits.data(), q.global_bits ? &*q.global_bits : nullptr, out.data());
  detail::write_zero_points(q.scheme, l, q.zero_points.data(), out.data());
  return out;
}

namespace {

// Burn's layout read under a reading (its profile and the point's wider patterns).
Result<QuantizedTensor> decode_as(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                                  const detail::StoredReading& reading) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  auto lr = layout_for_bytes(scheme, shape, bytes.size());
  if (!lr) return lr.status();
  const Layout& l = *lr;
  QuantizedTensor q;
  q.scheme = scheme;
  q.profile = reading.profile;
  q.shape.assign(shape.begin(), shape.end());
  // Checks in the reference's order (reference/bytes.cpp), each reporting the first offender:
  // padding (byte offset of its storage element), a native sub-byte code that is no sign
  // extension (element), a code the kind cannot produce (element), a scale (scale index), the
  // global (no index).
  q.codes.resize(l.elements);
  const std::size_t bad_pad = detail::read_values(scheme, l, bytes.data(), q.codes.data());
  if (bad_pad != kNoIndex) {
    return errors::nonzero_padding(bad_pad / static_cast<std::uint64_t>(l.storage_element_bytes), bad_pad);
  }
  const kernels::Kernels& kf = kernels::Get();
  const ValueInfo& vi = info(scheme.value);
  if (scheme.store.kind == StoreKind::native && vi.bits < 8) {
    // One byte a code: a sign (or zero) extension of the kind's bits, an e2m1 pattern in the
    // low nibble.
    const int lo = vi.is_float || vi.is_unsigned ? 0 : -(1 << (vi.bits - 1));
    const int hi = vi.is_float || vi.is_unsigned ? (1 << vi.bits) - 1 : (1 << (vi.bits - 1)) - 1;
    const std::size_t bad = kf.first_invalid_code(q.codes.data(), q.codes.size(), lo, hi, 0);
    if (bad != q.codes.size()) {
      return errors::bad_native_byte(bad, scheme.value, bytes[bad]);
    }
  }
  const detail::CodeRange cr = detail::code_range(scheme.value, reading);
  const std::size_t bad = kf.first_invalid_code(q.codes.data(), q.codes.size(), cr.lo, cr.hi, cr.nan_mask);
  if (bad != q.codes.size()) {
    return errors::bad_code(bad, scheme.value, q.codes[bad]);
  }
  const ScaleDtype sd = scheme.scale_dtype();
  const int sb = info(sd).bytes;
  q.scale_bits.resize(l.scales);
  const std::uint8_t* p = bytes.data() + l.value_bytes;
  for (std::size_t j = 0; j < l.scales; ++j) {
    q.scale_bits[j] = detail::get_le(p + j * sb, sb);
    float v;
    if (!detail::read_scale(q.scale_bits[j], sd, reading, &v)) {
      return errors::bad_scale(j, sd, q.scale_bits[j]);
    }
  }
  if (scheme.two_level()) {
    const std::uint32_t gb = detail::get_le(bytes.data() + l.value_bytes + l.scale_bytes, 4);
    double v;
    if (!detail::scale_from_bits(gb, ScaleDtype::f32, &v)) {
      return errors::bad_global(l.scales, gb);
    }
    q.global_bits = gb;
  }
  q.zero_points.resize(l.zero_points);
  detail::read_zero_points(scheme, l, bytes.data(), q.zero_points.data());
  QSCHEME_RETURN_IF_ERROR(errors::check_stored_zero_points(scheme.value, q.zero_points));
  return q;
}

}  // namespace

Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes, Profile profile) {
  return decode_as(scheme, shape, bytes, detail::StoredReading{profile});
}

Result<Profile> reading_profile(const Rules& rules) { return detail::stored_profile(rules); }

Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               const Rules& rules) {
  const Result<detail::StoredReading> r = detail::stored_reading(rules, scheme);
  if (!r) return r.status();
  Result<QuantizedTensor> q = decode_as(scheme, shape, bytes, *r);
  if (q && !profile_of(rules)) q->rules = rules;
  return q;
}

}  // namespace qscheme::fast
