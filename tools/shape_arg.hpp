// The --shape argument: comma-separated extents ("4,8"), "" or "scalar" for rank 0.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::cli {

Result<std::vector<std::uint64_t>> parse_shape(std::string_view text);

}  // namespace qscheme::cli
