// The units stage of quantize: the fast path of both outputs (sinks.hpp). See quantize_units.cc.
#pragma once

#include <cstdint>

#include "fast/bytes_plan.hpp"
#include "fast/f32_steps.hpp"
#include "fast/fast.hpp"
#include "fast/points.hpp"
#include "scheme/layout.hpp"

namespace qscheme::fast::detail {

// done: the sink holds the whole result. general: nothing to rely on in the sink; the
// whole-tensor stage (quantize_whole.hpp) computes the result or reports the error.
enum class Units : std::uint8_t { done, general };

// The exact and burn profiles and the MX recipes' points: calibrated by minmax or with given
// scales, on the schemes the plan takes (p.fused).
template <class Sink>
Units quantize_units(const Scheme& scheme, const Layout& l, const BytesPlan& p, const float* x, const Point& point,
                     OutputPolicy policy, const Sink& sink);

// The f32-step recipes (f32_steps.hpp) with one level of given f32 scales.
template <class Sink>
Units steps_units(StepRecipe recipe, const Scheme& scheme, const Layout& l, const BytesPlan& p, const float* x,
                  const GivenScales* given, OutputPolicy policy, const Sink& sink);

}  // namespace qscheme::fast::detail
