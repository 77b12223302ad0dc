// Helpers shared by the engine properties: exact effective scales, exact code values, stored
// scales given back.
#pragma once

#include <rapidcheck.h>

#include <vector>

#include "props/generators.h"
#include "reference/rational.hpp"
#include "reference/values.hpp"
#include "scheme/float_bits.hpp"

namespace qscheme::props {

using reference::Rational;

// Exact effective scale of every block: stored scale (times the global for two levels).
inline std::vector<Rational> effective_scales(const QuantizedTensor& q) {
  const ScaleDtype sd = q.scheme.scale_dtype();
  Rational g = 1;
  if (q.global_bits) g = reference::scale_value(ScaleDtype::f32, *q.global_bits).value().exact;
  std::vector<Rational> e;
  e.reserve(q.scale_bits.size());
  for (auto b : q.scale_bits) e.push_back(reference::scale_value(sd, b).value().exact * g);
  return e;
}

// Exact signed value of a code (0 for either zero code).
inline Rational code_rational(Value v, std::int32_t c) { return reference::code_value(v, c).value().exact; }
inline bool code_negative(Value v, std::int32_t c) { return reference::code_value(v, c).value().negative; }

// The stored scales of q as given scales (f32 values of the stored patterns): quantizing with
// them reproduces the same stored scales (round-up of a grid value is itself).
inline GivenScales stored_as_given(const QuantizedTensor& q) {
  GivenScales g;
  for (auto b : q.scale_bits) g.block.push_back(reference::scale_value(q.scheme.scale_dtype(), b).value().f32);
  if (q.global_bits) g.global = qscheme::f32_from_bits(*q.global_bits);
  return g;
}

inline Rational abs_r(const Rational& r) { return r < 0 ? Rational(-r) : r; }

}  // namespace qscheme::props
