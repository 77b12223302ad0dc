// Where f32(log2 a) rounds up onto the next integer, binade by binade: microxcaling's scale rule
// (recipe microxcaling, rule scale=log2f-floor) takes floor of the f32-rounded log2 of a block's
// max |x|, so a maximum just below 2^n counts as 2^n. For an f32 a = 2^k (1 + M / 2^23) with
// 0 < M < 2^23, f32(log2 a) = n = k + 1 exactly when log2 a lies within half an f32 step of n,
// i.e. M >= threshold[k + 127]; 2^23 where no M does (log2 a is irrational for M > 0, so there
// is no tie). reference/exponent_scales.cpp decides each case with 40 digits of ln 2;
// tests/fast_bytes_test.cpp checks every entry against it on both sides of the threshold.
#pragma once

#include <cstdint>

namespace qscheme::fast::detail {

// 256 entries, by a's exponent field; the entries for fields 0 and 255 are 2^23.
const std::uint32_t* log2f_thresholds();

}  // namespace qscheme::fast::detail
