// RapidCheck generators for the scheme model and the engines.
//
// Schemes are drawn from the whole tuple space, not only its supported part: every value (the
// extension kinds included), store kind and dim 0..7, every mode (affine included), any level
// combination, blocks of 1 to 5 extents including 0, 1 and 255, per-axis levels
// (Arbitrary<Scheme>). For the engines,
// `supported_scheme()` mixes the supported tuples of tuple_space() with supported draws of
// Arbitrary<Scheme> over Burn's kinds, `shape_for()` draws shapes of rank
// 0 to 5 (more only when the packed dim needs it) whose extents do and do not divide the block,
// and `tensor_for()` builds data per block to hit the hard cases: exact rounding ties for the
// scale calibration will pick, values one ulp either side of a tie, subnormals, +-0, the largest
// f32, constant blocks, all-zero blocks, one outlier among tiny values, ordinary random data.
// Element counts stay <= kMaxElements so the reference engine stays cheap; every choice shrinks
// towards small, readable values (1-extents, zeros, the first listed kind).
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <ostream>
#include <set>
#include <vector>

#include "reference/values.hpp"
#include "scheme/layout.hpp"
#include "scheme/ostream.hpp"
#include "scheme/quantized.hpp"
#include "scheme/scheme.hpp"
#include "scheme/space.hpp"
#include "scheme/validate.hpp"

namespace rc {

template <>
struct Arbitrary<qscheme::BlockSize> {
  static Gen<qscheme::BlockSize> arbitrary() {
    return gen::exec([] {
      // Extents favour the interesting edges (0, 1, 255) and small values that divide shapes.
      const auto extent = gen::weightedOneOf<std::uint8_t>(
          {{6, gen::inRange<std::uint8_t>(1, 9)},
           {2, gen::element<std::uint8_t>(0, 1, 16, 32, 255)},
           {1, gen::arbitrary<std::uint8_t>()}});
      const auto rank = *gen::inRange<std::size_t>(1, qscheme::kMaxBlockDims + 1);
      const auto extents = *gen::container<std::vector<std::uint8_t>>(rank, extent);
      return qscheme::BlockSize::make(extents).value();
    });
  }
};

template <>
struct Arbitrary<qscheme::Scheme> {
  static Gen<qscheme::Scheme> arbitrary() {
    using namespace qscheme;
    return gen::exec([] {
      const auto dtype = gen::element(ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue8m0,
                                      ScaleDtype::ue4m3);
      Scheme s;
      // Burn's kinds first (shrinking goes there), then the extension kinds.
      s.value = *gen::elementOf(std::vector<Value>(kAllValues.begin(), kAllValues.end()));
      const auto kind = *gen::element(StoreKind::native, StoreKind::packed_native, StoreKind::packed_u32);
      const std::uint8_t dim =
          kind == StoreKind::native ? 0 : *gen::inRange<std::uint8_t>(0, static_cast<std::uint8_t>(kMaxRank));
      s.store = Store{kind, dim};
      s.mode = *gen::element(Mode::sym, Mode::lookup, Mode::affine);
      if (*gen::arbitrary<bool>()) s.tensor = *dtype;
      if (*gen::arbitrary<bool>()) s.block = BlockLevel{*gen::arbitrary<BlockSize>(), *dtype};
      // The extension's per-axis level, in place of a block level now and then.
      if (!s.block && *gen::inRange(0, 4) == 0) {
        s.axis = AxisLevel{*gen::inRange<std::uint8_t>(0, static_cast<std::uint8_t>(kMaxRank)), *dtype};
      }
      return s;
    });
  }
};

}  // namespace rc

namespace qscheme::props {

// Element cap of generated tensors: the reference engine works in exact rationals.
inline constexpr std::uint64_t kMaxElements = 512;

// One engine input: scheme, shape, row-major data and options.
struct Case {
  Scheme scheme;
  std::vector<std::uint64_t> shape;
  std::vector<float> x;
  QuantizeOptions options;
};

inline std::ostream& operator<<(std::ostream& os, const Case& c) {
  os << "scheme " << c.scheme << ", shape [";
  for (std::size_t i = 0; i < c.shape.size(); ++i) os << (i ? "," : "") << c.shape[i];
  os << "], profile " << to_string(c.options.profile) << ", calibration " << to_string(c.options.calibration);
  if (c.options.scales) {
    os << ", given scales [";
    for (std::size_t i = 0; i < c.options.scales->block.size(); ++i)
      os << (i ? ", " : "") << std::hexfloat << c.options.scales->block[i] << std::defaultfloat;
    os << "]";
    if (c.options.scales->global) os << " global " << std::hexfloat << *c.options.scales->global << std::defaultfloat;
  }
  os << "\n  x (" << c.x.size() << ") = [";
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    os << (i ? ", " : "") << std::hexfloat << c.x[i] << std::defaultfloat;
    if (i >= 63 && c.x.size() > 64) {
      os << ", ...";
      break;
    }
  }
  return os << "]";
}

