// qscheme: the command line over scheme/, reference/ and fast/.
#include <exception>
#include <string>

#include "fast/fast.hpp"
#include "io/temporaries.hpp"
#include "tools/command.hpp"

#ifndef QSCHEME_VERSION
#error "QSCHEME_VERSION must be defined by the build"
#endif

int main(int argc, char** argv) {
  using namespace qscheme::cli;
  CLI::App app{"qscheme: exact, fast tensor quantization schemes (Burn's scheme model)", "qscheme"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "qscheme " QSCHEME_VERSION);
  std::vector<Command> commands;
  add_schemes(app, commands);
  add_validate(app, commands);
  add_verify(app, commands);
  add_quantize(app, commands);
  add_dequantize(app, commands);
  add_info(app, commands);
  add_bench(app, commands);
  add_check(app, commands);
  add_vectors(app, commands);
  add_conformance(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own wording, in the error line every other failure uses.
    std::string help = "qscheme";
    for (const Command& c : commands) {
      if (c.app->parsed()) help += " " + c.app->get_name();
    }
    return report({qscheme::ErrorCode::invalid_argument, std::string(e.what()) + " (" + help + " --help lists the options)"});
  }
  // From here on a run may leave temporaries (outputs not renamed into place yet).
  qscheme::io::remove_temporaries_on_signals();
  try {
    // A QSCHEME_TARGET the engine could not apply would leave every figure and check of this run
    // on another target than the one asked for.
    if (const qscheme::Status st = qscheme::fast::target_env_status(); !st.ok()) return report(st);
    for (const Command& c : commands) {
      if (c.app->parsed()) return c.run();
    }
  } catch (const std::exception& e) {
    return report({qscheme::ErrorCode::internal, e.what()});
  }
  return kExitInternal;
}
