// Per-block scalar arithmetic of the fast engine: scale-dtype grids (round-up, bit patterns),
// and an exact fixed-point accumulator for absmean sums with exact comparisons. None of this is
// per-element work except ExactSum::add_abs (absmean only).
#pragma once

#include <cstdint>

#include "fast/kernels/dispatch.h"
#include "scheme/scheme.hpp"

namespace qscheme::fast::detail {

__extension__ typedef unsigned __int128 u128;  // gcc/clang; exact products of up to 128 bits

// A scale dtype's value grid: m mantissa bits, smallest normal exponent emin, subnormals below
// it (or not: ue8m0), largest value max, and whether 0 is a value.
struct Grid {
  int m;
  int emin;
  bool sub;
  double max;
  bool has_zero;
};
Grid grid_of(ScaleDtype d);
// The ScalesFromMax parameters of dtype d: c = roundup(2a / wg), e = c * g.
kernels::ScaleSpec scale_spec(ScaleDtype d, double wg, double g);
inline Grid f32_grid() { return grid_of(ScaleDtype::f32); }

// Smallest grid value >= v (v >= 0, finite or +inf), saturating at max; v == 0 gives 0, or the
// smallest value (2^-127) when the grid has no zero. Exact.
double grid_round_up(double v, const Grid& g);
// Next grid value above c (c on the grid), saturating at max.
double grid_next_up(double c, const Grid& g);
// Largest grid value below c; false when there is none.
bool grid_prev(double c, const Grid& g, double* out);

// Bit pattern of grid value c in dtype d (f32/f16/bf16 IEEE bits, ue8m0 biased exponent,
// ue4m3 e4m3 bits). Precondition: c is on d's grid.
std::uint32_t scale_to_bits(double c, ScaleDtype d);
// Value of a stored bit pattern; false for a pattern no stored scale can have (NaN, inf, sign
// bit set, bits beyond the dtype's width, ue8m0 0xFF).
bool scale_from_bits(std::uint32_t bits, ScaleDtype d, double* out);

// Exact non-negative sum of f32 magnitudes: fixed point with 2^-kBias as its unit, 512 bits.
class ExactSum {
 public:
  static constexpr int kBias = 200;
  void add_abs(float x);
  void add(const ExactSum& o);
  bool is_zero() const;
  double approx() const;  // within a few ulps (relative)
  // Sign of (c * M * 2^e) - this, c >= 0 a double, M > 0. Precondition: the product's lowest
  // set bit is at or above 2^-kBias and below 2^(512-kBias-64).
  int cmp_product(double c, u128 M, int e) const;

 private:
  void add_shifted(const std::uint64_t* v, int nv, int off);
  std::uint64_t limb_[8] = {};
};

// Smallest value c of grid g with c * D * xf >= 2 * S (S an exact sum, D > 0, xf > 0 with
// c * xf exact in f64), saturating at g.max; S == 0 gives 0 (or the grid's least value).
double round_up_ratio(const ExactSum& S, u128 D, double xf, const Grid& g);

// f32 nearest-even to S / n (n >= 1). Precondition: S / n <= FLT_MAX.
float f32_mean_rne(const ExactSum& S, std::uint64_t n);

}  // namespace qscheme::fast::detail
