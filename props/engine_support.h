// Helpers shared by the engine properties: exact effective scales, exact code values, stored
// scales given back, the two output policies held to the reference's bytes.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fast/fast.hpp"

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

// write(out, n, policy) under both output policies, into n bytes of a sentinel, held to the
// reference's result: its bytes, or its error (code, element and message) with the output
// untouched under untouched_on_error. After each success then(out, policy) checks what follows.
template <class Write, class Then>
void require_bytes_under_both_policies(std::size_t n, const Result<std::vector<std::uint8_t>>& want, Write write,
                                       Then then) {
  for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
    std::vector<std::uint8_t> out(n, 0xA5);
    const Status st = write(out.data(), out.size(), pol);
    RC_ASSERT(st.ok() == want.ok());
    if (!st.ok()) {
      RC_ASSERT(st.code() == want.status().code());
      RC_ASSERT(st.index() == want.status().index());
      RC_ASSERT(st.message() == want.status().message());
      if (pol == fast::OutputPolicy::untouched_on_error) {
        RC_ASSERT(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xA5; }));
      }
      continue;
    }
    RC_ASSERT(out == *want);
    then(out, pol);
  }
}

}  // namespace qscheme::props
