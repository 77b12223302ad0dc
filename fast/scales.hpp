// The scales stage of quantize: block maxima (or exact |x| sums, or given scales) to the stored
// scale patterns and the effective scales the codes stage divides by, under the exact and burn
// profiles (docs/SEMANTICS.md section 2 for the rules, docs/SEMANTICS-fast.md for why each step
// is exact).
#pragma once

#include <cstdint>
#include <vector>

#include "fast/exact_scale.h"
#include "fast/kernels/dispatch.h"
#include "fast/plan.hpp"
#include "fast/points.hpp"
#include "fast/support/lowest_code.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// What a scheme and a call's options fix about the scales.
struct ScaleRule {
  ScaleDtype sd = ScaleDtype::f32;
  Grid grid{};
  double W = 1;     // hi - lo of the value kind
  double Dmax = 1;  // two levels: the block dtype's largest value; else 1
  bool two = false, burn = false, absmean = false;
  int lo = 0, hi = 0;
  Value value = Value::q8s;
  ScalePick pick = ScalePick::profile;  // calibrated: the scale step of a point that is no profile's
  std::optional<float> global_amax;     // two levels: the given max |x| of the global (PointOptions)
};
ScaleRule scale_rule(const Scheme& s, const PointOptions& opt, ScalePick pick = ScalePick::profile);

// The exact profile's global from gm, the least f32 the calibration allows: at least 2^-126, so
// that it is a normal f32 (docs/SEMANTICS.md).
// The given scales against the layout, in the reference's order: their count, the global's
// presence, then each value finite and >= 0 (-0 included). invalid-scale comes before
// non-finite-input (docs/SEMANTICS.md section 1).
Status check_given_scales(const GivenScales& given, const Layout& l, bool two);

// Given scales the units stages can take: the layout's count, a global exactly for two levels,
// every value finite and >= 0 (-0 included); anything else is an error the whole-tensor stage
// reports (check_given_scales). The values' range comes from one kernel pass (nvfp4 has a scale per
// 16 elements: a scalar loop here was two thirds of a 64 MiB call's time). `zero`: some stored
// scale may be 0 (a given 0 on a grid that has 0, or a global of 0), the one case that needs the
// block maxima.
// With blocks false the block scales are not read (their counts and the global are checked):
// a one-pass caller checks each unit's own with unit_scales, just before it reads them for its
// scales, instead of reading every scale from memory twice (4 MiB of nvfp4's on 64 MiB of input).
struct GivenFacts {
  bool ok = false, zero = false;
  float top = 0;  // the largest given block scale (blocks read)
};
GivenFacts given_facts(const kernels::Kernels& kf, const GivenScales& gs, const Layout& l, bool two,
                       bool grid_has_zero, bool blocks = true);
// GivenFacts of the block scales s[0, n) of one unit (ok and zero; the global is the call's).
GivenFacts unit_scales(const kernels::Kernels& kf, const float* s, std::size_t n, bool grid_has_zero);

double exact_global(double gm);
// The same under minmax: gm = the least f32 >= 2 amax / (W Dmax).
double exact_global_from_max(float amax, double W, double Dmax);

// Burn's block scale before the grid: f32(2a) / f32(W) for a block's max |x| (or f32 mean) a;
// false when 2a overflows f32 (burn-alpha-overflow).
bool burn_scale(float a, double W, float* s);
// Burn's divisor for an effective scale e: e, or 0.1 for a zero scale (as Burn guards it).
inline float burn_divisor(float e) { return e == 0 ? 0.1f : e; }

// Burn's scale of one block by BurnScaleSpec s over dtype d (kernels::burn_scales' scalar twin, and
// the drivers' check of the largest block): Burn's steps on host f32 arithmetic, the grid's
// round-up by grid_round_up (exact, in f64). False when 2a or g * c overflows f32.
bool burn_block_scale(std::uint32_t a, const kernels::BurnScaleSpec& s, ScaleDtype d, std::uint32_t* bits,
                      float* divisor);

// The effective scales of every block, as the codes stage (kernels' quantize_row) takes them.
struct BlockScales {
  double g = 1;                // the global (two levels), else 1
  std::vector<double> ee;      // exact profile: s_j (* g), exact in f64
  std::vector<float> ei;       // exact profile: InvF32(ee), the reciprocals of the f32-lane codes
  std::vector<float> eb;       // burn profile: the f32 divisors
  LowestPlan plan{0, false};   // the asymmetric kinds' lowest code (support/lowest_code.hpp)
  bool saturated = false;      // some tight block has W e < 2a: lo is put back after the kernel
  std::vector<std::uint32_t> tight, lowest;  // per block, from the scales_from_max kernel
};

// The scales of every block of l: from the block maxima bmax (finite), the exact sums of |x| per
// block (absmean; empty otherwise) or the given scales. Writes the stored patterns to scale_bits
// and the global's f32 bits to *global_bits (two levels, when not null). Errors in the order of
// docs/SEMANTICS.md: burn-alpha-overflow, zero-scale-nonzero-input (named by the first offending
// element of x in row-major order), burn-scale-product-overflow.
Status block_scales(const ScaleRule& r, const kernels::Kernels& kf, const Layout& l, const Geo& g, const float* x,
                    const std::vector<std::uint32_t>& bmax, const std::vector<ExactSum>& sums,
                    const GivenScales* given, std::uint32_t* scale_bits, std::uint32_t* global_bits,
                    BlockScales* out);

}  // namespace qscheme::fast::detail
