// The Q.json writer: serialized bytes to text, streamed to a sink in pieces of about 1 MiB.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <string>

#include "io/code_walk.hpp"
#include "io/qjson.hpp"
#include "io/scale_numbers.hpp"
#include "reference/pack.hpp"
#include "reference/values.hpp"
#include "scheme/errors.hpp"
#include "scheme/rules.hpp"
#include "scheme/text.hpp"

namespace qscheme::io::qjson {
namespace {

constexpr std::size_t kPiece = std::size_t{1} << 20;

std::uint32_t get_le(std::span<const std::uint8_t> in, std::uint64_t offset, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint32_t>(in[offset + static_cast<std::uint64_t>(i)]) << (8 * i);
  return v;
}

// Text gathered into pieces of about kPiece bytes before it goes to the sink.
class Out {
 public:
  explicit Out(const Sink& sink) : sink_(sink) { buf_.reserve(kPiece + 256); }

  Status put(std::string_view s) {
    buf_.append(s);
    return buf_.size() >= kPiece ? flush() : Status();
  }
  Status put_int(std::int64_t v) {
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    return put(std::string_view(tmp, static_cast<std::size_t>(r.ptr - tmp)));
  }
  // The shortest text that reads back as exactly f (std::to_chars), with ".0" on an integer so
  // that scales read as numbers with a fraction, as they always have.
  Status put_float(float f) {
    char tmp[48];
    const auto r = std::to_chars(tmp, tmp + sizeof tmp - 2, f);
    std::string_view s(tmp, static_cast<std::size_t>(r.ptr - tmp));
    if (s.find_first_of(".e") == std::string_view::npos) {
      tmp[s.size()] = '.';
      tmp[s.size() + 1] = '0';
      s = std::string_view(tmp, s.size() + 2);
    }
    return put(s);
  }
  // A JSON string; scheme and profile names are plain ASCII, escaped all the same.
  Status put_string(std::string_view s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') {
        q.push_back('\\');
        q.push_back(c);
      } else if (static_cast<unsigned char>(c) < 0x20) {
        static constexpr char kHex[] = "0123456789abcdef";
        q += "\\u00";
        q.push_back(kHex[static_cast<unsigned char>(c) >> 4]);
        q.push_back(kHex[c & 15]);
      } else {
        q.push_back(c);
      }
    }
    q.push_back('"');
    return put(q);
  }
  Status flush() {
    if (buf_.empty()) return {};
    Status st = sink_(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(buf_.data()), buf_.size()));
    buf_.clear();
    return st;
  }

 private:
  const Sink& sink_;
  std::string buf_;
};

// Zero point j of an affine tensor's bytes: one or two bytes after the scales, sign-extended for
// the signed kinds (reference/bytes.cpp).
std::int32_t zero_point_at(const Scheme& s, const Layout& l, std::span<const std::uint8_t> bytes, std::uint64_t j) {
  const int zb = (info(s.value).bits + 7) / 8;
  const std::uint32_t f = get_le(bytes, l.value_bytes + l.scale_bytes + l.global_bytes + j * static_cast<std::uint64_t>(zb), zb);
  if (info(s.value).is_unsigned || ((f >> (8 * zb - 1)) & 1) == 0) return static_cast<std::int32_t>(f);
  return static_cast<std::int32_t>(f) - (1 << (8 * zb));
}

