#include "fast/exact_scale.h"

#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace qscheme::fast::detail {

Grid grid_of(ScaleDtype d) {
  switch (d) {
    case ScaleDtype::f32: return {23, -126, true, static_cast<double>(FLT_MAX), true};
    case ScaleDtype::f16: return {10, -14, true, 65504.0, true};
    case ScaleDtype::bf16: return {7, -126, true, std::ldexp(255.0, 120), true};  // 0x7F7F
    case ScaleDtype::ue8m0: return {0, -127, false, std::ldexp(1.0, 127), false};
    case ScaleDtype::ue4m3: return {3, -6, true, 448.0, true};
  }
  return {23, -126, true, static_cast<double>(FLT_MAX), true};
}

kernels::ScaleSpec scale_spec(ScaleDtype d, double wg, double g) {
  const Grid grid = grid_of(d);
  kernels::ScaleSpec sp;
  sp.wg = wg;
  sp.g = g;
  sp.m = grid.m;
  sp.emin = grid.emin;
  sp.max = grid.max;
  sp.has_zero = grid.has_zero;
  sp.ue8m0 = d == ScaleDtype::ue8m0;
  return sp;
}

double grid_round_up(double v, const Grid& g) {
  if (!(v > 0)) return g.has_zero ? 0.0 : std::ldexp(1.0, g.emin);
  if (v >= g.max) return g.max;
  std::uint64_t b;
  std::memcpy(&b, &v, 8);
  const int E = static_cast<int>(b >> 52) - 1023;
  double r;
  if (E >= g.emin) {
    // Normal binade of the grid: round the f64 significand up to m bits (a carry moves into the
    // exponent, which is the next grid value). Exact.
    const int sh = 52 - g.m;
    const std::uint64_t low = (std::uint64_t{1} << sh) - 1;
    b = (b + low) & ~low;
    std::memcpy(&r, &b, 8);
  } else {
    // Subnormal spacing 2^(emin-m) (or, without subnormals, the least normal 2^emin).
    const double q = std::ldexp(1.0, g.emin - (g.sub ? g.m : 0));
    r = std::ceil(v / q) * q;  // v / q is a power-of-two scaling: exact
  }
  return r > g.max ? g.max : r;
}

double grid_next_up(double c, const Grid& g) {
  if (c >= g.max) return g.max;
  if (c == 0) return std::ldexp(1.0, g.emin - (g.sub ? g.m : 0));
  int E = std::ilogb(c);
  if (E < g.emin) E = g.emin;
  const double r = c + std::ldexp(1.0, E - g.m);
  return r > g.max ? g.max : r;
}

bool grid_prev(double c, const Grid& g, double* out) {
  if (c <= 0) return false;
  const int E = std::ilogb(c);
  if (!g.sub && E <= g.emin) {
    if (!g.has_zero) return false;
    *out = 0;
    return true;
  }
  int Eeff = E < g.emin ? g.emin : E;
  double step = std::ldexp(1.0, Eeff - g.m);
  if (E > g.emin && c == std::ldexp(1.0, E)) step = std::ldexp(1.0, E - 1 - g.m);
  *out = c - step;
  return true;
}

namespace {

// Bits of c on a grid with m mantissa bits, exponent bias `bias` (emin = 1 - bias). c is a
// grid value, hence exact in f64; the fields are read from its f64 bits (no libm calls).
std::uint32_t minifloat_bits(double c, int m, int bias) {
  if (c == 0) return 0;
  std::uint64_t b;
  std::memcpy(&b, &c, 8);
  const int E = static_cast<int>(b >> 52) - 1023;
  const std::uint64_t sig = (b & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);  // 53 bits
  const int emin = 1 - bias;
  if (E < emin) return static_cast<std::uint32_t>(sig >> (52 - m + (emin - E)));  // subnormal field
  const auto frac = static_cast<std::uint32_t>((sig >> (52 - m)) & ((1u << m) - 1));
  return (static_cast<std::uint32_t>(E + bias) << m) | frac;
}

double minifloat_value(std::uint32_t bits, int m, int bias) {
  const std::uint32_t ef = bits >> m, man = bits & ((1u << m) - 1);
  if (ef == 0) return std::ldexp(static_cast<double>(man), 1 - bias - m);
  return std::ldexp(static_cast<double>((1u << m) | man), static_cast<int>(ef) - bias - m);
}

}  // namespace

std::uint32_t scale_to_bits(double c, ScaleDtype d) {
  switch (d) {
    case ScaleDtype::f32: {
      const float f = static_cast<float>(c);
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      return u;
    }
    case ScaleDtype::f16: return minifloat_bits(c, 10, 15);
    case ScaleDtype::bf16: return minifloat_bits(c, 7, 127);
    case ScaleDtype::ue4m3: return minifloat_bits(c, 3, 7);
    case ScaleDtype::ue8m0: {
      std::uint64_t b;
      std::memcpy(&b, &c, 8);
      return static_cast<std::uint32_t>(static_cast<int>(b >> 52) - 1023 + 127);
    }
  }
  return 0;
}

bool scale_from_bits(std::uint32_t bits, ScaleDtype d, double* out) {
  switch (d) {
    case ScaleDtype::f32: {
      if ((bits >> 31) != 0 || ((bits >> 23) & 0xFF) == 0xFF) return false;
      float f;
      std::memcpy(&f, &bits, 4);
      *out = f;
      return true;
    }
    case ScaleDtype::f16:
      if (bits > 0x7FFF || (bits >> 10) == 0x1F) return false;
      *out = minifloat_value(bits, 10, 15);
      return true;
    case ScaleDtype::bf16:
      if (bits > 0x7FFF || (bits >> 7) == 0xFF) return false;
      *out = minifloat_value(bits, 7, 127);
      return true;
    case ScaleDtype::ue4m3:
      if (bits > 0x7F || bits == 0x7F) return false;
      *out = minifloat_value(bits, 3, 7);
      return true;
    case ScaleDtype::ue8m0:
      if (bits >= 0xFF) return false;
      *out = std::ldexp(1.0, static_cast<int>(bits) - 127);
      return true;
  }
  return false;
}

