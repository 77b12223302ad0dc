// What the kernel fuzzing kit does with a target (kit/qscheme_kit.h): read its recipe and scheme
// once, build an input from the fuzzer's bytes, run the kernel and qscheme check on its output.
// Kept apart from the libFuzzer entry points (fuzz_entry.cpp) so that it can be called and tested
// without a fuzzer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kit/qscheme_kit.h"
#include "scheme/byte_format.hpp"
#include "scheme/quantized.hpp"
#include "scheme/recipes.hpp"
#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme::kit {

struct Target {
  qscheme_kit_target fns{};
  const Recipe* recipe = nullptr;
  Scheme scheme;
  QuantizeOptions options;  // the recipe's point
  ByteFormat format = ByteFormat::burn;
  std::uint64_t max_rows = 4, max_cols = 256;
  std::uint64_t block_cols = 1;  // columns of one block along the innermost dim (1: no blocks)
};

// Errors: an unknown recipe, a scheme the recipe does not reproduce, no kernel given, or a
// maximum shape that holds no block.
Result<Target> make_target(const qscheme_kit_target& t);

struct Case {
  std::string name;  // the edge-case tensor it started from
  std::vector<std::uint64_t> shape;
  std::vector<float> x;
  std::size_t overwritten = 0;  // elements the fuzzer's bytes set
  float global_amax = 0;        // what quantize_with_global_amax is given
};

// The input the bytes describe (any bytes, the empty input too; nothing only when the scheme has
// no layout for the shape). The first 7 bytes (0 where missing) choose the shape (whole blocks,
// ggml's 32-element blocks for its byte format), a seed and an edge-case tensor; each 6 bytes
// after that an element (2 bytes, little-endian, modulo the count) and its f32 value (4 bytes),
// kept when finite. The seed's high byte also picks the global amax: x's own max |x|, a half, a
// third or 1/64 of it, 0, or twice it (at most the largest f32).
std::optional<Case> make_case(const Target& t, std::span<const std::uint8_t> data);

struct Finding {
  std::string kernel;  // "quantize" or "dequantize"
  std::string report;  // check's report, or what the kernel did instead of returning 0
};

// Runs the target's kernels on the case and compares them with the reference: nothing when they
// agree, or when the reference itself rejects the case (an input the recipe has no output for).
std::optional<Finding> run_case(const Target& t, const Case& c);

// A description of the case for a finding: shape, name, and the input as f32 bit patterns.
std::string describe(const Case& c);

}  // namespace qscheme::kit
