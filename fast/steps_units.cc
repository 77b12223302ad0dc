// The units stage of the f32-step recipes (f32_steps.hpp): their one kernel family over the
// units of bytes_plan.hpp, into a sink (sinks.hpp), as quantize_units.cc does for the other points.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <type_traits>
#include <vector>

#include "fast/kernels/scalar.h"
#include "fast/quantize_units.hpp"
#include "fast/scales.hpp"
#include "fast/sinks.hpp"
#include "fast/support/parallel.hpp"
#include "fast/support/prefetch_scales.hpp"

namespace qscheme::fast::detail {

// The f32-step recipes (f32_steps.hpp) unit by unit: per unit the kernel's one-byte codes of the
// blocks' operands, packed as the other profiles' are. The given scales' recipes (onnx, torch)
// store the given ones (-0 as +0), f32; ggml's calibrate each block while the unit's input is in
// cache (its statistic, then the scale step) and store the scales they round. Units::general for
// what the units do not take (given scales: none, two levels, a scale dtype other than f32, given
// scales that fail their checks; calibrated: given scales, no blocks along the last axis, blocks
// wider than a unit) and on a data error (non-finite input, onnx's zero scale over a non-zero
// element), which the whole-tensor stage then reports; under untouched_on_error every check comes
// before the first byte written.
template <class Sink>
Units steps_units(StepRecipe recipe, const Scheme& scheme, const Layout& l, const BytesPlan& p, const float* x,
                  const GivenScales* given_or_null, OutputPolicy policy, const Sink& sink) {
  const kernels::Kernels& kf = kernels::Get();
  const bool calibrated = calibrates(recipe);
  if (!p.fused || p.two) return Units::general;
  const bool prepass = policy == OutputPolicy::untouched_on_error;
  // Given block scales in one pass: each unit checks its own as it reads them (unit_scales), and
  // onnx's zero scales over its own blocks.
  const bool unit_checks = !calibrated && !prepass && p.bw != 0;
  GivenFacts gf;
  if (!calibrated && given_or_null && p.sd == ScaleDtype::f32) {
    gf = given_facts(kf, *given_or_null, l, false, true, !unit_checks);
  }
  if (calibrated ? given_or_null || p.bw == 0 || p.bw > p.chunk : !gf.ok) return Units::general;
  const std::vector<float> no_scales;
  const std::vector<float>& gs = given_or_null ? given_or_null->block : no_scales;
  if (recipe == StepRecipe::onnx && gf.zero) {
    // Only the blocks with a zero scale are read here: a zero scale is rare, and without one
    // (given_facts' least scale) the scales are not walked at all.
    for (std::uint64_t j = 0; j < l.scales; ++j) {
      if (gs[j] != 0.0f) continue;
      const std::uint64_t c0 = p.bw ? j % p.nbr * p.bw : 0, r = p.bw ? j / p.nbr : 0;
      const std::uint64_t len = p.bw ? std::min(p.bw, p.L - c0) : l.elements;
      if (p.bw ? kf.max_abs_bits(x + r * p.L + c0, len) != 0 : kf.max_abs_bits(x, len) != 0) return Units::general;
    }
  }
  if (prepass) {
    std::atomic<bool> bad{false};
    parallel_chunks(p.rows, 1, l.elements, [&](std::uint64_t rb, std::uint64_t re) {
      if (kf.max_abs_bits(x + rb * p.L, (re - rb) * p.L) >= 0x7F800000u) bad = true;
    });
    if (bad.load()) return Units::general;
  }
  if (p.bw == 0) sink.tensor_scale(scalar::f32_bits(std::fabs(gs[0])));
  kernels::StepSpec spec = step_spec(recipe, scheme.value);
  // A calibrating unit has just read its input; a given one's check read it unless a prepass did.
  spec.x_just_read = calibrated || !prepass;
  const kernels::StepScaleSpec scale_spec = calibrated ? step_scale_spec(recipe, scheme.value, p.sd) : kernels::StepScaleSpec{};
  const bool signed_max = recipe == StepRecipe::ggml_q4_0;
  // ggml's recipes write ggml's blocks from the kernel (their block is 32 wide: ggml_layout).
  constexpr bool ggml = std::is_same_v<Sink, GgmlSink>;
  const std::uint64_t nbc_max = p.bw ? p.chunk / p.bw + 2 : 1;
  std::atomic<bool> failed{false};
  parallel_chunks(p.units, 1, l.elements, [&](std::uint64_t ub, std::uint64_t ue) {
    std::unique_ptr<std::uint8_t[]> scratch(sink.needs_scratch() ? new std::uint8_t[16 * p.chunk] : nullptr);
    std::unique_ptr<float[]> operand(new float[nbc_max]);
    std::unique_ptr<std::uint32_t[]> bits(new std::uint32_t[nbc_max]);
    std::unique_ptr<std::uint32_t[]> stat(calibrated ? new std::uint32_t[nbc_max] : nullptr);
    const std::uint8_t* rows[16];
    BytesPlan::Walk walk(p, ub);
    for (std::uint64_t u = ub; u < ue; ++u, ++walk) {
      if (failed.load(std::memory_order_relaxed)) return;
      const BytesPlan::Unit& un = *walk;
      for (std::uint64_t i = 0; i < un.count; ++i) {
        const std::uint64_t r = un.row[i];
        const float* xr = x + r * p.L + un.c0;
        const std::uint64_t kb = p.bw ? un.c0 / p.bw : 0;
        const std::uint64_t nbc = p.bw ? (un.c0 + un.len - 1) / p.bw - kb + 1 : 1;
        const std::uint64_t j0 = p.bw ? r * p.nbr + kb : 0;
        if (calibrated) {
          // The unit holds whole blocks (its chunk is a multiple of bw).
          const std::uint32_t top = signed_max ? kf.block_signed_max_bits(xr, un.len, p.bw, stat.get())
                                               : kf.block_max_abs_bits(xr, un.len, p.bw, stat.get());
          if (top >= 0x7F800000u) {
            failed = true;
            return;
          }
          kf.step_scales(stat.get(), nbc, scale_spec, bits.get(), operand.get());
        } else {
          if (p.bw) prefetch_scales(gs.data(), l.scales, j0 + nbc, nbc);
          bool bad = !prepass && kf.max_abs_bits(xr, un.len) >= 0x7F800000u;
          if (unit_checks && !bad) {
            const GivenFacts uf = unit_scales(kf, gs.data() + j0, nbc, true);
            bad = !uf.ok;
            for (std::uint64_t k = 0; recipe == StepRecipe::onnx && uf.zero && !bad && k < nbc; ++k) {
              // This unit's columns of block kb + k, [b0, b1).
              const std::uint64_t b0 = std::max((kb + k) * p.bw, un.c0) - un.c0;
              const std::uint64_t b1 = std::min((kb + k + 1) * p.bw, un.c0 + un.len) - un.c0;
              bad = gs[j0 + k] == 0.0f && kf.max_abs_bits(xr + b0, b1 - b0) != 0;
            }
          }
          if (bad) {
            failed = true;
            return;
          }
          for (std::uint64_t k = 0; k < nbc; ++k) {
            operand[k] = step_operand(recipe, gs[j0 + k]);
            bits[k] = scalar::f32_bits(std::fabs(gs[j0 + k]));
          }
        }
        if constexpr (ggml) {
          kf.quantize_steps_ggml(xr, un.len / kGgmlBlockCodes, operand.get(), spec, sink.nibble_blocks(),
                                 sink.block_row(un, i));
        } else {
          std::uint8_t* codes = sink.code_row(un, i, scratch.get());
          rows[i] = codes;
          kf.quantize_steps(xr, un.len, un.c0, p.bw, operand.get(), spec, nullptr, codes, nullptr);
        }
        // A block's scale is written by the unit holding its first column, once.
        const std::uint64_t k0 = kb * p.bw >= un.c0 ? 0 : 1;
        if (p.bw && k0 < nbc) sink.block_scales(j0 + k0, bits.get() + k0, nbc - k0);
      }
      sink.finish(kf, un, rows, ggml);
    }
  });
  return failed.load() ? Units::general : Units::done;
}


template Units steps_units(StepRecipe, const Scheme&, const Layout&, const BytesPlan&, const float*,
                           const GivenScales*, OutputPolicy, const BytesSink&);
template Units steps_units(StepRecipe, const Scheme&, const Layout&, const BytesPlan&, const float*,
                           const GivenScales*, OutputPolicy, const CodesSink&);
template Units steps_units(StepRecipe, const Scheme&, const Layout&, const BytesPlan&, const float*,
                           const GivenScales*, OutputPolicy, const GgmlSink&);

}  // namespace qscheme::fast::detail
