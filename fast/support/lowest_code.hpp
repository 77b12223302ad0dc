// The lowest code of an asymmetric integer kind (q8f, q4f, q2f: lo = -(hi + 1), W = hi - lo =
// 2 hi + 1) under calibrated scales, put back after kernels that clamp codes at -hi.
//
// Why: a calibrated scale satisfies e >= 2a / W for its block maximum a (unless it saturated at
// the grid's max), so x/e >= -W/2 = lo + 1/2 for every x of the block, and the code lo is reached
// only at that tie (or beyond it, when the scale saturated). With f32 scales the block's negative
// maximum divides to just above lo + 1/2 in nearly every block, which is within the f32-lane
// codes' near-boundary window, so every such vector was redone exactly. Clamping at -hi instead
// makes those lanes integers. It is exact wherever x/e > -W/2; a block that may hold
// x/e <= -W/2 is one with W e <= 2a (tight, as ScalesFromMax reports per block), and there
// put_lowest sets lo where the exact x/e is at or below -W/2 (docs/SEMANTICS-fast.md section 6).
// W * e is exact in f64: W has at most 8 significant bits, e at most 35 (an f32 scale, or a
// block scale of at most 11 bits times an f32 global).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fast/kernels/scalar.h"

namespace qscheme::fast::detail {

// The asymmetric integer kinds. A minifloat's range is never of this form ([-vmax, vmax], or
// [0, 2^bits - 1] for its patterns in the bytes path).
inline bool asymmetric(int lo, int hi) { return lo == -hi - 1; }

// How a kind [lo, hi] under calibrated scales, `tight` of whose `nb` blocks are tight, is
// quantized: codes clamped at `lo`, then put_lowest in the tight blocks when `put_back`. An
// asymmetric kind is clamped at -hi unless more than one block in eight is tight: scanning those
// blocks again then costs more than the near-tie redo it spares (q2f with f32 scales: 2a / 3 is
// an f32 value for a third of all a).
struct LowestPlan {
  int lo;
  bool put_back;
};
inline LowestPlan lowest_plan(int lo, int hi, std::size_t tight, std::size_t nb) {
  if (asymmetric(lo, hi) && tight * 8 <= nb) return {-hi, tight > 0};
  return {lo, false};
}

// How a kind is quantized when the code kernel puts lo back itself (the quantize_row kernel's
// `lowest`: per block the bits of -a from ScalesFromMax, one compare per vector): clamped at -hi
// however many blocks are tight. Only blocks whose scale saturated (ScaleFacts::below) still need
// put_lowest after it. The kernel assumes the tie at -W/2 goes to lo, the even one, as it does for
// every asymmetric kind (lo = -2^(bits-1)).
inline LowestPlan lowest_plan_in_kernel(int lo, int hi, std::size_t tight) {
  if (asymmetric(lo, hi) && lo % 2 == 0) return {-hi, tight > 0};
  return {lo, false};
}

// Where a tight block (max |x| bits amax, scale e) needs lo: the x with x/e < -W/2, and at
// x/e == -W/2 (a tie between lo and lo + 1) when lo is the even one. With t = -W e (exact),
// x/e <= -W/2 is 2x <= t (2x exact in f64). When W e == 2a exactly (the common tight block:
// 2a / W on the scale grid) the only such x is -a, which an integer compare of the bits finds.
struct LowestFix {
  enum Kind { none, equal, below } kind = none;
  std::uint32_t neg_a = 0;  // equal: the bits of -a, whose code is lo
  double t = 0;             // below: code lo where 2x < t, or 2x == t when lo is even
  bool lo_even = true;
};
inline LowestFix lowest_fix(std::uint32_t amax, double e, double W, int lo) {
  LowestFix f;
  f.t = -W * e;
  f.lo_even = lo % 2 == 0;
  if (f.t != -2.0 * scalar::f32_from_bits(amax)) {
    f.kind = LowestFix::below;  // a scale saturated at the grid's max: x/e may lie below -W/2
  } else if (f.lo_even) {
    f.kind = LowestFix::equal;
    f.neg_a = amax | 0x80000000u;
  }  // else the tie rounds to lo + 1, where the codes are clamped already
  return f;
}

// Applies f to n values of one block (one row's segment of it).
template <class Code>
void put_lowest(const LowestFix& f, const float* x, std::size_t n, int lo, Code* codes) {
  if (f.kind == LowestFix::equal) {
    // A conditional store: blocks are short (often 4 values per row), where a vectorised loop's
    // set-up would cost more than the loop.
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t b;
      std::memcpy(&b, x + i, 4);
      if (b == f.neg_a) codes[i] = static_cast<Code>(lo);
    }
  } else if (f.kind == LowestFix::below) {
    for (std::size_t i = 0; i < n; ++i) {
      const double v = 2.0 * static_cast<double>(x[i]);
      if (v < f.t || (v == f.t && f.lo_even)) codes[i] = static_cast<Code>(lo);
    }
  }
}

}  // namespace qscheme::fast::detail
