#include "reference/element.hpp"

#include <limits>
#include <optional>

#include "reference/minifloat.hpp"
#include "reference/values.hpp"

namespace qscheme::reference {
namespace {

using namespace rule;

constexpr std::uint32_t kF32Infinity = 0x7F800000u;
constexpr std::uint32_t kF32MaxBits = 0x7F7FFFFFu;

// The quotient t of rule `quotient`: finite (an exact magnitude and a sign), infinite, or NaN
// (0 * inf).
struct Quot {
  enum Kind { finite, infinite, nan } kind = finite;
  bool negative = false;
  Quotient mag;
  bool is_zero() const { return kind == finite && mag.num == 0; }
};

Quot finite_of_f32(std::uint32_t bits) {
  Quot t;
  t.negative = (bits >> 31) != 0;
  if ((bits & 0x7FFFFFFFu) == kF32Infinity) {
    t.kind = Quot::infinite;
    return t;
  }
  const F32Parts p = split_f32(f32_from_bits(bits));
  t.mag = {Integer(p.mant), Integer(1), p.exp2};
  return t;
}

std::uint32_t f32_of(bool negative, const Quotient& q) {
  return f32_bits(round_to_f32(negative, q, Overflow::infinity));
}

// The f32 multiplier of the reciprocal rules, as a magnitude, a sign and whether it is inf.
struct Multiplier {
  bool infinite = false;
  bool negative = false;
  Quotient mag;
};

Multiplier multiplier(const Rules& r, Value v, const SignedScale& e, const Quotient& amax) {
  Multiplier m;
  if (r.quotient == rule::Quotient::f32_max_over_amax) {
    if (amax.num == 0) return m;  // ggml: (maxScalar != 0) ? 127 / maxScalar : 0
    const Quot q = finite_of_f32(f32_of(false, {Integer(info(v).hi) * amax.den, amax.num, -amax.exp2}));
    m.infinite = q.kind == Quot::infinite;
    m.mag = q.mag;
    return m;
  }
  m.negative = e.negative;
  if (e.is_zero()) {
    if (r.quotient == rule::Quotient::f32_reciprocal_or_zero) return {false, false, {}};  // d ? 1 / d : 0
    if (r.quotient == rule::Quotient::f32_reciprocal_capped) {
      m.mag = finite_of_f32(kF32MaxBits).mag;  // min(1 / 0, f32max)
      return m;
    }
    m.infinite = true;  // IEEE 1 / 0
    return m;
  }
  const Quot q = finite_of_f32(f32_of(e.negative, {e.mag.den, e.mag.num, -e.mag.exp2}));
  m.infinite = q.kind == Quot::infinite;
  m.mag = q.mag;
  if (m.infinite && r.quotient == rule::Quotient::f32_reciprocal_capped) {
    m.infinite = false;
    m.mag = finite_of_f32(kF32MaxBits).mag;
  }
  return m;
}

Quot quotient(const Rules& r, Value v, const F32Parts& px, const SignedScale& e, const Quotient& amax) {
  Quot t;
  if (r.quotient == rule::Quotient::exact || r.quotient == rule::Quotient::f32_divide) {
    t.negative = px.negative != e.negative;
    if (e.is_zero()) {  // IEEE x / 0 (zero-scale=ieee); the other rules never get here with x != 0
      t.kind = px.mant == 0 ? Quot::nan : Quot::infinite;
      return t;
    }
    if (px.mant == 0) {
      t.mag = Quotient{Integer(0), Integer(1), 0};
      return t;
    }
    // A stored scale is dyadic (den 1): skip the multi-precision product on the common path.
    t.mag = Quotient{e.mag.den == 1 ? Integer(px.mant) : Integer(px.mant) * e.mag.den, e.mag.num,
                     px.exp2 - e.mag.exp2};
    if (r.quotient == rule::Quotient::exact) return t;
    return finite_of_f32(f32_of(t.negative, t.mag));
  }
  const Multiplier m = multiplier(r, v, e, amax);
  t.negative = px.negative != m.negative;
  if (m.infinite) {
    t.kind = px.mant == 0 ? Quot::nan : Quot::infinite;
    return t;
  }
  return finite_of_f32(f32_of(t.negative, {Integer(px.mant) * m.mag.num, m.mag.den, px.exp2 + m.mag.exp2}));
}

Rational signed_value(const Quot& t) {
  const Rational v = to_rational(t.mag);
  return t.negative ? Rational(-v) : v;
}

// floor(f32(q + 1/2)) for q >= 0, and whether q - 1/2 is an even integer.
Integer floor_of_f32_half_sum(const Quotient& q, bool* minus_half_is_even) {
  const Rational v = to_rational(q);
  const Rational sum = v + Rational(1, 2);
  const float s = round_to_f32(sum, Overflow::infinity);
  const Rational below = v - Rational(1, 2);
  if (minus_half_is_even) {
    *minus_half_is_even = mp::denominator(below) == 1 && mp::numerator(below) % 2 == 0;
  }
  const F32Parts p = split_f32(s);
  return round_quotient({Integer(p.mant), Integer(1), p.exp2}, 0, RoundMode::down);
}

// An integer of 2^64 and beyond in magnitude: every conversion rule treats it alike.
struct Rounded {
  bool huge = false;  // |n| >= 2^64 (or an f32 sum that overflowed)
  bool negative = false;
  Integer n;
};

Rounded round_integer(const Quot& t, Ties ties, std::int32_t lo) {
  Rounded out;
  out.negative = t.negative;
  if (ties == Ties::half_up_f32_offset) {
    // trunc(f32(t + (0.5 - lo))) + lo: ggml's (int8_t)(x * id + 8.5f), whose sum is >= 0 for
    // every finite input under a signed-max scale.
    const Rational sum = signed_value(t) + Rational(1, 2) - lo;
    const std::uint32_t s = f32_bits(round_to_f32(sum, Overflow::infinity));
    const Quot st = finite_of_f32(s);
    if (st.kind != Quot::finite || (!st.is_zero() && floor_log2(st.mag) >= 64)) {
      out.huge = true;
      out.negative = st.negative;
      return out;
    }
    const Integer m = round_quotient(st.mag, 0, RoundMode::down);  // truncation toward zero
    out.n = (st.negative ? Integer(-m) : m) + lo;
    out.negative = out.n < 0;
    return out;
  }
  if (!t.is_zero() && floor_log2(t.mag) >= 64) {
    out.huge = true;
    return out;
  }
  Integer m;
  if (ties == Ties::half_even || ties == Ties::half_away) {
    m = round_quotient(t.mag, 0, ties == Ties::half_even ? RoundMode::half_even : RoundMode::half_away);
  } else {
    bool even = false;
    m = floor_of_f32_half_sum(t.mag, &even);
    if (ties == Ties::half_even_f32_add && even) --m;
  }
  out.n = t.negative ? Integer(-m) : m;
  return out;
}

// The x86 float-to-int32 conversion (cvttss2si, cvtps2dq): NaN, inf and values outside int32
// give INT32_MIN.
std::int64_t x86_int32(const Quot& t, const Rounded& n) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int32_t>::min();
  if (t.kind != Quot::finite || n.huge) return kMin;
  if (n.n < kMin || n.n > std::numeric_limits<std::int32_t>::max()) return kMin;
  return n.n.convert_to<std::int64_t>();
}

// Two's complement wrap of v to `bits` bits, sign-extended.
std::int32_t wrap(std::int64_t v, int bits) {
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  std::uint64_t u = static_cast<std::uint64_t>(v) & mask;
  if (u >> (bits - 1)) u |= ~mask;
  return static_cast<std::int32_t>(static_cast<std::int64_t>(u));
}

std::int32_t clamp(const Integer& n, std::int32_t lo, std::int32_t hi) {
  if (n < lo) return lo;
  if (n > hi) return hi;
  return n.convert_to<std::int32_t>();
}

Result<std::int32_t> integer_code(Value v, const Rules& r, const F32Parts& px, const Quot& t, std::int32_t zp) {
  const ValueInfo& vi = info(v);
  const std::int32_t full_lo = qscheme::full_lo(v);
  const std::int32_t full_hi = qscheme::full_hi(v);
  const bool full = r.saturation == Saturation::full_range;
  const std::int32_t lo = full ? full_lo : vi.lo;
  const std::int32_t hi = full ? full_hi : vi.hi;
  switch (r.saturation) {
    case Saturation::standard:
    case Saturation::full_range: {
      if (px.mant == 0 || t.kind == Quot::nan) return clamp(Integer(zp), lo, hi);
      if (t.kind == Quot::infinite) return t.negative ? lo : hi;
      const Rounded n = round_integer(t, r.ties, vi.lo);
      if (n.huge) return n.negative ? lo : hi;
      return clamp(n.n + zp, lo, hi);
    }
    case Saturation::none: {
      const Rounded n = t.kind == Quot::finite ? round_integer(t, r.ties, vi.lo) : Rounded{};
      if (vi.is_unsigned) return static_cast<std::int32_t>(x86_int32(t, n) & ((std::int64_t{1} << vi.bits) - 1));
      return wrap(x86_int32(t, n), vi.bits);
    }
    case Saturation::upper_only: {
      // ggml q4_0: MIN(15, (int8_t)(x * id + 8.5f)) - 8, on the offset code.
      const Rounded n = t.kind == Quot::finite ? round_integer(t, r.ties, vi.lo) : Rounded{};
      Rounded offset = n;
      if (!n.huge && t.kind == Quot::finite) offset.n = n.n - vi.lo;
      const std::int32_t q = wrap(x86_int32(t, offset), 8);
      const std::int32_t c = (q < vi.hi - vi.lo ? q : vi.hi - vi.lo) + vi.lo;
      if (c < vi.lo) {
        return Status(ErrorCode::internal, "saturation=upper-only met a negative offset code; please report");
      }
      return c;
    }
    case Saturation::int64_min_then_clamp: {
      // PyTorch: static_cast<int64_t>(zero_point + nearbyint(t)) is INT64_MIN for NaN, inf and
      // 2^63 and beyond; the clamp to [qmin, qmax] follows. The sum is an f32 addition, but it
      // is exact below 2^24 and past that it clamps to the same bound either way; an f32 below
      // 2^63 is at most 2^63 - 2^39, so adding a zero point never reaches 2^63.
      if (t.kind != Quot::finite) return vi.lo;
      const Rounded n = round_integer(t, r.ties, vi.lo);
      if (n.huge || n.n >= Integer(1) << 63) return vi.lo;
      return clamp(n.n + zp, vi.lo, vi.hi);
    }
    case Saturation::int32_min_then_full_range: {
      const Rounded n = t.kind == Quot::finite ? round_integer(t, r.ties, vi.lo) : Rounded{};
      const std::int64_t c = x86_int32(t, n);
      return static_cast<std::int32_t>(c < full_lo ? full_lo : (c > full_hi ? full_hi : c));
    }
  }
  return Status(ErrorCode::internal, "unknown saturation rule");
}

// Does rounding |t| onto the grid of f (no saturation) pass its largest finite value?
bool rounds_past_max(Format f, const Quotient& mag, RoundMode mode) {
  const FormatInfo& fi = format_info(f);
  const Magnitude mx = code_magnitude(f, fi.max_code);
  // The midpoint between max and the next grid value, one unit of max's last mantissa bit up.
  const Quotient mid{Integer(mx.mant) * 2 + 1, Integer(1), mx.exp2 - 1};
  const int c = compare(mag, mid);
  if (c != 0) return c > 0;
  return mode == RoundMode::half_away || (mode == RoundMode::half_even && (fi.max_code & 1) != 0);
}

std::uint32_t overflow_code(Format f, bool negative, const Rules& r) {
  const std::uint32_t sign = negative ? sign_bit(f) : 0;
  if (r.saturation == Saturation::none) {
    if (f == Format::e4m3) return sign | 0x7Fu;  // NaN
    if (f == Format::e5m2) return sign | 0x7Cu;  // inf
  }
  return sign | format_info(f).max_code;
}

std::uint32_t zero_code(Format f, const Rules& r, Value v, const Quot& t) {
  bool negative = t.negative;
  const bool positive_on_zero_quotient =
      r.zero_sign == ZeroSign::zero_quotient_positive ||
      (r.zero_sign == ZeroSign::zero_quotient_positive_e2m1 && v == Value::e2m1);
  if (r.zero_sign == ZeroSign::drop || (positive_on_zero_quotient && t.is_zero())) negative = false;
  return negative ? sign_bit(f) : 0;
}

std::uint32_t float_code(Value v, const Rules& r, const F32Parts& px, const Quot& t) {
  const Format f = format_of(v);
  if (px.mant == 0 || t.kind == Quot::nan) {
    Quot zero = t;
    zero.kind = Quot::finite;
    zero.mag = {Integer(0), Integer(1), 0};
    return zero_code(f, r, v, zero);
  }
  if (t.kind == Quot::infinite) return overflow_code(f, t.negative, r);
  std::uint32_t mag_code = 0;
  if (t.mag.num != 0) {
    if (r.float_ties == Ties::half_even || r.float_ties == Ties::half_away) {
      const RoundMode mode = r.float_ties == Ties::half_even ? RoundMode::half_even : RoundMode::half_away;
      if (r.saturation == Saturation::none && f != Format::e2m1 && rounds_past_max(f, t.mag, mode)) {
        return overflow_code(f, t.negative, r);
      }
      mag_code = round_to_format(f, false, t.mag, mode, Overflow::saturate);
    } else {
      // On the grid's own quantum: q = |t| / 2^qe within |t|'s binade (the subnormal quantum
      // below the normal range), m = floor(f32(q + 0.5)) (minus one on an exact even tie).
      const FormatInfo& fi = format_info(f);
      const int qmin = 1 - fi.bias - fi.man_bits;
      const int e = floor_log2(t.mag);
      const int qe = e - fi.man_bits > qmin ? e - fi.man_bits : qmin;
      bool even = false;
      Integer m = floor_of_f32_half_sum({t.mag.num, t.mag.den, t.mag.exp2 - qe}, &even);
      if (r.float_ties == Ties::half_even_f32_add && even) --m;
      const Quotient value{m, Integer(1), qe};
      if (m != 0 && r.saturation == Saturation::none && f != Format::e2m1 &&
          rounds_past_max(f, value, RoundMode::half_even)) {
        return overflow_code(f, t.negative, r);
      }
      mag_code = m == 0 ? 0 : round_to_format(f, false, value, RoundMode::half_even, Overflow::saturate);
    }
  }
  if (mag_code == 0) return zero_code(f, r, v, t);
  return (t.negative ? sign_bit(f) : 0) | mag_code;
}

}  // namespace

