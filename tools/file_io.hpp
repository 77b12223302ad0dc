// Whole-file reads and all-or-nothing writes for the command line. A write goes to a temporary
// file beside the target and is renamed over it only once complete, so a failed command never
// leaves a partial or truncated output behind.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::cli {

// io-error when the file cannot be opened or read (the message names the path and the reason).
Result<std::vector<std::uint8_t>> read_bytes(const std::string& path);

// Writes `bytes` to `path` atomically (temporary file + rename); io-error on failure, in which
// case `path` is untouched.
Status write_bytes(const std::string& path, std::span<const std::uint8_t> bytes);

}  // namespace qscheme::cli
