// Golden vectors for other implementations (`qscheme vectors`): for a list of schemes, edge-case
// and seeded random tensors with what the reference engine makes of them under each profile,
// as .npy / .bin / Q.json files plus index.json and a README.md. The output is a pure function
// of the scheme list: no time stamps, no host randomness, a fixed iteration order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oracle/progress.hpp"
#include "scheme/recipes.hpp"
#include "scheme/status.hpp"

namespace qscheme::oracle {

// The schemes exported when none are named: the presets, then a representative set of tuples
// (every value kind, every store kind, every scale dtype, one- and two-level, 1-D and 2-D blocks).
std::vector<std::string> default_vector_schemes();

// A small portable PRNG (SplitMix64), so the random tensors are the same on every platform and
// standard library (std:: distributions are not specified bit for bit).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // A uniform value in [-1, 1) with 24 random bits, exact in f32.
  float symmetric_unit();

 private:
  std::uint64_t state_;
};

// Writes the vectors for `schemes` (scheme texts or preset names) into `dir`, all or nothing
// (io/output_dir.hpp): every scheme is checked before any file is written, and `dir` must not
// exist yet or be an empty folder. They are computed under the three profiles, or under
// `recipe` alone when one is given (then every scheme must be one the recipe reproduces; its
// files are named after the recipe, and a ggml recipe's tensors whose shape ggml's blocks hold
// get <recipe>.ggml.bin too). Errors: malformed-scheme and validate()'s codes for a bad scheme,
// invalid-argument for a scheme the recipe does not reproduce and for `-`, io-error.
// `progress` counts the cases written, of schemes x cases.
Status export_vectors(const std::string& dir, const std::vector<std::string>& schemes, const Recipe* recipe = nullptr,
                      const Progress& progress = {});

}  // namespace qscheme::oracle
