// What stored bit patterns mean: the exact value of a scale pattern in its dtype and of a code
// of a value kind, and which patterns a scheme can hold at all. Public: the CLI and the tests
// print and check stored quantities through these.
#pragma once

#include <cstdint>

#include "reference/minifloat.hpp"
#include "reference/rational.hpp"
#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme::reference {

struct ExactValue {
  Rational exact;
  bool negative = false;  // the sign bit; true for a negative zero code
  float f32 = 0.0f;       // the same value as an f32 (exact for every scale dtype and code)
};

// The value of a stored scale pattern. corrupt-bytes for a pattern the dtype cannot hold or a
// scale can never be: NaN, inf, a set sign bit (negative or -0), bits beyond the dtype's width.
Result<ExactValue> scale_value(ScaleDtype d, std::uint32_t bits);
// The value of a code. corrupt-bytes for a code quantization cannot produce: an integer outside
// [lo, hi] (e.g. q8s -128), an e4m3 NaN (0x7F/0xFF), an e5m2 inf/NaN, an e2m1 code above 15.
Result<ExactValue> code_value(Value v, std::int32_t code);

// The checks alone, without computing the value: does scale_value / code_value accept it?
bool is_valid_scale(ScaleDtype d, std::uint32_t bits);
bool is_valid_code(Value v, std::int32_t code);

// The binary format of a scale dtype, and of a float value kind (precondition info(v).is_float).
Format format_of(ScaleDtype d);
Format format_of(Value v);

}  // namespace qscheme::reference
