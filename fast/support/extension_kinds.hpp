// The fast engine's boundary: it implements Burn's value kinds and modes. A scheme over one of
// qscheme's extension kinds (u8, u4, u2, i16, u16), in its affine mode or with its per-axis
// scales is answered by the reference engine only; here it is refused with unsupported-engine, after the scheme's own
// validation so that an invalid scheme gets the same error from both engines.
#pragma once

#include <string>

#include "scheme/layout.hpp"
#include "scheme/text.hpp"

namespace qscheme::fast::detail {

inline Status extension_kind_check(const Scheme& s, Shape shape) {
  if (!info(s.value).extension && !s.affine() && !s.axis) return {};
  if (auto l = make_layout(s, shape); !l) return l.status();
  const std::string what = info(s.value).extension ? "the extension kind " + std::string(to_string(s.value))
                           : s.affine()            ? std::string("affine mode (zero points)")
                                                   : std::string("per-axis scales");
  return {ErrorCode::unsupported_engine,
          "'" + format_scheme(s) + "': the fast engine does not implement " + what + "; use --engine reference"};
}

}  // namespace qscheme::fast::detail
