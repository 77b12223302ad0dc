// qscheme: the command line over scheme/, reference/ and fast/.
#include <exception>
#include <iostream>

#include "fast/fast.hpp"
#include "tools/command.hpp"

int main(int argc, char** argv) {
  using namespace qscheme::cli;
  CLI::App app{"qscheme: exact, fast tensor quantization schemes (Burn's scheme model)", "qscheme"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "qscheme 0.1.0");
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
  add_recipes(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints usage errors itself; they are user errors.
    app.exit(e);
    return kExitUser;
  }
  try {
    // A QSCHEME_TARGET the engine could not apply would leave every figure and check of this run
    // on another target than the one asked for.
    if (const qscheme::Status st = qscheme::fast::target_env_status(); !st.ok()) return report(st);
    for (const Command& c : commands) {
      if (c.app->parsed()) return c.run();
    }
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << '\n';
    return kExitInternal;
  }
  return kExitInternal;
}