// ------------------------------------------------------------------------------ ExactSum

void ExactSum::add_shifted(const std::uint64_t* v, int nv, int off) {
  assert(off >= 0);
  const int li = off / 64, sh = off % 64;
  std::uint64_t carry = 0;
  int k = li;
  for (int i = 0; i <= nv && k < 8; ++i, ++k) {
    const std::uint64_t lo = i < nv ? v[i] : 0;
    const std::uint64_t prev = i > 0 ? v[i - 1] : 0;
    std::uint64_t part = sh == 0 ? lo : ((lo << sh) | (prev >> (64 - sh)));
    if (sh == 0 && i == nv) part = 0;
    const u128 s = static_cast<u128>(limb_[k]) + part + carry;
    limb_[k] = static_cast<std::uint64_t>(s);
    carry = static_cast<std::uint64_t>(s >> 64);
  }
  for (; carry != 0 && k < 8; ++k) {
    const u128 s = static_cast<u128>(limb_[k]) + carry;
    limb_[k] = static_cast<std::uint64_t>(s);
    carry = static_cast<std::uint64_t>(s >> 64);
  }
}

void ExactSum::add_abs(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  b &= 0x7FFFFFFFu;
  if (b == 0) return;
  const int be = static_cast<int>(b >> 23);
  std::uint64_t mant = b & 0x7FFFFF;
  int e;  // value = mant * 2^e
  if (be == 0) {
    e = -149;
  } else {
    mant |= 0x800000;
    e = be - 150;
  }
  add_shifted(&mant, 1, e + kBias);
}

void ExactSum::add(const ExactSum& o) { add_shifted(o.limb_, 8, 0); }

bool ExactSum::is_zero() const {
  for (std::uint64_t l : limb_) {
    if (l != 0) return false;
  }
  return true;
}

double ExactSum::approx() const {
  double r = 0;
  for (int i = 7; i >= 0; --i) r += std::ldexp(static_cast<double>(limb_[i]), 64 * i - kBias);
  return r;
}

int ExactSum::cmp_product(double c, u128 M, int e) const {
  ExactSum p;
  if (c != 0) {
    int ce;
    const double f = std::frexp(c, &ce);  // c = f * 2^ce, f in [0.5, 1)
    auto C = static_cast<std::uint64_t>(std::ldexp(f, 53));
    ce -= 53;
    while ((C & 1) == 0) {
      C >>= 1;
      ++ce;
    }
    const auto lo = static_cast<u128>(C) * static_cast<std::uint64_t>(M);
    const auto hi = static_cast<u128>(C) * static_cast<std::uint64_t>(M >> 64);
    std::uint64_t v[3];
    v[0] = static_cast<std::uint64_t>(lo);
    const u128 mid = (lo >> 64) + static_cast<std::uint64_t>(hi);
    v[1] = static_cast<std::uint64_t>(mid);
    v[2] = static_cast<std::uint64_t>(hi >> 64) + static_cast<std::uint64_t>(mid >> 64);
    p.add_shifted(v, 3, ce + e + kBias);
  }
  for (int i = 7; i >= 0; --i) {
    if (p.limb_[i] != limb_[i]) return p.limb_[i] > limb_[i] ? 1 : -1;
  }
  return 0;
}

double round_up_ratio(const ExactSum& S, u128 D, double xf, const Grid& g) {
  if (S.is_zero()) return grid_round_up(0, g);
  const double approx = 2 * S.approx() / (static_cast<double>(D) * xf);
  double c = grid_round_up(approx, g);
  // c * xf * D / 2 >= S  <=>  c >= 2S / (D xf)
  auto ge = [&](double v) { return S.cmp_product(v * xf, D, -1) >= 0; };
  for (int it = 0; !ge(c); ++it) {
    if (c >= g.max || it > 8) return g.max;
    c = grid_next_up(c, g);
  }
  double p;
  for (int it = 0; it < 8 && grid_prev(c, g, &p) && ge(p); ++it) c = p;
  return c;
}

float f32_mean_rne(const ExactSum& S, std::uint64_t n) {
  if (S.is_zero()) return 0.0f;
  // lo = largest f32 with lo * n <= S.
  float lo = static_cast<float>(S.approx() / static_cast<double>(n));
  for (int it = 0; it < 8 && S.cmp_product(lo, n, 0) > 0; ++it) lo = std::nextafter(lo, 0.0f);
  for (int it = 0; it < 8; ++it) {
    const float up = std::nextafter(lo, FLT_MAX);
    if (up == lo || S.cmp_product(up, n, 0) > 0) break;
    lo = up;
  }
  if (lo == FLT_MAX) return lo;
  const float hi = std::nextafter(lo, FLT_MAX);
  const double mid = (static_cast<double>(lo) + static_cast<double>(hi)) / 2;  // exact
  const int c = S.cmp_product(mid, n, 0);  // sign(mid*n - S)
  if (c < 0) return hi;
  if (c > 0) return lo;
  std::uint32_t lb;
  std::memcpy(&lb, &lo, 4);
  return (lb & 1) ? hi : lo;
}

}  // namespace qscheme::fast::detail
