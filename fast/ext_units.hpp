// The units path of the extension stage's quantize (ext_quantize.cc): one pass over the input,
// a unit of whole blocks at a time, each unit's calibration (or its check, for given scales) and
// codes made while it is in cache.
#pragma once

#include "fast/ext_params.hpp"
#include "fast/ext_stage.hpp"
#include "fast/points.hpp"
#include "scheme/layout.hpp"

namespace qscheme::fast::detail {

// True when the units wrote the whole output. False when they do not take the tensor, or met
// an error (some of the output may then be written): the whole-tensor path runs and reports it.
bool ext_units(const Scheme& scheme, const Layout& l, const float* x, const Point& point, const ExtOutput& out);

}  // namespace qscheme::fast::detail
