// reference::encode / reference::decode: Burn's serialized layout, dense and little-endian
// (spec burn-model.md §7):
//
//   [values: l.value_bytes][innermost-level scales: l.scale_bytes][f32 global: l.global_bytes]
//   [zero points: l.zero_point_bytes]
//
// Values are the storage elements of pack.hpp, each little-endian (a u32 word is 4 bytes, low
// byte first; native and packed-native elements are one byte). Scales are the bit patterns of
// their dtype, little-endian (f32 4 bytes, f16/bf16 2, ue4m3/ue8m0 1). The global scale, present
// exactly for a two-level scheme, is an f32 pattern. Zero points (affine mode, one per scale) are
// the kind's integers as a native code of a whole byte or two: two's complement for the signed
// kinds, little-endian. There is no padding between the regions.
#include <string>

#include "reference/check.hpp"
#include "reference/ggml_bytes.hpp"
#include "reference/pack.hpp"
#include "reference/reference.hpp"
#include "scheme/errors.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::reference {
namespace {

void put_le(std::vector<std::uint8_t>& out, std::uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

std::uint32_t get_le(std::span<const std::uint8_t> in, std::uint64_t offset, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint32_t>(in[offset + static_cast<std::uint64_t>(i)]) << (8 * i);
  return v;
}

// Bytes one zero point takes (1 or 2).
int zero_point_width(const Scheme& s) { return (info(s.value).bits + 7) / 8; }

// A zero point's field read back: sign-extended for the signed kinds.
std::int32_t zero_point_of_field(const Scheme& s, std::uint32_t field) {
  const int bits = 8 * zero_point_width(s);
  if (info(s.value).is_unsigned || ((field >> (bits - 1)) & 1) == 0) return static_cast<std::int32_t>(field);
  return static_cast<std::int32_t>(field) - (1 << bits);
}

}  // namespace

Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  auto layout = make_layout(q.scheme, q.shape);
  if (!layout) return layout.status();
  const Layout& l = *layout;
  QSCHEME_RETURN_IF_ERROR(check_stored(q, l));

  std::vector<std::uint8_t> out;
  out.reserve(l.total_bytes);
  for (std::uint32_t element : pack_codes(q.scheme, l, q.codes)) put_le(out, element, l.storage_element_bytes);
  const int scale_bytes = info(q.scheme.scale_dtype()).bytes;
  for (std::uint32_t bits : q.scale_bits) put_le(out, bits, scale_bytes);
  if (q.global_bits) put_le(out, *q.global_bits, 4);
  const int zb = zero_point_width(q.scheme);
  for (std::int32_t z : q.zero_points) put_le(out, static_cast<std::uint32_t>(z) & ((1u << (8 * zb)) - 1), zb);
  if (out.size() != l.total_bytes) {
    return Status(ErrorCode::internal, "encode wrote " + std::to_string(out.size()) + " bytes, the layout says " +
                                           std::to_string(l.total_bytes));
  }
  return out;
}

namespace {

// Burn's layout into a tensor whose profile or rules are already set in `q`.
Result<QuantizedTensor> decode_burn(QuantizedTensor q, Shape shape, std::span<const std::uint8_t> bytes) {
  const Scheme& scheme = q.scheme;
  auto layout = layout_for_bytes(scheme, shape, bytes.size());
  if (!layout) return layout.status();
  const Layout& l = *layout;
  // From here on every offset is below total_bytes == bytes.size().
  q.shape.assign(shape.begin(), shape.end());

  // Values.
  const int eb = l.storage_element_bytes;
  std::vector<std::uint32_t> storage(l.storage_elements);
  for (std::uint64_t i = 0; i < l.storage_elements; ++i) storage[i] = get_le(bytes, i * static_cast<std::uint64_t>(eb), eb);
  std::optional<BadPadding> bad_padding;
  q.codes = unpack_codes(scheme, l, storage, &bad_padding);
  if (bad_padding) {
    const std::uint64_t offset = bad_padding->storage_element * static_cast<std::uint64_t>(eb);
    return errors::nonzero_padding(bad_padding->storage_element, offset);
  }
  const ValueInfo& vi = info(scheme.value);
  if (scheme.store.kind == StoreKind::native && vi.bits < 8) {
    // One byte a code: a sub-byte integer must be its canonical sign (or zero) extension, an
    // e2m1 pattern must leave the high nibble zero.
    const std::int32_t lo = vi.is_float ? 0 : full_lo(scheme.value);
    const std::int32_t hi = vi.is_float ? (1 << vi.bits) - 1 : full_hi(scheme.value);
    for (std::size_t i = 0; i < q.codes.size(); ++i) {
      if (q.codes[i] < lo || q.codes[i] > hi) {
        return errors::bad_native_byte(i, scheme.value, bytes[i]);
      }
    }
  }

  // Scales.
  const int sb = info(scheme.scale_dtype()).bytes;
  q.scale_bits.resize(l.scales);
  for (std::uint64_t i = 0; i < l.scales; ++i) q.scale_bits[i] = get_le(bytes, l.value_bytes + i * static_cast<std::uint64_t>(sb), sb);
  if (scheme.two_level()) q.global_bits = get_le(bytes, l.value_bytes + l.scale_bytes, 4);
  const int zb = zero_point_width(scheme);
  q.zero_points.resize(l.zero_points);
  const std::uint64_t zero_point_start = l.value_bytes + l.scale_bytes + l.global_bytes;
  for (std::uint64_t j = 0; j < l.zero_points; ++j) {
    q.zero_points[j] = zero_point_of_field(scheme, get_le(bytes, zero_point_start + j * static_cast<std::uint64_t>(zb), zb));
  }

  // Everything else a stored quantity must satisfy (code ranges, NaN patterns, scale signs,
  // zero points in the kind's range).
  QSCHEME_RETURN_IF_ERROR(check_codes(q));
  QSCHEME_RETURN_IF_ERROR(check_scales(q));
  return q;
}

// A tensor shell under rules r: a profile's point as that profile.
QuantizedTensor shell(const Scheme& scheme, const Rules& r) {
  QuantizedTensor q;
  q.scheme = scheme;
  if (const std::optional<Profile> p = profile_of(r)) {
    q.profile = *p;
  } else {
    q.rules = r;
  }
  return q;
}

}  // namespace

Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               Profile profile) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  QuantizedTensor q;
  q.scheme = scheme;
  q.profile = profile;
  return decode_burn(std::move(q), shape, bytes);
}

Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               const Rules& rules, ByteFormat format) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  if (format == ByteFormat::ggml) return decode_ggml(shell(scheme, rules), shape, bytes);
  return decode_burn(shell(scheme, rules), shape, bytes);
}

Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q, ByteFormat format) {
  if (format == ByteFormat::ggml) {
    const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
    return encode_ggml(q);
  }
  return encode(q);
}

}  // namespace qscheme::reference
