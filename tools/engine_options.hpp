// Options every engine-running subcommand shares: the fast engine's threads and Highway target.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "scheme/status.hpp"

namespace CLI {
class App;
}

namespace qscheme::cli {

// Threads of the fast engine for a command: the command line uses every core
// (fast::set_threads(0)) unless --threads N is given; the library's own default stays 1.
// --threads is kept as typed and parsed here, so that a negative or oversized count is an
// invalid-argument error naming the range 0 to fast::kMaxThreads like any other bad value
// (CLI11 would reject -1 with its own message and pass 4294967295 on).
void add_threads_option(CLI::App& app, std::optional<std::string>& threads);
// The count --threads asks for, or invalid-argument naming the range.
Result<unsigned> parse_threads(std::string_view text);
// Parses --threads when given and applies it (absent: 0, every core).
Status apply_threads(const std::optional<std::string>& threads);
// fast::set_target(name), or invalid-argument naming the targets there are.
Status apply_target(const std::string& name);

}  // namespace qscheme::cli
