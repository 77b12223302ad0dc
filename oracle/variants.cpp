// The variant quantizer (variants.hpp). Every arithmetic step is one of the reference's exact
// building blocks; a Variant field only chooses which named rounding or rule is applied, so the
// base variant is the reference's own algorithm (docs/SEMANTICS.md) written once more. check.cpp
// compares the base variant against reference::quantize on every run, so a drift between the two
// is reported as an internal error instead of producing a wrong diagnosis.
#include "oracle/variants.hpp"

#include <algorithm>
#include <limits>

#include "reference/calibrate.hpp"
#include "reference/element.hpp"
#include "reference/minifloat.hpp"
#include "reference/pack.hpp"
#include "reference/values.hpp"
#include "scheme/errors.hpp"

namespace qscheme::oracle {
namespace {

using reference::decode;
using reference::Dyadic;
using reference::f32_bits;
using reference::f32_from_bits;
using reference::Format;
using reference::format_info;
using reference::format_of;
using reference::Integer;
using reference::Overflow;
using reference::Quotient;
using reference::Rational;
using reference::RoundMode;

// calibrate() returns Rationals or (newer) unreduced Quotients; both become a Rational here.
[[maybe_unused]] Rational to_exact(const Rational& r) { return r; }
[[maybe_unused]] Rational to_exact(const Quotient& q) { return reference::to_rational(q); }

Dyadic dyadic_of_f32(float x) {
  const reference::F32Parts p = reference::split_f32(x);
  return {Integer(p.mant), p.exp2};
}

Dyadic dyadic_of(ScaleDtype d, std::uint32_t bits) {
  const reference::Magnitude m = reference::code_magnitude(format_of(d), bits);
  return {Integer(m.mant), m.exp2};
}

Rational largest(ScaleDtype d) {
  const Format f = format_of(d);
  return decode(f, format_info(f).max_code);
}

// Rounds v >= 0 to a pattern of dtype d in `mode`, saturating. ue8m0 only has up and down in
// round_to_format, so nearest is built from the two (ties up, the larger power of two).
std::uint32_t round_scale(const Rational& v, ScaleDtype d, RoundMode mode) {
  const Format f = format_of(d);
  if (f != Format::ue8m0 || mode == RoundMode::up || mode == RoundMode::down) {
    return reference::round_to_format(f, v, mode, Overflow::saturate);
  }
  const std::uint32_t lo = reference::round_to_format(f, v, RoundMode::down, Overflow::saturate);
  const std::uint32_t hi = reference::round_to_format(f, v, RoundMode::up, Overflow::saturate);
  return (v - decode(f, lo) < decode(f, hi) - v) ? lo : hi;
}

struct Scales {
  std::vector<std::uint32_t> bits;
  std::optional<std::uint32_t> global_bits;
};

Result<Scales> stored_scales(const Variant& v, const Scheme& s, const Layout& l, std::span<const float> x,
                             std::span<const std::uint64_t> block_of, const QuantizeOptions& o) {
  const ScaleDtype d = s.scale_dtype();
  Scales out;
  if (o.scales) {
    out.bits.resize(o.scales->block.size());
    for (std::size_t j = 0; j < out.bits.size(); ++j) {
      out.bits[j] = round_scale(reference::to_rational(o.scales->block[j]), d, v.scale_rounding);
    }
    if (o.scales->global) out.global_bits = round_scale(reference::to_rational(*o.scales->global), ScaleDtype::f32, RoundMode::up);
    return out;
  }
  std::vector<Rational> alpha;
  for (const auto& a : reference::calibrate(l, x, block_of, o.calibration)) alpha.push_back(to_exact(a));
  const Rational span(info(s.value).hi - info(s.value).lo);
  std::vector<Rational> ideal(alpha.size());
  for (std::size_t j = 0; j < alpha.size(); ++j) {
    if (v.burn_calibration) {
      const Rational a = reference::to_rational(reference::round_to_f32(alpha[j], Overflow::saturate));
      ideal[j] = reference::to_rational(reference::round_to_f32(2 * a / span, Overflow::saturate));
    } else {
      ideal[j] = 2 * alpha[j] / span;
    }
  }
  out.bits.resize(ideal.size());
  if (!s.two_level()) {
    for (std::size_t j = 0; j < ideal.size(); ++j) out.bits[j] = round_scale(ideal[j], d, v.scale_rounding);
    return out;
  }
  Rational top = 0;
  for (const Rational& r : ideal) top = std::max(top, r);
  Rational g = v.burn_calibration ? reference::to_rational(reference::round_to_f32(top / largest(d), Overflow::saturate))
                                  : reference::to_rational(reference::round_up_to_f32(top / largest(d)));
  g = std::max(g, reference::pow2(-126));
  out.global_bits = f32_bits(reference::round_to_f32(g, Overflow::saturate));
  for (std::size_t j = 0; j < ideal.size(); ++j) {
    Rational normalised = ideal[j] / g;
    if (v.burn_calibration) normalised = reference::to_rational(reference::round_to_f32(normalised, Overflow::saturate));
    out.bits[j] = round_scale(normalised, d, v.scale_rounding);
  }
  return out;
}

std::vector<Dyadic> effective_scales(const Variant& v, const Scheme& s, const Scales& stored) {
  std::vector<Dyadic> e(stored.bits.size());
  const Dyadic g = stored.global_bits ? dyadic_of_f32(f32_from_bits(*stored.global_bits)) : Dyadic{1, 0};
  for (std::size_t j = 0; j < e.size(); ++j) {
    Dyadic ej = dyadic_of(s.scale_dtype(), stored.bits[j]);
    if (stored.global_bits) {
      ej = g * ej;
      if (v.two_level_product_f32) {
        ej = dyadic_of_f32(reference::round_to_f32(false, reference::to_quotient(ej), Overflow::saturate));
      }
    }
    if (v.zero_scale_substitution && ej.is_zero()) ej = dyadic_of_f32(f32_from_bits(0x3DCCCCCDu));  // f32(0.1)
    e[j] = ej;
  }
  return e;
}

// The full two's complement range of a value kind's bits.
std::int32_t wrap_to_bits(const Integer& m, int bits) {
  const Integer modulus = Integer(1) << bits;
  Integer r = m % modulus;
  if (r < 0) r += modulus;
  if (r >= modulus / 2) r -= modulus;
  return r.convert_to<std::int32_t>();
}

// The quotient t = |x| / e (or its f32 forms) a code is rounded from; nullopt when it overflowed
// f32 (the caller saturates).
std::optional<Quotient> quotient(const Variant& v, const reference::F32Parts& px, const Dyadic& e) {
  const Quotient exact{Integer(px.mant), e.mant, px.exp2 - e.exp2};
  if (!v.reciprocal && !v.f32_quotient) return exact;
  float t = 0;
  if (v.reciprocal) {
    const float r = reference::round_to_f32(false, Quotient{Integer(1), e.mant, -e.exp2}, Overflow::infinity);
    if ((f32_bits(r) & 0x7F800000u) == 0x7F800000u) return std::nullopt;
    const Dyadic rd = dyadic_of_f32(r);
    t = reference::round_to_f32(false, Quotient{Integer(px.mant) * rd.mant, Integer(1), px.exp2 + rd.exp2},
                                Overflow::infinity);
  } else {
    t = reference::round_to_f32(false, exact, Overflow::infinity);
  }
  if ((f32_bits(t) & 0x7F800000u) == 0x7F800000u) return std::nullopt;
  const reference::F32Parts pt = reference::split_f32(t);
  return Quotient{Integer(pt.mant), Integer(1), pt.exp2};
}

std::int32_t quantize_element(const Variant& v, Value value, float x, const Dyadic& e) {
  const reference::F32Parts px = reference::split_f32(x);
  const ValueInfo& vi = info(value);
  const bool neg = px.negative;
  std::int32_t code = 0;
  if (px.mant == 0 || e.is_zero()) {
    code = (vi.is_float && neg) ? static_cast<std::int32_t>(reference::sign_bit(format_of(value))) : 0;
    if (v.zero_quotient_positive && px.mant == 0) code = 0;
  } else if (!vi.is_float) {
    const std::optional<Quotient> t = quotient(v, px, e);
    const std::int32_t full_lo = -(1 << (vi.bits - 1));
    const std::int32_t full_hi = (1 << (vi.bits - 1)) - 1;
    const std::int32_t lo = v.saturation == Saturation::full_range ? full_lo : vi.lo;
    const std::int32_t hi = v.saturation == Saturation::full_range ? full_hi : vi.hi;
    if (!t) {
      code = neg ? lo : hi;
    } else {
      const Integer m = reference::round_quotient(*t, 0, v.ties);
      const Integer q = neg ? Integer(-m) : m;
      if (v.saturation == Saturation::none) {
        code = wrap_to_bits(q, vi.bits);
      } else {
        code = q < lo ? lo : (q > hi ? hi : q.convert_to<std::int32_t>());
      }
    }
  } else {
    const Format f = format_of(value);
    const std::uint32_t sign = neg ? reference::sign_bit(f) : 0;
    std::optional<Quotient> t = quotient(v, px, e);
    if (t && t->num == 0 && v.zero_quotient_positive) return 0;
    if (t && v.integer_before_cast) t = Quotient{reference::round_quotient(*t, 0, RoundMode::half_even), Integer(1), 0};
    // Without saturation an e4m3 result past the rounding boundary of 448 (464, ties go to 448)
    // is NaN, an e5m2 result at or past 61440 (ties go up to 2^16) is inf; e2m1 has neither.
    bool overflow = !t;
    if (t && v.saturation == Saturation::none) {
      const Rational r = reference::to_rational(*t);
      if (f == Format::e4m3) overflow = v.float_ties == RoundMode::half_away ? r >= 464 : r > 464;
      if (f == Format::e5m2) overflow = r >= 61440;
    }
    if (overflow && v.saturation == Saturation::none && f == Format::e4m3) {
      code = static_cast<std::int32_t>(sign | 0x7Fu);
    } else if (overflow && v.saturation == Saturation::none && f == Format::e5m2) {
      code = static_cast<std::int32_t>(sign | 0x7Cu);
    } else if (!t) {
      code = static_cast<std::int32_t>(sign | format_info(f).max_code);
    } else {
      code = static_cast<std::int32_t>(reference::round_to_format(f, neg, *t, v.float_ties, Overflow::saturate));
    }
  }
  if (v.drop_zero_sign && vi.is_float && static_cast<std::uint32_t>(code) == reference::sign_bit(format_of(value))) {
    code = 0;
  }
  return code;
}

}  // namespace

Variant base_variant(Profile p, Value value) {
  Variant v;
  if (p == Profile::onnx) {
    v.f32_quotient = true;
    v.zero_quotient_positive = value == Value::e2m1;
  }
  if (p == Profile::burn) {
    v.ties = RoundMode::half_away;  // integer codes only: Burn's minifloat casts round to even
    v.f32_quotient = true;
    v.two_level_product_f32 = true;
    v.zero_scale_substitution = true;
    v.burn_calibration = true;
  }
  return v;
}

std::vector<Deviation> deviations(Profile p, Value value) {
  const Variant b = base_variant(p, value);
  std::vector<Deviation> out;
  auto add = [&](std::string_view name, std::string_view what, auto change) {
    Variant v = b;
    change(v);
    if (!(v == b)) out.push_back({name, what, v});
  };
  if (b.ties == RoundMode::half_even) {
    add("ties-away", "ties are rounded away from zero instead of to even",
        [](Variant& v) { v.ties = RoundMode::half_away; v.float_ties = RoundMode::half_away; });
  } else {
    add("ties-even", "ties are rounded to even instead of away from zero", [](Variant& v) { v.ties = RoundMode::half_even; });
  }
  if (!b.f32_quotient) {
    add("f32-quotient", "x / scale is rounded to f32 before it is rounded to a code (double rounding)",
        [](Variant& v) { v.f32_quotient = true; });
  } else {
    add("exact-quotient", "x / scale is rounded once, exactly, not first to f32", [](Variant& v) { v.f32_quotient = false; });
  }
  add("reciprocal", "x is multiplied by f32(1 / scale) instead of divided by the scale",
      [](Variant& v) { v.reciprocal = true; v.f32_quotient = true; });
  add("scale-nearest", "the stored scale is rounded to nearest instead of up",
      [](Variant& v) { v.scale_rounding = RoundMode::half_even; });
  add("scale-truncated", "the stored scale is truncated (rounded down) instead of up",
      [](Variant& v) { v.scale_rounding = RoundMode::down; });
  add("no-saturation", "out-of-range codes are not saturated (integers wrap, e4m3 gives NaN, e5m2 inf)",
      [](Variant& v) { v.saturation = Saturation::none; });
  add("full-range-saturation", "symmetric integer kinds clamp to the full two's complement range (q8s to -128)",
      [](Variant& v) { v.saturation = Saturation::full_range; });
  add("zero-sign-dropped", "the sign of zero is dropped: -0 gives the +0 code",
      [](Variant& v) { v.drop_zero_sign = true; });
  add("integer-before-cast", "x / scale is rounded to an integer before the minifloat cast",
      [](Variant& v) { v.integer_before_cast = true; });
  add("packing-reversed", "codes are packed into each storage element from the high bits down",
      [](Variant& v) { v.reversed_packing = true; });
  if (!b.two_level_product_f32) {
    add("two-level-f32-product", "the two-level effective scale g * s is rounded to f32",
        [](Variant& v) { v.two_level_product_f32 = true; });
  } else {
    add("two-level-exact-product", "the two-level effective scale g * s is not rounded to f32",
        [](Variant& v) { v.two_level_product_f32 = false; });
  }
  if (!b.zero_scale_substitution) {
    add("zero-scale-substitution", "a zero scale is replaced by f32(0.1) as Burn's valid_scale does",
        [](Variant& v) { v.zero_scale_substitution = true; });
  } else {
    add("no-zero-scale-substitution", "a zero scale is not replaced by f32(0.1)",
        [](Variant& v) { v.zero_scale_substitution = false; });
  }
  return out;
}

Result<QuantizedTensor> quantize(const Variant& v, const Scheme& scheme, Shape shape, std::span<const float> x,
                                 const QuantizeOptions& options) {
  Result<Layout> layout = make_layout(scheme, shape);
  if (!layout) return layout.status();
  const std::vector<std::uint64_t> block_of = reference::block_of_elements(*layout);
  Result<Scales> stored = stored_scales(v, scheme, *layout, x, block_of, options);
  if (!stored) return stored.status();
  const std::vector<Dyadic> e = effective_scales(v, scheme, *stored);
  QuantizedTensor q;
  q.scheme = scheme;
  q.profile = options.profile;
  q.shape = layout->shape;
  q.codes.resize(x.size());
  for (std::size_t n = 0; n < x.size(); ++n) q.codes[n] = quantize_element(v, scheme.value, x[n], e[block_of[n]]);
  q.scale_bits = std::move(stored->bits);
  q.global_bits = stored->global_bits;
  return q;
}

Result<std::vector<float>> dequantize(const Variant& v, const QuantizedTensor& q) {
  Result<Layout> layout = make_layout(q.scheme, q.shape);
  if (!layout) return layout.status();
  if (q.codes.size() != layout->elements || q.scale_bits.size() != layout->scales) {
    return Status(ErrorCode::size_mismatch, "code or scale count disagrees with scheme and shape");
  }
  for (std::uint32_t bits : q.scale_bits) {
    if (auto why = qscheme::scale_problem(q.scheme.scale_dtype(), bits)) return Status(ErrorCode::corrupt_bytes, *why);
  }
  const std::vector<Dyadic> e = effective_scales(v, q.scheme, {q.scale_bits, q.global_bits});
  const std::vector<std::uint64_t> block_of = reference::block_of_elements(*layout);
  std::vector<float> out(q.codes.size());
  for (std::size_t n = 0; n < q.codes.size(); ++n) {
    const std::int32_t c = q.codes[n];
    if (!info(q.scheme.value).is_float || !qscheme::code_problem(q.scheme.value, c)) {
      out[n] = reference::dequantize_element(q.scheme.value, c, e[block_of[n]]);
      continue;
    }
    // A pattern no scheme code can be (no-saturation's NaN and inf): its IEEE meaning.
    const bool neg = reference::code_is_negative(format_of(q.scheme.value), static_cast<std::uint32_t>(c));
    const bool is_inf = q.scheme.value == Value::e5m2 && (c & 0x7F) == 0x7C;
    out[n] = is_inf ? (neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity())
                    : std::numeric_limits<float>::quiet_NaN();
  }
  return out;
}

void reverse_packing(const Scheme& s, const Layout& l, std::span<std::uint8_t> bytes) {
  if (s.store.kind == StoreKind::native) return;
  const int width = reference::field_bits(s);
  const int per = l.codes_per_storage_element;
  const int eb = l.storage_element_bytes;
  for (std::uint64_t k = 0; k < l.storage_elements; ++k) {
    std::uint32_t word = 0;
    for (int i = 0; i < eb; ++i) word |= static_cast<std::uint32_t>(bytes[k * eb + i]) << (8 * i);
    const std::uint32_t mask = width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1);
    std::uint32_t out = 0;
    for (int f = 0; f < per; ++f) out |= ((word >> (f * width)) & mask) << ((per - 1 - f) * width);
    for (int i = 0; i < eb; ++i) bytes[k * eb + i] = static_cast<std::uint8_t>(out >> (8 * i));
  }
}

Result<std::vector<std::uint8_t>> encode(const Variant& v, const QuantizedTensor& q) {
  Result<Layout> layout = make_layout(q.scheme, q.shape);
  if (!layout) return layout.status();
  const Layout& l = *layout;
  if (q.codes.size() != l.elements || q.scale_bits.size() != l.scales) {
    return Status(ErrorCode::size_mismatch, "code or scale count disagrees with scheme and shape");
  }
  std::vector<std::uint8_t> out;
  auto put = [&](std::uint32_t w, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(w >> (8 * i)));
  };
  for (std::uint32_t w : reference::pack_codes(q.scheme, l, q.codes)) put(w, l.storage_element_bytes);
  for (std::uint32_t b : q.scale_bits) put(b, info(q.scheme.scale_dtype()).bytes);
  if (q.global_bits) put(*q.global_bits, 4);
  if (v.reversed_packing) reverse_packing(q.scheme, l, out);
  return out;
}

}  // namespace qscheme::oracle
