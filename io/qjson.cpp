// Q.json's conversions of single scales, and the whole-text forms of the reader and writer
// (qjson_read.cpp, qjson_write.cpp) for tests and small tensors.
#include "io/qjson.hpp"

#include <fmt/core.h>

#include <bit>
#include <cmath>

#include "reference/reference.hpp"
#include "reference/scales.hpp"
#include "reference/values.hpp"

namespace qscheme::io::qjson {
namespace {

std::string number_text(float f) { return fmt::format("{}", f); }

}  // namespace

Result<float> scale_to_float(ScaleDtype d, std::uint32_t bits) {
  auto v = reference::scale_value(d, bits);
  if (!v) return v.status();
  return v->f32;
}

Result<std::uint32_t> float_to_scale_bits(ScaleDtype d, float v) {
  const std::string name(to_string(d));
  if (!std::isfinite(v)) return Status(ErrorCode::corrupt_bytes, "a scale must be finite, got " + number_text(v));
  if (std::signbit(v)) {
    return Status(ErrorCode::corrupt_bytes, "a scale must not be negative or -0, got " + number_text(v));
  }
  // round_up lands on v itself exactly when v is on the dtype's grid.
  const std::uint32_t bits = reference::round_up_to_dtype(reference::to_rational(v), d);
  auto back = reference::scale_value(d, bits);
  if (!back || std::bit_cast<std::uint32_t>(back->f32) != std::bit_cast<std::uint32_t>(v)) {
    return Status(ErrorCode::corrupt_bytes, number_text(v) + " is not exactly a " + name + " value");
  }
  return bits;
}

Result<std::string> write(const QuantizedTensor& q) {
  auto bytes = reference::encode(q);
  if (!bytes) return bytes.status();
  std::string text;
  const Status st = write(q.scheme, rules_of(q), q.shape, *bytes, [&](std::span<const std::uint8_t> piece) {
    text.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    return Status();
  });
  if (!st.ok()) return st;
  return text;
}

Result<QuantizedTensor> read(std::string_view text) {
  auto d = read(json::text_source(text), text.size());
  if (!d) return d.status();
  const Rules rules = d->rules ? *d->rules : profile_rules(d->profile);
  auto q = reference::decode(d->scheme, d->shape, d->bytes, rules);
  if (!q) return Status(ErrorCode::internal, "Q.json: the bytes read back do not decode: " + q.status().message());
  return q;
}

}  // namespace qscheme::io::qjson
