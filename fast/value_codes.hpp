// What the drivers need to know about a value kind's codes: the kernels' minifloat format number
// and the range of patterns a stored code may hold.
#pragma once

#include "fast/kernels/scalar.h"
#include "scheme/scheme.hpp"

namespace qscheme::fast::detail {

// The kernels' format number of a minifloat kind (e2m1 for any other: callers ask for floats only).
inline int mini_fmt(Value v) {
  switch (v) {
    case Value::e4m3: return scalar::kE4M3;
    case Value::e5m2: return scalar::kE5M2;
    default: return scalar::kE2M1;
  }
}

// The codes a stored tensor may hold: integers in [lo, hi]; minifloat patterns in [0, 2^bits)
// that are not NaN or infinity ((c & nan_mask) != nan_mask, nan_mask 0 for none).
struct CodeRange {
  int lo, hi, nan_mask;
};
inline CodeRange code_range(Value v) {
  const ValueInfo& vi = info(v);
  if (!vi.is_float) return {vi.lo, vi.hi, 0};
  return {0, (1 << vi.bits) - 1, scalar::kMini[mini_fmt(v)].nan_mask};
}

}  // namespace qscheme::fast::detail
