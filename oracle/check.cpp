// check(): the expected bytes from the fast engine, the comparison in the candidate's own
// representation, then the diagnosis: the reference under each deviation on a few differing
// blocks first, and on the whole tensor only for the deviations that pass there.
#include "oracle/check.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "io/code_walk.hpp"
#include "oracle/engine.hpp"
#include "oracle/variants.hpp"
#include "reference/pack.hpp"
#include "reference/reference.hpp"
#include "scheme/checked.hpp"
#include "scheme/float_bits.hpp"

namespace qscheme::oracle {
namespace {

// Differing blocks the deviations are first tried on: enough that a deviation that does not
// reproduce the candidate fails there almost always, few enough to cost nothing next to one
// pass over the tensor.
constexpr std::size_t kTrialBlocks = 16;

// Equal as stored f32 values: the same bits, or both NaN (NaN payloads are not meaningful).
bool same_value(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return qscheme::f32_bits(a) == qscheme::f32_bits(b);
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

std::string dims(std::span<const std::uint64_t> shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

// A stored scale as an f32, with its sign where signed-scale rules set one (NaN for a pattern
// that is no scale).
float scale_as_f32(ScaleDtype d, std::uint32_t bits) {
  const std::uint32_t sign = scale_sign_bit(d);
  auto v = reference::scale_value(d, bits & ~sign);
  if (!v) return std::nanf("");
  return (bits & sign) ? -v->f32 : v->f32;
}

// The stored fields of a serialized tensor, read where they lie.
struct Fields {
  const Scheme& s;
  const Layout& l;
  std::span<const std::uint8_t> bytes;

  std::uint32_t field(std::uint64_t n, bool reversed = false) const { return io::field_at(s, l, bytes, n, reversed); }
  std::int32_t code(std::uint64_t n) const { return reference::code_of_field(s, field(n)); }
  std::uint32_t scale(std::uint64_t j) const {
    const int sb = info(s.scale_dtype()).bytes;
    return get_le(bytes, l.value_bytes + j * static_cast<std::uint64_t>(sb), sb);
  }
  std::optional<std::uint32_t> global() const {
    if (!s.two_level()) return std::nullopt;
    return get_le(bytes, l.value_bytes + l.scale_bytes, 4);
  }
};

// The row-major multi-index of element n.
std::vector<std::uint64_t> unravel(const Layout& l, std::uint64_t n) {
  std::vector<std::uint64_t> idx(l.shape.size());
  for (std::size_t d = l.shape.size(); d-- > 0;) {
    idx[d] = n % l.shape[d];
    n /= l.shape[d];
  }
  return idx;
}

std::uint64_t block_of(const Layout& l, std::uint64_t n) {
  const std::vector<std::uint64_t> idx = unravel(l, n);
  std::uint64_t b = 0;
  for (std::size_t d = 0; d < idx.size(); ++d) b = b * l.blocks_per_dim[d] + idx[d] / l.block[d];
  return b;
}

// The elements of block j, row-major, as the shape of the box they form and their indices.
struct Box {
  std::vector<std::uint64_t> shape;
  std::vector<std::uint64_t> elements;
};

Box box_of(const Layout& l, std::uint64_t j) {
  const std::size_t rank = l.shape.size();
  std::vector<std::uint64_t> first(rank);
  Box box;
  box.shape.resize(rank);
  for (std::size_t d = rank; d-- > 0;) {
    first[d] = j % l.blocks_per_dim[d] * l.block[d];
    j /= l.blocks_per_dim[d];
    box.shape[d] = std::min(l.block[d], l.shape[d] - first[d]);
  }
  std::uint64_t count = 1;
  for (std::uint64_t e : box.shape) count *= e;
  std::vector<std::uint64_t> idx(rank, 0);
  for (std::uint64_t k = 0; k < count; ++k) {
    std::uint64_t n = 0;
    for (std::size_t d = 0; d < rank; ++d) n = n * l.shape[d] + first[d] + idx[d];
    box.elements.push_back(n);
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < box.shape[d]) break;
      idx[d] = 0;
    }
  }
  return box;
}

// One element as a tensor of its own (every extent 1: one block, one scale), for the value of
// a single code under the request's rules.
QuantizedTensor single(const Scheme& s, const Rules& r, std::size_t rank, std::int32_t code, std::uint32_t scale,
                       std::optional<std::uint32_t> global) {
  QuantizedTensor q;
  q.scheme = s;
  if (const std::optional<Profile> p = profile_of(r)) {
    q.profile = *p;
  } else {
    q.rules = r;
  }
  q.shape.assign(rank, 1);
  q.codes = {code};
  q.scale_bits = {scale};
  q.global_bits = global;
  return q;
}

// The candidate as the comparisons see it.
class Found {
 public:
  Found(const Candidate& c, const Scheme& s, const Layout& l) : c_(c), s_(s), l_(l) {}

