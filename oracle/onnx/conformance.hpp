// ONNX conformance: the QuantizeLinear / DequantizeLinear node tests of the ONNX backend suite
// (one folder per case: model.onnx + test_data_set_0/{input_N,output_0}.pb), read with
// libprotobuf through onnx_subset.proto, mapped onto a qscheme scheme with given scales (and,
// for a non-zero integer zero point, affine mode with given zero points) and run under
// Profile::onnx with both engines. A case qscheme cannot express (float16 scales, a float zero
// point that is not 0, ...) is reported with the reason, never skipped silently; a case whose
// scheme the fast engine refuses (unsupported-engine: the extension kinds, affine mode) passes
// by the reference only, and is counted apart. docs/CONFORMANCE.md lists the outcome.
#pragma once

#include <string>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::oracle {

struct ConformanceCase {
  std::string name;      // folder name, e.g. test_quantizelinear_e4m3fn
  std::string op;        // QuantizeLinear or DequantizeLinear
  bool expressible = false;
  std::string reason;    // why not expressible (empty when expressible)
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
  int not_expressible() const;
};

// Reads every test_* folder under `dir`. Errors: io-error when dir does not exist or holds no
// case; corrupt-bytes for a file protobuf cannot parse or a tensor whose data disagrees with its
// dims (those are broken data, not inexpressible cases).
Result<ConformanceReport> run_conformance(const std::string& dir);

// The table `qscheme conformance` prints: one line per case, then the counts.
std::string conformance_table(const ConformanceReport& r);

}  // namespace qscheme::oracle
