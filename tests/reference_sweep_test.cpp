// Every scheme validate() accepts, on every shape of the shape set it accepts, under both
// profiles and both calibrations: quantize succeeds (or reports the one documented
// unsupported-profile case), every code and scale is one the scheme can hold, dequantize
// succeeds with finite output, and (exact profile) re-quantizing the dequantized tensor against
// the stored scales gives the same codes back.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/support/print_support.hpp"
#include "reference/reference.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"

using namespace qscheme;

namespace {

// A deterministic tensor with both signs, a zero, a tie-prone value and a wide dynamic range.
std::vector<float> tensor(std::size_t n) {
  std::vector<float> x(n);
  std::uint32_t state = 12345;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const float mag = static_cast<float>(state >> 8) / static_cast<float>(1u << 24);  // [0, 1)
    const int exp = static_cast<int>((state >> 4) % 13) - 6;
    x[i] = std::ldexp(mag, exp) * ((state & 1) ? -1.0f : 1.0f);
  }
  if (n > 0) x[0] = 0.0f;
  if (n > 2) x[2] = 0.5f;
  return x;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_valid_scheme_and_shape_round_trips) {
  const auto start = std::chrono::steady_clock::now();
  int schemes = 0;
  int runs = 0;
  int unsupported = 0;
  for (const Scheme& s : tuple_space()) {
    if (!validate_scheme(s).ok()) continue;
    ++schemes;
    for (const auto& shape : shape_set()) {
      if (!validate(s, shape).ok()) continue;
      std::uint64_t n = 1;
      for (std::uint64_t d : shape) n *= d;
      const std::vector<float> x = tensor(n);
      for (Profile p : {Profile::exact, Profile::burn}) {
        for (Calibration c : {Calibration::minmax, Calibration::absmean}) {
          BOOST_TEST_CONTEXT(format_scheme(s) << " shape rank " << shape.size() << " n " << n << " "
                                              << to_string(p) << " " << to_string(c)) {
            QuantizeOptions o;
            o.profile = p;
            o.calibration = c;
            const auto q = reference::quantize(s, shape, x, o);
            if (p == Profile::burn && c == Calibration::absmean && s.two_level()) {
              BOOST_TEST_REQUIRE(q.status().code() == ErrorCode::unsupported_profile);
              ++unsupported;
              continue;
            }
            BOOST_TEST_REQUIRE(q.ok(), q.status().to_string());
            BOOST_TEST_REQUIRE(q->codes.size() == n);
            for (std::int32_t code : q->codes) BOOST_TEST_REQUIRE(reference::is_valid_code(s.value, code));
            for (std::uint32_t b : q->scale_bits) BOOST_TEST_REQUIRE(reference::is_valid_scale(s.scale_dtype(), b));
            const auto d = reference::dequantize(*q);
            BOOST_TEST_REQUIRE(d.ok(), d.status().to_string());
            for (float y : *d) BOOST_TEST_REQUIRE(std::isfinite(y));
            if (p == Profile::exact) {
              QuantizeOptions again;
              GivenScales g;
              for (std::uint32_t b : q->scale_bits) g.block.push_back(reference::scale_value(s.scale_dtype(), b)->f32);
              if (q->global_bits) g.global = std::bit_cast<float>(*q->global_bits);
              again.scales = g;
              const auto r = reference::quantize(s, shape, *d, again);
              BOOST_TEST_REQUIRE(r.ok(), r.status().to_string());
              BOOST_TEST_REQUIRE(r->codes == q->codes);
              BOOST_TEST_REQUIRE(r->scale_bits == q->scale_bits);
            }
            ++runs;
          }
        }
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST_MESSAGE(schemes << " schemes, " << runs << " quantize/dequantize runs, " << unsupported
                             << " burn two-level absmean rejections, " << seconds << " s");
  BOOST_TEST(schemes == 1599);
  BOOST_TEST(runs > 0);
}
