#include "tools/engine.hpp"

#include <CLI/CLI.hpp>

#include "fast/fast.hpp"
#include "reference/reference.hpp"

namespace qscheme::cli {

const std::vector<Engine>& engines() {
  static const std::vector<Engine> kEngines{
      {"fast", &fast::quantize, &fast::dequantize, &fast::encode, &fast::decode},
      {"reference", &reference::quantize, &reference::dequantize, &reference::encode, &reference::decode},
  };
  return kEngines;
}

Result<const Engine*> find_engine(std::string_view name) {
  std::string names;
  for (const Engine& e : engines()) {
    if (e.name == name) return &e;
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  }
  return Status(ErrorCode::invalid_argument, "--engine: unknown engine '" + std::string(name) + "'; choose one of " + names);
}

void add_threads_option(CLI::App& app, std::optional<unsigned>& threads) {
  app.add_option("--threads", threads, "worker threads of the fast engine (default: all cores; 0 = all cores)");
}

void apply_threads(const std::optional<unsigned>& threads) { fast::set_threads(threads.value_or(0u)); }

}  // namespace qscheme::cli
