// A second, independent evaluation of the rule space (scheme/rules.hpp, docs/SEMANTICS.md
// section 11) for rules_props: plain rationals (boost::multiprecision::cpp_rational), every
// format a sorted table of its exact values built from its bit fields, every rounding a search
// of that table or of f32's grid, log2 in 200-bit binary floating point. It shares no code with
// reference/: if the two agree on random points, data and schemes, each definition is written
// down twice the same way.
#pragma once

#include <algorithm>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/rules.hpp"
#include "scheme/float_bits.hpp"

namespace qscheme::props::model {

namespace mp = boost::multiprecision;
using R = mp::cpp_rational;
using I = mp::cpp_int;
using namespace rule;

inline R pow2(int k) { return k >= 0 ? R(I(1) << k) : R(I(1), I(1) << -k); }


inline R value_of(float f) {
  const std::uint32_t b = f32_bits(f);
  const int e = static_cast<int>((b >> 23) & 0xFF);
  const I m = (b & 0x7FFFFF) | (e ? 0x800000 : 0);
  R v = R(m) * pow2((e ? e : 1) - 150);
  return (b >> 31) ? R(-v) : v;
}

// floor(log2 v), v > 0, by bisection over powers of two.
inline int floor_log2(const R& v) {
  int lo = -400, hi = 400;  // 2^lo <= v < 2^hi
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (v >= pow2(mid) ? lo : hi) = mid;
  }
  return lo;
}

// A signed result: finite, infinite or NaN; the sign also of zeros.
struct Num {
  enum Kind { fin, inf, nan } kind = fin;
  bool neg = false;
  R mag;  // >= 0
  bool zero() const { return kind == fin && mag == 0; }
  R value() const { return neg ? R(-mag) : mag; }
};

enum class Dir { even, away, up, down };  // up/down on the magnitude

// |v| rounded to a multiple of q in direction d (ties: even multiple, or away).
inline I round_multiple(const R& v, const R& q, Dir d) {
  const R n = v / q;
  I fl = mp::numerator(n) / mp::denominator(n);
  const R rem = n - R(fl);
  if (rem == 0) return fl;
  if (d == Dir::down) return fl;
  if (d == Dir::up) return fl + 1;
  if (rem > R(1, 2)) return fl + 1;
  if (rem < R(1, 2)) return fl;
  return d == Dir::away ? fl + 1 : (fl % 2 == 0 ? fl : fl + 1);
}

// Rounding onto f32 (subnormals included), inf past the rounding boundary.
inline Num to_f32(const R& v, Dir d = Dir::even) {
  Num out;
  out.neg = v < 0;
  const R a = out.neg ? R(-v) : v;
  if (a == 0) return out;
  const int e = std::max(floor_log2(a), -126);
  const R q = pow2(e - 23);
  const R r = R(round_multiple(a, q, d)) * q;
  if (r >= pow2(128)) {
    out.kind = Num::inf;
    return out;
  }
  out.mag = r;
  return out;
}
inline Num f32_of(const Num& n) {  // an f32 operation on an exact signed result
  if (n.kind != Num::fin) return n;
  Num r = to_f32(n.value());
  if (n.zero() || r.zero()) r.neg = n.neg;
  return r;
}
inline const R& f32_max() {
  static const R m = (pow2(24) - 1) * pow2(104);
  return m;
}

// A small binary format as the table of its non-negative finite values, in code order.
struct Table {
  std::vector<R> v;
  bool has_inf = false;
};

inline Table make_table(int ebits, int mbits, int bias, std::uint32_t max_code, bool has_inf) {
  Table t;
  t.has_inf = has_inf;
  for (std::uint32_t c = 0; c <= max_code; ++c) {
    const int e = static_cast<int>(c >> mbits);
    const I m = (c & ((1u << mbits) - 1)) + (e ? (1u << mbits) : 0);
    t.v.push_back(R(m) * pow2((e ? e : 1) - bias - mbits));
  }
  (void)ebits;
  return t;
}

inline const Table& table(ScaleDtype d) {
  static const Table f16 = make_table(5, 10, 15, 0x7BFF, true);
  static const Table bf16 = make_table(8, 7, 127, 0x7F7F, true);
  static const Table ue4m3 = make_table(4, 3, 7, 0x7E, false);
  static const Table ue8m0 = [] {
    Table t;
    for (int k = -127; k <= 127; ++k) t.v.push_back(pow2(k));
    return t;
  }();
  switch (d) {
    case ScaleDtype::f16: return f16;
    case ScaleDtype::bf16: return bf16;
    case ScaleDtype::ue4m3: return ue4m3;
    default: return ue8m0;
  }
}

