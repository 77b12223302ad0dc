// The units stage of quantize (fast/quantize.cc): f32 to one-byte codes and stored scales one
// L1-sized unit at a time (bytes_plan.hpp), calibrating each unit's blocks (or taking the given
// scales) while its input is in cache, and handing codes and scales to a sink (sinks.hpp). It
// declines (Units::general) what it does not take and every error, which the whole-tensor stage
// then computes or reports.
#include "fast/quantize_units.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "fast/exact_scale.h"
#include "fast/kernels/scalar.h"
#include "fast/mx_steps.hpp"
#include "fast/te_nvfp4.hpp"
#include "fast/scales.hpp"
#include "fast/sinks.hpp"
#include "fast/support/big_buffer.hpp"
#include "fast/support/lowest_code.hpp"
#include "fast/support/parallel.hpp"
#include "fast/support/prefetch_scales.hpp"
#include "fast/support/unit_scratch.hpp"

namespace qscheme::fast::detail {
namespace {

// Per-thread scratch of one unit: codes of up to 16 rows, and the scales of one chunk's blocks,
// carved from the thread's kept block (support/unit_scratch.hpp). Left uninitialised (every entry
// is written before it is read): zeroing them cost as much as a small tensor's quantization.
struct Scratch {
  std::uint8_t* codes;
  std::uint32_t *amax, *bits, *tight;
  double* e;
  float *inv, *eb;  // eb: Burn's divisors, or the f32 operands of microxcaling's and nvidia-nvfp4's codes
  static std::size_t bytes(const BytesPlan& p) {
    const std::size_t nbc = p.bw ? p.chunk / p.bw + 2 : 1;
    return UnitScratch::rounded(16 * p.chunk) + 3 * UnitScratch::rounded(nbc * 4) + UnitScratch::rounded(nbc * 8) +
           2 * UnitScratch::rounded(nbc * 4);
  }
  Scratch(UnitScratch& u, const BytesPlan& p) {
    const std::size_t nbc = p.bw ? p.chunk / p.bw + 2 : 1;
    codes = u.take<std::uint8_t>(16 * p.chunk);
    amax = u.take<std::uint32_t>(nbc);
    bits = u.take<std::uint32_t>(nbc);
    tight = u.take<std::uint32_t>(nbc);
    e = u.take<double>(nbc);
    inv = u.take<float>(nbc);
    eb = u.take<float>(nbc);
  }
};

}  // namespace

template <class Sink>
Units quantize_units(const Scheme& scheme, const Layout& l, const BytesPlan& p, const float* x, const Point& point,
                     OutputPolicy policy, const Sink& sink) {
  const PointOptions& options = point.options;
  const ScalePick pick = point.pick;
  const bool picked = pick != ScalePick::profile;
  const ExponentRule exponent(pick, scheme.value);
  const kernels::Kernels& kf = kernels::Get();
  const GivenScales* given = options.scales;  // calibration is then skipped
  const bool burn = options.profile == Profile::burn;
  // Burn's scales and codes are taken for whole blocks of a unit: blocks wider than a unit are
  // left to the whole-tensor stage. nvidia-nvfp4's given scales run whole-tensor.
  if (!p.fused || (options.profile != Profile::exact && !burn) ||
      (options.calibration != Calibration::minmax && !given) || (burn && p.bw > p.chunk) ||
      (picked && (p.bw == 0 || p.two || p.bw > p.chunk)) || (point.te_nvfp4 && (given || p.bw == 0))) {
    return Units::general;
  }
  // Block maxima up front when the output must stay untouched on error, or when a calibrated scale
  // depends on more than its own block (two levels, one scale for the tensor), or blocks span units.
  const bool uniform = p.bw == 0;
  // A given global amax fixes the global before the first unit: one pass, each unit's blocks
  // calibrated under it as a one-level scheme's are.
  const bool amax_given = p.two && options.global_amax.has_value();
  const std::uint32_t amax_bits = amax_given ? scalar::f32_bits(*options.global_amax) : 0;
  const bool prepass = policy == OutputPolicy::untouched_on_error || (!given && (uniform || (p.two && !amax_given))) ||
                       p.bw > p.chunk;
  // Given block scales in one pass: each unit checks its own (unit_scales) as it reads them.
  const bool unit_checks = given && !prepass && !uniform;
  GivenFacts gf;
  if (given) {
    gf = given_facts(kf, *given, l, p.two, p.spec.has_zero, !unit_checks);
    if (!gf.ok) return Units::general;  // the given-scale error
  }

  kernels::ScaleSpec spec = p.spec;
  if (given) {
    // scale_spec's c = roundup(2a / wg) with wg = 2 is the given value rounded up to the grid, and
    // e = c * g the effective scale under the given global (a given -0 is stored as +0).
    spec = scale_spec(p.sd, 2.0, p.two ? static_cast<double>(*given->global) + 0.0 : 1.0);
    spec.count_tight = false;
  }
  // Whether the stored scale of block j is 0 while its block maximum amax_j is not: the one error
  // a given scale adds after the input's under the exact profile (zero-scale-nonzero-input; burn
  // divides by 0.1 instead).
  auto zero_scale_hit = [&](std::uint64_t j, std::uint32_t amax_j) {
    return !burn && amax_j != 0 &&
           (spec.g == 0 || (spec.has_zero && (std::bit_cast<std::uint32_t>(given->block[j]) << 1) == 0));
  };
  // Burn: its scale steps (kernels::burn_scales) under the global bg (1 for one level; the given
  // one, or calibrated from the prepass below), its codes on the f32-step kernel.
  kernels::BurnScaleSpec bspec;
  bspec.grid = scale_spec(p.sd, 2.0, 1.0);
  bspec.W = static_cast<float>(p.W);
  bspec.two = p.two;
  bspec.given = given != nullptr;
  float bg = p.two && given ? static_cast<float>(spec.g) : 1.0f;
  bspec.g = bg;
  kernels::StepSpec burn_step = burn_step_spec(scheme.value);
  // Symmetric integers and e2m1 have codes without a clamp (QuantizeCodes' clamp flag), exact
  // where every |x/e| <= W/2, i.e. 2a <= W e for each block maximum a (both sides exact: W has at
  // most 17 significant bits, e at most 35).
  const bool clamp_kind = (p.code.fmt < 0 && p.code.lo == -p.code.hi) || p.code.fmt == scalar::kE2M1;
  auto within_range = [&](std::uint32_t a, double e) { return 2.0 * scalar::f32_from_bits(a) <= p.W * e; };
  std::uint32_t tensor_top = 0;  // the prepass's largest |x| bits
  TeNvfp4 te;                    // nvidia-nvfp4's constants, from the prepass or the given amax
  // A calibrated two-level global from the max |x| bits top (the tensor's, or the given amax).
  auto set_global = [&](std::uint32_t top) {
    if (point.te_nvfp4) {
      te = te_nvfp4_global(top, scheme.value);
      spec.g = te.g;
      return;
    }
    // The least f32 >= 2 max|x| / (W Dmax), at least 2^-126 (docs/SEMANTICS.md).
    const double g = exact_global_from_max(scalar::f32_from_bits(top), p.W, p.Dmax);
    spec.g = g;
    spec.wg = p.W * g;
  };
  if (amax_given && !prepass) set_global(amax_bits);
  float uniform_eb = 1.0f;
  // Given scales need block maxima only where a stored scale may be 0; otherwise the largest |x|
  // of the rows is enough to find non-finite input. nvidia-nvfp4 takes its block maxima from the
  // prepass as the other two-level schemes do: its units taking them while their input was in L1
  // (nothing stored, but the second pass's read then waits for each unit before its codes) ran at
  // 0.67-0.68 of the two-pass bound against 0.71-0.72 (medians, docs/PERFORMANCE.md).
  const bool block_maxima = !uniform && (!given || (gf.zero && !burn));
  // Block maxima (every entry written by the prepass, so not zeroed: at 64 MiB of input that
  // would be 4 MiB of stores), and each row's maximum.
  BigBuffer<std::uint32_t> amax;
  double uniform_e = 0;
  float uniform_inv = 0;
  kernels::CodeSpec uniform_code = p.code;
  uniform_code.x_just_read = !prepass;
  if (prepass) {
    // The maximum of each thread's rows (at row_max[rb]) or of each row.
    std::vector<std::uint32_t> row_max(p.rows, 0);
    if (block_maxima) amax = BigBuffer<std::uint32_t>(l.scales);
    parallel_chunks(p.rows, 1, l.elements, [&](std::uint64_t rb, std::uint64_t re) {
      // Rows of whole blocks are one run of blocks, taken in one call: a call per row (4,096 of
      // them) left the nvfp4 prepass over 64 MiB about 10% slower, for reasons not established.
      if (!block_maxima) {
        row_max[rb] = kf.max_abs_bits(x + rb * p.L, (re - rb) * p.L);
      } else if (p.L % p.bw == 0) {
        row_max[rb] = kf.prepass_block_max_abs_bits(x + rb * p.L, (re - rb) * p.L, p.bw, &amax[rb * p.nbr]);
      } else {
        for (std::uint64_t r = rb; r < re; ++r) {
          row_max[r] = kf.prepass_block_max_abs_bits(x + r * p.L, p.L, p.bw, &amax[r * p.nbr]);
        }
      }
    });
    std::uint32_t top = 0;
    for (std::uint32_t a : row_max) top = std::max(top, a);
    if (top >= 0x7F800000u) return Units::general;  // non-finite-input
    tensor_top = top;
    // torchao-even's NaN scale: its rounding is monotonic in max |x|, so the largest block finds it.
    if (picked && exponent(top) == 0xFFu) {
      return Units::general;
    }
    if (given && gf.zero && !burn) {
      for (std::uint64_t j = 0; j < l.scales; ++j) {
        if (zero_scale_hit(j, uniform ? top : amax[j])) return Units::general;
      }
    }
    if (burn) {
      // Burn's overflows are found at the largest block, as every step is monotonic: 2a at the
      // largest maximum, g * s_j at the largest stored scale.
      if (p.two && !given) {
        // The global: max(f32(max_j scale_j / Dmax), 2^-126) (docs/SEMANTICS.md section 3).
        float q = 0;
        if (!burn_scale(scalar::f32_from_bits(top), p.W, &q)) return Units::general;  // burn-alpha-overflow
        bg = std::max(q / static_cast<float>(p.Dmax), FLT_MIN);
      }
      bspec.g = bg;
      std::uint32_t top_bits;
      float top_eb;
      if (!burn_block_scale(given ? scalar::f32_bits(gf.top) : top, bspec, p.sd, &top_bits, &top_eb)) {
        return Units::general;  // burn-alpha-overflow, burn-scale-product-overflow
      }
      spec.g = bg;
    } else if (p.two && !given) {
      set_global(amax_given ? amax_bits : top);
    }
    if (uniform && !given && burn) {
      std::uint32_t b;
      burn_block_scale(top, bspec, p.sd, &b, &uniform_eb);  // checked above
      sink.tensor_scale(b);
    } else if (uniform && !given) {
      std::uint32_t b;
      const kernels::ScaleFacts f = kf.scales_from_max(&top, 1, spec, &b, &uniform_e, &uniform_inv, nullptr, nullptr);
      sink.tensor_scale(b);
      // One scale: lo is only needed when it is tight (then the codes keep lo).
      uniform_code.lo = lowest_plan(p.code.lo, p.code.hi, f.tight, 1).lo;
    }
  }
  if (uniform && given) {
    const std::uint32_t a = std::bit_cast<std::uint32_t>(given->block[0]) & 0x7FFFFFFFu;
    std::uint32_t b;
    if (burn) {
      burn_block_scale(a, bspec, p.sd, &b, &uniform_eb);  // one level: no product, no overflow
    } else {
      kf.scales_from_max(&a, 1, spec, &b, &uniform_e, &uniform_inv, nullptr, nullptr);
    }
    if (prepass) uniform_code.clamp = !(clamp_kind && within_range(tensor_top, uniform_e));
    sink.tensor_scale(b);
  }
  if (p.two) sink.global(scalar::f32_bits(static_cast<float>(spec.g)));

  // Whether a block scale can saturate at the grid's max, so that |x/e| may exceed W/2 (then the
  // codes of symmetric integers and e2m1 need their clamp). Never under a calibrated global: g >= 2
  // max|x| / (W Dmax) bounds every block's 2a / (W g) by Dmax, which is on the grid. Nor when the
  // grid's max times W/2 reaches past the largest f32 (ue8m0, f32 and bf16 grids), as 2a / W then
  // cannot pass it. Otherwise each unit decides from its largest block maximum. A given scale may
  // be anything: each unit compares its block maxima with its scales (within_range).
  // A given global amax bounds nothing: a block above it saturates.
  const bool may_saturate =
      (!p.two || amax_given) && spec.max * (p.W / 2) < static_cast<double>(std::numeric_limits<float>::max());
  kernels::StepSpec mx_spec = mx_step_spec(scheme.value);
  kernels::StepSpec te_spec = te_nvfp4_step_spec(te);
  te_spec.x_just_read = !prepass;
  mx_spec.x_just_read = !prepass;
  burn_step.x_just_read = !prepass;
  std::atomic<bool> failed{false};
  parallel_chunks(p.units, 1, l.elements, [&](std::uint64_t ub, std::uint64_t ue) {
    UnitScratch block(Scratch::bytes(p));
    Scratch s(block, p);
    const std::uint8_t* rows[16];
    BytesPlan::Walk walk(p, ub);
    for (std::uint64_t u = ub; u < ue; ++u, ++walk) {
      if (failed.load(std::memory_order_relaxed)) return;
      const BytesPlan::Unit& un = *walk;
      // Where the sink takes them, the code kernel writes packed nibbles itself.
      std::uint8_t* nibbles = sink.nibbles(un);
      bool packed = false;
      for (std::uint64_t i = 0; i < un.count; ++i) {
        const std::uint64_t r = un.row[i];
        const float* xr = x + r * p.L + un.c0;
        std::uint8_t* codes = sink.code_row(un, i, s.codes);
        rows[i] = codes;
        if (uniform) {
          kernels::CodeSpec uc = uniform_code;
          if (!prepass) {
            // Given, one pass: the unit's input checked just before its codes.
            const std::uint32_t t = kf.max_abs_bits(xr, un.len);
            if (t >= 0x7F800000u || zero_scale_hit(0, t)) {
              failed = true;
              return;
            }
            uc.clamp = !(clamp_kind && within_range(t, uniform_e));
          }
          if (burn) {
            kf.quantize_steps(xr, un.len, un.c0, 0, &uniform_eb, burn_step, nullptr, codes, nullptr);
            continue;
          }
          kf.quantize_codes(xr, un.len, un.c0, 0, &uniform_inv, &uniform_e, std::isnan(uniform_inv), uc, codes,
                            nibbles);
          packed = nibbles != nullptr;
          continue;
        }
        const std::uint64_t kb = un.c0 / p.bw, nbc = (un.c0 + un.len - 1) / p.bw - kb + 1;
        kernels::CodeSpec cs = p.code;
        cs.x_just_read = !prepass;
        kernels::ScaleFacts facts;
        LowestPlan plan{cs.lo, false};
        const std::uint32_t* a = nullptr;
        const std::uint64_t j0 = r * p.nbr + kb;  // the unit's first block
        if (burn) {
          // Burn's scale steps over the unit's blocks (their maxima, or the given scales), then its
          // codes on the f32-step kernel.
          bool bad = false;
          if (given) {
            prefetch_scales(given->block.data(), l.scales, j0 + nbc, nbc);
            if (unit_checks) bad = !unit_scales(kf, given->block.data() + j0, nbc, false).ok;
            if (!prepass && !bad) bad = kf.max_abs_bits(xr, un.len) >= 0x7F800000u;
            a = reinterpret_cast<const std::uint32_t*>(given->block.data() + j0);
          } else if (prepass) {
            a = &amax[j0];
          } else {
            bad = kf.block_max_abs_bits(xr, un.len, p.bw, s.amax) >= 0x7F800000u;
            a = s.amax;
          }
          if (bad || kf.burn_scales(a, nbc, bspec, s.bits, s.eb)) {
            failed = true;
            return;
          }
          sink.block_scales(j0, s.bits, nbc);
          kf.quantize_steps(xr, un.len, un.c0, p.bw, s.eb, burn_step, nullptr, codes, nullptr);
          continue;
        }
        if (point.te_nvfp4) {
          // nvidia-nvfp4: its f32 scale steps per block, then its codes on the step kernel. The
          // block maxima come from the prepass, or (a given global amax) from the unit's input.
          if (!prepass && kf.block_max_abs_bits(xr, un.len, p.bw, s.amax) >= 0x7F800000u) {
            failed = true;
            return;
          }
          te_nvfp4_blocks(kf, te, prepass ? &amax[j0] : s.amax, nbc, s.bits, s.eb);
          const std::uint64_t k0 = kb * p.bw >= un.c0 ? 0 : 1;
          if (k0 < nbc) sink.block_scales(j0 + k0, s.bits + k0, nbc - k0);
          kf.quantize_steps(xr, un.len, un.c0, p.bw, s.eb, te_spec, nullptr, codes, nibbles);
          packed = nibbles != nullptr;
          continue;
        }
        if (given) {
          prefetch_scales(given->block.data(), l.scales, j0 + nbc, nbc);
          GivenFacts uf = gf;
          if (unit_checks) {
            uf = unit_scales(kf, given->block.data() + j0, nbc, p.spec.has_zero);
            uf.zero = uf.zero || gf.zero;  // gf.zero: the global is 0
            if (!uf.ok) {
              failed = true;
              return;
            }
          }
          // The given values as maxima of the scale kernel (spec above; it reads -0 as +0), before
          // the input: they need none of it, and the unit's input arrives meanwhile (5-6% of a
          // 64 MiB nvfp4 call with given scales).
          facts = kf.scales_from_max(reinterpret_cast<const std::uint32_t*>(given->block.data() + j0), nbc, spec,
                                     s.bits, s.e, s.inv, nullptr, nullptr);
          // The unit's block maxima, where they are to be had: from the prepass when a zero scale
          // needs them there, here in one pass when a zero scale or the integer clamp does. e2m1's
          // codes are clamped instead, which costs them one vrangeps per vector, less than a
          // reduction per 16-element block: quantize nvfp4 over given scales went from 0.76-0.79
          // to 0.80-0.83 of read4/write1 at 64 MiB (docs/PERFORMANCE.md).
          const bool unit_maxima = !prepass && (uf.zero || (clamp_kind && p.code.fmt != scalar::kE2M1));
          if (prepass && block_maxima) a = &amax[r * p.nbr + kb];
          if (unit_maxima) a = s.amax;
          if (!prepass) {
            const std::uint32_t t =
                unit_maxima ? kf.block_max_abs_bits(xr, un.len, p.bw, s.amax) : kf.max_abs_bits(xr, un.len);
            bool bad = t >= 0x7F800000u;
            for (std::uint64_t k = 0; uf.zero && !bad && k < nbc; ++k) bad = zero_scale_hit(r * p.nbr + kb + k, s.amax[k]);
            if (bad) {
              failed = true;
              return;
            }
          }
          cs.clamp = !(clamp_kind && a != nullptr && kf.blocks_within(a, s.e, nbc, p.W));
        } else if (picked) {
          // A ue8m0 exponent rule or rceil: 2^k per block, then the exact profile's codes of x / 2^k,
          // clamped where some block's max |x| lies beyond the kind's max times 2^k.
          if (prepass) {
            a = &amax[j0];
          } else {
            if (kf.block_max_abs_bits(xr, un.len, p.bw, s.amax) >= 0x7F800000u) {
              failed = true;
              return;
            }
            a = s.amax;
          }
          const kernels::ExponentFacts xf =
              kf.exponent_scales(a, nbc, exponent.spec(), s.bits, s.e, s.inv);
          if (xf.nan_scale) {
            failed = true;
            return;
          }
          facts.any_far = xf.any_far;
          cs.clamp = !(clamp_kind && !xf.out_of_range);
          if (point.mx_steps) {
            // microxcaling's codes: the f32 steps of x / 2^k (mx_steps.hpp).
            for (std::uint64_t k = 0; k < nbc; ++k) s.eb[k] = mx_multiplier(s.bits[k]);
            const std::uint64_t k0 = kb * p.bw >= un.c0 ? 0 : 1;
            if (k0 < nbc) sink.block_scales(j0 + k0, s.bits + k0, nbc - k0);
            kf.quantize_steps(xr, un.len, un.c0, p.bw, s.eb, mx_spec, nullptr, codes, nibbles);
            packed = nibbles != nullptr;
            continue;
          }
        } else {
          // No clamp needed when no scale of the unit saturated.
          const bool needs_top = clamp_kind && may_saturate;
          if (clamp_kind && !may_saturate) cs.clamp = false;
          std::uint32_t top = 0;  // the largest block maximum of the unit (when needs_top)
          if (prepass) {
            a = &amax[r * p.nbr + kb];
            for (std::uint64_t k = 0; needs_top && k < nbc; ++k) top = std::max(top, a[k]);
          } else {
            top = kf.block_max_abs_bits(xr, un.len, p.bw, s.amax);
            if (top >= 0x7F800000u) {
              failed = true;
              return;
            }
            a = s.amax;
          }
          facts = kf.scales_from_max(a, nbc, spec, s.bits, s.e, s.inv,
                                     asymmetric(cs.lo, cs.hi) ? s.tight : nullptr, nullptr);
          plan = lowest_plan(cs.lo, cs.hi, facts.tight, nbc);
          cs.lo = plan.lo;
          // No clamp needed when no scale saturated at the grid's max: then e >= 2 max|x| / W.
          if (needs_top) cs.clamp = !(2.0 * scalar::f32_from_bits(top) / spec.wg < spec.max);
        }
        // A block's scale is written by the unit holding its first column, once.
        const std::uint64_t k0 = kb * p.bw >= un.c0 ? 0 : 1;
        if (k0 < nbc) sink.block_scales(j0 + k0, s.bits + k0, nbc - k0);
        // Codes put back by their pattern below need the byte codes first.
        std::uint8_t* nib = plan.put_back ? nullptr : nibbles;
        kf.quantize_codes(xr, un.len, un.c0, p.bw, s.inv, s.e, facts.any_far, cs, codes, nib);
        packed = nib != nullptr;
        if (packed) continue;
        for (std::uint64_t k = 0; plan.put_back && k < nbc; ++k) {
          if (!s.tight[k]) continue;
          // Block kb + k within this unit's columns [c0, c0 + len).
          const std::uint64_t b0 = std::max((kb + k) * p.bw, un.c0) - un.c0;
          const std::uint64_t b1 = std::min((kb + k + 1) * p.bw, un.c0 + un.len) - un.c0;
          put_lowest(lowest_fix(a[k], s.e[k], p.W, p.code.lo), xr + b0, b1 - b0, p.code.lo,
                             reinterpret_cast<std::int8_t*>(codes) + b0);
        }
      }
      sink.finish(kf, un, rows, packed);
    }
  });
  // Only single_pass gets here with a data error; the sink's output is then unspecified (fast.hpp).
  return failed.load() ? Units::general : Units::done;
}


template Units quantize_units(const Scheme&, const Layout&, const BytesPlan&, const float*, const Point&,
                              OutputPolicy, const BytesSink&);
template Units quantize_units(const Scheme&, const Layout&, const BytesPlan&, const float*, const Point&,
                              OutputPolicy, const CodesSink&);
template Units quantize_units(const Scheme&, const Layout&, const BytesPlan&, const float*, const Point&,
                              OutputPolicy, const GgmlSink&);

}  // namespace qscheme::fast::detail
