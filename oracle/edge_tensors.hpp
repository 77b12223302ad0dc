// The edge-case inputs every engine comparison iterates: `qscheme verify`, the engines-agree
// sweep of the tests, the properties and the fuzz seeds. Adding a case is one entry in
// edge_inputs(); every harness picks it up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::oracle {

struct EdgeInput {
  std::string name;
  std::vector<float> x;
  // Given scales (block, and the global for two levels) instead of a calibration.
  std::optional<GivenScales> scales;
  // One of the inputs of EdgeSet::every_size.
  bool every_size = false;
};

// Calibrated (no given scales) and finite: the inputs a check of one's own quantizer can hold it
// to without asking what it does with given scales, NaN or inf (the kit, fast_oracle_test).
bool calibrated_and_finite(const EdgeInput& in);

// every_size: the few inputs a harness that cuts large tensors short (verify) keeps at any size.
enum class EdgeSet { all, every_size };

// The inputs for scheme `s` over its layout `l` (make_layout(s, shape)), in a fixed order, the
// random parts drawn from `seed`. Per block where the scheme has blocks: ties after scaling,
// scale-rounding boundaries, saturation edges, constant and all-zero blocks; per tensor:
// subnormals, +-0, the largest and smallest f32, NaN and infinities (rejected), given scales
// (valid, zero, negative, off the grid and at the extremes, NaN, and ties against the
// effective scales they produce).
std::vector<EdgeInput> edge_inputs(const Scheme& s, const Layout& l, std::uint32_t seed,
                                   EdgeSet set = EdgeSet::all);

}  // namespace qscheme::oracle
