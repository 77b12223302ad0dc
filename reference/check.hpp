// The checks of a QuantizedTensor's stored fields against its scheme and shape, shared by
// dequantize, encode and decode so that they reject alike (docs/SEMANTICS.md section 6).
#pragma once

#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::reference {

// Code count, scale count, a global scale exactly for a two-level scheme (size-mismatch).
Status check_counts(const QuantizedTensor& q, const Layout& l);
// Every block scale pattern, then the global's (corrupt-bytes; the global's index is the number
// of block scales). The patterns allowed are those of q's rules (scale_allowed, code_allowed).
Status check_scales(const QuantizedTensor& q);
// Every code (corrupt-bytes, index = element).
Status check_codes(const QuantizedTensor& q);
// All three in dequantize's order: counts, scales, codes. decode, whose counts hold by
// construction, checks codes before scales instead: the order of the bytes.
Status check_stored(const QuantizedTensor& q, const Layout& l);

}  // namespace qscheme::reference
