// The whole-tensor stage of quantize: see quantize_whole.cc.
#pragma once

#include <cstdint>

#include "fast/points.hpp"
#include "scheme/layout.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// The codes[l.elements], stored scales scale_bits[l.scales] and global (*global_bits, two levels,
// when not null) of x under `point`, or the error the reference reports (docs/SEMANTICS.md section
// 1 for the order). Outputs unspecified on error.
Status quantize_whole(const Scheme& scheme, const Layout& l, const float* x, const Point& point, std::int32_t* codes,
                      std::uint32_t* scale_bits, std::uint32_t* global_bits);

}  // namespace qscheme::fast::detail