inline const Table& table(Value v) {
  static const Table e4m3 = make_table(4, 3, 7, 0x7E, false);
  static const Table e5m2 = make_table(5, 2, 15, 0x7B, true);
  static const Table e2m1 = make_table(2, 1, 1, 0x7, false);
  return v == Value::e4m3 ? e4m3 : v == Value::e5m2 ? e5m2 : e2m1;
}

// The code (index) of a >= 0 on table t: nullopt = beyond the largest value (overflow).
inline std::optional<std::size_t> round_on(const Table& t, const R& a, Dir d, bool zero_less = false) {
  const auto it = std::lower_bound(t.v.begin(), t.v.end(), a);
  if (it != t.v.end() && *it == a) return static_cast<std::size_t>(it - t.v.begin());
  if (it == t.v.begin()) {  // below the smallest value (ue8m0 only: no zero)
    if (zero_less) return 0;
    return 0;
  }
  const std::size_t lo = static_cast<std::size_t>(it - t.v.begin()) - 1;
  if (it == t.v.end()) {
    // Past the largest value: the next value up is max + one unit of its last bit.
    const R step = t.v[lo] - t.v[lo - 1];
    if (d == Dir::down) return lo;
    if (d == Dir::up) return std::nullopt;
    const R mid = t.v[lo] + step / 2;
    if (a < mid) return lo;
    if (a > mid) return std::nullopt;
    return (d == Dir::away || lo % 2 == 1) ? std::nullopt : std::optional<std::size_t>(lo);
  }
  const std::size_t hi = lo + 1;
  if (d == Dir::down) return lo;
  if (d == Dir::up) return hi;
  const R dl = a - t.v[lo], dh = t.v[hi] - a;
  if (dl < dh) return lo;
  if (dh < dl) return hi;
  if (d == Dir::away) return hi;
  return lo % 2 == 0 ? lo : hi;
}

struct Failure {
  ErrorCode code;
};

struct Scale {  // what codes divide by / dequantize multiplies with
  Num n;
};

struct Output {
  std::vector<std::int32_t> codes;
  std::vector<std::uint32_t> scale_bits;
  std::optional<std::uint32_t> global_bits;
  std::vector<std::uint32_t> dequantized;  // f32 bits
};

inline std::uint32_t f32_bits_of(const Num& n) {
  if (n.kind == Num::nan) return 0;
  std::uint32_t b = n.neg ? 0x80000000u : 0;
  if (n.kind == Num::inf) return b | 0x7F800000u;
  if (n.mag == 0) return b;
  const int e = std::max(floor_log2(n.mag), -126);
  const R m = n.mag / pow2(e - 23);
  const std::uint32_t mant = mp::numerator(m).convert_to<std::uint32_t>();
  const std::uint32_t exp = e == -126 && mant < 0x800000 ? 0 : static_cast<std::uint32_t>(e + 127);
  return b | (exp << 23) | (mant & 0x7FFFFF);
}

// A stored scale pattern of dtype d from a signed magnitude, by the table (f32 by its grid).
inline std::uint32_t store_scale(ScaleDtype d, const Num& u, Dir dir, bool overflow_to_inf) {
  const std::uint32_t sign_bits = d == ScaleDtype::f32 ? 0x80000000u : 0x8000u;
  const bool signed_dtype = d == ScaleDtype::f32 || d == ScaleDtype::f16 || d == ScaleDtype::bf16;
  const std::uint32_t sign = (u.neg && signed_dtype) ? sign_bits : 0;
  if (d == ScaleDtype::f32) {
    Num r = to_f32(u.mag, dir);
    if (r.kind == Num::inf && !overflow_to_inf) return sign | 0x7F7FFFFFu;
    r.neg = false;
    return sign | f32_bits_of(r);
  }
  const Table& t = table(d);
  if (d == ScaleDtype::ue8m0 && dir == Dir::even) {
    // nearest power of two, a tie to the larger
    if (u.mag <= t.v.front()) return 0;
    if (u.mag >= t.v.back()) return 254;
    const std::size_t lo = *round_on(t, u.mag, Dir::down), hi = *round_on(t, u.mag, Dir::up);
    return static_cast<std::uint32_t>(u.mag - t.v[lo] < t.v[hi] - u.mag ? lo : hi);
  }
  if (d == ScaleDtype::ue8m0 && u.mag < t.v.front()) return 0;
  const std::optional<std::size_t> c = round_on(t, u.mag, dir);
  if (!c) {
    if (overflow_to_inf && t.has_inf) return sign | (d == ScaleDtype::f16 ? 0x7C00u : 0x7F80u);
    return sign | static_cast<std::uint32_t>(t.v.size() - 1);
  }
  return sign | static_cast<std::uint32_t>(*c);
}

