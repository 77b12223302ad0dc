// One element's quantization and dequantization against its block's effective scale: the inner
// loops of quantize.cpp and dequantize.cpp. Exact integer arithmetic on the dyadic operands (an
// f32 and a scale are both mant * 2^exp), no rationals and no gcd per element.
#pragma once

#include <cstdint>

#include "reference/rational.hpp"
#include "scheme/quantized.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::reference {

// The code of x against effective scale e (precondition: x finite).
//  exact, integer kinds: clamp(round_half_even(x / e), lo, hi), x / e exact.
//  exact, float kinds:   x / e exact, rounded to nearest-even on the format's grid, saturating.
//  burn, integer kinds:  clamp(round_half_away(f32(x / e)), lo, hi); f32 overflow clamps.
//  burn, float kinds:    f32(x / e), then nearest-even on the format's grid, saturating.
//  onnx:                 as burn, but integer ties go to even; e2m1 gives +0 for a zero f32(x / e).
// e == 0 (exact profile, all-zero block) gives the zero of x's sign; zero codes keep x's sign.
std::int32_t quantize_element(Value v, Profile p, float x, const Dyadic& e);

// value(code) * e rounded once to f32, nearest-even, overflow to +-inf (IEEE). The sign of a
// zero result is the code's sign. Precondition: the code is valid for v.
float dequantize_element(Value v, std::int32_t code, const Dyadic& e);

}  // namespace qscheme::reference
