// A candidate from another implementation's serialized bytes, in the byte format its recipe
// writes: Burn's layout is compared byte for byte; ggml's blocks are read into codes and scales
// (their order is ggml's, not Burn's) and compared as such. And a candidate's scales given as
// numbers (the command line's --candidate-scales, Python's candidate_scales) as patterns.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/check.hpp"
#include "scheme/byte_format.hpp"
#include "scheme/rules.hpp"
#include "scheme/scheme.hpp"
#include "scheme/validate.hpp"

namespace qscheme::oracle {

// `rules` is the point the candidate is checked under: ggml bytes are read accepting any
// pattern it can value (accepting_any_pattern), so a wrong code is a difference, not an error.
// Errors: ggml bytes of the wrong size or of a scheme ggml has no blocks for (the decoder's).
Result<Candidate> candidate_from_bytes(const Scheme& scheme, Shape shape, std::vector<std::uint8_t> bytes,
                                       const Rules& rules, ByteFormat format);

// A candidate's scale as the pattern of its dtype. Unlike a scale given to quantize, an inf,
// NaN or negative one is a finding to report, not bad input: inf and NaN become the dtype's
// own patterns (NaN for ue8m0 and ue4m3, which have no inf), a negative value its sign bit
// where the dtype has one. corrupt-bytes for a negative value of an unsigned dtype.
Result<std::uint32_t> candidate_scale_bits(ScaleDtype d, float v);

}  // namespace qscheme::oracle
