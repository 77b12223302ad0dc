#include "reference/values.hpp"

#include <cstdio>
#include <string>

#include "scheme/errors.hpp"

namespace qscheme::reference {
namespace {
std::string hex(std::uint32_t bits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", bits);
  return buf;
}
}  // namespace

Format format_of(ScaleDtype d) {
  switch (d) {
    case ScaleDtype::f32: return Format::f32;
    case ScaleDtype::f16: return Format::f16;
    case ScaleDtype::bf16: return Format::bf16;
    case ScaleDtype::ue8m0: return Format::ue8m0;
    case ScaleDtype::ue4m3: return Format::ue4m3;
  }
  return Format::f32;
}

Format format_of(Value v) {
  switch (v) {
    case Value::e5m2: return Format::e5m2;
    case Value::e2m1: return Format::e2m1;
    default: return Format::e4m3;
  }
}

bool is_valid_scale(ScaleDtype d, std::uint32_t bits) {
  const Format f = format_of(d);
  return is_finite_code(f, bits) && !code_is_negative(f, bits);
}

bool is_valid_code(Value v, std::int32_t code) {
  const ValueInfo& vi = info(v);
  if (!vi.is_float) return code >= vi.lo && code <= vi.hi;
  return code >= 0 && is_finite_code(format_of(v), static_cast<std::uint32_t>(code));
}

Result<ExactValue> scale_value(ScaleDtype d, std::uint32_t bits) {
  const Format f = format_of(d);
  if (!is_valid_scale(d, bits)) {
    // The wording both engines use (scheme/errors.hpp).
    return Result<ExactValue>(ErrorCode::corrupt_bytes,
                              scale_problem(d, bits).value_or("scale pattern " + hex(bits) +
                                                              " is not a finite, non-negative " +
                                                              std::string(to_string(d)) + " value"));
  }
  ExactValue v;
  v.exact = decode(f, bits);
  // Every scale dtype's values are f32 values (ue8m0's 2^-127 is an f32 subnormal): no rounding.
  v.f32 = round_to_f32(v.exact, Overflow::saturate);
  return v;
}

Result<ExactValue> code_value(Value v, std::int32_t code) {
  const ValueInfo& vi = info(v);
  ExactValue out;
  if (!vi.is_float) {
    if (code < vi.lo || code > vi.hi) {
      return Result<ExactValue>(ErrorCode::corrupt_bytes,
                                code_problem(v, code).value_or("code " + std::to_string(code) + " is outside " +
                                                               std::string(vi.name) + "'s range"));
    }
    out.exact = Rational(code);
    out.negative = code < 0;
  } else {
    const Format f = format_of(v);
    if (code < 0 || !is_finite_code(f, static_cast<std::uint32_t>(code))) {
      return Result<ExactValue>(ErrorCode::corrupt_bytes,
                                code_problem(v, code).value_or("code " + std::to_string(code) + " is not a finite " +
                                                               std::string(vi.name) + " bit pattern"));
    }
    out.exact = decode(f, static_cast<std::uint32_t>(code));
    out.negative = code_is_negative(f, static_cast<std::uint32_t>(code));
  }
  out.f32 = round_to_f32(out.exact, Overflow::saturate, out.negative);
  return out;
}

}  // namespace qscheme::reference