// decode()'s checks of serialized bytes under rules r, in its order, without unpacking them:
// non-zero padding (storage order), a native sub-byte code that is no sign extension, a code
// the rules cannot produce (row-major), a block scale, the global. Then what JSON cannot write:
// an infinite scale, which some rules store (ggml's f16 overflow).
Status check_fields(const Scheme& s, const Rules& r, const Layout& l, std::span<const std::uint8_t> bytes) {
  const std::uint64_t eb = static_cast<std::uint64_t>(l.storage_element_bytes);
  if (l.elements > 0 && l.packed_axis >= 0) {
    const auto axis = static_cast<std::size_t>(l.packed_axis);
    const auto nq = static_cast<std::uint64_t>(l.codes_per_storage_element);
    std::uint64_t outer = 1, inner = 1;
    for (std::size_t i = 0; i < axis; ++i) outer *= l.shape[i];
    for (std::size_t i = axis + 1; i < l.shape.size(); ++i) inner *= l.shape[i];
    const std::uint64_t n = l.shape[axis];
    const std::uint64_t words = n / nq + (n % nq != 0);
    if (n % nq != 0) {
      // Only the last storage element of a line has padding: fields n % nq and up.
      const int bits = reference::field_bits(s);
      const std::uint32_t used = (std::uint32_t{1} << (static_cast<int>(n % nq) * bits)) - 1;
      for (std::uint64_t o = 0; o < outer; ++o) {
        for (std::uint64_t r = 0; r < inner; ++r) {
          const std::uint64_t w = (o * words + words - 1) * inner + r;
          if (get_le(bytes, w * eb, static_cast<int>(eb)) & ~used) return errors::nonzero_padding(w, w * eb);
        }
      }
    }
  }
  const ValueInfo& vi = info(s.value);
  if (s.store.kind == StoreKind::native && vi.bits < 8) {
    const std::int32_t lo = vi.is_float ? 0 : full_lo(s.value);
    const std::int32_t hi = vi.is_float ? (1 << vi.bits) - 1 : full_hi(s.value);
    for (std::uint64_t i = 0; i < l.elements; ++i) {
      const std::int32_t c = reference::code_of_field(s, bytes[i]);
      if (c < lo || c > hi) return errors::bad_native_byte(i, s.value, bytes[i]);
    }
  }
  // Fields are at most 16 bits wide (a native i16 or u16): whether each holds a code, decided once.
  const int field_bits = reference::field_bits(s);
  std::vector<bool> valid(std::size_t{1} << field_bits);
  for (std::uint32_t f = 0; f < valid.size(); ++f) valid[f] = code_allowed(r, s.value, reference::code_of_field(s, f));
  CodeWalk walk(s, l);
  for (std::uint64_t e = 0; e < l.elements; ++e, walk.next()) {
    const std::uint32_t f = walk.field(bytes);
    if (!valid[f]) return errors::bad_code(e, s.value, reference::code_of_field(s, f));
  }
  const ScaleDtype d = s.scale_dtype();
  const int sb = info(d).bytes;
  for (std::uint64_t j = 0; j < l.scales; ++j) {
    const std::uint32_t b = get_le(bytes, l.value_bytes + j * static_cast<std::uint64_t>(sb), sb);
    if (!scale_allowed(r, d, b)) return errors::bad_scale(j, d, b);
  }
  if (s.two_level()) {
    const std::uint32_t g = get_le(bytes, l.value_bytes + l.scale_bytes, 4);
    if (!reference::is_valid_scale(ScaleDtype::f32, g)) return errors::bad_global(l.scales, g);
  }
  for (std::uint64_t j = 0; j < l.zero_points; ++j) {
    const std::int32_t z = zero_point_at(s, l, bytes, j);
    if (z < vi.lo || z > vi.hi) return errors::bad_zero_point(j, s.value, z);
  }
  if (r.scale_overflow == rule::ScaleOverflow::infinity) {
    const std::uint32_t sign = scale_sign_bit(d);
    for (std::uint64_t j = 0; j < l.scales; ++j) {
      const std::uint32_t b = get_le(bytes, l.value_bytes + j * static_cast<std::uint64_t>(sb), sb) & ~sign;
      if (!reference::is_valid_scale(d, b)) {
        return Status(ErrorCode::invalid_argument, "block scale " + std::to_string(j) +
                                                       " is infinite, which Q.json cannot hold (JSON has no "
                                                       "infinity); write the tensor's bytes (.bin) instead",
                      j);
      }
    }
  }
  return {};
}

}  // namespace

Status write(const Scheme& s, Profile profile, Shape shape, std::span<const std::uint8_t> bytes, const Sink& sink) {
  return write(s, profile_rules(profile), shape, bytes, sink);
}

