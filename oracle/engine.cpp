#include "oracle/engine.hpp"

#include <algorithm>
#include <string>

#include "fast/fast.hpp"
#include "fast/output_dtype.hpp"
#include "reference/reference.hpp"
#include "scheme/layout.hpp"
#include "scheme/printable.hpp"
#include "io/huge_pages.hpp"

namespace qscheme::oracle {

namespace {

// quantize then encode, and decode then dequantize, for an engine without a fused path.
Result<std::vector<std::uint8_t>> reference_quantize_bytes(const Scheme& scheme, Shape shape, std::span<const float> x,
                                                           const QuantizeOptions& options) {
  auto q = reference::quantize(scheme, shape, x, options);
  if (!q) return q.status();
  return reference::encode(*q);
}

// The reference's values of a decoded tensor into out, which must have room for exactly them.
Status dequantize_decoded_into(const Result<QuantizedTensor>& q, std::span<float> out) {
  if (!q) return q.status();
  auto y = reference::dequantize(*q);
  if (!y) return y.status();
  if (y->size() != out.size()) {
    return Status(ErrorCode::size_mismatch, "out has room for " + std::to_string(out.size()) + " values, the shape has " +
                                                std::to_string(y->size()) + " elements");
  }
  std::copy(y->begin(), y->end(), out.begin());
  return {};
}

Status reference_dequantize_bytes(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                                  Profile profile, std::span<float> out) {
  return dequantize_decoded_into(reference::decode(scheme, shape, bytes, profile), out);
}

Result<QuantizedTensor> fast_decode_as(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                                       const Rules& rules, ByteFormat format) {
  return fast::decode(scheme, shape, bytes, rules, format);
}

Result<std::vector<std::uint8_t>> fast_encode_as(const QuantizedTensor& q, ByteFormat format) {
  return fast::encode(q, format);
}

Result<std::vector<std::uint8_t>> fast_quantize_bytes_as(const Scheme& scheme, Shape shape, std::span<const float> x,
                                                         const QuantizeOptions& options, ByteFormat format) {
  // The byte count: Burn's layout's, or ggml's blocks' (whose errors come after quantize's,
  // which quantize_to_bytes then reports).
  std::size_t total = 0;
  if (format == ByteFormat::burn) {
    const auto l = make_layout(scheme, shape);
    if (!l) return l.status();  // the first check of quantize and quantize_to_bytes alike
    total = static_cast<std::size_t>(l->total_bytes);
  } else if (const auto g = ggml_layout(scheme, shape)) {
    total = static_cast<std::size_t>(g->total_bytes);
  }
  std::vector<std::uint8_t> out;
  io::resize_on_huge_pages(out, total);
  // One pass: out is this function's own buffer, dropped on error, so the untouched-output
  // guarantee of the default policy buys nothing here (the error is the same).
  const Status st = fast::quantize_to_bytes(scheme, shape, x.data(), x.size(), options, format, out.data(), out.size(),
                                            fast::OutputPolicy::single_pass);
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<std::uint8_t>> fast_quantize_bytes(const Scheme& scheme, Shape shape, std::span<const float> x,
                                                      const QuantizeOptions& options) {
  return fast_quantize_bytes_as(scheme, shape, x, options, ByteFormat::burn);
}

Status fast_dequantize_bytes_as(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                                const Rules& rules, ByteFormat format, std::span<float> out) {
  return fast::dequantize_from_bytes(scheme, shape, bytes.data(), bytes.size(), rules, format, out.data(), out.size());
}

Status fast_dequantize_bytes(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes, Profile profile,
                             std::span<float> out) {
  return fast::dequantize_from_bytes(scheme, shape, bytes.data(), bytes.size(), profile, out.data(), out.size());
}

Result<QuantizedTensor> reference_decode_as(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                                            const Rules& rules, ByteFormat format) {
  return reference::decode(scheme, shape, bytes, rules, format);
}

Result<std::vector<std::uint8_t>> reference_encode_as(const QuantizedTensor& q, ByteFormat format) {
  return reference::encode(q, format);
}

Result<std::vector<std::uint8_t>> reference_quantize_bytes_as(const Scheme& scheme, Shape shape,
                                                              std::span<const float> x, const QuantizeOptions& options,
                                                              ByteFormat format) {
  auto q = reference::quantize(scheme, shape, x, options);
  if (!q) return q.status();
  return reference::encode(*q, format);
}

Status reference_dequantize_bytes_as(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                                     const Rules& rules, ByteFormat format, std::span<float> out) {
  return dequantize_decoded_into(reference::decode(scheme, shape, bytes, rules, format), out);
}

}  // namespace

const std::vector<Engine>& engines() {
  static const std::vector<Engine> kEngines{
      {"fast", &fast::quantize, &fast::dequantize, &fast::encode, &fast::decode, &fast_quantize_bytes,
       &fast_dequantize_bytes, &fast_decode_as, &fast_encode_as, &fast::dequantize_16, &fast_quantize_bytes_as,
       &fast_dequantize_bytes_as},
      {"reference", &reference::quantize, &reference::dequantize, &reference::encode, &reference::decode,
       &reference_quantize_bytes, &reference_dequantize_bytes, &reference_decode_as, &reference_encode_as,
       &reference::dequantize_16, &reference_quantize_bytes_as, &reference_dequantize_bytes_as},
  };
  return kEngines;
}

Result<const Engine*> find_engine(std::string_view name) {
  std::string names;
  for (const Engine& e : engines()) {
    if (e.name == name) return &e;
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  }
  return Status(ErrorCode::invalid_argument, "--engine: unknown engine " + quote(name) + "; choose one of " + names);
}


}  // namespace qscheme::oracle
