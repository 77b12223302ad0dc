// Given block scales of the next unit, asked for while this one is quantized. Their stream is
// thin beside the input's (nvfp4: 4 bytes per 16 elements), and the hardware prefetcher left it
// cold: each unit's scale kernel stalled on the lines it read (a quarter of a 64 MiB nvfp4 call
// with given scales, in perf's samples on the loads).
#pragma once

#include <algorithm>
#include <cstddef>

namespace qscheme::fast::detail {

// Prefetches the lines of s[from, from + n), clipped to s[0, size).
inline void prefetch_scales(const float* s, std::size_t size, std::size_t from, std::size_t n) {
  constexpr std::size_t kLineFloats = 64 / sizeof(float);
  const std::size_t end = std::min(size, from + n);
  for (std::size_t i = from; i < end; i += kLineFloats) __builtin_prefetch(s + i);
}

}  // namespace qscheme::fast::detail
