#include "reference/element.hpp"

#include "reference/minifloat.hpp"
#include "reference/values.hpp"

namespace qscheme::reference {
namespace {

constexpr std::uint32_t kF32Infinity = 0x7F800000u;

std::int32_t zero_code(Value v, bool negative) {
  if (!info(v).is_float || !negative) return 0;
  return static_cast<std::int32_t>(sign_bit(format_of(v)));
}

// clamp(round(negative ? -r : r), lo, hi) for a quotient r, with the given tie rule.
std::int32_t round_and_clamp(const ValueInfo& vi, bool negative, const Quotient& r, RoundMode mode) {
  // |r| >= 256 lies beyond every integer kind's range: clamp without the big shifts.
  if (r.num != 0 && floor_log2(r) >= 8) return negative ? vi.lo : vi.hi;
  const std::int32_t m = round_quotient(r, 0, mode).convert_to<std::int32_t>();
  const std::int32_t q = negative ? -m : m;
  return q < vi.lo ? vi.lo : (q > vi.hi ? vi.hi : q);
}

}  // namespace

std::int32_t quantize_element(Value v, Profile p, float x, const Dyadic& e) {
  const F32Parts px = split_f32(x);
  // onnx, e2m1: the ONNX reference adds the zero point (0) to the f32 quotient before the cast,
  // so a quotient of -0 (x = -0, or an f32 underflow below) becomes +0.
  const bool onnx_unsigned_zero = p == Profile::onnx && v == Value::e2m1;
  if (px.mant == 0 && onnx_unsigned_zero) return 0;
  if (px.mant == 0 || e.is_zero()) return zero_code(v, px.negative);
  const ValueInfo& vi = info(v);
  const Quotient ratio{Integer(px.mant), e.mant, px.exp2 - e.exp2};
  if (p == Profile::exact) {
    if (!vi.is_float) return round_and_clamp(vi, px.negative, ratio, RoundMode::half_even);
    return static_cast<std::int32_t>(
        round_to_format(format_of(v), px.negative, ratio, RoundMode::half_even, Overflow::saturate));
  }
  // Burn and onnx: x / e is an f32 division first.
  const std::uint32_t t = f32_bits(round_to_f32(px.negative, ratio, Overflow::infinity));
  if (onnx_unsigned_zero && (t & 0x7FFFFFFFu) == 0) return 0;  // test_quantizelinear_float4e2m1
  if ((t & 0x7FFFFFFFu) == kF32Infinity) {
    if (!vi.is_float) return px.negative ? vi.lo : vi.hi;
    const Format f = format_of(v);
    return static_cast<std::int32_t>((px.negative ? sign_bit(f) : 0) | format_info(f).max_code);
  }
  const F32Parts pt = split_f32(f32_from_bits(t));
  const Quotient rounded{Integer(pt.mant), Integer(1), pt.exp2};
  // Burn rounds ties away from zero (Rust f32::round), ONNX to even (np.rint).
  const RoundMode ties = p == Profile::burn ? RoundMode::half_away : RoundMode::half_even;
  if (!vi.is_float) return round_and_clamp(vi, pt.negative, rounded, ties);
  return static_cast<std::int32_t>(
      round_to_format(format_of(v), pt.negative, rounded, RoundMode::half_even, Overflow::saturate));
}

float dequantize_element(Value v, std::int32_t code, const Dyadic& e) {
  bool negative = false;
  Quotient product;
  if (!info(v).is_float) {
    negative = code < 0;
    product.num = Integer(negative ? -static_cast<std::int64_t>(code) : code) * e.mant;
    product.exp2 = e.exp2;
  } else {
    const Format f = format_of(v);
    const auto c = static_cast<std::uint32_t>(code);
    negative = code_is_negative(f, c);
    const Magnitude m = code_magnitude(f, c);
    product.num = Integer(m.mant) * e.mant;
    product.exp2 = m.exp2 + e.exp2;
  }
  return round_to_f32(negative, product, Overflow::infinity);
}

}  // namespace qscheme::reference
