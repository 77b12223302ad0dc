// The points of the rule space (scheme/rules.hpp) the fast engine runs. A point runs either as
// one of the three profiles, as the exact profile with another scale step (the MX recipes:
// their codes are the exact profile's, x / 2^k rounded once), or as one of the f32-step recipes
// (f32_steps.hpp: torch's, ggml's); every other point is an unsupported-profile error naming it,
// never an answer under another point's rules.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "fast/kernels/dispatch.h"
#include "scheme/quantized.hpp"
#include "scheme/rules.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// How a calibrated block's scale follows from its max |x| where a point's rule is not a
// profile's (docs/SEMANTICS.md section 11): one of the ue8m0 exponent rules (ocp-floor,
// torchao's ceil and even, microxcaling's log2f-floor), or rceil
// (arithmetic=f32-reciprocal, scale=up: the smallest power of two >= f32(amax * f32(1 / M))).
enum class ScalePick : std::uint8_t { profile, ocp_floor, torchao_ceil, torchao_even, rceil, log2f_floor };

// ggml's quantizers (recipes ggml-q8_0, ggml-q8_0-x86, ggml-q4_0), calibrated by max |x| or, for
// q4_0, the signed max: their scales and codes in f32 steps (f32_steps.hpp).
enum class GgmlPoint : std::uint8_t { none, q8_0, q8_0_x86, q4_0 };

// The options a point runs with: the profile it runs as, the calibration, and the caller's given
// scales, read where they are (QuantizeOptions::scales, alive for the call): a copy per call was a
// pass over every scale, 4 MiB for nvfp4 on 64 MiB of input.
struct PointOptions {
  Profile profile = Profile::exact;
  Calibration calibration = Calibration::minmax;
  const GivenScales* scales = nullptr;
  // QuantizeOptions::global_amax (checked by check_global_amax), -0 as +0: the max |x| a
  // two-level scheme's global follows from, in place of the tensor's.
  std::optional<float> global_amax;
};

struct Point {
  PointOptions options;
  ScalePick pick = ScalePick::profile;
  // torch's codes of given f32 scales (recipe torch-qint8): t = f32(x * f32(1 / e)) rounded half
  // to even; NaN, +-inf and 2^63 and beyond give lo (torch's INT64_MIN, then the clamp), the rest
  // clamped to [lo, hi]. The stored scales are the given ones.
  bool torch_codes = false;
  // microxcaling's codes under an exponent rule (recipe microxcaling): t = f32(x / 2^k), rounded
  // onto the minifloat's grid by floor(f32(q + 0.5)) of q = |t| on its binade's quantum, t's sign,
  // +0 for a zero t; else the exact profile's codes of x / 2^k.
  bool mx_steps = false;
  // ggml's point, on one calibrated level of f32, f16 or bf16 block scales over an integer kind.
  GgmlPoint ggml = GgmlPoint::none;
  // NVIDIA's NVFP4 reference quantizer (recipe nvidia-nvfp4, te_nvfp4.hpp): its f32 global and
  // block scales, its codes from f32 reciprocals.
  bool te_nvfp4 = false;
};

// The point options ask for: a profile's point as that profile; any other checked as the
// reference checks it (validate_rules), then unsupported-profile if the fast engine does not run
// it yet. The caller checks the layout and given scales first, as the reference does. The point
// refers to options' given scales: options must outlive it.
Result<Point> point_of(const Scheme& s, const QuantizeOptions& options);

// How the fast engine reads tensors stored under a point (their checks, dequantize, encode,
// decode): as a profile, over the wider patterns some points produce, and with the f32 product of
// two levels. With neither it is that profile's reading; the values are the profile's too where
// the patterns are the profile's, and IEEE f32 products value * scale beyond them (a negative
// scale, an infinite one: docs/SEMANTICS.md section 11.2), which the exact profile's one rounding
// of value * s equals.
struct StoredReading {
  Profile profile = Profile::exact;
  bool full_range = false;     // integer codes over the kind's full two's complement range
  bool signed_scales = false;  // scale patterns with the sign bit set (statistic signed-max)
  bool inf_scales = false;     // +-inf scale patterns (scale-overflow infinity); one level only
  // Two levels under product=f32 (recipe nvidia-nvfp4): each block dequantizes by e_j = f32(s_j *
  // g), and an infinite e_j is unsupported-profile (f32_scale_product_overflow), after every check
  // of the stored tensor. The patterns are the profile's; the values are not.
  bool f32_product = false;
  bool wider() const { return full_range || signed_scales || inf_scales || f32_product; }
};

