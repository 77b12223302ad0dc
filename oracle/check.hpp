// `qscheme check` as a library: compare another implementation's output (the candidate) with
// the expected one, count and locate the differences, and diagnose them by re-running the
// reference under the named deviations of variants.hpp. The expected output comes from the fast
// engine (bit-identical to the reference by construction and by test), as serialized bytes; the
// exact arithmetic runs only where the candidate differs, on a few of those blocks first.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

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
  // which the fast engine may refuse: the reference then computes the expected output, and a
  // point that is no profile's is compared without a diagnosis (the variants deviate from the
  // profiles).
  QuantizeOptions options;
  // The engine computing the expected output (engine.hpp's table); null: the fast engine.
  const Engine* engine = nullptr;
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

struct Diagnosis {
  std::string name;
  std::string description;
};

struct CheckReport {
  CandidateKind kind = CandidateKind::quantized;
  bool identical = false;
  std::uint64_t elements = 0;
  std::uint64_t differing_elements = 0;
  std::uint64_t scales = 0;
  std::uint64_t differing_scales = 0;  // block scales plus the global
  std::uint64_t bytes = 0;
  std::uint64_t differing_bytes = 0;   // bytes candidates only
  std::vector<Difference> first;       // at most kMaxShown, in index order
  // The deviations under which the reference reproduces the candidate exactly (empty when
  // identical, or when none does).
  std::vector<Diagnosis> diagnosis;
};

inline constexpr std::size_t kMaxShown = 8;

// Errors: the engines' errors for the request (the input itself is bad), size-mismatch for a
// candidate of the wrong size or of another shape (naming both shapes).
Result<CheckReport> check(const CheckRequest& request, const Candidate& candidate);

// The report as JSON text (one object, ending in a newline) and as a human-readable table.
std::string to_json(const CheckReport& r);
std::string to_text(const CheckReport& r);

}  // namespace qscheme::oracle
