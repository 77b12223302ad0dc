// The units path of the extension stage's quantize (ext_units.hpp). It takes tensors whose blocks
// follow one another in memory (one block, or blocks along the last axis that tile each row or
// span it), so that a unit is a contiguous run of whole blocks (of any elements, for given scales
// that need no block's maximum), and outputs that take codes as
// they are made (i32 codes, or the one-byte codes of a native store). Per unit: affine
// calibration (min and max per block, then each block's scale and zero point), or for given
// scales the check of the unit's input; then its codes, while the unit is in L1. One read of the
// input instead of two; a unit that meets an error stops the path, and the whole-tensor path
// reports the error in the reference's order.
#include "fast/ext_units.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "fast/codec.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/kernels/scalar.h"
#include "fast/plan.hpp"
#include "fast/support/parallel.hpp"

namespace qscheme::fast::detail {
namespace {

// Elements per unit: 8 KiB of input, which stays in L1 between the check or calibration and the
// codes (16 KiB units ran given-scale u8 slower from DRAM: docs/PERFORMANCE.md).
constexpr std::uint64_t kUnitElements = 2048;

// The flat view of a tensor whose blocks follow one another in memory: element i lies in block
// i / bw (bw == 0: one block). False for other block grids.
bool flat_blocks(const Layout& l, std::uint64_t* bw) {
  const Geo g(l);
  if (g.nblocks == 1) {
    *bw = 0;
    return true;
  }
  for (std::size_t d = 0; d + 1 < g.R; ++d) {
    if (g.block[d] != 1) return false;
  }
  if (g.bw >= g.L) {
    *bw = g.L;  // each row is one block
    return true;
  }
  if (g.L % g.bw != 0) return false;
  *bw = g.bw;
  return true;
}

}  // namespace

bool ext_units(const Scheme& scheme, const Layout& l, const float* x, const Point& point, const ExtOutput& out) {
  std::uint64_t bw = 0;
  if (l.elements == 0 || (out.bytes && !direct_bytes(scheme, l)) || !flat_blocks(l, &bw)) return false;
  const bool given = point.options.scales != nullptr;
  // Sym calibration (i16) and a calibrated scale for the whole tensor need the whole input first.
  if (!given && (!scheme.affine() || bw == 0)) return false;
  const ExtRule rule = ext_rule(point);
  const kernels::Kernels& kf = kernels::Get();
  ExtParams p;
  bool zero_scale = false;
  if (given) {
    Result<ExtParams> gp = given_ext_params(scheme, l, point, &zero_scale);
    if (!gp) return false;  // burn's product overflow, reported after the input's errors
    p = std::move(*gp);
  } else {
    p = empty_ext_params(scheme, point, l.scales);
  }
  p.spec.x_just_read = true;
  // Calibration and the zero-scale check work on whole blocks; given scales alone do not, so their
  // units stay small even where one block spans a 4096-wide row (0.72-0.77 of read4/write1 with a
  // row per unit, docs/PERFORMANCE.md).
  const bool whole_blocks = !given || zero_scale;
  const std::uint64_t per = bw == 0 || !whole_blocks ? kUnitElements
                                                     : std::max<std::uint64_t>(1, kUnitElements / bw) * bw;
  const std::uint64_t units = (l.elements + per - 1) / per;
  const std::uint64_t blocks_per_unit = bw == 0 ? 1 : per / bw;
  std::atomic<bool> failed{false};
  parallel_chunks(units, 1, l.elements, [&](std::uint64_t ub, std::uint64_t ue) {
    std::vector<std::int32_t> lo(given ? 0 : blocks_per_unit), hi(given ? 0 : blocks_per_unit);
    std::vector<std::uint32_t> amax(zero_scale ? blocks_per_unit : 0);
    for (std::uint64_t u = ub; u < ue; ++u) {
      if (failed.load(std::memory_order_relaxed)) return;
      const std::uint64_t i0 = u * per, len = std::min(per, l.elements - i0);
      // The unit's first block, how far into it the unit starts, and how many blocks it touches.
      const std::uint64_t j0 = bw == 0 ? 0 : i0 / bw, start = bw == 0 ? 0 : i0 % bw;
      const std::uint64_t nb = bw == 0 ? 1 : (start + len + bw - 1) / bw;
      const float* xu = x + i0;
      if (given) {
        // Non-finite input, and a zero effective scale over a non-zero x (exact, onnx). A pass of
        // its own that brings the unit into L1 for the codes: faster from DRAM than the same check
        // inside the code loop (docs/PERFORMANCE.md).
        bool bad = false;
        if (zero_scale) {
          std::fill(amax.begin(), amax.begin() + static_cast<std::ptrdiff_t>(nb), 0u);
          kf.segment_max_abs_bits(xu, len, bw == 0 ? len : bw, amax.data());
          for (std::uint64_t k = 0; k < nb && !bad; ++k) {
            const std::uint64_t j = j0 + k;
            const bool zero_j = rule == ExtRule::exact ? p.e[j] == 0 : p.bits[j] == 0;
            bad = amax[k] >= 0x7F800000u || (zero_j && amax[k] != 0);
          }
        } else {
          bad = kf.max_abs_bits(xu, len) >= 0x7F800000u;
        }
        if (bad) {
          failed = true;
          return;
        }
      } else {
        std::fill(lo.begin(), lo.begin() + static_cast<std::ptrdiff_t>(nb), kernels::kNoKeys.lo);
        std::fill(hi.begin(), hi.begin() + static_cast<std::ptrdiff_t>(nb), kernels::kNoKeys.hi);
        kf.segment_min_max_keys(xu, len, bw, lo.data(), hi.data());
        for (std::uint64_t k = 0; k < nb; ++k) {
          if (!kernels::MinMaxKeys{lo[k], hi[k]}.finite() ||
              !calibrate_affine_block(scheme, rule, j0 + k, scalar::f32_from_bits(kernels::BitsOfKey(lo[k])),
                                      scalar::f32_from_bits(kernels::BitsOfKey(hi[k])), &p)
                   .ok()) {
            failed = true;
            return;
          }
        }
      }
      kf.quantize_affine(xu, len, start, bw, p.r.data() + j0, p.e.empty() ? nullptr : p.e.data() + j0,
                         p.zero_points.empty() ? nullptr : p.zero_points.data() + j0, p.spec,
                         out.codes ? out.codes + i0 : nullptr, out.bytes ? out.bytes + i0 : nullptr);
    }
  });
  if (failed.load()) return false;
  write_ext_params(scheme, l, p, out);
  return true;
}

}  // namespace qscheme::fast::detail
