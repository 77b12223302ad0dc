// The rows of a run (plan.hpp's for_runs): `groups` groups, gstride elements apart, of `rows`
// consecutive rows of L elements. Shared by the per-target kernels (kernels/) and the
// whole-tensor stages' scalar passes over a run (quantize_whole.cc, f32_steps.cc).
#pragma once

#include <cstddef>

namespace qscheme::fast::detail {

// fn(offset) for every row of a run, offset gi * gstride + r * L.
template <class Fn>
inline void for_run_rows(std::size_t rows, std::size_t groups, std::size_t gstride, std::size_t L, Fn fn) {
  for (std::size_t gi = 0; gi < groups; ++gi) {
    for (std::size_t r = 0; r < rows; ++r) fn(gi * gstride + r * L);
  }
}

}  // namespace qscheme::fast::detail
