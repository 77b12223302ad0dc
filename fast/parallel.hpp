// Deterministic work splitting for the fast engine's drivers (fast.cc, quantize_bytes.cc,
// dequantize_bytes.cc): contiguous index ranges, one per thread, each index handled exactly once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "fast/fast.hpp"

namespace qscheme::fast::detail {

// Runs fn(begin, end) over [0, n) split into at most threads() contiguous chunks whose
// boundaries are multiples of `align`. `work` is the number of elements behind the n indices:
// below 2^15 threads cost more than they save, so everything runs on the caller's thread.
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
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  for (unsigned k = 0; k < t; ++k) {
    const std::uint64_t b = std::min(n, units * k / t * align), e = std::min(n, units * (k + 1) / t * align);
    if (b >= e) continue;
    if (k + 1 == t) {
      fn(b, e);
    } else {
      pool.emplace_back([=] { fn(b, e); });
    }
  }
  for (auto& th : pool) th.join();
}

}  // namespace qscheme::fast::detail
