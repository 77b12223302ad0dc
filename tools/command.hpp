// How a subcommand plugs into the qscheme command line: each cmd_<name>.cpp registers itself
// with CLI11 and returns an exit status when run. Exit statuses: 0 success, 2 a user error (bad
// flag, bad scheme, rejected tuple, bad file), 1 an internal failure. Errors go to stderr as
// "error: <code>: <message>".
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUser = 2;

using Runner = std::function<int()>;

struct Command {
  CLI::App* app;
  Runner run;
};

// Every subcommand's registration function; main() calls each once.
void add_schemes(CLI::App& root, std::vector<Command>& out);
void add_validate(CLI::App& root, std::vector<Command>& out);
void add_verify(CLI::App& root, std::vector<Command>& out);
void add_quantize(CLI::App& root, std::vector<Command>& out);
void add_dequantize(CLI::App& root, std::vector<Command>& out);
void add_info(CLI::App& root, std::vector<Command>& out);
void add_bench(CLI::App& root, std::vector<Command>& out);
void add_check(CLI::App& root, std::vector<Command>& out);
void add_vectors(CLI::App& root, std::vector<Command>& out);
void add_conformance(CLI::App& root, std::vector<Command>& out);
void add_recipes(CLI::App& root, std::vector<Command>& out);
void add_stats(CLI::App& root, std::vector<Command>& out);

// Prints "error: <code>: <message>" to stderr and returns the exit status for it: internal
// errors are 1, everything else 2.
int report(const Status& status);

}  // namespace qscheme::cli
