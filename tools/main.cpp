// qscheme: the command line over scheme/, reference/ and fast/.
#include <exception>

#include "fast/fast.hpp"
#include "io/temporaries.hpp"
#include "tools/command_line.hpp"

int main(int argc, char** argv) {
  using namespace qscheme::cli;
  CommandLine cli;
  const ParseOutcome parsed = cli.parse(argc, argv);
  if (parsed.exit) return *parsed.exit;
  if (!parsed.error.ok()) return report(parsed.error);
  // From here on a run may leave temporaries (outputs not renamed into place yet).
  qscheme::io::remove_temporaries_on_signals();
  try {
    // A QSCHEME_TARGET the engine could not apply would leave every figure and check of this run
    // on another target than the one asked for.
    if (const qscheme::Status st = qscheme::fast::target_env_status(); !st.ok()) return report(st);
    return parsed.command->run();
  } catch (const std::exception& e) {
    return report({qscheme::ErrorCode::internal, e.what()});
  }
}
