// The checks of a QuantizedTensor before it is read (dequantize, encode): counts, scales, the
// global, zero points, codes, in the reference's order; and the scales it dequantizes by.
#pragma once

#include <cstddef>

#include "fast/support/big_buffer.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// What reading q starts from: q's layout and the profile it is read under (its own, or the one
// its point reads stored tensors as), in that order.
struct Reading {
  Layout l;
  Profile profile;
};
Result<Reading> reading_of(const QuantizedTensor& q);

// The corrupt-bytes error for code i of q.
Status bad_code(const QuantizedTensor& q, std::size_t i);

// Validates q against its scheme and shape and computes the scales dequant_row multiplies by: eb
// and g, out = f32(f32(eb[j] * value) * g). Exact and onnx profiles: eb = the stored scales, g =
// the global (1 for one level); burn: eb = Burn's f32 product g * s (0 replaced by 0.1), g = 1.
// check_codes = false leaves the codes to the caller (dequantize checks them piece by piece).
Status check_quantized(const QuantizedTensor& q, Profile profile, const Layout& l, BigBuffer<float>* eb, float* g,
                       bool check_codes = true);

}  // namespace qscheme::fast::detail