// The supported tuples of tuple_space() (validate_scheme accepts them).
inline const std::vector<Scheme>& supported_tuples() {
  static const std::vector<Scheme> kTuples = [] {
    std::vector<Scheme> out;
    for (const Scheme& s : tuple_space())
      if (validate_scheme(s).ok()) out.push_back(s);
    return out;
  }();
  return kTuples;
}

inline rc::Gen<Scheme> supported_scheme() {
  return rc::gen::weightedOneOf<Scheme>(
      {{3, rc::gen::elementOf(supported_tuples())},
       {1, rc::gen::suchThat(rc::gen::arbitrary<Scheme>(), [](const Scheme& s) {
          // Burn's model: the properties written against it (symmetric scales, Burn's kinds) do
          // not all hold for the extension's kinds, affine mode and per-axis scales, whose own
          // properties draw them (engine_props.cpp, "qscheme's extension").
          return validate_scheme(s).ok() && !info(s.value).extension && !s.affine() && !s.axis;
        })}});
}

// Block index (row-major over the block grid) of row-major element i.
inline std::uint64_t block_of(const Layout& l, std::uint64_t i) {
  std::uint64_t b = 0, stride = 1;
  for (std::size_t d = l.shape.size(); d-- > 0;) {
    const std::uint64_t c = i % l.shape[d];
    i /= l.shape[d];
    b += (c / l.block[d]) * stride;
    stride *= l.blocks_per_dim[d];
  }
  return b;
}

// A shape of rank 0..5 (more if the packed dim needs it) that validate() accepts with `s`, at
// most kMaxElements elements. Extents are drawn against the block extent of their axis: 1, small,
// b - 1, b, b + 1, 2b (so they do and do not divide the block).
inline rc::Gen<std::vector<std::uint64_t>> shape_for(const Scheme& s) {
  return rc::gen::exec([s] {
    std::size_t need = 0;
    if (s.block) need = s.block->size.rank();
    if (s.store.kind != StoreKind::native) need = std::max<std::size_t>(need, s.store.dim + 1u);
    const std::size_t rank = std::max(*rc::gen::inRange<std::size_t>(0, 6), need);
    std::vector<std::uint64_t> shape(rank);
    for (std::size_t k = 0; k < rank; ++k) {  // k counts from the innermost axis
      std::uint64_t b = 1;
      if (s.block && k < s.block->size.rank()) b = s.block->size[s.block->size.rank() - 1 - k];
      shape[rank - 1 - k] = *rc::gen::weightedOneOf<std::uint64_t>(
          {{4, rc::gen::just<std::uint64_t>(1)},
           {4, rc::gen::inRange<std::uint64_t>(0, 10)},
           {2, rc::gen::just<std::uint64_t>(b > 1 ? b - 1 : 2)},
           {3, rc::gen::just<std::uint64_t>(std::uint64_t{b})},
           {2, rc::gen::just<std::uint64_t>(b + 1)},
           {1, rc::gen::just<std::uint64_t>(2 * b)}});
    }
    // Cap the element count: halve the largest extent until it fits.
    auto count = [&] {
      std::uint64_t n = 1;
      for (auto e : shape) n *= e;
      return n;
    };
    while (count() > kMaxElements) {
      auto it = std::max_element(shape.begin(), shape.end());
      *it = *it / 2;
    }
    return shape;
  });
}

