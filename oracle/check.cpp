// check(): the expected bytes from the fast engine (or the reference for points the fast engine
// does not run), the comparison in the candidate's own representation, block by block, then the
// rule-space search (rule_search.hpp) with the reference as its judge: each point on a few
// differing blocks first, and on the whole tensor only when it reproduces those.
#include "oracle/check.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>

#include "io/code_walk.hpp"
#include "oracle/engine.hpp"
#include "reference/calibrate.hpp"
#include "reference/pack.hpp"
#include "reference/reference.hpp"
#include "reference/values.hpp"
#include "scheme/checked.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/text.hpp"

namespace qscheme::oracle {
namespace {

// Differing blocks each point is first tried on: enough that a point that does not reproduce
// the candidate fails there almost always, few enough to cost nothing next to one pass over the
// tensor.
constexpr std::size_t kTrialBlocks = 16;
// Differing blocks whose dequantized values are compared (each valued exactly, block by block).
constexpr std::size_t kValueBlocks = 4096;

// Equal as stored f32 values: the same bits, or both NaN (NaN payloads are not meaningful);
// with zeros_equal (integer kinds, whose code 0 has no sign) +0 and -0 too.
bool same_value(float a, float b, bool zeros_equal) {
  if (std::isnan(a) && std::isnan(b)) return true;
  if (zeros_equal && a == 0.0f && b == 0.0f) return true;
  return qscheme::f32_bits(a) == qscheme::f32_bits(b);
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

// A stored scale as an f32, with its sign where signed-scale rules set one: +-inf for an
// infinite pattern, NaN for a NaN pattern or one that is no scale.
float scale_as_f32(ScaleDtype d, std::uint32_t bits) {
  const std::uint32_t sign = scale_sign_bit(d);
  const std::uint32_t mag = bits & ~sign;
  const bool negative = (bits & sign) != 0;
  const std::uint32_t inf = d == ScaleDtype::f32 ? 0x7F800000u : d == ScaleDtype::f16 ? 0x7C00u : d == ScaleDtype::bf16 ? 0x7F80u : 0;
  if (inf && mag == inf) return negative ? -INFINITY : INFINITY;
  auto v = reference::scale_value(d, mag);
  if (!v) return std::nanf("");
  return negative ? -v->f32 : v->f32;
}

// The options that run point r with the request's calibration and given scales.
QuantizeOptions options_at(const QuantizeOptions& base, const Rules& r) {
  QuantizeOptions o = base;
  if (const std::optional<Profile> p = profile_of(r)) {
    o.profile = *p;
    o.rules.reset();
  } else {
    o.profile = Profile::exact;
    o.rules = r;
  }
  return o;
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
  // Affine mode's zero point of scale j (none for sym): one or two bytes after the scales, two's
  // complement for a signed kind (docs/SEMANTICS.md section 14).
  std::vector<std::int32_t> zero_point(std::uint64_t j) const {
    if (!s.affine() || l.zero_points == 0) return {};
    const auto zb = static_cast<int>(l.zero_point_bytes / l.zero_points);
    const std::uint32_t raw = get_le(bytes, l.value_bytes + l.scale_bytes + j * static_cast<std::uint64_t>(zb), zb);
    const std::int64_t span = std::int64_t{1} << (8 * zb);
    const bool negative = !info(s.value).is_unsigned && (raw >> (8 * zb - 1)) != 0;
    return {static_cast<std::int32_t>(negative ? static_cast<std::int64_t>(raw) - span : raw)};
  }
};

std::uint64_t block_of(const Layout& l, std::uint64_t n) {
  std::array<std::uint64_t, kMaxRank> idx{};
  const std::size_t rank = l.shape.size();
  for (std::size_t d = rank; d-- > 0;) {
    idx[d] = n % l.shape[d];
    n /= l.shape[d];
  }
  std::uint64_t b = 0;
  for (std::size_t d = 0; d < rank; ++d) b = b * l.blocks_per_dim[d] + idx[d] / l.block[d];
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

// Stored patterns as a tensor of the given shape under point r (one block: one scale).
QuantizedTensor tensor_of(const Scheme& s, const Rules& r, std::vector<std::uint64_t> shape, std::vector<std::int32_t> codes,
                          std::vector<std::uint32_t> scales, std::optional<std::uint32_t> global,
                          std::vector<std::int32_t> zero_points) {
  QuantizedTensor q;
  q.scheme = s;
  if (const std::optional<Profile> p = profile_of(r)) {
    q.profile = *p;
  } else {
    q.rules = r;
  }
  q.shape = std::move(shape);
  q.codes = std::move(codes);
  q.scale_bits = std::move(scales);
  q.global_bits = global;
  q.zero_points = std::move(zero_points);
  return q;
}

// The candidate as the comparisons see it.
class Found {
 public:
  Found(const Candidate& c, const Scheme& s, const Layout& l) : c_(c), s_(s), l_(l) {}

  bool serialized() const { return c_.kind == CandidateKind::bytes || (c_.kind == CandidateKind::quantized && c_.encoded); }
  Fields fields() const { return {s_, l_, c_.bytes}; }
  std::int32_t code(std::uint64_t n) const { return serialized() ? fields().code(n) : c_.codes[n]; }
  // Element n against a code of the scheme, in the candidate's packing order.
  bool same_code(std::uint64_t n, std::int32_t code, bool reversed) const {
    if (serialized()) return fields().field(n, reversed) == reference::field_of_code(s_, code);
    return c_.codes[n] == code;
  }
  std::optional<std::uint32_t> scale(std::uint64_t j) const {
    if (serialized()) return fields().scale(j);
    if (c_.scale_bits) return (*c_.scale_bits)[j];
    return std::nullopt;
  }
  // Serialized candidates carry their zero points; codes candidates are read with the expected ones.
  std::optional<std::vector<std::int32_t>> zero_point(std::uint64_t j) const {
    if (serialized()) return fields().zero_point(j);
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

// Burn has no ue8m0 scale: its profile cannot describe such a scheme.
Status describable(const Rules& r, const Scheme& s) {
  if (profile_of(r) == Profile::burn && (s.scale_dtype() == ScaleDtype::ue8m0 || s.tensor == ScaleDtype::ue8m0)) {
    return Status(ErrorCode::unsupported_profile,
                  "profile burn cannot describe '" + format_scheme(s) +
                      "': Burn has no ue8m0 scales; check it against --profile exact or an MX recipe (--recipe ocp-mx, "
                      "torchao-mx-floor, microxcaling, ...)");
  }
  return {};
}

// Where the candidate differs from the expected output, block by block.
struct BlockTally {
  std::uint64_t elements = 0;
  bool scale_differs = false;
};
struct Differences {
  std::size_t max_shown = 0;
  std::vector<std::uint64_t> shown;            // the first max_shown differing elements
  std::map<std::uint64_t, BlockTally> blocks;  // every differing block
  bool global_differs = false;
  void element(const Layout& l, std::uint64_t n) {
    if (shown.size() < max_shown) shown.push_back(n);
    ++blocks[block_of(l, n)].elements;
  }
};

// The reference under any point, on the trial blocks or the whole tensor, against the candidate.
class ReferenceJudge final : public Judge {
 public:
  ReferenceJudge(const CheckRequest& rq, const Layout& l, const Candidate& c, const Found& found,
                 std::vector<std::uint64_t> trial, bool zeros_equal)
      : rq_(rq), l_(l), c_(c), found_(found), trial_(std::move(trial)), zeros_equal_(zeros_equal) {
    // Blocks can be quantized on their own when they are independent: a one-level block scheme
    // (a per-tensor or a two-level scale depends on the whole tensor).
    independent_ = rq.scheme.block && !rq.scheme.two_level() && l.scales > 1;
    if (independent_) {
      for (std::uint64_t j : trial_) {
        boxes_.push_back(box_of(l, j));
        trial_cost_ += boxes_.back().elements.size();
      }
    }
  }

  Outcome trial(const Rules& r, bool reversed) override {
    if (!independent_) return whole(r, reversed);
    Outcome o;
    for (std::size_t t = 0; t < trial_.size(); ++t) {
      const Box& box = boxes_[t];
      const std::uint64_t j = trial_[t];
      std::vector<float> x(box.elements.size());
      for (std::size_t k = 0; k < x.size(); ++k) x[k] = rq_.x[box.elements[k]];
      QuantizeOptions options = options_at(rq_.options, r);
      if (options.scales) options.scales = GivenScales{{options.scales->block[j]}, std::nullopt};
      auto q = reference::quantize(rq_.scheme, box.shape, x, options);
      if (!q) {
        o.refused = true;
        o.elements += box.elements.size();
        o.blocks.push_back(j);
        continue;
      }
      const std::uint64_t before = o.elements + o.scales;
      compare(*q, box.elements, {j}, reversed, o);
      if (o.elements + o.scales != before) o.blocks.push_back(j);
    }
    return o;
  }

  Outcome whole(const Rules& r, bool reversed) override {
    Outcome o;
    auto q = reference::quantize(rq_.scheme, rq_.shape, rq_.x, options_at(rq_.options, r));
    if (!q) {
      o.refused = true;
      o.elements = l_.elements;
      return o;
    }
    std::vector<std::uint64_t> all(static_cast<std::size_t>(l_.elements));
    for (std::size_t n = 0; n < all.size(); ++n) all[n] = n;
    std::vector<std::uint64_t> scales(static_cast<std::size_t>(l_.scales));
    for (std::size_t j = 0; j < scales.size(); ++j) scales[j] = j;
    std::vector<bool> bad(scales.size(), false);
    compare(*q, all, scales, reversed, o, &bad);
    for (std::size_t j = 0; j < bad.size(); ++j) {
      if (bad[j]) o.blocks.push_back(j);
    }
    return o;
  }

  std::uint64_t trial_cost() const override { return independent_ ? trial_cost_ : l_.elements; }
  std::uint64_t whole_cost() const override { return l_.elements; }
  std::vector<std::uint64_t> trial_blocks() const override { return trial_; }
  bool packing_visible() const override {
    return c_.kind == CandidateKind::bytes && rq_.scheme.store.kind != StoreKind::native;
  }

 private:
  // q holds the elements `elements` (row-major, q's own order) and the scales `scales` of the
  // tensor; the differences are added to o (and, per block, to bad when given).
  void compare(const QuantizedTensor& q, const std::vector<std::uint64_t>& elements, const std::vector<std::uint64_t>& scales,
               bool reversed, Outcome& o, std::vector<bool>* bad = nullptr) const {
    auto mark = [&](std::uint64_t n) {
      if (bad) (*bad)[block_of(l_, n)] = true;
    };
    if (c_.kind == CandidateKind::dequantized) {
      auto values = reference::dequantize(q);
      if (!values) {
        o.refused = true;
        o.elements += elements.size();
        if (bad) std::fill(bad->begin(), bad->end(), true);
        return;
      }
      for (std::size_t k = 0; k < elements.size(); ++k) {
        o.output.push_back(std::bit_cast<std::uint32_t>((*values)[k]));
        if (same_value((*values)[k], c_.values[elements[k]], zeros_equal_)) continue;
        ++o.elements;
        mark(elements[k]);
      }
      return;
    }
    for (std::size_t k = 0; k < elements.size(); ++k) {
      o.output.push_back(static_cast<std::uint32_t>(q.codes[k]));
      if (found_.same_code(elements[k], q.codes[k], reversed)) continue;
      ++o.elements;
      mark(elements[k]);
    }
    for (std::size_t i = 0; i < scales.size(); ++i) {
      o.output.push_back(q.scale_bits[i]);
      const auto s = found_.scale(scales[i]);
      if (!s || *s == q.scale_bits[i]) continue;
      ++o.scales;
      if (bad) (*bad)[scales[i]] = true;
    }
    if (q.global_bits) o.output.push_back(*q.global_bits);
    const auto g = found_.global();
    if (g && q.global_bits && *g != *q.global_bits) {
      ++o.scales;
      if (bad) std::fill(bad->begin(), bad->end(), true);
    }
  }

  const CheckRequest& rq_;
  const Layout& l_;
  const Candidate& c_;
  const Found& found_;
  std::vector<std::uint64_t> trial_;
  bool zeros_equal_;
  bool independent_ = false;
  std::vector<Box> boxes_;
  std::uint64_t trial_cost_ = 0;
};

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
    d.element(l, n);
  }
  for (std::uint64_t j = 0; j < l.scales; ++j) {
    if (expected.scale(j) == found.scale(j)) continue;
    ++r.differing_scales;
    d.blocks[j].scale_differs = true;
  }
  if (expected.global() != found.global()) {
    ++r.differing_scales;
    d.global_differs = true;
  }
}

std::string value_text(float v) { return fmt::format("{:.8g}", v); }

Diagnosis diagnosis_of(const Explanation& e) { return {e.name(), e.description(), e}; }

}  // namespace

Rules accepting_any_pattern(Rules r) {
  r.saturation = rule::Saturation::none;
  r.scale_overflow = rule::ScaleOverflow::infinity;
  r.statistic = rule::Statistic::signed_max;
  return r;
}

Result<CheckReport> check(const CheckRequest& rq, const Candidate& c) {
  auto layout = make_layout(rq.scheme, rq.shape);
  if (!layout) return layout.status();
  const Layout& l = *layout;
  const Rules rules = rules_of(rq.options);
  QSCHEME_RETURN_IF_ERROR(describable(rules, rq.scheme));
  const Engine* engine = rq.engine;
  if (!engine) {
    auto fast = find_engine(kDefaultEngine);
    if (!fast) return fast.status();
    engine = *fast;
  }
  const bool profile_point = profile_of(rules).has_value();
  auto expected_bytes = engine->quantize_bytes(rq.scheme, rq.shape, rq.x, rq.options);
  const ErrorCode refused = expected_bytes ? ErrorCode::ok : expected_bytes.status().code();
  if (!rq.engine && !profile_point && refused == ErrorCode::unsupported_profile) {
    // The fast engine refuses the points it does not run (the engine table says so): the
    // reference computes the expected output.
    auto reference = find_engine("reference");
    if (!reference) return reference.status();
    engine = *reference;
    expected_bytes = engine->quantize_bytes(rq.scheme, rq.shape, rq.x, rq.options);
  }
  if (!expected_bytes) return expected_bytes.status();
  QSCHEME_RETURN_IF_ERROR(candidate_size(c, rq, l));
  const Fields expected{rq.scheme, l, *expected_bytes};
  const Found found(c, rq.scheme, l);
  const ScaleDtype sd = rq.scheme.scale_dtype();
  const bool integer_kind = !info(rq.scheme.value).is_float;

  CheckReport r;
  r.kind = c.kind;
  const std::string recipe = rq.recipe.empty() ? recipe_name_of(rules, rq.scheme) : rq.recipe;
  r.checked_against = recipe.empty() ? "requested" : recipe;
  r.rules = format_rules(rules);
  r.elements = l.elements;
  r.scales = l.scales + (rq.scheme.two_level() ? 1 : 0);
  r.scales_compared = c.kind != CandidateKind::dequantized && (found.serialized() || c.scale_bits.has_value());
  r.zero_signs_equal = c.kind == CandidateKind::dequantized && integer_kind;
  Differences d;
  d.max_shown = rq.max_shown.value_or(SIZE_MAX);
  std::vector<float> expected_values;  // dequantized candidates only
  if (found.serialized()) {
    compare_serialized(expected, found.fields(), c.kind == CandidateKind::bytes, r, d);
  } else if (c.kind == CandidateKind::quantized) {
    io::CodeWalk walk(rq.scheme, l);
    for (std::uint64_t n = 0; n < l.elements; ++n, walk.next()) {
      if (reference::code_of_field(rq.scheme, walk.field(expected.bytes)) == c.codes[n]) continue;
      ++r.differing_elements;
      d.element(l, n);
    }
    if (c.scale_bits) {
      for (std::uint64_t j = 0; j < l.scales; ++j) {
        if (expected.scale(j) == (*c.scale_bits)[j]) continue;
        ++r.differing_scales;
        d.blocks[j].scale_differs = true;
      }
    }
    if (c.global_bits && c.global_bits != expected.global()) {
      ++r.differing_scales;
      d.global_differs = true;
    }
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
      if (same_value(c.values[n], expected_values[n], r.zero_signs_equal)) continue;
      ++r.differing_elements;
      d.element(l, n);
    }
  }
  // Candidate scales that are inf or NaN, whether or not the expected one is too.
  if (r.scales_compared) {
    for (const auto& [j, tally] : d.blocks) {
      if (tally.scale_differs && !std::isfinite(scale_as_f32(sd, found.scale(j).value()))) r.non_finite_scales.push_back(j);
    }
    if (d.global_differs && !std::isfinite(std::bit_cast<float>(found.global().value()))) r.non_finite_global = true;
  }
  r.identical = r.differing_elements == 0 && r.differing_scales == 0 && r.differing_bytes == 0;
  if (r.identical) return r;
  r.differing_blocks = d.blocks.size();

  // The first differences in detail: values of single elements, exactly. The candidate's own
  // value under the checked rules, widened to take any pattern it holds.
  const Rules any_pattern = accepting_any_pattern(rules);
  const std::size_t rank = l.shape.size();
  for (std::uint64_t n : d.shown) {
    Difference diff;
    diff.index = n;
    diff.input = rq.x[n];
    diff.expected_code = expected.code(n);
    diff.block = block_of(l, n);
    diff.scale = scale_as_f32(sd, expected.scale(diff.block));
    if (c.kind == CandidateKind::dequantized) {
      diff.expected_value = expected_values[n];
      diff.found_value = c.values[n];
    } else {
      const std::vector<std::uint64_t> ones(rank, 1);
      auto ev = reference::dequantize(tensor_of(rq.scheme, rules, ones, {diff.expected_code},
                                                {expected.scale(diff.block)}, expected.global(),
                                                expected.zero_point(diff.block)));
      if (!ev) return ev.status();
      diff.expected_value = (*ev)[0];
      diff.found_code = found.code(n);
      auto fv = reference::dequantize(tensor_of(rq.scheme, any_pattern, ones, {*diff.found_code},
                                                {found.scale(diff.block).value_or(expected.scale(diff.block))},
                                                found.global() ? found.global() : expected.global(),
                                                found.zero_point(diff.block).value_or(expected.zero_point(diff.block))));
      if (fv) diff.found_value = (*fv)[0];
    }
    r.first.push_back(diff);
  }

  // Block by block: the codes split by whether their block's scale differs too, and the
  // dequantized values of codes candidates (found under the widened rules).
  std::vector<std::uint64_t> trial;
  std::size_t valued = 0;
  for (const auto& [j, tally] : d.blocks) {
    const bool scale_differs = tally.scale_differs || d.global_differs;
    (scale_differs ? r.codes_with_scale_difference : r.codes_under_same_scale) +=
        c.kind == CandidateKind::dequantized ? 0 : tally.elements;
    if (trial.size() < kTrialBlocks) trial.push_back(j);
    BlockDifference b;
    b.block = j;
    b.elements = tally.elements;
    b.scale_differs = tally.scale_differs;
    if (c.kind != CandidateKind::dequantized) {
      b.expected_scale = scale_as_f32(sd, expected.scale(j));
      if (const auto s = found.scale(j)) b.found_scale = scale_as_f32(sd, *s);
    }
    if (c.kind != CandidateKind::dequantized && valued++ < kValueBlocks) {
      const Box box = box_of(l, j);
      std::vector<std::int32_t> ec, fc;
      for (std::uint64_t n : box.elements) {
        ec.push_back(expected.code(n));
        fc.push_back(found.code(n));
      }
      auto ev = reference::dequantize(
          tensor_of(rq.scheme, rules, box.shape, ec, {expected.scale(j)}, expected.global(), expected.zero_point(j)));
      auto fv = reference::dequantize(tensor_of(rq.scheme, any_pattern, box.shape, fc,
                                                {found.scale(j).value_or(expected.scale(j))},
                                                found.global() ? found.global() : expected.global(),
                                                found.zero_point(j).value_or(expected.zero_point(j))));
      if (ev && fv) {
        for (std::size_t k = 0; k < box.elements.size(); ++k) b.values += !same_value((*ev)[k], (*fv)[k], false);
      } else {
        b.values = box.elements.size();  // a pattern no rule gives a value: every value counted
      }
      r.differing_values += b.values;
    }
    if (r.blocks.size() < d.max_shown) r.blocks.push_back(b);
  }
  r.values_capped = c.kind != CandidateKind::dequantized && valued > kValueBlocks;

  // The search: recipes, then one rule changed, then two.
  SearchRequest sr{rq.scheme, rq.options.calibration, rq.options.scales.has_value(), rules, rq.progress};
  ReferenceJudge judge(rq, l, c, found, trial, r.zero_signs_equal);
  const SearchResult s = search(sr, r.checked_against, judge);
  r.stage = s.stage;
  for (const Explanation& e : s.reproducing) r.diagnosis.push_back(diagnosis_of(e));
  if (s.closest) {
    r.closest = diagnosis_of(*s.closest);
    const bool requested = s.closest->changes.empty() && s.closest->rules == rules;
    if (requested) {
      r.closest_elements = r.differing_elements;
      r.closest_scales = r.differing_scales;
      for (const auto& [j, tally] : d.blocks) r.closest_blocks.push_back(j);
    } else {
      r.closest_elements = s.closest_outcome.elements;
      r.closest_scales = s.closest_outcome.scales;
      r.closest_blocks = s.closest_outcome.blocks;
    }
  }
  r.points_tried = s.points;
  r.search_capped = s.capped;

  for (BlockDifference& b : r.blocks) {
    std::vector<std::string> parts;
    if (b.found_scale && !std::isfinite(*b.found_scale)) {
      parts.push_back("the candidate's scale is " + value_text(*b.found_scale));
    } else if (b.scale_differs) {
      parts.push_back("scale differs");
    }
    if (c.kind == CandidateKind::dequantized) {
      parts.push_back(fmt::format("{} value(s) differ", b.elements));
    } else if (b.elements) {
      parts.push_back(fmt::format("{} code(s) differ {}", b.elements,
                                  b.scale_differs || d.global_differs ? "with the scale" : "under the same scale"));
    }
    if (c.kind != CandidateKind::dequantized && b.values) parts.push_back(fmt::format("{} value(s) differ", b.values));
    if (const auto it = s.block_reproduced_by.find(b.block); it != s.block_reproduced_by.end()) {
      parts.push_back("reproduced by " + it->second);
    }
    for (std::size_t i = 0; i < parts.size(); ++i) b.diagnosis += (i ? "; " : "") + parts[i];
  }
  return r;
}

}  // namespace qscheme::oracle
