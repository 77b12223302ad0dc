// The ONNX QuantizeLinear/DequantizeLinear node tests (tests/data/onnx, data produced by
// the ONNX reference implementation) under profile onnx, both engines, bit for bit. The exact
// number of cases run, passed and not expressible is asserted, and so is which ones run, so a
// case can neither fail nor drop out of the run silently (docs/CONFORMANCE.md lists them).
#include <boost/test/unit_test.hpp>
#include <set>
#include <string>

#include "oracle/onnx/conformance.hpp"

#ifndef QSCHEME_ONNX_DIR
#error "QSCHEME_ONNX_DIR must name the ONNX conformance folder"
#endif

using namespace qscheme;

BOOST_AUTO_TEST_CASE(every_expressible_case_passes_with_both_engines) {
  auto r = oracle::run_conformance(QSCHEME_ONNX_DIR);
  BOOST_REQUIRE_MESSAGE(r.ok(), "the ONNX conformance data is missing or unreadable: " << r.status().to_string());
  BOOST_TEST_MESSAGE(oracle::conformance_table(*r));
  BOOST_TEST(r->cases.size() == 27u);
  BOOST_TEST(r->run() == 26);
  BOOST_TEST(r->passed() == 8);
  BOOST_TEST(r->reference_only() == 18);
  BOOST_TEST(r->not_expressible() == 1);
  // Every case but the float16-scale one runs. The 8 below pass in both engines; the others
  // (an extension kind, or a non-zero zero point in affine mode) pass in the reference, the fast
  // engine refusing them with unsupported-engine.
  const std::set<std::string> both_engines{
      "test_dequantizelinear_e4m3fn", "test_dequantizelinear_e4m3fn_zero_point", "test_dequantizelinear_e5m2",
      "test_dequantizelinear_float4e2m1", "test_quantizelinear_e4m3fn", "test_quantizelinear_e5m2",
      "test_quantizelinear_float4e2m1", "test_quantizelinear_int2"};
  int ran = 0;
  for (const auto& c : r->cases) {
    BOOST_TEST_CONTEXT(c.name) {
      if (c.expressible) {
        ++ran;
        BOOST_TEST(c.reference_passed, c.detail);
        const bool fast = both_engines.count(c.name) == 1;
        BOOST_TEST(c.fast_passed == fast, c.detail);
        BOOST_TEST(c.fast_unsupported == !fast);
        // A case the fast engine refuses is an extension kind's or affine mode's.
        const bool extension = c.scheme.find(":affine") != std::string::npos || c.scheme.starts_with("u") ||
                               c.scheme.starts_with("i16");
        BOOST_TEST(extension == !fast, c.scheme);
      } else {
        BOOST_TEST(c.name == "test_dequantizelinear_e4m3fn_float16");
        BOOST_TEST(c.reason.find("float16") != std::string::npos, c.reason);
      }
    }
  }
  BOOST_TEST(ran == 26);
}

BOOST_AUTO_TEST_CASE(a_missing_folder_is_an_error) {
  BOOST_TEST(!oracle::run_conformance(std::string(QSCHEME_ONNX_DIR) + "/no-such-folder").ok());
}
