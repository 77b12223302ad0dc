// The cross-engine half of `qscheme verify`: runs the reference and the fast engine on every
// supported tuple of tuple_space() and extension_space() over the shapes of shape_set() with the
// edge-case inputs
// (oracle/edge_tensors.hpp; above 1024 elements only those kept at every size), under the exact
// and burn profiles, and counts agreement of codes, scales, zero points, serialized bytes,
// decoded bytes, dequantized bits and error codes (code and index of every quantize/dequantize
// error; code of every decode error on corrupt bytes, the index reported separately).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oracle/progress.hpp"

namespace qscheme::oracle {

struct AgreementRow {
  std::string what;              // "codes", "scales", "bytes (encode)", ...
  std::uint64_t checked[2] = {};  // [exact, burn]
  std::uint64_t agreed[2] = {};
  // Reported but not a failure: the element/scale index of a decode error on corrupt bytes,
  // whose precedence (padding vs code vs global scale) the engines' contracts do not specify.
  bool informational = false;
};

struct EngineAgreement {
  std::vector<AgreementRow> rows;
  std::uint64_t tuples = 0, pairs = 0, tensors = 0;
  std::vector<std::string> first_disagreements;
  std::uint64_t disagreements() const;
};

EngineAgreement compare_engines(const Progress& progress = {});

}  // namespace qscheme::oracle