// Grid values (as doubles, exact) of a value kind, sorted, without duplicates (+-0 once).
inline const std::vector<double>& grid_values(Value v) {
  // One table per value kind, the extension's included (a kind past the array was out of bounds).
  static std::vector<double> tables[std::size(kAllValues)];
  auto& t = tables[static_cast<int>(v)];
  if (t.empty()) {
    std::set<double> vals;
    const ValueInfo& vi = info(v);
    const int lo = vi.is_float ? 0 : vi.lo, hi = vi.is_float ? (1 << vi.bits) - 1 : vi.hi;
    for (int c = lo; c <= hi; ++c) {
      auto r = reference::code_value(v, c);
      if (r) vals.insert(static_cast<double>(r->f32) + 0.0);
    }
    t.assign(vals.begin(), vals.end());
  }
  return t;
}

// Ordinary f32: a random significand at 2^e, e around `base`.
inline rc::Gen<float> ordinary(int base, int spread) {
  return rc::gen::exec([base, spread] {
    const int e = std::clamp(base + *rc::gen::inRange(-spread, spread + 1), -149, 104);
    const auto m = *rc::gen::inRange<std::int32_t>(-(1 << 24), (1 << 24));
    return std::ldexp(static_cast<float>(m), e);
  });
}

enum class BlockKind { zeros, ties, random, constant, outlier, subnormal, largest };

inline std::ostream& operator<<(std::ostream& os, BlockKind k) {
  static const char* n[] = {"zeros", "ties", "random", "constant", "outlier", "subnormal", "largest"};
  return os << n[static_cast<int>(k)];
}

// Data for `scheme` over layout `l`, built block by block (see the file comment). For "ties"
// blocks the first element is the anchor +-(W/2) m 2^k (m odd, below 2^15), so minmax calibration
// over one level picks the scale m 2^k exactly where the dtype holds it; the others are midpoints
// of the value grid times m 2^k, exactly or one ulp off.
inline rc::Gen<std::vector<float>> tensor_for(const Scheme& scheme, const Layout& l) {
  return rc::gen::exec([scheme, l] {
    std::vector<float> x(l.elements);
    if (l.elements == 0) return x;
    const std::uint64_t nb = l.scales;
    const ValueInfo& vi = info(scheme.value);
    const double W = vi.hi - vi.lo;
    const auto& grid = grid_values(scheme.value);
    struct Plan {
      BlockKind kind;
      int k;
      int m;  // odd multiplier of the tie scale m 2^k (< 2^15; m > 1 makes 1/e inexact)
      float c;
      std::uint64_t outlier_at;
      bool seen = false;
    };
    const auto kinds = rc::gen::weightedOneOf<BlockKind>(
        {{1, rc::gen::just(BlockKind::zeros)},
         {4, rc::gen::just(BlockKind::ties)},
         {4, rc::gen::just(BlockKind::random)},
         {1, rc::gen::just(BlockKind::constant)},
         {1, rc::gen::just(BlockKind::outlier)},
         {1, rc::gen::just(BlockKind::subnormal)},
         {1, rc::gen::just(BlockKind::largest)}});
    // One kind for the whole tensor (shrinks well), or one per block.
    const bool per_block = nb > 1 && *rc::gen::arbitrary<bool>();
    std::vector<Plan> plans(per_block ? std::min<std::uint64_t>(nb, kMaxElements) : 1);
    for (auto& p : plans) {
      p.kind = *kinds;
      p.k = *rc::gen::weightedOneOf<int>({{4, rc::gen::inRange(-4, 5)}, {1, rc::gen::inRange(-20, 21)}});
      p.m = *rc::gen::weightedOneOf<int>(
          {{3, rc::gen::element(1, 3, 5, 7)},
           {1, rc::gen::map(rc::gen::inRange(0, 1 << 14), [](int h) { return 2 * h + 1; })}});
      p.c = *ordinary(0, 20);
      p.outlier_at = *rc::gen::inRange<std::uint64_t>(0, 16);
    }
    std::vector<std::uint64_t> seen_in_block(plans.size(), 0);
    for (std::uint64_t i = 0; i < l.elements; ++i) {
      const std::uint64_t bi = per_block ? block_of(l, i) % plans.size() : 0;
      Plan& p = plans[bi];
      const std::uint64_t pos = seen_in_block[bi]++;
      float v = 0;
      switch (p.kind) {
        case BlockKind::zeros: v = *rc::gen::element(0.0f, -0.0f); break;
        case BlockKind::ties: {
          const double step = std::ldexp(static_cast<double>(p.m), p.k);
          if (pos == 0) {
            v = static_cast<float>(W / 2 * step) * (*rc::gen::arbitrary<bool>() ? -1.0f : 1.0f);
            break;
          }
          const auto j = *rc::gen::inRange<std::size_t>(0, grid.size() - 1);
          const float t = static_cast<float>((grid[j] + grid[j + 1]) / 2 * step);  // exact
          switch (*rc::gen::inRange(0, 4)) {
            case 0: v = t; break;
            case 1: v = std::nextafter(t, INFINITY); break;
            case 2: v = std::nextafter(t, -INFINITY); break;
            default: v = static_cast<float>(grid[j] * step); break;  // on the grid
          }
          break;
        }
        case BlockKind::random: v = *ordinary(p.k, 6); break;
        case BlockKind::constant: v = p.c; break;
        case BlockKind::outlier:
          v = pos == p.outlier_at ? p.c : std::ldexp(static_cast<float>(*rc::gen::inRange(-1000, 1001)), -40);
          break;
        case BlockKind::subnormal:
          v = std::ldexp(static_cast<float>(*rc::gen::inRange<std::int32_t>(-(1 << 23) + 1, 1 << 23)), -149);
          break;
        case BlockKind::largest:
          v = *rc::gen::element(FLT_MAX, -FLT_MAX, std::nextafter(FLT_MAX, 0.0f), 1.0f, -0.0f, FLT_MIN);
          break;
      }
      x[i] = v;
    }
    return x;
  });
}