Status write(const Scheme& s, const Rules& r, Shape shape, std::span<const std::uint8_t> bytes, const Sink& sink) {
  auto layout = layout_for_bytes(s, shape, bytes.size());
  if (!layout) return layout.status();
  const Layout& l = *layout;
  QSCHEME_RETURN_IF_ERROR(check_fields(s, r, l, bytes));
  const std::optional<Profile> profile = profile_of(r);

  Out out(sink);
  QSCHEME_RETURN_IF_ERROR(out.put("{\n \"scheme\": "));
  QSCHEME_RETURN_IF_ERROR(out.put_string(format_scheme(s)));
  QSCHEME_RETURN_IF_ERROR(out.put(",\n \"profile\": "));
  QSCHEME_RETURN_IF_ERROR(out.put_string(to_string(profile.value_or(Profile::exact))));
  if (!profile) {
    QSCHEME_RETURN_IF_ERROR(out.put(",\n \"rules\": "));
    QSCHEME_RETURN_IF_ERROR(out.put_string(format_rules(r)));
  }
  QSCHEME_RETURN_IF_ERROR(out.put(",\n \"shape\": ["));
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) QSCHEME_RETURN_IF_ERROR(out.put(","));
    QSCHEME_RETURN_IF_ERROR(out.put_int(static_cast<std::int64_t>(shape[i])));  // < 2^63: make_layout
  }
  QSCHEME_RETURN_IF_ERROR(out.put("],\n \"codes\": ["));
  // The text of every field's code, a comma first, made once (fields are at most 16 bits wide).
  std::vector<std::string> code_text(std::size_t{1} << reference::field_bits(s));
  for (std::uint32_t f = 0; f < code_text.size(); ++f) code_text[f] = "," + std::to_string(reference::code_of_field(s, f));
  CodeWalk walk(s, l);
  for (std::uint64_t e = 0; e < l.elements; ++e, walk.next()) {
    const std::string& t = code_text[walk.field(bytes)];
    QSCHEME_RETURN_IF_ERROR(out.put(e ? std::string_view(t) : std::string_view(t).substr(1)));
  }
  QSCHEME_RETURN_IF_ERROR(out.put("],\n \"block_scales\": ["));
  const ScaleNumbers scales(s.scale_dtype());
  const int sb = info(s.scale_dtype()).bytes;
  // A sign bit is only there under signed-scale rules (check_fields): the magnitude's value, negated.
  const std::uint32_t sign = scale_sign_bit(s.scale_dtype());
  for (std::uint64_t j = 0; j < l.scales; ++j) {
    if (j) QSCHEME_RETURN_IF_ERROR(out.put(","));
    const std::uint32_t b = get_le(bytes, l.value_bytes + j * static_cast<std::uint64_t>(sb), sb);
    const float v = scales.value(b & ~sign);
    QSCHEME_RETURN_IF_ERROR(out.put_float((b & sign) ? -v : v));
  }
  QSCHEME_RETURN_IF_ERROR(out.put("],\n \"global_scale\": "));
  if (s.two_level()) {
    QSCHEME_RETURN_IF_ERROR(out.put_float(std::bit_cast<float>(get_le(bytes, l.value_bytes + l.scale_bytes, 4))));
  } else {
    QSCHEME_RETURN_IF_ERROR(out.put("null"));
  }
  if (s.affine()) {
    QSCHEME_RETURN_IF_ERROR(out.put(",\n \"zero_points\": ["));
    for (std::uint64_t j = 0; j < l.zero_points; ++j) {
      if (j) QSCHEME_RETURN_IF_ERROR(out.put(","));
      QSCHEME_RETURN_IF_ERROR(out.put_int(zero_point_at(s, l, bytes, j)));
    }
    QSCHEME_RETURN_IF_ERROR(out.put("]"));
  }
  QSCHEME_RETURN_IF_ERROR(out.put(",\n \"bytes\": \""));
  static constexpr char kDigits[] = "0123456789abcdef";
  char hex[512];
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t n = std::min(bytes.size() - at, sizeof hex / 2);
    for (std::size_t i = 0; i < n; ++i) {
      hex[2 * i] = kDigits[bytes[at + i] >> 4];
      hex[2 * i + 1] = kDigits[bytes[at + i] & 15];
    }
    QSCHEME_RETURN_IF_ERROR(out.put(std::string_view(hex, 2 * n)));
    at += n;
  }
  QSCHEME_RETURN_IF_ERROR(out.put("\"\n}\n"));
  return out.flush();
}

}  // namespace qscheme::io::qjson
