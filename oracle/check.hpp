// `qscheme check` as a library: compare another implementation's output (the candidate) with
// the reference engine's, count and locate the differences, and diagnose them by re-running the
// reference under the named deviations of variants.hpp.
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
  std::vector<std::int32_t> codes;                         // quantized
  std::optional<std::vector<std::uint32_t>> scale_bits;    // quantized: compared when present
  std::optional<std::uint32_t> global_bits;                // quantized: compared when present
  std::vector<std::uint8_t> bytes;                         // bytes
  std::vector<float> values;                               // dequantized
};

struct CheckRequest {
  Scheme scheme;
  std::vector<std::uint64_t> shape;
  std::vector<float> x;
  QuantizeOptions options;  // profile, calibration, given scales
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

// Errors: the reference's errors for the request (the input itself is bad), size-mismatch for a
// candidate of the wrong size, invalid-argument for a scheme mismatch.
Result<CheckReport> check(const CheckRequest& request, const Candidate& candidate);

// The report as JSON text (one object, ending in a newline) and as a human-readable table.
std::string to_json(const CheckReport& r);
std::string to_text(const CheckReport& r);

}  // namespace qscheme::oracle
