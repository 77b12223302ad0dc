// A candidate for check() built from what another implementation hands over, shared by the
// command line and the Python package: its scales as numbers, and its serialized bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "oracle/check.hpp"
#include "scheme/byte_format.hpp"
#include "scheme/rules.hpp"
#include "scheme/scheme.hpp"
#include "scheme/status.hpp"
#include "scheme/validate.hpp"

namespace qscheme::oracle {

// A candidate's scale as the pattern of its dtype. Unlike a scale given to quantize, an inf,
// NaN or negative one is a finding to report, not bad input: inf and NaN become the dtype's
// own patterns (NaN for ue8m0 and ue4m3, which have no inf), a negative value its sign bit
// where the dtype has one. corrupt-bytes for a negative value of an unsigned dtype.
Result<std::uint32_t> candidate_scale_bits(ScaleDtype d, float v);

// Serialized bytes as a candidate: Burn's layout is compared as bytes; ggml's blocks hold the
// codes and scales in ggml's order and are read as codes and scales, under `rules` widened to
// any pattern (accepting_any_pattern), so that a wrong pattern is a finding and not an error.
Result<Candidate> bytes_candidate(std::vector<std::uint8_t> bytes, const Scheme& scheme, Shape shape,
                                  const Rules& rules, ByteFormat format);

}  // namespace qscheme::oracle
