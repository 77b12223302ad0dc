// The reference engine under every point of the rule space it accepts, against the independent
// model of props/rule_space_model.h: random points (recipes with a few fields changed, or any
// field at random), random supported schemes and the recipes' schemes, the generators' hard
// cases as data, both calibrations, given scales. Codes, scale patterns, the global and the
// dequantized bits must be equal, and so must the data errors.
#include <rapidcheck/boost_test.h>

#include <boost/test/unit_test.hpp>

#include "props/generators.h"
#include "props/rule_space_model.h"
#include "reference/reference.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"

namespace qscheme::props {
namespace {

using namespace model;

// At most this many elements: the model is slower than the reference.
constexpr std::uint64_t kMaxModelElements = 96;

rc::Gen<Rules> any_rules() {
  return rc::gen::exec([] {
    const auto all = recipes();
    Rules r = all[*rc::gen::inRange<std::size_t>(0, all.size())].rules;
    const auto fields = rule_fields();
    const int changes = *rc::gen::weightedOneOf<int>(
        {{2, rc::gen::just(0)}, {4, rc::gen::just(1)}, {2, rc::gen::just(2)}, {1, rc::gen::inRange(3, 15)}});
    for (int i = 0; i < changes; ++i) {
      const auto f = *rc::gen::inRange<std::size_t>(0, fields.size());
      set_field_value(r, f, static_cast<std::uint8_t>(*rc::gen::inRange<std::size_t>(0, fields[f].choices.size())));
    }
    return r;
  });
}

rc::Gen<Scheme> scheme_for_rules() {
  static const std::vector<Scheme> kRecipeSchemes = [] {
    std::vector<Scheme> out;
    for (const char* t : {"mxfp8", "mxfp8-e5m2", "mxfp4", "nvfp4", "q8_0", "q4_0", "q4f:block[32]=f16", "q8f",
                          "q8f:block[8]=f32", "q4f:block[8]=bf16", "q2f:block[4]=f32", "e4m3:block[16]=ue4m3:tensor=f32"}) {
      out.push_back(parse_scheme(t).value());
    }
    return out;
  }();
  return rc::gen::weightedOneOf<Scheme>({{1, rc::gen::elementOf(kRecipeSchemes)}, {1, supported_scheme()}});
}

std::vector<std::uint64_t> capped(std::vector<std::uint64_t> shape) {
  auto count = [&] {
    std::uint64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  };
  while (count() > kMaxModelElements) {
    auto it = std::max_element(shape.begin(), shape.end());
    *it /= 2;
  }
  return shape;
}

struct RuleCase {
  Case c;
  Rules rules;
};

std::ostream& operator<<(std::ostream& os, const RuleCase& rc) {
  return os << "rules " << format_rules(rc.rules) << "\n" << rc.c;
}

rc::Gen<RuleCase> any_rule_case() {
  return rc::gen::exec([] {
    RuleCase out;
    out.rules = *any_rules();
    Case& c = out.c;
    c.scheme = *scheme_for_rules();
    c.shape = *rc::gen::suchThat(rc::gen::map(shape_for(c.scheme), capped),
                                 [s = c.scheme](const std::vector<std::uint64_t>& sh) { return validate(s, sh).ok(); });
    const Layout l = make_layout(c.scheme, c.shape).value();
    c.x = *tensor_for(c.scheme, l);
    c.options = *options_for(c.scheme, l, true);
    c.options.rules = out.rules;
    return out;
  });
}

// ---- the model's quantize, from the definitions ----------------------------------------------

struct ModelResult {
  std::optional<ErrorCode> error;
  Output out;
};

Num signed_num(const R& v) {
  Num n;
  n.neg = v < 0;
  n.mag = n.neg ? R(-v) : v;
  return n;
}

Num quotient(const Rules& r, Value v, float xf, const Num& e, const R& amax) {
  const R x = value_of(xf);
  const bool xneg = f32_bits(xf) >> 31;
  Num t;
  if (r.quotient == rule::Quotient::exact || r.quotient == rule::Quotient::f32_divide) {
    t.neg = xneg != e.neg;
    if (e.zero()) {
      t.kind = x == 0 ? Num::nan : Num::inf;
      return t;
    }
    t.mag = (x < 0 ? R(-x) : x) / e.mag;
    return r.quotient == rule::Quotient::exact ? t : f32_of(t);
  }
  Num m;  // the f32 multiplier
  if (r.quotient == rule::Quotient::f32_max_over_amax) {
    if (amax != 0) m = to_f32(R(info(v).hi) / amax);
  } else if (e.zero()) {
    if (r.quotient == rule::Quotient::f32_reciprocal) {
      m.kind = Num::inf;
      m.neg = e.neg;
    } else if (r.quotient == rule::Quotient::f32_reciprocal_capped) {
      m.mag = f32_max();
    }
  } else {
    m = to_f32(R(1) / e.mag);
    m.neg = e.neg;
    if (m.kind == Num::inf && r.quotient == rule::Quotient::f32_reciprocal_capped) {
      m.kind = Num::fin;
      m.mag = f32_max();
    }
  }
  t.neg = xneg != m.neg;
  if (m.kind == Num::inf) {
    t.kind = x == 0 ? Num::nan : Num::inf;
    return t;
  }
  t.mag = (x < 0 ? R(-x) : x) * m.mag;
  return f32_of(t);
}

std::uint32_t dequantized(Value v, std::int32_t code, const Num& e) {
  const ValueInfo& vi = info(v);
  bool neg = e.neg;
  R mag;
  if (!vi.is_float) {
    neg = neg != (code < 0);
    mag = R(code < 0 ? -code : code);
  } else {
    const std::int32_t sign = v == Value::e2m1 ? 0x8 : 0x80;
    neg = neg != ((code & sign) != 0);
    const std::int32_t c = code & ~sign;
    if ((v == Value::e4m3 && c == 0x7F) || (v == Value::e5m2 && c == 0x7C)) {
      if (v == Value::e5m2 && !e.zero()) return (neg ? 0x80000000u : 0u) | 0x7F800000u;
      return (neg ? 0x80000000u : 0u) | 0x7FC00000u;
    }
    mag = table(v).v.at(static_cast<std::size_t>(c));
  }
  if (e.kind == Num::inf) return mag == 0 ? 0xFFC00000u : ((neg ? 0x80000000u : 0u) | 0x7F800000u);
  Num p = to_f32(mag * e.mag);
  p.neg = neg;
  return f32_bits_of(p);
}

ModelResult model_quantize(const Case& c, const Rules& r) {
  ModelResult res;
  const Layout l = make_layout(c.scheme, c.shape).value();
  const ScaleDtype d = c.scheme.scale_dtype();
  const std::size_t nb = l.scales;
  const bool exp_rule = r.scale == ScaleRounding::ocp_floor || r.scale == ScaleRounding::torchao_ceil ||
                        r.scale == ScaleRounding::torchao_even || r.scale == ScaleRounding::log2f_floor;
  const Dir dir = r.scale == ScaleRounding::nearest ? Dir::even : r.scale == ScaleRounding::down ? Dir::down : Dir::up;
  const bool to_inf = r.scale_overflow == ScaleOverflow::infinity;
  const R M = half_width(c.scheme.value, r.statistic);
  std::vector<std::uint64_t> block(c.x.size());
  for (std::size_t i = 0; i < c.x.size(); ++i) block[i] = block_of(l, i);
  Output& out = res.out;
  out.scale_bits.resize(nb);
  std::vector<Num> u(nb);
  std::vector<R> amax(nb, R(0));
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    const R a = abs(value_of(c.x[i]));
    if (a > amax[block[i]]) amax[block[i]] = a;
  }
  if (c.options.scales) {
    for (std::size_t j = 0; j < nb; ++j) {
      u[j] = signed_num(abs(value_of(c.options.scales->block[j])));
      out.scale_bits[j] = store_scale(d, u[j], exp_rule ? Dir::up : dir, to_inf);
    }
    if (c.options.scales->global) out.global_bits = f32_bits(*c.options.scales->global) & 0x7FFFFFFFu;
  } else {
    std::vector<R> alpha(nb, R(0));
    std::vector<bool> uneg(nb, false);
    if (r.statistic == Statistic::signed_max) {
      std::vector<R> best(nb, R(0));
      std::vector<bool> mneg(nb, false);
      for (std::size_t i = 0; i < c.x.size(); ++i) {
        const R a = abs(value_of(c.x[i]));
        if (a > best[block[i]]) {
          best[block[i]] = a;
          mneg[block[i]] = f32_bits(c.x[i]) >> 31;
        }
      }
      alpha = best;
      for (std::size_t j = 0; j < nb; ++j) uneg[j] = !mneg[j];
    } else if (c.options.calibration == Calibration::minmax) {
      alpha = amax;
    } else {
      std::vector<R> sum(nb, R(0));
      std::vector<int> n(nb, 0);
      for (std::size_t i = 0; i < c.x.size(); ++i) {
        sum[block[i]] += abs(value_of(c.x[i]));
        ++n[block[i]];
      }
      for (std::size_t j = 0; j < nb; ++j) alpha[j] = n[j] ? sum[j] / n[j] : R(0);
    }
    for (std::size_t j = 0; j < nb; ++j) {
      u[j].neg = uneg[j];
      switch (r.arithmetic) {
        case Arithmetic::exact: u[j].mag = alpha[j] / M; break;
        case Arithmetic::f32_divide: u[j].mag = to_f32(to_f32(alpha[j]).mag / M).mag; break;
        case Arithmetic::f32_reciprocal:
          u[j].mag = to_f32(to_f32(alpha[j]).mag * to_f32(R(1) / M).mag).mag;
          break;
        case Arithmetic::burn: {
          const R a = to_f32(alpha[j]).mag;
          if (a > f32_max() / 2) return {ErrorCode::unsupported_profile, {}};
          u[j].mag = to_f32(2 * a / (2 * M)).mag;
          break;
        }
      }
    }
    const R maxd = d == ScaleDtype::f32 ? f32_max() : table(d).v.back();
    if (!c.scheme.two_level()) {
      for (std::size_t j = 0; j < nb; ++j) {
        if (exp_rule) {
          const float af = f32_from_bits(f32_bits_of(to_f32(alpha[j])));
          const std::optional<std::uint32_t> e = exponent_rule(r.scale, c.scheme.value, af);
          if (!e) return {ErrorCode::unsupported_profile, {}};
          out.scale_bits[j] = *e;
        } else {
          out.scale_bits[j] = store_scale(d, u[j], dir, to_inf);
        }
      }
    } else if (r.two_level == TwoLevel::te_nvfp4) {
      R A = 0;
      for (const R& a : alpha) A = std::max(A, a);
      const Num num = to_f32(maxd * M);
      Num S;
      if (A == 0) {
        S.kind = Num::inf;
      } else {
        S = to_f32(num.mag / A);
      }
      const R Sv = S.kind == Num::inf ? f32_max() : std::min(S.mag, f32_max());
      const Num g = to_f32(R(1) / Sv);
      out.global_bits = f32_bits_of(g);
      const R mult = to_f32(Sv * to_f32(R(1) / M).mag).mag;
      for (std::size_t j = 0; j < nb; ++j) {
        const Num v = to_f32(alpha[j] * mult);
        const R vm = v.kind == Num::inf ? f32_max() : std::min(v.mag, f32_max());
        out.scale_bits[j] = store_scale(d, signed_num(vm), dir, to_inf);
      }
    } else {
      R top = 0;
      for (const Num& x : u) top = std::max(top, x.mag);
      const bool burn = r.two_level == TwoLevel::burn;
      R g = burn ? to_f32(top / maxd).mag : to_f32(top / maxd, Dir::up).mag;
      g = std::max(g, pow2(-126));
      out.global_bits = f32_bits_of(signed_num(g));
      for (std::size_t j = 0; j < nb; ++j) {
        R nrm = u[j].mag / g;
        if (burn) nrm = to_f32(nrm).mag;
        out.scale_bits[j] = store_scale(d, signed_num(nrm), dir, to_inf);
      }
    }
  }
  // The scale stored patterns stand for (dequantize uses it; codes too unless codes-from unrounded).
  std::vector<Num> stored(nb);
  const Num g = out.global_bits ? scale_value(ScaleDtype::f32, *out.global_bits) : signed_num(R(1));
  for (std::size_t j = 0; j < nb; ++j) {
    Num s = scale_value(d, out.scale_bits[j]);
    if (out.global_bits && s.kind == Num::fin) {
      s.mag *= g.mag;
      if (r.product == Product::f32) {
        s = to_f32(s.mag);
        if (s.kind == Num::inf) return {ErrorCode::unsupported_profile, {}};
      }
    }
    if (s.zero() && r.zero_scale == ZeroScale::substitute_point_one) s = signed_num(value_of(0.1f));
    stored[j] = s;
  }
  std::vector<Num> e = stored;
  if (r.codes_from == CodesFrom::unrounded) {
    e = u;
    for (Num& s : e)
      if (s.zero() && r.zero_scale == ZeroScale::substitute_point_one) s = signed_num(value_of(0.1f));
  }
  if (r.zero_scale == ZeroScale::error) {
    for (std::size_t i = 0; i < c.x.size(); ++i) {
      if (e[block[i]].zero() && value_of(c.x[i]) != 0) return {ErrorCode::zero_scale_nonzero_input, {}};
    }
  }
  out.codes.resize(c.x.size());
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    const Num t = quotient(r, c.scheme.value, c.x[i], e[block[i]], amax[block[i]]);
    const bool x_zero = value_of(c.x[i]) == 0;
    out.codes[i] = info(c.scheme.value).is_float ? float_code(c.scheme.value, r, x_zero, t)
                                                 : int_code(c.scheme.value, r, x_zero, t);
    out.dequantized.push_back(dequantized(c.scheme.value, out.codes[i], stored[block[i]]));
  }
  return res;
}

}  // namespace
}  // namespace qscheme::props

