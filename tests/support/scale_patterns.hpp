// The exact value of a scale dtype's bit pattern, decoded here from its sign, exponent and
// fraction fields rather than by the library: what the tests hold the engines' stored scales to.
#pragma once

#include <cmath>
#include <cstdint>

#include "scheme/float_bits.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::testing {

// Every value of every scale dtype is exact in double. Precondition: a finite pattern.
inline double ScalePatternValue(ScaleDtype d, std::uint32_t bits) {
  switch (d) {
    case ScaleDtype::f32: return f32_from_bits(bits);
    case ScaleDtype::bf16: return bf16_to_f32(bits);
    case ScaleDtype::f16: {
      const int e = static_cast<int>((bits >> 10) & 0x1F);
      const double m = bits & 0x3FF;
      const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
      return (bits & 0x8000) ? -v : v;
    }
    case ScaleDtype::ue4m3: {
      const int e = static_cast<int>((bits >> 3) & 0xF);
      const double m = bits & 7;
      return e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
    }
    case ScaleDtype::ue8m0: return std::ldexp(1.0, static_cast<int>(bits) - 127);
  }
  return NAN;
}

}  // namespace qscheme::testing
