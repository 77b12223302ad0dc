// Options every engine-running subcommand shares: the fast engine's threads and Highway target.
#pragma once

#include <optional>
#include <string>

#include "scheme/status.hpp"

namespace CLI {
class App;
}

namespace qscheme::cli {

// Threads of the fast engine for a command: the command line uses every core
// (fast::set_threads(0)) unless --threads N is given; the library's own default stays 1.
void add_threads_option(CLI::App& app, std::optional<unsigned>& threads);
void apply_threads(const std::optional<unsigned>& threads);
// fast::set_target(name), or invalid-argument naming the targets there are.
Status apply_target(const std::string& name);

}  // namespace qscheme::cli
