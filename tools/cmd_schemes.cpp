// `qscheme schemes`: the support matrix over the finite tuple spaces, Burn's and qscheme's
// extension beyond it.
#include <fmt/core.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"
#include "tools/command.hpp"

namespace qscheme::cli {
namespace {

struct SchemesArgs {
  bool json = false;
  bool only_supported = false;
  bool only_rejected = false;
  bool presets = false;
};

int run_schemes(const SchemesArgs& args) {
  if (args.presets) {
    if (args.json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const Preset& p : presets()) {
        rows.push_back({{"preset", p.name}, {"scheme", p.expansion}, {"about", p.about}});
      }
      std::cout << rows.dump(1) << '\n';
    } else {
      for (const Preset& p : presets()) fmt::print("{:<11} {:<50} {}\n", p.name, p.expansion, p.about);
    }
    return kExitOk;
  }
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::string> summaries;
  // Burn's space, then qscheme's extension beyond it (scheme/space.hpp), each with its summary.
  for (const auto& [space_name, space] : {std::pair{"burn", &tuple_space()}, std::pair{"extension", &extension_space()}}) {
    std::map<std::string, int> rejected_by;
    int supported = 0;
    int total = 0;
    for (const Scheme& s : *space) {
      ++total;
      const Status st = validate_scheme(s);
      if (st.ok()) ++supported;
      else ++rejected_by[std::string(to_code(st.code()))];
      if ((args.only_supported && !st.ok()) || (args.only_rejected && st.ok())) continue;
      const std::string text = format_scheme(s);
      if (args.json) {
        nlohmann::json row{{"scheme", text}, {"space", space_name}, {"supported", st.ok()}};
        row["error"] = st.ok() ? nlohmann::json(nullptr) : nlohmann::json(to_code(st.code()));
        row["message"] = st.ok() ? nlohmann::json(nullptr) : nlohmann::json(st.message());
        rows.push_back(std::move(row));
      } else if (st.ok()) {
        fmt::print("supported  {}\n", text);
      } else {
        fmt::print("rejected   {:<52} {}\n", text, to_code(st.code()));
      }
    }
    std::string summary =
        fmt::format("{} space: {} tuples: {} supported, {} rejected", space_name, total, supported, total - supported);
    for (const auto& [code, n] : rejected_by) summary += fmt::format(", {} {}", n, code);
    summaries.push_back(std::move(summary));
  }
  if (args.json) {
    std::cout << rows.dump(1) << '\n';
    for (const std::string& line : summaries) std::cerr << line << '\n';  // stdout stays one JSON document
  } else {
    for (const std::string& line : summaries) fmt::print("{}\n", line);
  }
  return kExitOk;
}

}  // namespace

void add_schemes(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<SchemesArgs>();
  CLI::App* app = root.add_subcommand(
      "schemes", "The support matrix: every tuple of the finite scheme spaces (Burn's, then the extension's), supported or "
      "rejected with its reason");
  app->add_flag("--json", args->json,
                "one JSON array of {scheme, space, supported, error, message}; the summaries go to stderr");
  auto* sup = app->add_flag("--supported", args->only_supported, "list only supported tuples");
  auto* rej = app->add_flag("--rejected", args->only_rejected, "list only rejected tuples");
  sup->excludes(rej);
  app->add_flag("--presets", args->presets, "list the preset names and what they expand to");
  out.push_back({app, [args] { return run_schemes(*args); }});
}

}  // namespace qscheme::cli
