#include "oracle/engine.hpp"

#include <algorithm>
#include <string>

#include "fast/fast.hpp"
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

Status reference_dequantize_bytes(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                                  Profile profile, std::span<float> out) {
  auto q = reference::decode(scheme, shape, bytes, profile);
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

// The fast engine runs the three profiles' points only (a point that is a profile's runs as that
// profile); any other point is an error, never a silent answer under another point's rules.
Status fast_not_yet(const Rules& r) {
  return Status(ErrorCode::unsupported_profile, "the fast engine does not run this point of the rule space yet (" +
                                                    format_rules(r) + "); use --engine reference");
}

Result<QuantizeOptions> fast_options(const QuantizeOptions& options) {
  if (!options.rules) return options;
  const std::optional<Profile> p = profile_of(*options.rules);
  if (!p) return fast_not_yet(*options.rules);
  QuantizeOptions o = options;
  o.profile = *p;
  o.rules.reset();
  return o;
}

Result<QuantizedTensor> fast_quantize(const Scheme& scheme, Shape shape, std::span<const float> x,
                                      const QuantizeOptions& options) {
  Result<QuantizeOptions> o = fast_options(options);
  if (!o) return o.status();
  return fast::quantize(scheme, shape, x, *o);
}

Result<std::vector<float>> fast_dequantize(const QuantizedTensor& q) {
  if (q.rules) return fast_not_yet(*q.rules);
  return fast::dequantize(q);
}

Result<std::vector<std::uint8_t>> fast_encode(const QuantizedTensor& q) {
  if (q.rules) return fast_not_yet(*q.rules);
  return fast::encode(q);
}

Result<QuantizedTensor> fast_decode_as(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                                       const Rules& rules, ByteFormat format) {
  const std::optional<Profile> p = profile_of(rules);
  if (!p) return fast_not_yet(rules);
  if (format != ByteFormat::burn) {
    return Status(ErrorCode::unsupported_profile, "the fast engine does not read ggml's blocks yet; use --engine reference");
  }
  return fast::decode(scheme, shape, bytes, *p);
}

Result<std::vector<std::uint8_t>> fast_encode_as(const QuantizedTensor& q, ByteFormat format) {
  if (format != ByteFormat::burn) {
    return Status(ErrorCode::unsupported_profile, "the fast engine does not write ggml's blocks yet; use --engine reference");
  }
  return fast_encode(q);
}

Result<std::vector<std::uint8_t>> fast_quantize_bytes(const Scheme& scheme, Shape shape, std::span<const float> x,
                                                      const QuantizeOptions& given_options) {
  Result<QuantizeOptions> o = fast_options(given_options);
  if (!o) return o.status();
  const QuantizeOptions& options = *o;
  const auto l = make_layout(scheme, shape);
  if (!l) return l.status();  // the first check of quantize and quantize_to_bytes alike
  std::vector<std::uint8_t> out;
  io::resize_on_huge_pages(out, static_cast<std::size_t>(l->total_bytes));
  // One pass: out is this function's own buffer, dropped on error, so the untouched-output
  // guarantee of the default policy buys nothing here (the error is the same).
  const Status st = fast::quantize_to_bytes(scheme, shape, x.data(), x.size(), options, out.data(), out.size(),
                                            fast::OutputPolicy::single_pass);
  if (!st.ok()) return st;
  return out;
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

}  // namespace

const std::vector<Engine>& engines() {
  static const std::vector<Engine> kEngines{
      {"fast", &fast_quantize, &fast_dequantize, &fast_encode, &fast::decode, &fast_quantize_bytes,
       &fast_dequantize_bytes, &fast_decode_as, &fast_encode_as},
      {"reference", &reference::quantize, &reference::dequantize, &reference::encode, &reference::decode,
       &reference_quantize_bytes, &reference_dequantize_bytes, &reference_decode_as, &reference_encode_as},
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
