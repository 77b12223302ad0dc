// The checks of a QuantizedTensor before it is read (dequantize, encode): counts, scales, the
// global, zero points, codes, in the reference's order; and the scales it dequantizes by.
#pragma once

#include <cstddef>

#include "fast/points.hpp"
#include "fast/support/big_buffer.hpp"
#include "fast/value_codes.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// What reading q starts from: q's layout and the reading of its profile or point (points.hpp), in
// that order.
struct Reading {
  Layout l;
  Profile profile;
  StoredReading stored;
};
Result<Reading> reading_of(const QuantizedTensor& q);

// The codes a stored tensor of kind v may hold under reading r: code_range's, or the integer
// kind's full range.
CodeRange code_range(Value v, const StoredReading& r);

// The f32 value of a stored scale pattern of dtype d under reading r: the profile's patterns, and
// the reading's negative and infinite ones (the IEEE dtypes'); false for a pattern it does not
// allow (as scheme/rules.hpp's scale_allowed).
bool read_scale(std::uint32_t bits, ScaleDtype d, const StoredReading& r, float* out);

// The corrupt-bytes error for code i of q.
Status bad_code(const QuantizedTensor& q, std::size_t i);

// The error dequantize reports, after every check of the stored tensor, for the first of the n
// products eb of check_quantized that overflowed f32: Burn's (profile burn) or product=f32's
// (reading.f32_product), as reference/scales.cpp's stored_scale_values; none under other readings,
// whose infinite scales are values.
Status scale_product_overflow(const StoredReading& r, const float* eb, std::size_t n);

// Validates q against its scheme and shape under its reading and computes the scales dequant_row
// multiplies by: eb and g, out = f32(f32(eb[j] * value) * g). Exact and onnx profiles: eb = the
// stored scales (a wider reading's negative or infinite ones included), g = the global (1 for one
// level); an f32 product (reading.f32_product): eb = f32(g * s), g = 1; burn: eb = Burn's f32
// product g * s (0 replaced by 0.1), g = 1. An f32 product that overflows stays inf here (encode
// reads such a tensor): dequantize reports it with scale_product_overflow.
// check_codes = false leaves the codes to the caller (dequantize checks them piece by piece).
Status check_quantized(const QuantizedTensor& q, const StoredReading& reading, const Layout& l, BigBuffer<float>* eb,
                       float* g, bool check_codes = true);

}  // namespace qscheme::fast::detail