  bool serialized() const { return c_.kind == CandidateKind::bytes || (c_.kind == CandidateKind::quantized && c_.encoded); }
  Fields fields() const { return {s_, l_, c_.bytes}; }
  std::int32_t code(std::uint64_t n) const { return serialized() ? fields().code(n) : c_.codes[n]; }
  std::optional<std::uint32_t> scale(std::uint64_t j) const {
    if (serialized()) return fields().scale(j);
    if (c_.scale_bits) return (*c_.scale_bits)[j];
    return std::nullopt;
  }
  std::optional<std::uint32_t> global() const {
    if (serialized()) return fields().global();
    return c_.global_bits;
  }

 private:
  const Candidate& c_;
  const Scheme& s_;
  const Layout& l_;
};

// What the comparison found, beyond the report's counts: where to look for a diagnosis.
struct Differences {
  std::vector<std::uint64_t> shown;   // the first kMaxShown differing elements
  std::vector<std::uint64_t> blocks;  // the first kTrialBlocks distinct blocks that differ
  void note_block(std::uint64_t b) {
    if (blocks.size() < kTrialBlocks && std::find(blocks.begin(), blocks.end(), b) == blocks.end()) blocks.push_back(b);
  }
};

Status candidate_size(const Candidate& c, const CheckRequest& rq, const Layout& l) {
  if (c.shape && *c.shape != rq.shape) {
    std::optional<std::uint64_t> count = 1;
    for (std::uint64_t e : *c.shape) count = count ? checked_mul(*count, e) : std::nullopt;
    const char* hint = count == l.elements ? " (the same element count: transposed or reshaped?)" : "";
    return Status(ErrorCode::size_mismatch, fmt::format("the candidate's shape {} differs from the input's {}{}; give "
                                                        "the candidate in the input's shape",
                                                        dims(*c.shape), dims(rq.shape), hint));
  }
  switch (c.kind) {
    case CandidateKind::quantized:
      if (c.encoded) {
        if (c.bytes.size() != l.total_bytes) {
          return Status(ErrorCode::size_mismatch, fmt::format("the candidate's codes and scales take {} bytes, scheme "
                                                              "and shape {}",
                                                              c.bytes.size(), l.total_bytes));
        }
        return {};
      }
      if (c.codes.size() != l.elements) {
        return Status(ErrorCode::size_mismatch,
                      fmt::format("the candidate has {} codes, the input {} elements", c.codes.size(), l.elements));
      }
      if (c.scale_bits && c.scale_bits->size() != l.scales) {
        return Status(ErrorCode::size_mismatch,
                      fmt::format("the candidate has {} scales, the scheme takes {}", c.scale_bits->size(), l.scales));
      }
      return {};
    case CandidateKind::bytes:
      if (c.bytes.size() != l.total_bytes) {
        return Status(ErrorCode::size_mismatch,
                      fmt::format("the candidate has {} bytes, scheme and shape take {}", c.bytes.size(), l.total_bytes));
      }
      return {};
    case CandidateKind::dequantized:
      if (c.values.size() != l.elements) {
        return Status(ErrorCode::size_mismatch,
                      fmt::format("the candidate has {} values, the input {} elements", c.values.size(), l.elements));
      }
      return {};
  }
  return {};
}

// Does the output of variant v reproduce the candidate exactly, on the whole tensor?
bool reproduces(const Variant& v, const CheckRequest& rq, const Candidate& c) {
  auto q = quantize(v, rq.scheme, rq.shape, rq.x, rq.options);
  if (!q) return false;
  switch (c.kind) {
    case CandidateKind::quantized: {
      if (c.encoded) {
        // Codes, scales and global, compared in their encoding (the normal packing order).
        auto b = encode(base_variant(rq.options.profile, rq.scheme.value), *q);
        return b && *b == c.bytes;
      }
      if (q->codes != c.codes) return false;
      if (c.scale_bits && *c.scale_bits != q->scale_bits) return false;
      if (c.global_bits && c.global_bits != q->global_bits) return false;
      return true;
    }
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

// The trial: blocks can be quantized on their own when they are independent, i.e. a one-level
// block scheme (a per-tensor or a two-level scale depends on the whole tensor).
bool blocks_independent(const Scheme& s, const Layout& l) { return s.block && !s.two_level() && l.scales > 1; }

// Variant v quantizing block j on its own, as it would inside the whole tensor.
Result<QuantizedTensor> quantize_block(const Variant& v, const CheckRequest& rq, const Box& box, std::uint64_t j) {
  std::vector<float> x(box.elements.size());
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = rq.x[box.elements[k]];
  QuantizeOptions options = rq.options;
  if (options.scales) options.scales = GivenScales{{options.scales->block[j]}, std::nullopt};
  return quantize(v, rq.scheme, box.shape, x, options);
}

// Whether variant v's output agrees with the candidate on block j (a necessary condition for
// reproducing it: only a deviation passing every trial block is run on the whole tensor).
bool agrees_on_block(const Variant& v, const CheckRequest& rq, const Layout& l, const Candidate& c, const Found& found,
                     std::uint64_t j) {
  const Box box = box_of(l, j);
  auto q = quantize_block(v, rq, box, j);
  if (!q) return true;  // undecided here; the whole tensor decides
  switch (c.kind) {
    case CandidateKind::dequantized: {
      auto values = dequantize(v, *q);
      if (!values) return true;
      for (std::size_t k = 0; k < box.elements.size(); ++k) {
        if (!same_value((*values)[k], c.values[box.elements[k]])) return false;
      }
      return true;
    }
    case CandidateKind::bytes:
    case CandidateKind::quantized: {
      const bool reversed = c.kind == CandidateKind::bytes && v.reversed_packing;
      for (std::size_t k = 0; k < box.elements.size(); ++k) {
        const std::uint64_t n = box.elements[k];
        if (found.serialized()) {
          if (found.fields().field(n, reversed) != reference::field_of_code(rq.scheme, q->codes[k])) return false;
        } else if (c.codes[n] != q->codes[k]) {
          return false;
        }
      }
      const auto scale = found.scale(j);
      return !scale || *scale == q->scale_bits[0];
    }
  }
  return true;
}

// The comparison of a serialized candidate (bytes, or Q.json's codes and scales) with the
// expected bytes. Equal bytes are the common case and cost one memcmp.
void compare_serialized(const Fields& expected, const Fields& found, bool count_bytes, CheckReport& r, Differences& d) {
  const Layout& l = expected.l;
  if (count_bytes) r.bytes = l.total_bytes;
  if (std::memcmp(expected.bytes.data(), found.bytes.data(), expected.bytes.size()) == 0) return;
  if (count_bytes) {
    for (std::size_t i = 0; i < expected.bytes.size(); ++i) r.differing_bytes += expected.bytes[i] != found.bytes[i];
  }
  io::CodeWalk walk(expected.s, l);
  for (std::uint64_t n = 0; n < l.elements; ++n, walk.next()) {
    if (walk.field(expected.bytes) == walk.field(found.bytes)) continue;
    ++r.differing_elements;
    if (d.shown.size() < kMaxShown) d.shown.push_back(n);
    if (d.blocks.size() < kTrialBlocks) d.note_block(block_of(l, n));
  }
  for (std::uint64_t j = 0; j < l.scales; ++j) {
    if (expected.scale(j) == found.scale(j)) continue;
    ++r.differing_scales;
    d.note_block(j);
  }
  if (expected.global() != found.global()) ++r.differing_scales;
}

}  // namespace

Result<CheckReport> check(const CheckRequest& rq, const Candidate& c) {
  auto layout = make_layout(rq.scheme, rq.shape);
  if (!layout) return layout.status();
  const Layout& l = *layout;
  const Engine* engine = rq.engine;
  if (!engine) {
    auto fast = find_engine(kDefaultEngine);
    if (!fast) return fast.status();
    engine = *fast;
  }
  const Rules rules = rules_of(rq.options);
  // A point of the rule space that is no profile's: the variants below are deviations from the
  // profiles, so such a request is compared, not diagnosed.
  const bool profile_point = profile_of(rules).has_value();
  auto expected_bytes = engine->quantize_bytes(rq.scheme, rq.shape, rq.x, rq.options);
  if (!expected_bytes && !rq.engine && !profile_point && expected_bytes.status().code() == ErrorCode::unsupported_profile) {
    // The fast engine refuses the points it does not run (the engine table says so): the
    // reference computes the expected output for those.
    auto reference = find_engine("reference");
    if (!reference) return reference.status();
    engine = *reference;
    expected_bytes = engine->quantize_bytes(rq.scheme, rq.shape, rq.x, rq.options);
  }
  if (!expected_bytes) return expected_bytes.status();
  QSCHEME_RETURN_IF_ERROR(candidate_size(c, rq, l));
  const Fields expected{rq.scheme, l, *expected_bytes};
  const Found found(c, rq.scheme, l);

  CheckReport r;
  r.kind = c.kind;
  r.elements = l.elements;
  r.scales = l.scales + (rq.scheme.two_level() ? 1 : 0);
  Differences d;
  std::vector<float> expected_values;  // dequantized candidates only
  if (found.serialized()) {
    compare_serialized(expected, found.fields(), c.kind == CandidateKind::bytes, r, d);
  } else if (c.kind == CandidateKind::quantized) {
    io::CodeWalk walk(rq.scheme, l);
    for (std::uint64_t n = 0; n < l.elements; ++n, walk.next()) {
      if (reference::code_of_field(rq.scheme, walk.field(expected.bytes)) == c.codes[n]) continue;
      ++r.differing_elements;
      if (d.shown.size() < kMaxShown) d.shown.push_back(n);
      if (d.blocks.size() < kTrialBlocks) d.note_block(block_of(l, n));
    }
    if (c.scale_bits) {
      for (std::uint64_t j = 0; j < l.scales; ++j) {
        if (expected.scale(j) == (*c.scale_bits)[j]) continue;
        ++r.differing_scales;
        d.note_block(j);
      }
    }
    if (c.global_bits && c.global_bits != expected.global()) ++r.differing_scales;
  } else {
    if (profile_point) {
      expected_values.resize(static_cast<std::size_t>(l.elements));
      QSCHEME_RETURN_IF_ERROR(
          engine->dequantize_bytes(rq.scheme, rq.shape, expected.bytes, *profile_of(rules), expected_values));
    } else {
      auto q = engine->decode_as(rq.scheme, rq.shape, expected.bytes, rules, ByteFormat::burn);
      if (!q) return q.status();
      auto values = engine->dequantize(*q);
      if (!values) return values.status();
      expected_values = std::move(*values);
    }
    for (std::uint64_t n = 0; n < l.elements; ++n) {
      if (same_value(c.values[n], expected_values[n])) continue;
      ++r.differing_elements;
      if (d.shown.size() < kMaxShown) d.shown.push_back(n);
      if (d.blocks.size() < kTrialBlocks) d.note_block(block_of(l, n));
    }
  }
  r.identical = r.differing_elements == 0 && r.differing_scales == 0 && r.differing_bytes == 0;
  if (r.identical) return r;

  // The first differences in detail: values of single elements, exactly.
  const Variant base = base_variant(profile_of(rules).value_or(rq.options.profile), rq.scheme.value);
  const std::size_t rank = l.shape.size();
  bool found_scales_valid = true;
  if (c.kind != CandidateKind::dequantized) {
    for (std::uint64_t j = 0; j < l.scales && found_scales_valid; ++j) {
      found_scales_valid = scale_allowed(rules, rq.scheme.scale_dtype(), found.scale(j).value_or(expected.scale(j)));
    }
  }
  for (std::uint64_t n : d.shown) {
    Difference diff;
    diff.index = n;
    diff.input = rq.x[n];
    diff.expected_code = expected.code(n);
    diff.block = block_of(l, n);
    diff.scale = scale_as_f32(rq.scheme.scale_dtype(), expected.scale(diff.block));
    if (c.kind == CandidateKind::dequantized) {
      diff.expected_value = expected_values[n];
      diff.found_value = c.values[n];
    } else {
      auto ev = reference::dequantize(
          single(rq.scheme, rules, rank, diff.expected_code, expected.scale(diff.block), expected.global()));
      if (!ev) return ev.status();
      diff.expected_value = (*ev)[0];
      diff.found_code = found.code(n);
      if (found_scales_valid) {
        // The candidate's own value under the profile's rules (none when its scales are invalid).
        const QuantizedTensor one = single(rq.scheme, rules, rank, *diff.found_code,
                                           found.scale(diff.block).value_or(expected.scale(diff.block)),
                                           found.global() ? found.global() : expected.global());
        auto fv = profile_point ? dequantize(base, one) : reference::dequantize(one);
        if (fv) diff.found_value = (*fv)[0];
      }
    }
    r.first.push_back(diff);
  }

  if (!profile_point) return r;

  // The variant quantizer's base must be the reference itself, or its diagnoses mean nothing:
  // checked against the expected output where the diagnosis looks.
  const bool trial = blocks_independent(rq.scheme, l);
  if (trial) {
    for (std::uint64_t j : d.blocks) {
      const Box box = box_of(l, j);
      auto q = quantize_block(base, rq, box, j);
      bool same = q.ok() && q->scale_bits[0] == expected.scale(j);
      for (std::size_t k = 0; same && k < box.elements.size(); ++k) same = q->codes[k] == expected.code(box.elements[k]);
      if (!same) return Status(ErrorCode::internal, "the variant quantizer's base disagrees with the expected output");
    }
  } else {
    auto q = quantize(base, rq.scheme, rq.shape, rq.x, rq.options);
    auto b = q ? encode(base, *q) : Result<std::vector<std::uint8_t>>(q.status());
    if (!b || *b != *expected_bytes) {
      return Status(ErrorCode::internal, "the variant quantizer's base disagrees with the expected output");
    }
  }
  for (const Deviation& dev : deviations(*profile_of(rules), rq.scheme.value)) {
    if (trial && !std::all_of(d.blocks.begin(), d.blocks.end(), [&](std::uint64_t j) {
          return agrees_on_block(dev.variant, rq, l, c, found, j);
        })) {
      continue;
    }
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
