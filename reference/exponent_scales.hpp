// The ue8m0 scale rules that pick an exponent from a block's max |x| directly (scheme/rules.hpp:
// ocp-floor, torchao-ceil, torchao-even, log2f-floor), exactly, from the f32 amax.
#pragma once

#include <cstdint>
#include <optional>

#include "reference/rational.hpp"
#include "scheme/rules.hpp"
#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme::reference {

// The ue8m0 pattern (biased exponent, 0..254) `rule` gives block `block` of minifloat kind v
// whose max |x| is the f32 value amax (>= 0). unsupported-profile (index = block) where the
// rule's result is the NaN pattern 0xFF, which no code can be computed against (torchao-even
// when amax carries into f32's inf exponent). Precondition: rule is one of the four exponent
// rules, v a minifloat kind.
Result<std::uint32_t> exponent_scale(rule::ScaleRounding rule, Value v, float amax, std::uint64_t block);

// floor(f32(log2 a)): log2 rounded to the nearest f32 (to even), then the floor, for an f32
// a > 0. Decided exactly; internal error in the (never observed) case where the bounds used
// cannot separate log2 a from the rounding boundary.
Result<int> floor_of_f32_log2(float a);

// The exponent of the largest normal value of minifloat kind v (e4m3 8, e5m2 15, e2m1 2).
int emax_elem(Value v);

}  // namespace qscheme::reference
