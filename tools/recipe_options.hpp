// The options every command that quantizes or reads quantized bytes shares for recipes:
// --recipe NAME (scheme/recipes.hpp) and --byte-format burn|ggml (scheme/byte_format.hpp), the
// layout of a .bin file's bytes (--format chooses the file format: tools/file_formats.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "scheme/byte_format.hpp"
#include "scheme/recipes.hpp"
#include "scheme/status.hpp"

namespace qscheme::cli {

struct RecipeArgs {
  std::optional<std::string> recipe;
  std::optional<std::string> byte_format;
};

void add_recipe_options(CLI::App& app, RecipeArgs& args);

// The recipe named by --recipe, or nullptr without it (invalid-argument listing the names for an
// unknown one).
Result<const Recipe*> chosen_recipe(const RecipeArgs& args);

// --byte-format, else the recipe's own format, else burn.
Result<ByteFormat> chosen_format(const RecipeArgs& args, const Recipe* recipe);

// The scheme: --scheme (which a recipe must reproduce), else the recipe's default; without
// either, invalid-argument.
Result<Scheme> chosen_scheme(const std::optional<std::string>& scheme, const Recipe* recipe);

}  // namespace qscheme::cli
