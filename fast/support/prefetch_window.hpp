// Where a code loop of the bytes path starts its prefetch window (QuantizeCodesT in
// kernels/quantize-inl.h). While one unit's codes are computed from L1, the loop asks for the input
// of the units after it, one line per 16 floats, in a window that starts at least kReadAhead floats
// past the next unit's first column. How fast that stream arrives depends on where in its 4 KiB
// page the window starts: quantize q8_0 cold at 64 MiB (docs/PERFORMANCE.md, "Prefetching") takes
// 0.162-0.172 ns per element with the window starting 1 KiB into a page, whatever the input's page
// offset, against 0.179-0.211 with a fixed lead of 4 KiB when that put the start in a page's last 1
// KiB or its first line (a page-aligned input, or one 16 bytes past a line). So the lead is
// stretched by up to a page to start where it ran best.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qscheme::fast::kernels {

inline constexpr std::size_t kPageBytes = 4096;
// The page offset, in bytes, at which the window starts.
inline constexpr std::size_t kWindowPagePhase = 1024;

// The lead in floats, in [min_lead, min_lead + 1024), from `next` (the next unit's first float)
// to the window start: the least one at or past min_lead whose address is kWindowPagePhase bytes
// into a page (for 4-byte-aligned input).
inline std::size_t WindowLead(const float* next, std::size_t min_lead) {
  const std::size_t phase = reinterpret_cast<std::uintptr_t>(next + min_lead) % kPageBytes;
  return min_lead + (kWindowPagePhase + kPageBytes - phase) % kPageBytes / sizeof(float);
}

}  // namespace qscheme::fast::kernels
