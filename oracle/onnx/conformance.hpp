// ONNX conformance: the QuantizeLinear / DequantizeLinear node tests of the ONNX backend suite
// (one folder per case: model.onnx + test_data_set_0/{input_N,output_0}.pb), read with
// libprotobuf through onnx_subset.proto, mapped onto a qscheme scheme with given scales (and,
// for a non-zero integer zero point, affine mode with given zero points) and run under
// Profile::onnx with both engines. DynamicQuantizeLinear is u8 affine calibrated under profile
// onnx. A float16 or bfloat16 scale is carried as the f32 of the same value, and the output is
// rounded to the case's float16 / bfloat16 (dequantize_16). A case qscheme cannot express (a
// float zero point that is not 0, a double scale, ...) is reported with the reason, and another
// operator's case is listed as skipped with its reason, never dropped silently; a case whose
// scheme or output the fast engine refused (unsupported-engine; none is today) would pass by the
// reference only, counted apart. docs/CONFORMANCE.md lists the outcome.
#pragma once

#include <string>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::oracle {

struct ConformanceCase {
  std::string name;      // folder name, e.g. test_quantizelinear_e4m3fn
  std::string op;        // QuantizeLinear or DequantizeLinear
  bool expressible = false;
  // Another operator's case (the directory may be the whole ONNX node suite): not a
  // quantization case, listed with the reason and counted apart from the inexpressible ones.
  bool skipped = false;
  std::string reason;    // why skipped or not expressible (empty when expressible)
  std::string scheme;    // the qscheme scheme it maps to (when expressible)
  bool reference_passed = false;
  bool fast_passed = false;
  bool fast_unsupported = false;  // the fast engine refused it with unsupported-engine
  std::string detail;    // first mismatch, when one engine failed
  bool passed() const { return expressible && reference_passed && fast_passed; }
  // Passed in the reference; the fast engine does not implement the scheme and said so.
  bool reference_only() const { return expressible && reference_passed && fast_unsupported && detail.empty(); }
};

struct ConformanceReport {
  std::vector<ConformanceCase> cases;  // sorted by name
  int run() const;
  int passed() const;
  int reference_only() const;
  int skipped() const;
  // Quantization cases that did not run: cases - run - skipped.
  int not_expressible() const;
};

// Reads every test_* folder under `dir`: QuantizeLinear and DequantizeLinear cases, and
// DynamicQuantizeLinear ones (u8 affine calibrated under profile onnx: its three outputs y,
// y_scale and y_zero_point are all compared); other operators' cases are skipped. Errors: io-error when dir does not exist or holds no
// case; corrupt-bytes for a file protobuf cannot parse or a tensor whose data disagrees with its
// dims (those are broken data, not inexpressible cases).
Result<ConformanceReport> run_conformance(const std::string& dir);

// The table `qscheme conformance` prints: one line per case, then the counts.
std::string conformance_table(const ConformanceReport& r);

}  // namespace qscheme::oracle