using namespace qscheme;
using namespace qscheme::props;
using namespace qscheme::props::model;

BOOST_AUTO_TEST_SUITE(rule_space)

RC_BOOST_PROP(reference_equals_an_independent_model_at_every_accepted_point, ()) {
  const RuleCase rcase = *any_rule_case();
  const Case& c = rcase.c;
  RC_TAG(info(c.scheme.value).is_float ? "float kind" : "integer kind");
  const Status valid =
      validate_rules(rcase.rules, c.scheme, c.options.calibration, c.options.scales.has_value());
  auto q = reference::quantize(c.scheme, c.shape, c.x, c.options);
  if (!valid.ok()) {
    // A point the validation rejects is rejected by the engine with the validation's error.
    RC_TAG("rejected point");
    RC_ASSERT(!q.ok());
    RC_ASSERT(q.status().code() == ErrorCode::unsupported_profile);
    return;
  }
  const ModelResult m = model_quantize(c, rcase.rules);
  if (m.error) {
    RC_TAG(std::string("data error ") + std::string(to_code(*m.error)));
    RC_ASSERT(!q.ok());
    RC_ASSERT(q.status().code() == *m.error);
    return;
  }
  RC_ASSERT(q.ok());
  RC_TAG("accepted");
  RC_ASSERT(q->codes == m.out.codes);
  RC_ASSERT(q->scale_bits == m.out.scale_bits);
  RC_ASSERT(q->global_bits == m.out.global_bits);
  auto y = reference::dequantize(*q);
  RC_ASSERT(y.ok());
  RC_ASSERT(f32_bits(*y) == m.out.dequantized);
}

BOOST_AUTO_TEST_SUITE_END()