// One scale value for caller-supplied scales: a grid-friendly power of two times a small odd
// number, a random positive f32, zero, or a subnormal.
inline rc::Gen<float> given_scale() {
  return rc::gen::weightedOneOf<float>(
      {{4, rc::gen::exec([] {
          return std::ldexp(static_cast<float>(*rc::gen::element(1, 3, 5, 7, 9, 15)), *rc::gen::inRange(-12, 8));
        })},
       {2, rc::gen::map(ordinary(-2, 10), [](float f) { return std::fabs(f); })},
       {1, rc::gen::just(0.0f)},
       {1, rc::gen::exec([] { return std::ldexp(static_cast<float>(*rc::gen::inRange(1, 1 << 23)), -149); })}});
}

inline rc::Gen<GivenScales> given_scales_for(const Scheme& s, const Layout& l) {
  return rc::gen::exec([s, l] {
    GivenScales g;
    g.block = *rc::gen::container<std::vector<float>>(l.scales, given_scale());
    if (s.two_level()) {
      g.global = *rc::gen::weightedOneOf<float>(
          {{3, rc::gen::exec([] { return std::ldexp(1.0f, *rc::gen::inRange(-20, 10)); })},
           {1, rc::gen::map(ordinary(-10, 20), [](float f) { return std::fabs(f); })}});
    }
    return g;
  });
}

// Options: both profiles, both calibrations, caller-supplied scales in a third of the cases
// (when `allow_given`).
inline rc::Gen<QuantizeOptions> options_for(const Scheme& s, const Layout& l, bool allow_given = true) {
  return rc::gen::exec([s, l, allow_given] {
    QuantizeOptions o;
    o.profile = *rc::gen::element(Profile::exact, Profile::burn);
    o.calibration = *rc::gen::element(Calibration::minmax, Calibration::absmean);
    if (allow_given && *rc::gen::inRange(0, 3) == 0) o.scales = *given_scales_for(s, l);
    return o;
  });
}

struct CaseOptions {
  bool allow_given = true;
  bool only_exact = false;
};

// A supported scheme, a shape it accepts, data and options.
inline rc::Gen<Case> any_case(CaseOptions co = {}) {
  return rc::gen::exec([co] {
    Case c;
    c.scheme = *supported_scheme();
    c.shape = *rc::gen::suchThat(shape_for(c.scheme), [s = c.scheme](const std::vector<std::uint64_t>& sh) {
      return validate(s, sh).ok();
    });
    const Layout l = make_layout(c.scheme, c.shape).value();
    c.x = *tensor_for(c.scheme, l);
    c.options = *options_for(c.scheme, l, co.allow_given);
    if (co.only_exact) c.options.profile = Profile::exact;
    return c;
  });
}

}  // namespace qscheme::props

namespace rc {
template <>
struct Arbitrary<qscheme::props::Case> {
  static Gen<qscheme::props::Case> arbitrary() { return qscheme::props::any_case(); }
};
}  // namespace rc