// The reading of rules r over scheme s, or unsupported-profile (also for a minifloat kind under
// saturation none, whose NaN and inf code patterns it does not read, for infinite scales on two
// levels, and for Burn's two levels under product=f32 outside the burn profile).
Result<StoredReading> stored_reading(const Rules& r, const Scheme& s);
// The profile whose reading of stored tensors equals that of rules r over every scheme
// (stored_reading with no wider patterns and no f32 product), or unsupported-profile.
Result<Profile> stored_profile(const Rules& r);

// The ue8m0 pattern of a block of minifloat kind v with max |x| of bits a (finite), under pick
// (not profile); 0xFF where torchao-even carries into f32's inf exponent (an error). The
// constants of a call are fixed once (the loops over blocks call it per block).
class ExponentRule {
 public:
  ExponentRule(ScalePick pick, Value v);
  std::uint32_t operator()(std::uint32_t a) const {
    switch (pick_) {
      case ScalePick::ocp_floor: return step<ScalePick::ocp_floor>(a);
      case ScalePick::torchao_ceil: return step<ScalePick::torchao_ceil>(a);
      case ScalePick::torchao_even: return step<ScalePick::torchao_even>(a);
      case ScalePick::log2f_floor: return step<ScalePick::log2f_floor>(a);
      default: return step<ScalePick::rceil>(a);
    }
  }
  // The same rule for the per-target kernel that applies it to every block of a unit at once
  // (kernels::exponent_scales, whose scalar twin this class is).
  const kernels::ExponentSpec& spec() const { return spec_; }

 private:
  template <ScalePick kPick>
  std::uint32_t step(std::uint32_t a) const {
    switch (kPick) {
      case ScalePick::ocp_floor:
        return a == 0 ? 0 : biased(floor_log2(a) - spec_.emax);
      case ScalePick::torchao_ceil:
        // The biased exponent field (0 for zero and subnormals), plus one for any mantissa bit.
        return biased(static_cast<int>(a >> 23) - 127 + ((a & 0x7FFFFFu) != 0 ? 1 : 0) - spec_.emax);
      case ScalePick::torchao_even: {
        // Half a unit of the element's last mantissa bit added to the pattern, mantissa cleared.
        const std::uint32_t rounded = (a + spec_.half_unit) & 0xFF800000u;
        if ((rounded >> 23) == 0xFFu) return 0xFFu;
        return biased(static_cast<int>(rounded >> 23) - 127 - spec_.emax);
      }
      case ScalePick::log2f_floor: {
        // A zero or subnormal a (microxcaling takes 2^-126 for 0) clamps to 2^-127 in every kind.
        const std::uint32_t field = a >> 23;
        if (field == 0) return 0;
        const int up = (a & 0x7FFFFFu) >= spec_.log2_thresholds[field] ? 1 : 0;
        return biased(static_cast<int>(field) - 127 + up - spec_.emax);
      }
      default: {
        // rceil: u = f32(amax * f32(1 / M)) in f32 arithmetic (IEEE defaults: the drivers'
        // FpEnvGuard), then the least power of two >= u; u <= 2^-127 takes the least, 2^-127.
        const std::uint32_t b = std::bit_cast<std::uint32_t>(std::bit_cast<float>(a) * spec_.rcp_m);
        if (b <= 0x00400000u) return 0;
        if (b < 0x00800000u) return 1;
        return biased(static_cast<int>(b >> 23) - 127 + ((b & 0x7FFFFFu) != 0 ? 1 : 0));
      }
    }
  }

  // The ue8m0 pattern of 2^e, clamped to [2^-127, 2^127].
  static std::uint32_t biased(int e) { return static_cast<std::uint32_t>(std::clamp(e, -127, 127) + 127); }
  // floor(log2 a) of a positive finite f32 pattern (a subnormal is a * 2^-149).
  static int floor_log2(std::uint32_t a) {
    return a >= 0x00800000u ? static_cast<int>(a >> 23) - 127 : 31 - std::countl_zero(a) - 149;
  }
  ScalePick pick_;
  kernels::ExponentSpec spec_;  // the kind's constants (emax, half_unit, rcp_m, W), as the kernel takes them
};

}  // namespace qscheme::fast::detail
