// One element's quantization and dequantization against its block's scale, under a point of
// the rule space (scheme/rules.hpp): the inner loops of quantize.cpp and dequantize.cpp. Exact
// integer arithmetic on the operands (an f32 and a scale are both exact quotients); every f32
// step a rule names is an exact operation followed by one round_to_f32.
#pragma once

#include <cstdint>

#include "reference/rational.hpp"
#include "reference/scales.hpp"
#include "scheme/rules.hpp"
#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme::reference {

// The code of x under rules r against the block's scale e (amax: the block's max |x|, read by
// quotient=f32-max-over-amax only). Preconditions: x finite, validate_rules accepted r for the
// scheme, and e is not infinite. internal when an invariant the validation promises breaks.
// Affine mode: `zero_point` is added to the rounded quotient before the clamp (a zero x, or a
// NaN quotient, gives the zero point itself); validate_rules admits affine under standard
// saturation and under torch's int64-min-then-clamp (where a NaN or infinite quotient gives lo).
Result<std::int32_t> quantize_element(Value v, const Rules& r, float x, const SignedScale& e, const Quotient& amax,
                                      std::int32_t zero_point = 0);

// value(code) * e rounded once to f32, nearest-even, overflow to +-inf (IEEE); the sign is the
// code's sign times the scale's, and a zero keeps it (an integer 0 counts as +0). An infinite
// scale gives +-inf, or for code 0 the x86 default NaN (0xFFC00000) that ggml's 0 * inf gives.
// The overflow patterns of saturation=none decode to NaN (e4m3) and +-inf (e5m2).
// Precondition: code_allowed(r, v, code).
float dequantize_element(Value v, std::int32_t code, const SignedScale& e);

// The same for a non-negative dyadic scale (the exact profile's dequantize).
float dequantize_element(Value v, std::int32_t code, const Dyadic& e);

}  // namespace qscheme::reference
