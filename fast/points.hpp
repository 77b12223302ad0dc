// The points of the rule space (scheme/rules.hpp) the fast engine runs. A point runs either as
// one of the three profiles, or as the exact profile with another scale step (the MX recipes:
// their codes are the exact profile's, x / 2^k rounded once); every other point is an
// unsupported-profile error naming it, never an answer under another point's rules.
#pragma once

#include <cstdint>

#include "scheme/quantized.hpp"
#include "scheme/rules.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// How a calibrated block's scale follows from its max |x| where a point's rule is not a
// profile's (docs/SEMANTICS.md section 11): one of the ue8m0 exponent rules, or rceil
// (arithmetic=f32-reciprocal, scale=up: the smallest power of two >= f32(amax * f32(1 / M))).
enum class ScalePick : std::uint8_t { profile, ocp_floor, torchao_ceil, torchao_even, rceil };

struct Point {
  QuantizeOptions options;  // the profile the point runs as, rules cleared
  ScalePick pick = ScalePick::profile;
  // torch's codes of given f32 scales (recipe torch-qint8): t = f32(x * f32(1 / e)) rounded half
  // to even; NaN, +-inf and 2^63 and beyond give lo (torch's INT64_MIN, then the clamp), the rest
  // clamped to [lo, hi]. The stored scales are the given ones.
  bool torch_codes = false;
};

// The point options ask for: a profile's point as that profile; any other checked as the
// reference checks it (validate_rules), then unsupported-profile if the fast engine does not run
// it yet. The caller checks the layout and given scales first, as the reference does.
Result<Point> point_of(const Scheme& s, const QuantizeOptions& options);

// The profile whose reading of stored tensors (their checks, dequantize, decode) equals that of
// rules r, or unsupported-profile.
Result<Profile> stored_profile(const Rules& r);

// The ue8m0 pattern of a block of minifloat kind v with max |x| of bits a (finite), under pick
// (not profile); 0xFF where torchao-even carries into f32's inf exponent (an error).
std::uint32_t exponent_pattern(ScalePick pick, Value v, std::uint32_t a);

}  // namespace qscheme::fast::detail
