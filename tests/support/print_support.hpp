// Stream output for qscheme enums, so that Boost.Test can print both sides of a failed check.
#pragma once

#include <ostream>

#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme {
inline std::ostream& operator<<(std::ostream& o, ErrorCode c) { return o << to_code(c); }
inline std::ostream& operator<<(std::ostream& o, Profile p) { return o << to_string(p); }
}  // namespace qscheme
