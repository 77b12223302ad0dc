// check(): reference result, comparison in the candidate's own representation, then diagnosis.
#include "oracle/check.hpp"

#include <fmt/core.h>

#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>

#include "reference/calibrate.hpp"
#include "reference/pack.hpp"
#include "reference/reference.hpp"
#include "oracle/variants.hpp"

namespace qscheme::oracle {
namespace {

// Equal as stored f32 values: the same bits, or both NaN (NaN payloads are not meaningful).
bool same_value(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

bool same_values(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!same_value(a[i], b[i])) return false;
  }
  return true;
}

std::uint32_t get_le(std::span<const std::uint8_t> in, std::uint64_t offset, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint32_t>(in[offset + static_cast<std::uint64_t>(i)]) << (8 * i);
  return v;
}

// The codes and scales a byte string holds, read as raw fields (no validity checks: a candidate
// may hold patterns the scheme cannot produce, and those are differences to report).
QuantizedTensor raw_fields(const Scheme& s, const Layout& l, std::span<const std::uint8_t> bytes) {
  QuantizedTensor q;
  q.scheme = s;
  q.shape = l.shape;
  std::vector<std::uint32_t> storage(l.storage_elements);
  for (std::uint64_t k = 0; k < l.storage_elements; ++k) storage[k] = get_le(bytes, k * l.storage_element_bytes, l.storage_element_bytes);
  q.codes = reference::unpack_codes(s, l, storage);
  const int sb = info(s.scale_dtype()).bytes;
  for (std::uint64_t j = 0; j < l.scales; ++j) q.scale_bits.push_back(get_le(bytes, l.value_bytes + j * sb, sb));
  if (s.two_level()) q.global_bits = get_le(bytes, l.value_bytes + l.scale_bytes, 4);
  return q;
}

float scale_as_f32(ScaleDtype d, std::uint32_t bits) {
  auto v = reference::scale_value(d, bits);
  return v ? v->f32 : std::nanf("");
}

// Does the output of variant v reproduce the candidate exactly?
bool reproduces(const Variant& v, const CheckRequest& rq, const Candidate& c) {
  auto q = quantize(v, rq.scheme, rq.shape, rq.x, rq.options);
  if (!q) return false;
  switch (c.kind) {
    case CandidateKind::quantized:
      if (q->codes != c.codes) return false;
      if (c.scale_bits && *c.scale_bits != q->scale_bits) return false;
      if (c.global_bits && c.global_bits != q->global_bits) return false;
      return true;
    case CandidateKind::bytes: {
      auto b = encode(v, *q);
      return b && *b == c.bytes;
    }
    case CandidateKind::dequantized: {
      auto d = dequantize(v, *q);
      return d && same_values(*d, c.values);
    }
  }
  return false;
}

}  // namespace

Result<CheckReport> check(const CheckRequest& rq, const Candidate& c) {
  auto layout = make_layout(rq.scheme, rq.shape);
  if (!layout) return layout.status();
  const Layout& l = *layout;
  auto expected = reference::quantize(rq.scheme, rq.shape, rq.x, rq.options);
  if (!expected) return expected.status();
  auto expected_values = reference::dequantize(*expected);
  if (!expected_values) return expected_values.status();

  // The variant quantizer's base must be the reference itself, or its diagnoses mean nothing.
  const Variant base = base_variant(rq.options.profile, rq.scheme.value);
  auto again = quantize(base, rq.scheme, rq.shape, rq.x, rq.options);
  if (!again || !(*again == *expected)) {
    return Status(ErrorCode::internal, "the variant quantizer's base disagrees with the reference engine");
  }

  CheckReport r;
  r.kind = c.kind;
  r.elements = l.elements;
  r.scales = l.scales + (rq.scheme.two_level() ? 1 : 0);
  // What the candidate says, in quantized form where it has one.
  std::optional<QuantizedTensor> found;
  std::optional<std::vector<float>> found_values;
  switch (c.kind) {
    case CandidateKind::quantized: {
      if (c.codes.size() != l.elements) {
        return Status(ErrorCode::size_mismatch, fmt::format("the candidate has {} codes, the input {} elements",
                                                            c.codes.size(), l.elements));
      }
      if (c.scale_bits && c.scale_bits->size() != l.scales) {
        return Status(ErrorCode::size_mismatch, fmt::format("the candidate has {} scales, the scheme takes {}",
                                                            c.scale_bits->size(), l.scales));
      }
      found = *expected;
      found->codes = c.codes;
      if (c.scale_bits) found->scale_bits = *c.scale_bits;
      if (c.global_bits) found->global_bits = c.global_bits;
      break;
    }
    case CandidateKind::bytes: {
      if (c.bytes.size() != l.total_bytes) {
        return Status(ErrorCode::size_mismatch, fmt::format("the candidate has {} bytes, scheme and shape take {}",
                                                            c.bytes.size(), l.total_bytes));
      }
      found = raw_fields(rq.scheme, l, c.bytes);
      found->profile = expected->profile;
      auto eb = reference::encode(*expected);
      if (!eb) return eb.status();
      r.bytes = eb->size();
      for (std::size_t i = 0; i < eb->size(); ++i) r.differing_bytes += (*eb)[i] != c.bytes[i];
      break;
    }
    case CandidateKind::dequantized:
      if (c.values.size() != l.elements) {
        return Status(ErrorCode::size_mismatch, fmt::format("the candidate has {} values, the input {} elements",
                                                            c.values.size(), l.elements));
      }
      found_values = c.values;
      break;
  }
  if (found && !found_values) {
    // The candidate's own values under the profile's rules (nothing when its fields are invalid).
    auto v = dequantize(base, *found);
    if (v) found_values = std::move(*v);
  }
  if (found) {
    for (std::size_t j = 0; j < l.scales; ++j) r.differing_scales += found->scale_bits[j] != expected->scale_bits[j];
    if (found->global_bits != expected->global_bits) ++r.differing_scales;
  }

  const std::vector<std::uint64_t> block_of = reference::block_of_elements(l);
  for (std::uint64_t n = 0; n < l.elements; ++n) {
    const bool differs = found ? found->codes[n] != expected->codes[n] : !same_value(c.values[n], (*expected_values)[n]);
    if (!differs) continue;
    ++r.differing_elements;
    if (r.first.size() >= kMaxShown) continue;
    Difference d;
    d.index = n;
    d.input = rq.x[n];
    d.expected_code = expected->codes[n];
    if (found) d.found_code = found->codes[n];
    d.block = block_of[n];
    d.scale = scale_as_f32(rq.scheme.scale_dtype(), expected->scale_bits[d.block]);
    d.expected_value = (*expected_values)[n];
    if (found_values) d.found_value = (*found_values)[n];
    r.first.push_back(d);
  }
  r.identical = r.differing_elements == 0 && r.differing_scales == 0 && r.differing_bytes == 0;
  if (r.identical) return r;
  for (const Deviation& dev : deviations(rq.options.profile, rq.scheme.value)) {
    if (reproduces(dev.variant, rq, c)) r.diagnosis.push_back({std::string(dev.name), std::string(dev.description)});
  }
  return r;
}

