// Stream output for the scheme types, so test frameworks and logs print names, not numbers.
#pragma once

#include <ostream>

#include "scheme/scheme.hpp"
#include "scheme/status.hpp"
#include "scheme/text.hpp"

namespace qscheme {

inline std::ostream& operator<<(std::ostream& os, Value v) { return os << to_string(v); }
inline std::ostream& operator<<(std::ostream& os, ScaleDtype d) { return os << to_string(d); }
inline std::ostream& operator<<(std::ostream& os, Mode m) { return os << to_string(m); }
inline std::ostream& operator<<(std::ostream& os, ErrorCode c) { return os << to_code(c); }
inline std::ostream& operator<<(std::ostream& os, const Scheme& s) { return os << format_scheme(s); }
inline std::ostream& operator<<(std::ostream& os, const Status& s) { return os << s.to_string(); }

}  // namespace qscheme
