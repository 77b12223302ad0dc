// The qscheme command line as an object: every subcommand registered with CLI11, argv parsed
// into the one subcommand to run, or into the exit a parse error or --help/--version asks for.
// main() and the argument fuzzer (fuzz/fuzz_cli_args.cpp) both go through it, so the fuzzer
// parses exactly what a user's shell passes.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <vector>

#include "scheme/status.hpp"
#include "tools/command.hpp"

namespace qscheme::cli {

struct ParseOutcome {
  const Command* command = nullptr;  // the subcommand argv chose, to be run
  std::optional<int> exit;           // --help or --version: CLI11 printed it; exit with this
  Status error;                      // invalid-argument: argv does not parse (not yet reported)
};

class CommandLine {
 public:
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // CLI11 throws on every way argv can fail to parse; here that is a Status in the error-line
  // form every other failure uses, naming the --help that lists the options.
  ParseOutcome parse(int argc, const char* const* argv);

  // Every subcommand, in the order `qscheme --help` lists them.
  const std::vector<Command>& commands() const { return commands_; }

 private:
  CLI::App app_;
  std::vector<Command> commands_;
};

}  // namespace qscheme::cli