inline Num scale_value(ScaleDtype d, std::uint32_t bits) {
  Num n;
  if (d == ScaleDtype::f32) {
    const float f = f32_from_bits(bits);
    n.neg = bits >> 31;
    n.mag = n.neg ? R(-value_of(f)) : value_of(f);
    return n;
  }
  if (d == ScaleDtype::f16 || d == ScaleDtype::bf16) {
    n.neg = bits >> 15;
    const std::uint32_t mag = bits & 0x7FFF;
    if (mag == (d == ScaleDtype::f16 ? 0x7C00u : 0x7F80u)) {
      n.kind = Num::inf;
      return n;
    }
    n.mag = table(d).v.at(mag);
    return n;
  }
  n.mag = table(d).v.at(bits);
  return n;
}

// ---------------------------------------------------------------------------------------------

inline R half_width(Value v, Statistic st) {
  const ValueInfo& vi = info(v);
  return st == Statistic::signed_max ? R(-vi.lo) : R(vi.hi - vi.lo, 2);
}

inline int emax_of(Value v) { return v == Value::e4m3 ? 8 : v == Value::e5m2 ? 15 : 2; }
inline int mbits_of(Value v) { return v == Value::e4m3 ? 3 : v == Value::e5m2 ? 2 : 1; }

inline std::uint32_t biased(int e) { return static_cast<std::uint32_t>(std::clamp(e, -127, 127) + 127); }

// floor(f32(log2 a)) for a > 0 with log2 in 200-bit binary floating point.
inline int floor_f32_log2(const R& a) {
  using F = mp::number<mp::cpp_bin_float<200>>;
  const F l = mp::log2(F(mp::numerator(a)) / F(mp::denominator(a)));
  // l as an exact rational of its 200-bit value, then the f32 rounding of the model.
  int e2 = 0;
  const F m = mp::frexp(l, &e2);
  const R exact = R(I(mp::ldexp(m, 200).convert_to<I>())) * pow2(e2 - 200);
  const Num r = to_f32(exact);
  const R v = r.value();
  I fl = mp::numerator(v) / mp::denominator(v);
  if (R(fl) > v) --fl;  // C++ division truncates toward zero
  return fl.convert_to<int>();
}

inline std::optional<std::uint32_t> exponent_rule(ScaleRounding s, Value v, float amax_f) {
  const int emax = emax_of(v);
  const std::uint32_t b = f32_bits(amax_f) & 0x7FFFFFFFu;
  const R amax = value_of(amax_f);
  switch (s) {
    case ScaleRounding::ocp_floor:
      return amax == 0 ? 0u : biased(floor_log2(amax) - emax);
    case ScaleRounding::torchao_ceil:
      return biased(static_cast<int>(b >> 23) - 127 + ((b & 0x7FFFFF) ? 1 : 0) - emax);
    case ScaleRounding::torchao_even: {
      const std::uint32_t r = (b + (1u << (22 - mbits_of(v)))) & 0xFF800000u;
      if ((r >> 23) == 255) return std::nullopt;
      return biased(static_cast<int>(r >> 23) - 127 - emax);
    }
    default:  // log2f_floor
      return biased(floor_f32_log2(amax == 0 ? pow2(-126) : amax) - emax);
  }
}

// The x86 float-to-int32 conversion, then wrap to `bits`.
inline std::int64_t x86(const std::optional<I>& n) {
  if (!n || *n < -(I(1) << 31) || *n >= (I(1) << 31)) return -(std::int64_t{1} << 31);
  return n->convert_to<std::int64_t>();
}
inline std::int32_t wrap(std::int64_t v, int bits) {
  const std::int64_t m = std::int64_t{1} << bits;
  std::int64_t r = ((v % m) + m) % m;
  if (r >= m / 2) r -= m;
  return static_cast<std::int32_t>(r);
}

// floor of a rational (toward -inf)
inline I floor_of(const R& v) {
  I fl = mp::numerator(v) / mp::denominator(v);
  if (R(fl) > v) --fl;
  return fl;
}

// The integer n a finite t rounds to under `ties` (an f32 sum of the offset rule that overflows
// counts as +-2^200, beyond every range).
inline std::optional<I> round_int(const Num& t, Ties ties, int lo) {
  const R a = t.mag;
  I m;
  switch (ties) {
    case Ties::half_even: m = round_multiple(a, 1, Dir::even); break;
    case Ties::half_away: m = round_multiple(a, 1, Dir::away); break;
    case Ties::half_away_f32_add:
    case Ties::half_even_f32_add: {
      const Num s = to_f32(a + R(1, 2));
      if (s.kind == Num::inf) return t.neg ? I(-(I(1) << 200)) : I(1) << 200;
      m = floor_of(s.mag);
      const R below = a - R(1, 2);
      if (ties == Ties::half_even_f32_add && mp::denominator(below) == 1 && mp::numerator(below) % 2 == 0) --m;
      break;
    }
    case Ties::half_up_f32_offset: {
      const Num s = to_f32(t.value() + R(1, 2) - lo);
      if (s.kind != Num::fin) return s.neg ? I(-(I(1) << 200)) : I(1) << 200;  // beyond every range
      const R sv = s.value();
      I tr = mp::numerator(sv) / mp::denominator(sv);  // truncation toward zero
      return tr + lo;
    }
  }
  return t.neg ? I(-m) : m;
}

