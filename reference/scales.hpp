// Scales: from calibration (both profiles) or from the caller, to the stored bit patterns, and
// from stored patterns to the effective scale each block's codes are computed with. Quantize
// and dequantize both derive the effective scale from the stored patterns through
// effective_scales(), so the two directions can never disagree about it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reference/rational.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"

namespace qscheme::reference {

struct StoredScales {
  std::vector<std::uint32_t> bits;           // innermost-level scales in their dtype
  std::optional<std::uint32_t> global_bits;  // the f32 per-tensor scale of a two-level scheme
};

// The scale round-up (Burn's ScaleDtype::round_up, extended to every dtype): the smallest value
// of `d` not below v >= 0, saturating at d's largest finite value; f32 included (smallest f32
// not below v); ue8m0: the smallest power of two not below v, at least 2^-127. Rounding up, not
// to nearest, keeps the largest |x| of a block inside the value range. Returns the bit pattern.
std::uint32_t round_up_to_dtype(const Rational& v, ScaleDtype d);
std::uint32_t round_up_to_dtype(const Quotient& v, ScaleDtype d);

// Profile exact: s* = 2 alpha / (b - a) exactly; one level stores round_up(s*); two levels
// store g = max(round_up_f32(max s* / max(d)), 2^-126) and s_j = round_up(s*_j / g).
StoredScales exact_scales(const Scheme& s, std::span<const Quotient> alpha);

// Profile burn: Burn's f32 steps (docs/SEMANTICS.md). unsupported-profile when 2 alpha
// overflows f32 (index = block).
Result<StoredScales> burn_scales(const Scheme& s, std::span<const Quotient> alpha);

// Caller-supplied scales, checked (size-mismatch, invalid-scale) and rounded up to their dtype.
Result<StoredScales> given_scales(const Scheme& s, const Layout& l, const GivenScales& given);

// The scale each block is divided by (quantize) and multiplied with (dequantize), exactly.
// exact: s_j, or s_j * g for two levels (not rounded). burn: s_j, or f32(g * s_j); a zero
// effective scale becomes f32(0.1) (Burn's valid_scale). unsupported-profile when burn's
// f32(g * s_j) overflows. Precondition: the patterns are valid (scale_value accepts them).
Result<std::vector<Dyadic>> effective_scales(const Scheme& s, Profile p, const StoredScales& stored);

}  // namespace qscheme::reference
