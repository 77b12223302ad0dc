#include "tools/shape_arg.hpp"

#include <charconv>
#include <string>

#include "scheme/scheme.hpp"
#include "scheme/printable.hpp"

namespace qscheme::cli {

Result<std::vector<std::uint64_t>> parse_shape(std::string_view text) {
  std::vector<std::uint64_t> shape;
  if (text.empty() || text == "scalar" || text == "[]") return shape;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view part = text.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size()) {
      return Status(ErrorCode::invalid_argument,
                    "--shape: " + quote(part) + " at offset " + std::to_string(pos) +
                        " is not a non-negative integer below 2^64; write extents like 4,8",
                    pos);
    }
    shape.push_back(v);
    if (shape.size() > kMaxRank) {
      return Status(ErrorCode::rank_too_large,
                    "--shape has more than " + std::to_string(kMaxRank) + " extents; reshape to rank " +
                        std::to_string(kMaxRank) + " or less");
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return shape;
}

}  // namespace qscheme::cli