inline std::int32_t int_code(Value v, const Rules& r, bool x_zero, const Num& t) {
  const ValueInfo& vi = info(v);
  const int flo = -(1 << (vi.bits - 1)), fhi = (1 << (vi.bits - 1)) - 1;
  const auto clampi = [](const I& n, int lo, int hi) {
    return n < lo ? lo : (n > hi ? hi : n.convert_to<int>());
  };
  const std::optional<I> n = t.kind == Num::fin ? round_int(t, r.ties, vi.lo) : std::nullopt;
  switch (r.saturation) {
    case Saturation::standard:
    case Saturation::full_range: {
      const int lo = r.saturation == Saturation::full_range ? flo : vi.lo;
      const int hi = r.saturation == Saturation::full_range ? fhi : vi.hi;
      if (x_zero || t.kind == Num::nan) return 0;
      if (t.kind == Num::inf) return t.neg ? lo : hi;
      if (!n) return 0;
      return clampi(*n, lo, hi);
    }
    case Saturation::none: return wrap(x86(n), vi.bits);
    case Saturation::upper_only: {
      std::optional<I> off;
      if (n) off = *n - vi.lo;
      const std::int32_t q = wrap(x86(off), 8);
      return std::min(q, vi.hi - vi.lo) + vi.lo;
    }
    case Saturation::int64_min_then_clamp:
      if (!n || *n >= (I(1) << 63)) return vi.lo;
      return clampi(*n, vi.lo, vi.hi);
    case Saturation::int32_min_then_full_range: {
      const std::int64_t c = x86(n);
      return static_cast<std::int32_t>(std::clamp<std::int64_t>(c, flo, fhi));
    }
  }
  return 0;
}

inline std::int32_t float_code(Value v, const Rules& r, bool x_zero, const Num& t) {
  const std::int32_t sign_bit = v == Value::e2m1 ? 0x8 : 0x80;
  const bool zq_positive = r.zero_sign == ZeroSign::zero_quotient_positive ||
                           (r.zero_sign == ZeroSign::zero_quotient_positive_e2m1 && v == Value::e2m1);
  const auto zero = [&](bool t_is_zero) {
    bool neg = t.neg;
    if (r.zero_sign == ZeroSign::drop || (zq_positive && t_is_zero)) neg = false;
    return neg ? sign_bit : 0;
  };
  if (x_zero || t.kind == Num::nan) return zero(true);
  const Table& tab = table(v);
  const std::int32_t max_code = static_cast<std::int32_t>(tab.v.size() - 1);
  const auto overflow = [&] {
    const std::int32_t s = t.neg ? sign_bit : 0;
    if (r.saturation == Saturation::none && v == Value::e4m3) return s | 0x7F;
    if (r.saturation == Saturation::none && v == Value::e5m2) return s | 0x7C;
    return s | max_code;
  };
  if (t.kind == Num::inf) return overflow();
  if (t.mag == 0) return zero(true);
  std::optional<std::size_t> c;
  if (r.float_ties == Ties::half_even || r.float_ties == Ties::half_away) {
    c = round_on(tab, t.mag, r.float_ties == Ties::half_even ? Dir::even : Dir::away);
  } else {
    // q = |t| / quantum of |t|'s binade (the subnormal quantum below the normals)
    const int bias = v == Value::e4m3 ? 7 : v == Value::e5m2 ? 15 : 1;
    const int mb = mbits_of(v);
    const int qe = std::max(floor_log2(t.mag) - mb, 1 - bias - mb);
    const R q = t.mag / pow2(qe);
    I m = floor_of(to_f32(q + R(1, 2)).mag);
    const R below = q - R(1, 2);
    if (r.float_ties == Ties::half_even_f32_add && mp::denominator(below) == 1 && mp::numerator(below) % 2 == 0) --m;
    const R value = R(m) * pow2(qe);
    c = round_on(tab, value, Dir::even);
  }
  if (!c) {
    if (r.saturation == Saturation::none) return overflow();
    c = static_cast<std::size_t>(max_code);
  }
  if (*c == 0) return zero(false);
  return (t.neg ? sign_bit : 0) | static_cast<std::int32_t>(*c);
}

}  // namespace qscheme::props::model
