// The ONNX QuantizeLinear/DequantizeLinear node tests (tests/data/onnx, data produced by
// the ONNX reference implementation) under profile onnx, both engines, bit for bit. The exact
// number of cases run, passed and not expressible is asserted, and so is which ones run, so a
// case can neither fail nor drop out of the run silently (docs/CONFORMANCE.md lists them).
#include <boost/test/unit_test.hpp>
#include <algorithm>
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
  BOOST_TEST(r->run() == 27);
  BOOST_TEST(r->passed() == 27);
  BOOST_TEST(r->reference_only() == 0);
  BOOST_TEST(r->not_expressible() == 0);
  // Every case runs and passes in both engines: the extension kinds, affine mode and float16
  // output included.
  int ran = 0;
  for (const auto& c : r->cases) {
    BOOST_TEST_CONTEXT(c.name) {
      if (c.expressible) {
        ++ran;
        BOOST_TEST(c.reference_passed, c.detail);
        BOOST_TEST(c.fast_passed, c.detail);
        BOOST_TEST(!c.fast_unsupported);
      }
    }
  }
  BOOST_TEST(ran == 27);
  // The float16 scale is carried as its f32 value and the f32 product rounded to f16.
  const auto f16 = std::find_if(r->cases.begin(), r->cases.end(),
                                [](const auto& c) { return c.name == "test_dequantizelinear_e4m3fn_float16"; });
  BOOST_REQUIRE(f16 != r->cases.end());
  BOOST_TEST(f16->scheme == "e4m3 -> f16");
}

// ONNX's `_expanded` case is DynamicQuantizeLinear's function body over the one-node case's data:
// it runs as the operator. The same graph with its constant 255 changed to 254 is another
// computation and must stay skipped, not pass as the operator.
BOOST_AUTO_TEST_CASE(dynamic_quantize_linear_s_function_body_runs_as_the_operator_and_nothing_else_does) {
  auto r = oracle::run_conformance(QSCHEME_ONNX_BODY_DIR);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST_MESSAGE(oracle::conformance_table(*r));
  BOOST_REQUIRE(r->cases.size() == 2u);
  const auto& body = r->cases[0];
  BOOST_TEST(body.name == "test_dynamicquantizelinear_expanded");
  BOOST_TEST(body.op == "DynamicQuantizeLinear");
  BOOST_TEST(body.reference_passed);
  BOOST_TEST(body.fast_passed);
  const auto& other = r->cases[1];
  BOOST_TEST(other.name == "test_dynamicquantizelinear_expanded_qmax_254");
  BOOST_TEST(other.skipped);
  BOOST_TEST(!other.expressible);
}

BOOST_AUTO_TEST_CASE(a_missing_folder_is_an_error) {
  BOOST_TEST(!oracle::run_conformance(std::string(QSCHEME_ONNX_DIR) + "/no-such-folder").ok());
}
