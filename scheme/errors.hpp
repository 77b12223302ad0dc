// The error each rejected input gets, worded once for both engines: reference/ and fast/ build
// every Status a caller can see for a bad tensor, scale, code or byte buffer here, so that they
// agree on the code, the index and the message (docs/SEMANTICS.md section 1). Validity itself
// is decided by each engine; these only say what is wrong and how to fix it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "scheme/layout.hpp"
#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme {

// Why `code` is not a code value kind v can produce, or nullopt: an integer outside [lo, hi], a
// float pattern wider than the format, e4m3 NaN (0x7F, 0xFF), e5m2 inf or NaN. The stored-code
// rule of Burn's layout, shared by both engines' decode and encode checks.
std::optional<std::string> code_problem(Value v, std::int32_t code);
// Why `bits` is not a storable scale pattern of dtype d, or nullopt: wider than the dtype, sign
// bit set (negative or -0), NaN or inf (all-ones exponent of f32/f16/bf16), ue4m3 with its unused
// top bit set or 0x7F (NaN), ue8m0 0xFF (NaN).
std::optional<std::string> scale_problem(ScaleDtype d, std::uint32_t bits);

namespace errors {

// quantize: the input and the caller's scales.
Status input_size(std::uint64_t values, std::uint64_t elements);
Status given_scale_count(std::uint64_t given, std::uint64_t scales);
Status given_global_presence(bool two_level);
Status invalid_given_scale(std::uint64_t j);
Status invalid_given_global(std::uint64_t block_scales);  // index = the number of block scales
// QuantizeOptions::global_amax: where it does not apply (invalid-argument, or unsupported-profile
// for a point whose global does not come from max |x|), and a value that is no max |x|.
Status global_amax_misplaced(const std::string& why);
Status global_amax_unsupported(const std::string& why);
Status invalid_global_amax(float amax);
// Affine mode's zero points (index = the zero point).
Status given_zero_point_count(std::uint64_t given, std::uint64_t scales, bool affine);
Status invalid_given_zero_point(std::uint64_t j, Value v, std::int32_t zp);
Status non_finite_input(std::uint64_t element);
Status zero_scale_nonzero_input(std::uint64_t block, std::uint64_t element);  // index = block
Status burn_absmean_two_level();
Status onnx_needs_given_f32_scales();
Status burn_alpha_overflow(std::uint64_t block);
Status burn_scale_product_overflow(std::uint64_t block);
// product=f32 under any other two-level rule: f32(g * s_j) is inf (index = block).
Status f32_scale_product_overflow(std::uint64_t block);
// Profile onnx's affine calibration (DynamicQuantizeLinear): block's f32 max - min overflows to
// inf, or its scale (max - min) / 255 underflows to 0 (index = block).
Status onnx_affine_range_overflow(std::uint64_t block);
Status onnx_affine_scale_underflow(std::uint64_t block);
// scale=torchao-even: max |x| = amax carries into f32's inf exponent (torchao's NaN scale).
Status torchao_even_nan_scale(std::uint64_t block, float amax);

// A QuantizedTensor against its scheme and shape (dequantize and encode, in this order).
Status code_count(std::uint64_t codes, std::uint64_t elements);
Status scale_count(std::uint64_t scales, std::uint64_t want);
Status global_presence(bool two_level);
Status zero_point_count(std::uint64_t zero_points, std::uint64_t want);
Status bad_zero_point(std::uint64_t j, Value v, std::int32_t zp);
// The first of a stored tensor's zero points outside kind v's range, as bad_zero_point; ok when
// every one is within it (decode, dequantize and encode in both engines).
Status check_stored_zero_points(Value v, std::span<const std::int32_t> zp);
// Precondition for the next three: the pattern is invalid (the *_problem functions say why).
Status bad_scale(std::uint64_t j, ScaleDtype d, std::uint32_t bits);
Status bad_global(std::uint64_t block_scales, std::uint32_t bits);  // index = the number of block scales
Status bad_code(std::uint64_t element, Value v, std::int32_t code);

// Serialized bytes (decode).
Status byte_count(std::uint64_t bytes, const Layout& l);
// The same for ggml's blocks (scheme/byte_format.hpp): total = blocks * block_bytes.
Status ggml_byte_count(std::uint64_t bytes, std::uint64_t blocks, std::uint64_t block_bytes, std::uint64_t total);
Status nonzero_padding(std::uint64_t storage_element, std::uint64_t byte_offset);  // index = byte offset
Status bad_native_byte(std::uint64_t element, Value v, std::uint8_t byte);

}  // namespace errors

// The first step of every quantize and decode, in both engines: the layout, then the input's
// size against it (errors::input_size, errors::byte_count).
Result<Layout> layout_for_values(const Scheme& s, Shape shape, std::uint64_t values);
Result<Layout> layout_for_bytes(const Scheme& s, Shape shape, std::uint64_t bytes);

}  // namespace qscheme