Result<std::int32_t> quantize_element(Value v, const Rules& r, float x, const SignedScale& e, const Quotient& amax,
                                      std::int32_t zero_point) {
  const F32Parts px = split_f32(x);
  const Quot t = quotient(r, v, px, e, amax);
  if (!info(v).is_float) return integer_code(v, r, px, t, zero_point);
  return static_cast<std::int32_t>(float_code(v, r, px, t));
}

float dequantize_element(Value v, std::int32_t code, const SignedScale& e) {
  bool negative = e.negative;
  Quotient product;
  bool zero_code = false;
  if (!info(v).is_float) {
    negative = negative != (code < 0);
    zero_code = code == 0;
    product.num = Integer(code < 0 ? -static_cast<std::int64_t>(code) : code);
  } else {
    const Format f = format_of(v);
    const auto c = static_cast<std::uint32_t>(code);
    negative = negative != code_is_negative(f, c);
    if (!is_finite_code(f, c)) {  // the overflow patterns of saturation=none
      if (f == Format::e5m2 && !e.is_zero()) return negative ? -std::numeric_limits<float>::infinity()
                                                             : std::numeric_limits<float>::infinity();
      return f32_from_bits(0x7FC00000u | (negative ? 0x80000000u : 0u));
    }
    const Magnitude m = code_magnitude(f, c);
    zero_code = m.mant == 0;
    product.num = Integer(m.mant);
    product.exp2 = m.exp2;
  }
  if (e.infinite) {
    if (zero_code) return f32_from_bits(0xFFC00000u);  // x86's default NaN for 0 * inf
    return negative ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  product.num *= e.mag.num;
  product.den = e.mag.den;
  product.exp2 += e.mag.exp2;
  return round_to_f32(negative, product, Overflow::infinity);
}

float dequantize_element(Value v, std::int32_t code, const Dyadic& e) {
  return dequantize_element(v, code, SignedScale{to_quotient(e), false, false});
}

}  // namespace qscheme::reference
