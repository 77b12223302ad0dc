// Error statistics of schemes on one tensor: what `qscheme stats` prints and qscheme.stats
// returns. Each scheme is quantized and dequantized by the fast engine (the reference's output
// bit for bit) under a profile and calibration (exact and minmax by default); the sums behind RMSE and SQNR are
// taken in long double (a 64-bit significand: each square of an f32 difference is exact in it
// up to 2^-64 relative, and 2^40 such terms lose less than 2^-24 relative).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scheme/quantized.hpp"
#include "scheme/status.hpp"
#include "scheme/validate.hpp"

namespace qscheme::oracle {

struct SchemeStats {
  std::string name;    // as given (a preset keeps its name)
  std::string scheme;  // canonical text
  std::uint64_t elements = 0;
  std::uint64_t blocks = 0;  // innermost-level scales
  std::uint64_t bytes = 0;   // Burn's serialized layout: values, scales and the global
  double bits_per_element = 0;
  double max_abs_error = 0;
  double rmse = 0;
  double sqnr_db = 0;  // 10 log10(sum x^2 / sum (x - y)^2); +inf when y == x, -inf when x is all zero but y is not
  // Elements beyond the largest magnitude their block represents, clamped to it (|x| > |y| at
  // the kind's extreme code), and blocks whose every dequantized value is zero (an all-zero
  // input block, or one that underflowed entirely), as shares of elements and blocks.
  double saturated = 0;
  double zero_blocks = 0;
  std::vector<float> dequantized;  // y, kept for the error distribution (Python's plot)
};

// The statistics of each scheme (a preset name or scheme text) on x, sorted by bits per
// element (ties keep the given order). Errors: the scheme's or the engine's, with the scheme's
// name in the message.
Result<std::vector<SchemeStats>> scheme_stats(std::span<const std::string> schemes, Shape shape,
                                              std::span<const float> x, const QuantizeOptions& options = {});

// "q8_0;q4_0" -> {"q8_0", "q4_0"}: ';' separates (scheme texts hold ','), blanks trimmed.
std::vector<std::string> split_schemes(std::string_view list);

// One JSON array of objects (without the dequantized values), ending in a newline; and a table.
std::string stats_json(std::span<const SchemeStats> s);
std::string stats_text(std::span<const SchemeStats> s);

}  // namespace qscheme::oracle
