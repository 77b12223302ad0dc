#include "tools/recipe_options.hpp"

#include "scheme/printable.hpp"
#include "scheme/text.hpp"

namespace qscheme::cli {

void add_recipe_options(CLI::App& app, RecipeArgs& args) {
  app.add_option("--recipe", args.recipe,
                 "quantize as another implementation does: a recipe from `qscheme recipes` (e.g. ggml-q8_0, "
                 "ocp-mx); the fast engine runs the MX recipes (ocp-mx, torchao-mx-*) and torch-qint8 besides the profiles, "
                 "--engine reference every recipe");
  app.add_option("--byte-format", args.byte_format,
                 "bytes of a .bin file: burn (Burn's layout) or ggml (ggml's block_q8_0 / block_q4_0); default: the "
                 "recipe's own, else burn");
}

Result<const Recipe*> chosen_recipe(const RecipeArgs& args) {
  if (!args.recipe) return static_cast<const Recipe*>(nullptr);
  Result<const Recipe*> r = find_recipe(*args.recipe);
  if (!r) return Status(r.status().code(), "--recipe: " + r.status().message());
  return r;
}

Result<ByteFormat> chosen_format(const RecipeArgs& args, const Recipe* recipe) {
  if (args.byte_format) {
    const std::optional<ByteFormat> f = byte_format_from_string(*args.byte_format);
    if (!f) return Status(ErrorCode::invalid_argument, "--byte-format: " + quote(*args.byte_format) + " is not burn or ggml");
    return *f;
  }
  return recipe ? recipe->format : ByteFormat::burn;
}

Result<Scheme> chosen_scheme(const std::optional<std::string>& scheme, const Recipe* recipe) {
  if (recipe) return recipe_scheme(*recipe, scheme.value_or(""));
  if (!scheme) return Status(ErrorCode::invalid_argument, "give --scheme (or --recipe, whose scheme is then the default)");
  return parse_scheme(*scheme);
}

}  // namespace qscheme::cli
