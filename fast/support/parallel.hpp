// Deterministic work splitting for the fast engine's drivers (quantize.cc, dequantize.cc and their
// stages): contiguous index ranges, one per thread, each index handled exactly once.
#pragma once

#include <algorithm>
#include <cstdint>

#include "fast/fast.hpp"
#include "fast/support/worker_pool.hpp"

namespace qscheme::fast::detail {

// Runs fn(begin, end) over [0, n) split into at most threads() contiguous chunks whose
// boundaries are multiples of `align`. `work` is the number of elements behind the n indices:
// below 2^15 threads cost more than they save, so everything runs on the caller's thread.
// The chunks depend on n, align and threads() only, never on which thread runs one
// (worker_pool.hpp); fn is called concurrently, so it must be callable as const.
template <class Fn>
void parallel_chunks(std::uint64_t n, std::uint64_t align, std::uint64_t work, Fn fn) {
  unsigned t = threads();
  if (align == 0) align = 1;
  const std::uint64_t units = (n + align - 1) / align;
  if (t <= 1 || units < 2 || work < (1u << 15)) {
    if (n) fn(std::uint64_t{0}, n);
    return;
  }
  t = static_cast<unsigned>(std::min<std::uint64_t>(t, units));
  struct Split {
    const Fn& fn;
    std::uint64_t n, units, align;
    unsigned t;
  } split{fn, n, units, align, t};
  run_chunks(t, [](void* ctx, unsigned k) {
    const Split& s = *static_cast<const Split*>(ctx);
    const std::uint64_t b = std::min(s.n, s.units * k / s.t * s.align);
    const std::uint64_t e = std::min(s.n, s.units * (k + 1) / s.t * s.align);
    if (b < e) s.fn(b, e);
  }, &split);
}

}  // namespace qscheme::fast::detail
