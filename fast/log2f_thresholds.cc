#include "fast/log2f_thresholds.hpp"

#include <array>
#include <bit>
#include <cmath>

namespace qscheme::fast::detail {
namespace {

// Half the f32 step just below the integer n (n != 0), as a power of two: the step of |n|'s
// binade, halved once more below a positive power of two, where the grid is twice as fine.
double half_step_below(int n) {
  const unsigned m = static_cast<unsigned>(n > 0 ? n : -n);
  const int p = 31 - std::countl_zero(m);
  const bool finer = n > 0 && std::has_single_bit(m);
  return std::ldexp(1.0, p - 23 - (finer ? 1 : 0) - 1);
}

std::array<std::uint32_t, 256> make() {
  std::array<std::uint32_t, 256> t{};
  t.fill(1u << 23);
  for (int field = 1; field < 255; ++field) {
    const int n = field - 127 + 1;
    if (n == 0) continue;  // below 1 the f32 grid is too fine for log2 to round up to 0
    // a >= 2^(n - h): M >= 2^23 (2^(1 - h) - 1) = 2^23 + 2^24 expm1(-h ln 2). For every n the
    // bound lies at least 0.09 from an integer (60-digit arithmetic), far beyond a double's error
    // here; tests/fast_bytes_test.cpp checks every entry against the reference.
    const double bound = 0x1p23 + 0x1p24 * std::expm1(-half_step_below(n) * std::log(2.0));
    const double m = std::ceil(bound);
    if (m < 0x1p23) t[static_cast<std::size_t>(field)] = static_cast<std::uint32_t>(m);
  }
  return t;
}

}  // namespace

const std::uint32_t* log2f_thresholds() {
  static const std::array<std::uint32_t, 256> table = make();
  return table.data();
}

}  // namespace qscheme::fast::detail
