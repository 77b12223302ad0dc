#include "tools/command_line.hpp"

#include <string>

#ifndef QSCHEME_VERSION
#error "QSCHEME_VERSION must be defined by the build"
#endif

namespace qscheme::cli {

CommandLine::CommandLine() : app_{"qscheme: exact, fast tensor quantization schemes (Burn's scheme model)", "qscheme"} {
  app_.require_subcommand(1);
  app_.set_version_flag("--version", "qscheme " QSCHEME_VERSION);
  add_schemes(app_, commands_);
  add_validate(app_, commands_);
  add_verify(app_, commands_);
  add_quantize(app_, commands_);
  add_dequantize(app_, commands_);
  add_info(app_, commands_);
  add_bench(app_, commands_);
  add_check(app_, commands_);
  add_vectors(app_, commands_);
  add_conformance(app_, commands_);
  add_recipes(app_, commands_);
  add_stats(app_, commands_);
}

ParseOutcome CommandLine::parse(int argc, const char* const* argv) {
  ParseOutcome out;
  try {
    app_.parse(argc, argv);
  } catch (const CLI::Success& e) {
    out.exit = app_.exit(e);
    return out;
  } catch (const CLI::ParseError& e) {
    std::string help = "qscheme";
    for (const Command& c : commands_) {
      if (c.app->parsed()) help += " " + c.app->get_name();
    }
    out.error = Status(ErrorCode::invalid_argument, std::string(e.what()) + " (" + help + " --help lists the options)");
    return out;
  }
  for (const Command& c : commands_) {
    if (c.app->parsed()) out.command = &c;
  }
  // require_subcommand(1) makes CLI11 refuse argv without one; this is that promise kept.
  if (out.command == nullptr) out.error = Status(ErrorCode::internal, "no subcommand was parsed");
  return out;
}

}  // namespace qscheme::cli
