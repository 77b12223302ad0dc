#include "tools/engine.hpp"

#include "reference/reference.hpp"

namespace qscheme::cli {

const std::vector<Engine>& engines() {
  static const std::vector<Engine> kEngines{
      {"reference", &reference::quantize, &reference::dequantize},
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

}  // namespace qscheme::cli
