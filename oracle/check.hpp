// `qscheme check` as a library: compare another implementation's output (the candidate) with
// the expected one under a point of the rule space (a profile's or a recipe's), count and locate
// the differences block by block, and name the point that reproduces the candidate: a recipe, a
// recipe with one or two rules changed (rule_search.hpp), or the closest one. The expected output
// comes from the fast engine (bit-identical to the reference by construction and by test), or
// from the reference for the points the fast engine does not run; the exact arithmetic of the
// search runs only where the candidate differs, on a few of those blocks first.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "oracle/progress.hpp"
#include "oracle/rule_search.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::oracle {

enum class CandidateKind : std::uint8_t {
  quantized,    // codes, and optionally stored scales (Q.json, or .npy codes + scales)
  bytes,        // Burn's serialized layout
  dequantized,  // f32 values
};

struct Candidate {
  CandidateKind kind = CandidateKind::quantized;
  std::vector<std::int32_t> codes;                         // quantized, one a element
  std::optional<std::vector<std::uint32_t>> scale_bits;    // quantized: compared when present
  std::optional<std::uint32_t> global_bits;                // quantized: compared when present
  // bytes; or, with `encoded`, a quantized candidate's codes, scales and global in Burn's
  // layout (what Q.json reads into: a byte or less a code instead of an i32)
  std::vector<std::uint8_t> bytes;
  bool encoded = false;
  std::vector<float> values;                               // dequantized
  // The candidate's own shape, when its file has one: it must be the input's.
  std::optional<std::vector<std::uint64_t>> shape;
};

struct Engine;

struct CheckRequest {
  Scheme scheme;
  std::vector<std::uint64_t> shape;
  std::vector<float> x;
  // profile, calibration, given scales; options.rules a point of the rule space (a recipe's),
  // which the fast engine may refuse: the reference then computes the expected output.
  QuantizeOptions options;
  // The engine computing the expected output (engine.hpp's table); null: the fast engine.
  const Engine* engine = nullptr;
  // The recipe the request names, for the report; empty: the first recipe whose point
  // options select (ocp-mx and torchao-mx-floor are one point), or "requested" for none.
  std::string recipe;
  // Differing elements and blocks listed in the report (all of them when unset).
  std::optional<std::size_t> max_shown = 8;
  // The diagnosis's search, as budget spent of its total.
  Progress progress;
};

// One differing element.
struct Difference {
  std::uint64_t index = 0;
  float input = 0;
  std::int32_t expected_code = 0;
  std::optional<std::int32_t> found_code;
  std::uint64_t block = 0;
  float scale = 0;  // the block's stored scale (expected), as an f32
  float expected_value = 0;
  std::optional<float> found_value;
};

// One block that differs (in a code, a value or its stored scale).
struct BlockDifference {
  std::uint64_t block = 0;
  std::uint64_t elements = 0;         // differing codes (or values, for a dequantized candidate)
  std::uint64_t values = 0;           // differing dequantized values (codes candidates)
  std::optional<float> expected_scale;  // the stored scales as f32 (NaN: a pattern no value has)
  std::optional<float> found_scale;     // the candidate's, when it has scales
  bool scale_differs = false;
  std::string diagnosis;              // one line: what differs there and what reproduces it
};

struct Diagnosis {
  std::string name;         // Explanation::name()
  std::string description;  // what the recipe or each change means
  Explanation point;
};

struct CheckReport {
  CandidateKind kind = CandidateKind::quantized;
  std::string checked_against;  // the recipe (or "requested" for another point)
  std::string rules;            // its point, format_rules
  bool identical = false;
  std::uint64_t elements = 0;
  std::uint64_t differing_elements = 0;
  bool scales_compared = false;        // the candidate carries scales (not values only)
  std::uint64_t scales = 0;
  std::uint64_t differing_scales = 0;  // block scales plus the global
  std::uint64_t bytes = 0;
  std::uint64_t differing_bytes = 0;   // bytes candidates only
  // Codes candidates: differing codes in blocks whose stored scale (or global) also differs,
  // and in blocks whose scales agree (rounded differently under the same scale); and elements
  // whose dequantized value differs (a code, its scale, or both).
  std::uint64_t codes_with_scale_difference = 0;
  std::uint64_t codes_under_same_scale = 0;
  std::uint64_t differing_values = 0;
  bool values_capped = false;  // differing_values counts the first 4096 differing blocks only
  // Dequantized candidates of integer kinds: +0 and -0 count as the same value.
  bool zero_signs_equal = false;
  std::vector<std::uint64_t> non_finite_scales;  // blocks whose candidate scale is inf or NaN (a global: "scales")
  bool non_finite_global = false;
  std::uint64_t differing_blocks = 0;
  std::vector<Difference> first;        // at most max_shown, in index order
  std::vector<BlockDifference> blocks;  // at most max_shown, in block order
  // The points that reproduce the candidate exactly (empty when identical, or when none does),
  // all from the first stage of the search that has any.
  std::vector<Diagnosis> diagnosis;
  int stage = -1;  // 0 recipes, 1 one change, 2 two changes
  std::optional<Diagnosis> closest;     // when none reproduces it
  std::uint64_t closest_elements = 0;   // elements and scales the closest point still misses
  std::uint64_t closest_scales = 0;
  std::vector<std::uint64_t> closest_blocks;
  std::uint64_t points_tried = 0;
  bool search_capped = false;
};

// Errors: the engines' errors for the request (the input itself is bad), size-mismatch for a
// candidate of the wrong size or of another shape (naming both shapes), unsupported-profile for
// a point that cannot describe the scheme (profile burn with ue8m0 scales).
Result<CheckReport> check(const CheckRequest& request, const Candidate& candidate);

// r widened to accept every stored pattern a candidate may hold (wrapped integers, NaN and inf
// codes, inf and negative scales), with r's dequantize arithmetic: for reading and valuing a
// candidate's own patterns.
Rules accepting_any_pattern(Rules r);

// The report as JSON text (one object, ending in a newline) and as a human-readable table.
std::string to_json(const CheckReport& r);
std::string to_text(const CheckReport& r);

}  // namespace qscheme::oracle
