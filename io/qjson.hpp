// Q.json: a quantized tensor as readable JSON, one key a line:
//
//   {
//    "scheme": "q8s:block[4]=ue4m3:tensor=f32",     canonical scheme text
//    "profile": "exact",                             exact | burn | onnx
//    "rules": "source=...,zero-scale=ieee",          optional: a point of the rule space
//                                                    (scheme/rules.hpp format_rules), when it
//                                                    is not a profile's
//    "shape": [8],
//    "codes": [0, 25, ...],                          one per element, row-major (as QuantizedTensor)
//    "block_scales": [0.5, 0.125],                   the stored innermost-level scales as numbers
//    "global_scale": 3.0,                            the f32 global of a two-level scheme, else null
//    "bytes": "0019...40"                            hex of reference::encode
//   }
//
// block_scales hold one number per block (row-major over the block grid), or the single tensor
// scale of a per-tensor scheme. Numbers are written in the shortest form that parses back to the
// exact f32 (0.1, not 0.10000000149011612), and each is the exact value of a pattern of its
// dtype. Reading checks everything: unknown or missing keys and wrong JSON types
// (invalid-argument), the scheme (malformed-scheme and validate()'s codes), the code and scale
// counts (size-mismatch), codes the scheme cannot produce and scales that are not exactly a
// storable value of their dtype (corrupt-bytes), and that "bytes", when present, is exactly the
// encoding of codes and scales (corrupt-bytes, index = first differing byte). "profile",
// "rules" and "bytes" may be omitted (profile: exact). Under rules that store signed scales
// (ggml q4_0) a scale is written with its sign; an infinite scale (ggml's f16 overflow) has no
// Q.json form (write the bytes instead).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::io::qjson {

// The Q.json text of q, ending in a newline. Fails with encode()'s errors for an invalid q.
Result<std::string> write(const QuantizedTensor& q);

// Parses and validates a Q.json text.
Result<QuantizedTensor> read(std::string_view text);

// The exact value of a stored scale pattern of dtype d as an f32 (corrupt-bytes for a pattern
// that is not a storable scale).
Result<float> scale_to_float(ScaleDtype d, std::uint32_t bits);
// The pattern of dtype d whose value is exactly v; corrupt-bytes when there is none (v not on
// d's grid, out of range, negative, -0, NaN or inf).
Result<std::uint32_t> float_to_scale_bits(ScaleDtype d, float v);

}  // namespace qscheme::io::qjson
