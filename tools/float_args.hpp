// Numbers given on the command line: --global, --scales, --candidate-scales and the like.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::cli {

// One f32 written in decimal (or hex-float), rounded once to f32 by strtof; `what` names the
// option in the error.
Result<float> parse_f32(std::string_view text, std::string_view what);

// A float32 .npy file (a path ending in .npy) or comma-separated numbers as parse_f32 takes them.
Result<std::vector<float>> parse_f32_list(const std::string& arg, std::string_view what);

// Integers (affine zero points): comma-separated decimal integers, or a float32 .npy whose
// values are integers within int32.
Result<std::vector<std::int32_t>> parse_int_list(const std::string& arg, std::string_view what);

}  // namespace qscheme::cli
