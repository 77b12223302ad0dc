// Scales under a point of the rule space (scheme/rules.hpp): from calibration or from the
// caller, to the stored bit patterns, and from the stored patterns (or the unrounded value) to
// the scale each block's codes are computed with. Quantize and dequantize both derive a block's
// scale from the stored patterns through stored_scale_values(), so the two directions never
// disagree about it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reference/rational.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/rules.hpp"

namespace qscheme::reference {

// A scale as the codes see it: an exact magnitude, a sign (signed-max scales), or infinity
// (an f16 scale that overflowed under scale-overflow=infinity).
struct SignedScale {
  Quotient mag;
  bool negative = false;
  bool infinite = false;
  bool is_zero() const { return !infinite && mag.num == 0; }
};

struct StoredScales {
  std::vector<std::uint32_t> bits;           // innermost-level scales in their dtype
  std::optional<std::uint32_t> global_bits;  // the f32 per-tensor scale of a two-level scheme
};

// The scales of a quantization: what is stored, and what each block's codes divide by.
struct BlockScales {
  StoredScales stored;
  std::vector<SignedScale> code_scale;  // one per block
  std::vector<Quotient> amax;           // max |x| per block (quotient=f32-max-over-amax)
};

// The scale round-up (Burn's ScaleDtype::round_up, extended to every dtype): the smallest value
// of `d` not below v >= 0, saturating at d's largest finite value; f32 included (smallest f32
// not below v); ue8m0: the smallest power of two not below v, at least 2^-127. Returns the bit
// pattern.
std::uint32_t round_up_to_dtype(const Rational& v, ScaleDtype d);
std::uint32_t round_up_to_dtype(const Quotient& v, ScaleDtype d);

// The checks of caller-supplied scales (size-mismatch, invalid-scale), in their order.
Status check_given_scales(const Scheme& s, const Layout& l, const GivenScales& given);

// Every block's scales under rules r: from `given` when set, else calibrated from x (the global
// of two levels from global_amax, when set, in place of the tensor's max |x|). Errors the
// rules define for the data: unsupported-profile (Burn's 2 alpha or g * s_j overflowing f32, a
// torchao-even scale that overflows to NaN), zero-scale-nonzero-input (zero-scale=error).
// Preconditions: the checks of quantize before this point passed (layout, given scales,
// validate_rules, finite input).
Result<BlockScales> block_scales(const Scheme& s, const Layout& l, std::span<const float> x,
                                 std::span<const std::uint64_t> block_of, const Rules& r, Calibration c,
                                 const std::optional<GivenScales>& given,
                                 std::optional<float> global_amax = std::nullopt);

// The scale each block's stored patterns stand for, as quantize (codes-from=stored) and
// dequantize use it: s_j, or s_j * g (product exact) or f32(s_j * g) (product f32; an overflow is
// unsupported-profile, index = block), with a zero replaced by f32(0.1) under
// zero-scale=substitute-point-one. Precondition: scale_allowed() accepts every pattern.
Result<std::vector<SignedScale>> stored_scale_values(const Scheme& s, const Rules& r, const StoredScales& stored);

// The value of a scale pattern r allows (scale_allowed): sign and infinity included.
SignedScale scale_of_pattern(ScaleDtype d, std::uint32_t bits);

}  // namespace qscheme::reference