std::string_view kind_name(CandidateKind k) {
  switch (k) {
    case CandidateKind::quantized: return "quantized";
    case CandidateKind::bytes: return "bytes";
    case CandidateKind::dequantized: return "dequantized";
  }
  return "?";
}

std::string to_json(const CheckReport& r) {
  nlohmann::ordered_json j;
  j["result"] = r.identical ? "identical" : "differs";
  j["candidate_kind"] = kind_name(r.kind);
  j["elements"] = r.elements;
  j["differing_elements"] = r.differing_elements;
  j["scales"] = r.scales;
  j["differing_scales"] = r.differing_scales;
  if (r.kind == CandidateKind::bytes) {
    j["bytes"] = r.bytes;
    j["differing_bytes"] = r.differing_bytes;
  }
  auto num = [](float f) -> nlohmann::json {
    if (std::isfinite(f)) return static_cast<double>(f);
    return std::isnan(f) ? "nan" : (f > 0 ? "inf" : "-inf");
  };
  j["first"] = nlohmann::json::array();
  for (const Difference& d : r.first) {
    nlohmann::ordered_json e;
    e["index"] = d.index;
    e["input"] = num(d.input);
    e["expected_code"] = d.expected_code;
    e["found_code"] = d.found_code ? nlohmann::json(*d.found_code) : nlohmann::json(nullptr);
    e["block"] = d.block;
    e["scale"] = num(d.scale);
    e["expected_value"] = num(d.expected_value);
    e["found_value"] = d.found_value ? num(*d.found_value) : nlohmann::json(nullptr);
    j["first"].push_back(e);
  }
  j["diagnosis"] = nlohmann::json::array();
  for (const Diagnosis& d : r.diagnosis) j["diagnosis"].push_back({{"variant", d.name}, {"description", d.description}});
  return j.dump(1) + "\n";
}

std::string to_text(const CheckReport& r) {
  std::string out;
  if (r.identical) {
    out += fmt::format("identical: {} elements and {} scale(s) match the reference bit for bit\n", r.elements, r.scales);
    return out;
  }
  out += fmt::format("DIFFERS: {} of {} elements, {} of {} scale(s)", r.differing_elements, r.elements,
                     r.differing_scales, r.scales);
  if (r.kind == CandidateKind::bytes) out += fmt::format(", {} of {} bytes", r.differing_bytes, r.bytes);
  out += "\n";
  if (!r.first.empty()) {
    out += fmt::format("  {:>8} {:>14} {:>9} {:>9} {:>6} {:>14} {:>14} {:>14}\n", "index", "input", "expected", "found",
                       "block", "scale", "deq expected", "deq found");
    for (const Difference& d : r.first) {
      out += fmt::format("  {:>8} {:>14.8g} {:>9} {:>9} {:>6} {:>14.8g} {:>14.8g} {:>14}\n", d.index, d.input,
                         d.expected_code, d.found_code ? std::to_string(*d.found_code) : "-", d.block, d.scale,
                         d.expected_value, d.found_value ? fmt::format("{:.8g}", *d.found_value) : "-");
    }
  }
  if (r.diagnosis.empty()) {
    out += "diagnosis: no known variant reproduces the candidate exactly\n";
  } else {
    for (const Diagnosis& d : r.diagnosis) {
      out += fmt::format("diagnosis: {}: {} (the reference with this change reproduces the candidate exactly)\n", d.name,
                         d.description);
    }
  }
  return out;
}

}  // namespace qscheme::oracle
