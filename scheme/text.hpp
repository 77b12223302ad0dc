// The canonical text syntax of a scheme.
//
//   scheme  := preset | value (':' field)*
//   field   := 'native' | 'packed-native(' D ')' | 'packed-u32(' D ')'   (store, default native)
//            | 'sym' | 'lookup'                                          (mode, default sym)
//            | 'affine'                                      (mode: qscheme's extension, zero points)
//            | 'tensor=' DTYPE                                           (per-tensor level)
//            | 'block[' N (',' N)* ']=' DTYPE                            (per-block level)
//            | 'axis(' D ')=' DTYPE        (per-axis level, the extension; D from the innermost)
//   value   := q8f | q8s | q4f | q4s | q2f | q2s | e4m3 | e5m2 | e2m1
//            | u8 | u4 | u2 | i16 | u16                               (qscheme's extension)
//   DTYPE   := f32 | f16 | bf16 | ue8m0 | ue4m3
//
// Fields may come in any order, each kind at most once (block and axis: one of them). format()
// writes them in the order store, mode, block or axis, tensor and omits the defaults (native,
// sym), so format(parse(s)) is the canonical spelling and parse(format(x)) == x for every Scheme
// x without both a block and an axis level (validate() refuses that one).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme {

// Parses a scheme or a preset name. Errors are malformed-scheme with index() = the byte offset
// of the offending text and a message naming what was expected there.
Result<Scheme> parse_scheme(std::string_view text);

// The canonical text of a scheme.
std::string format_scheme(const Scheme& s);

struct Preset {
  std::string_view name;
  std::string_view expansion;  // canonical text
  std::string_view about;
};
// nvfp4, mxfp8, mxfp8-e5m2, mxfp4, q8_0, q4_0.
const std::vector<Preset>& presets();

}  // namespace qscheme
