// `qscheme vectors`: export golden vectors (oracle/vectors.hpp) for other implementations to test
// against. Deterministic: the same scheme list always gives byte-identical files.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/progress.hpp"
#include "tools/command.hpp"
#include "oracle/vectors.hpp"
#include "scheme/recipes.hpp"

namespace qscheme::cli {
namespace {

struct VectorsArgs {
  std::string out;
  std::vector<std::string> schemes;
  std::optional<std::string> recipe;
};

int run_vectors(const VectorsArgs& a) {
  std::vector<std::string> schemes;
  // Each --schemes value may hold several schemes separated by ';' (',' occurs inside blocks).
  for (const std::string& v : a.schemes) {
    std::size_t pos = 0;
    while (pos <= v.size()) {
      const std::size_t semi = v.find(';', pos);
      const std::string part = v.substr(pos, semi == std::string::npos ? std::string::npos : semi - pos);
      if (!part.empty()) schemes.push_back(part);
      if (semi == std::string::npos) break;
      pos = semi + 1;
    }
  }
  const Recipe* recipe = nullptr;
  if (a.recipe) {
    auto r = find_recipe(*a.recipe);
    if (!r) return report(Status(r.status().code(), "--recipe: " + r.status().message()));
    recipe = *r;
  }
  if (schemes.empty() && recipe && recipe->schemes != "any") {
    // The recipe's own schemes (a pattern such as q8f:block[...]=f32 stands for itself: skip it).
    std::string_view rest = recipe->schemes;
    while (!rest.empty()) {
      const std::size_t semi = std::min(rest.find(';'), rest.size());
      std::string_view part = rest.substr(0, semi);
      while (part.starts_with(' ')) part.remove_prefix(1);
      if (part.find("...") == std::string_view::npos) schemes.emplace_back(part);
      rest.remove_prefix(std::min(semi + 1, rest.size()));
    }
  }
  if (schemes.empty()) schemes = oracle::default_vector_schemes();
  TerminalProgress progress("vectors", "cases");
  const Status st = oracle::export_vectors(a.out, schemes, recipe, progress.callback());
  if (!st.ok()) return report(st);
  return kExitOk;
}

}  // namespace

void add_vectors(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<VectorsArgs>();
  CLI::App* app = root.add_subcommand("vectors", "Export golden vectors (inputs, codes, scales, bytes, values)");
  app->add_option("--out", args->out, "a new or empty folder, written all or nothing")->required();
  app->add_option("--recipe", args->recipe,
                  "export one recipe's results (`qscheme recipes`) instead of the profiles'; default schemes: the "
                  "recipe's");
  app->add_option("--schemes", args->schemes,
                  "schemes or presets, separated by ';' or given as several values (default: presets + a representative set)");
  out.push_back({app, [args] { return run_vectors(*args); }});
}

}  // namespace qscheme::cli
