#include "oracle/edge_tensors.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <iterator>
#include <limits>
#include <random>

#include "fast/fast.hpp"
#include "reference/values.hpp"
#include "scheme/float_bits.hpp"

namespace qscheme::oracle {

namespace {

// The non-negative values of a kind's grid, ascending.
std::vector<double> grid(Value v) {
  const ValueInfo& vi = info(v);
  std::vector<double> out;
  if (!vi.is_float) {
    for (int k = 0; k <= vi.hi; ++k) out.push_back(k);
    return out;
  }
  for (std::int32_t c = 0; c < (1 << vi.bits); ++c) {
    const auto e = reference::code_value(v, c);
    if (e && !e->negative) out.push_back(static_cast<double>(e->f32));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Calls f(element, block) for every element in row-major order.
template <class F>
void for_each_element(const Layout& l, F f) {
  find_element(l, [&](std::uint64_t i, std::uint64_t b) {
    f(i, b);
    return false;
  });
}

class Builder {
 public:
  Builder(const Scheme& s, const Layout& l, std::uint32_t seed)
      : s_(s), l_(l), rng_(seed), vi_(info(s.value)), grid_(grid(s.value)) {}

  std::vector<EdgeInput> build(EdgeSet set) {
    const std::size_t n = l_.elements;
    add("random", true, [&](std::size_t) { return uniform(-2.0f, 2.0f); });
    static const float kMix[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.5f, -3.5f, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN,
                                 f32_from_bits(0x007fffff), 1e-40f, 6.0f, 5.0f, 127.0f, 448.0f, 0.25f, 1e-30f};
    add("edge mix", true, [&](std::size_t i) { return kMix[(i * 7) % std::size(kMix)]; });
    if (set == EdgeSet::every_size) return std::move(out_);
    out_.push_back({"ties after scaling", ties_after_scaling(), std::nullopt, false});
    out_.push_back({"scale-rounding boundaries", scale_boundaries(), std::nullopt, false});
    out_.push_back({"zero and constant blocks", zero_and_constant_blocks(), std::nullopt, false});
    if (s_.affine()) out_.push_back({"affine ties after scaling", affine_ties(), std::nullopt, false});
    add("wide range", false, [&](std::size_t) {
      return std::ldexp(std::normal_distribution<float>(0.0f, 1.0f)(rng_), static_cast<int>(rng_() % 61) - 30);
    });
    add("subnormals", false, [&](std::size_t i) {
      return i % 5 == 0 ? 0.0f : f32_from_bits((rng_() % 0x7FFFFFu + 1) | (rng_() & 0x80000000u));
    });
    add("smallest normal", false, [&](std::size_t i) { return (i % 2) ? FLT_MIN : -FLT_MIN * 0.5f; });
    add("largest", false, [&](std::size_t i) { return (i % 3 == 0) ? FLT_MAX : (i % 3 == 1) ? -FLT_MAX : 1.0f; });
    add("largest and smallest", false, [&](std::size_t i) { return (i % 2) ? FLT_MAX : FLT_TRUE_MIN; });
    add("signed zeros", false, [&](std::size_t) { return (rng_() & 1) ? -0.0f : 0.0f; });
    add("all zero", false, [&](std::size_t) { return 0.0f; });
    add("constant", false, [&](std::size_t) { return 3.14159274f; });
    add("constant negative", false, [&](std::size_t) { return -1e-3f; });
    add("quarter steps", false, [&](std::size_t) { return static_cast<float>(static_cast<int>(rng_() % 256) - 128) / 4; });
    add("any finite", false, [&](std::size_t) { return f32_from_bits(rng_() & 0x7F7FFFFFu) * ((rng_() & 1) ? -1.f : 1.f); });
    {
      std::vector<float> x(n, 0.01f);
      if (n) x[rng_() % n] = 1e6f;
      out_.push_back({"one outlier", std::move(x), std::nullopt, false});
    }
    add("nan", false, [&](std::size_t i) { return i == n / 2 ? std::numeric_limits<float>::quiet_NaN() : 1.0f; });
    add("inf", false, [&](std::size_t i) { return i + 1 == n ? -std::numeric_limits<float>::infinity() : 0.5f; });
    given_inputs();
    return std::move(out_);
  }

 private:
  template <class F>
  void add(const char* name, bool every_size, F f) {
    std::vector<float> x(l_.elements);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = f(i);
    out_.push_back({name, std::move(x), std::nullopt, every_size});
  }

  float uniform(float a, float b) { return std::uniform_real_distribution<float>(a, b)(rng_); }
  float sign() { return (rng_() & 1) ? -1.0f : 1.0f; }

  // The block maximum W/2 * c that calibrates a block's scale to c (W = hi - lo), for a c that
  // f32, f16, bf16 and ue4m3 hold exactly (ue8m0: when c is a power of two).
  double anchor_step() { return std::ldexp(1.0 + (rng_() % 4) / 4.0, static_cast<int>(rng_() % 6) - 3); }
  double half_width() const { return (static_cast<double>(vi_.hi) - vi_.lo) / 2; }

  // Per block: the anchor +-W/2 c, then rounding boundaries of the codes at scale c (k + 1/2
  // for integers, midpoints of neighbouring grid values for minifloats), exactly and one f32
  // ulp either side. Every fourth element takes the least boundary, between 0 and the least
  // positive value, where a minifloat's subnormal quantum decides (microxcaling's f32 addition
  // rounds its lower neighbour up there).
  std::vector<float> ties_after_scaling() {
    std::vector<float> x(l_.elements);
    std::vector<double> step(l_.scales, 0.0);
    for_each_element(l_, [&](std::uint64_t i, std::uint64_t b) {
      float v;
      if (step[b] == 0.0) {
        step[b] = anchor_step();
        v = static_cast<float>(half_width() * step[b]);
      } else {
        const std::size_t j = i % 4 == 3 ? 0 : rng_() % (grid_.size() - 1);
        v = static_cast<float>((grid_[j] + grid_[j + 1]) / 2 * step[b]);
        if (i % 3 == 1) v = std::nextafter(v, FLT_MAX);
        if (i % 3 == 2) v = std::nextafter(v, 0.0f);
      }
      x[i] = v * sign();
    });
    return x;
  }

  // Per block: a maximum one f32 ulp above, on, or one ulp below the value that calibrates the
  // scale to a grid value exactly, the rest below it.
  std::vector<float> scale_boundaries() {
    std::vector<float> x(l_.elements);
    std::vector<float> top(l_.scales, 0.0f);
    for_each_element(l_, [&](std::uint64_t i, std::uint64_t b) {
      if (top[b] == 0.0f) {
        top[b] = static_cast<float>(half_width() * anchor_step());
        if (b % 3 == 0) top[b] = std::nextafter(top[b], FLT_MAX);
        if (b % 3 == 2) top[b] = std::nextafter(top[b], 0.0f);
        x[i] = top[b] * sign();
      } else {
        x[i] = uniform(-top[b], top[b]);
      }
    });
    return x;
  }

  // Affine mode, per block: a least and a largest x that calibrate the scale to a grid value c
  // and the zero point to lo + k (k random in [0, W]), or a least x of -(k + 1/2) c that puts the
  // zero point on a tie, or a range a hair above W c (the largest x W c, the least a tiny negative:
  // their f64 sum is W c, and the scale must still step up); the other elements at the
  // half-integers (j + 1/2) c of the codes and one f32 ulp either side.
  std::vector<float> affine_ties() {
    std::vector<float> x(l_.elements);
    const double W = static_cast<double>(vi_.hi) - vi_.lo;
    struct Block {
      double step = 0, below = 0;
      bool hair = false;
      int seen = 0;
    };
    std::vector<Block> blocks(l_.scales);
    for_each_element(l_, [&](std::uint64_t i, std::uint64_t bi) {
      Block& b = blocks[bi];
      if (b.step == 0.0) {
        b.step = anchor_step();
        const double k = static_cast<double>(rng_() % static_cast<std::uint32_t>(W));
        switch (bi % 3) {
          case 0: b.below = k + static_cast<double>(rng_() % 2); break;  // 0 .. W
          case 1: b.below = k + 0.5; break;
          default: b.hair = true; break;
        }
      }
      const int n = b.seen++;
      double v;
      if (n == 0) {
        v = b.hair ? -1e-30 : -b.below * b.step;
      } else if (n == 1) {
        v = b.hair ? W * b.step : (W - b.below) * b.step;
      } else {
        const double j = static_cast<double>(rng_() % static_cast<std::uint32_t>(W)) - std::floor(b.below);
        v = (j + 0.5) * b.step;
      }
      float f = static_cast<float>(v);
      if (n >= 2 && i % 3 == 1) f = std::nextafter(f, FLT_MAX);
      if (n >= 2 && i % 3 == 2) f = std::nextafter(f, -FLT_MAX);
      x[i] = f;
    });
    return x;
  }

  std::vector<float> zero_and_constant_blocks() {
    std::vector<float> x(l_.elements);
    for_each_element(l_, [&](std::uint64_t i, std::uint64_t b) {
      switch (b % 4) {
        case 0: x[i] = (rng_() & 1) ? -0.0f : 0.0f; break;
        case 1: x[i] = 0.75f; break;
        case 2: x[i] = -96.0f; break;
        default: x[i] = uniform(-2.0f, 2.0f); break;
      }
    });
    return x;
  }

  GivenScales all(float block, float global) const {
    GivenScales g;
    g.block.assign(l_.scales, block);
    if (s_.two_level()) g.global = global;
    return g;
  }

  void given_inputs() {
    const std::size_t n = l_.elements;
    const std::vector<float> random = out_.front().x;
    // Saturation edges at scale 1: the range end, the boundary where rounding starts to saturate
    // (half a grid step past the end) and one ulp either side of it, beyond, the largest f32.
    {
      const double hi = grid_.back(), prev = grid_[grid_.size() - 2];
      const float edge = static_cast<float>(hi + (hi - prev) / 2);
      const float kEdges[] = {static_cast<float>(hi), edge, std::nextafter(edge, 0.0f), std::nextafter(edge, FLT_MAX),
                              static_cast<float>(2 * hi - prev), static_cast<float>(2 * hi), FLT_MAX,
                              static_cast<float>(vi_.lo), static_cast<float>(vi_.lo) - 0.5f};
      std::vector<float> x(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = kEdges[i % std::size(kEdges)] * ((i / std::size(kEdges)) % 2 ? -1.0f : 1.0f);
      out_.push_back({"saturation edges, given scales 1", std::move(x), all(1.0f, 1.0f), false});
    }
    out_.push_back({"given scales 0.5", random, all(0.5f, 2.0f), false});
    if (!vi_.is_float) zero_point_inputs(random);
    out_.push_back({"given scales 0", random, all(0.0f, 2.0f), false});
    out_.push_back({"given scales -1", random, all(-1.0f, 2.0f), false});
    {
      // Off the grid and at the extremes, per block: f32 subnormals and zeros (over non-zero
      // input), values past every narrow dtype, where codes saturate and reciprocals leave f32's
      // range, and random off-grid values; the global (two levels) likewise.
      static const float kWild[] = {0.0f, -0.0f, 1e-40f, 1e-30f, 1e-5f, 1.0f, 0.3f, 1e5f, 3e38f, 6.1e-5f};
      auto wild = [&] {
        return rng_() % 3 == 0 ? std::ldexp(1.0f + static_cast<float>(rng_() % 1000) / 1000, static_cast<int>(rng_() % 80) - 40)
                               : kWild[rng_() % std::size(kWild)];
      };
      GivenScales g;
      for (std::uint64_t j = 0; j < l_.scales; ++j) g.block.push_back(wild());
      if (s_.two_level()) g.global = rng_() % 2 ? wild() : 0.3f;
      out_.push_back({"given scales off the grid and at the extremes", random, std::move(g), false});
      GivenScales bad = all(0.5f, 2.0f);
      if (!bad.block.empty()) {
        bad.block[rng_() % bad.block.size()] = std::numeric_limits<float>::quiet_NaN();
        out_.push_back({"given scales with a NaN", random, std::move(bad), false});
      }
    }
    // Grid-friendly given scales, every fifth zero, on a ramp; then ties against the effective
    // scales such scales (zeros made 1) produce: x = value(code) * e, and midpoints between
    // neighbouring reconstructions, exactly and one ulp either side, under each profile's
    // arithmetic.
    GivenScales g;
    for (std::uint64_t j = 0; j < l_.scales; ++j) {
      const float v = std::ldexp(1.0f + static_cast<float>(rng_() % 16) / 16, static_cast<int>(rng_() % 8) - 4);
      g.block.push_back(j % 5 == 2 ? 0.0f : v);
    }
    if (s_.two_level()) g.global = 0.3f;
    std::vector<float> ramp(n);
    for (std::size_t i = 0; i < n; ++i) ramp[i] = static_cast<float>(static_cast<int>(i % 41) - 20) * 0.37f;
    out_.push_back({"given scales on a ramp", ramp, g, false});
    for (float& v : g.block) v = v == 0.0f ? 1.0f : v;
    for (Profile p : {Profile::exact, Profile::burn}) {
      QuantizeOptions o;
      o.profile = p;
      o.scales = g;
      // The fast engine, held bit-identical to the reference, builds them at any size in time.
      const auto q = fast::quantize(s_, l_.shape, ramp, o);
      if (!q.ok()) continue;
      const auto d = fast::dequantize(*q);
      if (!d.ok()) continue;
      std::vector<float> x(n);
      for (std::size_t i = 0; i < n; ++i) {
        const float a = (*d)[i], b = (*d)[(i + 1) % n];
        float m = static_cast<float>((static_cast<double>(a) + b) / 2);
        if (i % 3 == 1) m = std::nextafter(m, FLT_MAX);
        if (i % 3 == 2) m = std::nextafter(m, -FLT_MAX);
        x[i] = (i % 4 == 0) ? a : m;
      }
      out_.push_back({std::string("given-scale ties, ") + std::string(to_string(p)) + " reconstructions", std::move(x),
                      g, false});
    }
  }

  // Given zero points: at the ends of the kind's range and in its middle (affine mode), one
  // outside it, one too few, and (sym mode) any at all, which only affine mode takes.
  void zero_point_inputs(const std::vector<float>& random) {
    GivenScales g = all(0.5f, 2.0f);
    g.zero_points.resize(l_.scales);
    for (std::uint64_t j = 0; j < l_.scales; ++j) {
      g.zero_points[j] = j % 3 == 0 ? vi_.lo : j % 3 == 1 ? vi_.hi : vi_.lo + (vi_.hi - vi_.lo) / 2;
    }
    if (!s_.affine()) {
      if (!g.zero_points.empty()) out_.push_back({"zero points of a sym scheme", random, std::move(g), false});
      return;
    }
    out_.push_back({"given scales 0.5, zero points at the range's edges", random, g, false});
    // The same zero points under the scales of the ramp below, every fifth of them zero.
    GivenScales ramp = g;
    for (std::uint64_t j = 0; j < l_.scales; ++j) ramp.block[j] = j % 5 == 2 ? 0.0f : std::ldexp(1.0f + static_cast<float>(j % 7) / 8, static_cast<int>(j % 5) - 2);
    std::vector<float> zeros_where_zero(random);
    for_each_element(l_, [&](std::uint64_t i, std::uint64_t b) {
      if (ramp.block[b] == 0.0f) zeros_where_zero[i] = (i % 2) ? -0.0f : 0.0f;
    });
    out_.push_back({"zero scales over zeros, zero points at the range's edges", std::move(zeros_where_zero), ramp, false});
    if (l_.scales == 0) return;
    GivenScales bad = g;
    bad.zero_points[rng_() % l_.scales] = vi_.hi + 1;
    out_.push_back({"a given zero point past the range", random, std::move(bad), false});
    GivenScales few = g;
    few.zero_points.pop_back();
    out_.push_back({"one given zero point too few", random, std::move(few), false});
  }

  const Scheme& s_;
  const Layout& l_;
  std::mt19937 rng_;
  const ValueInfo& vi_;
  const std::vector<double> grid_;
  std::vector<EdgeInput> out_;
};

}  // namespace

bool calibrated_and_finite(const EdgeInput& in) {
  return !in.scales && std::all_of(in.x.begin(), in.x.end(), [](float v) { return std::isfinite(v); });
}

std::vector<EdgeInput> edge_inputs(const Scheme& s, const Layout& l, std::uint32_t seed, EdgeSet set) {
  return Builder(s, l, seed).build(set);
}

}  // namespace qscheme::oracle
