// Recipes: a scheme plus a point of the rule space (scheme/rules.hpp), named after the
// implementation whose bytes it reproduces. The table in recipes.cpp is the one list; the three
// profiles (exact, burn, onnx) are its first rows, so a profile is a recipe that accepts every
// scheme. docs/ORACLE.md prints the table; tests/data/recipes/<name>/ holds each recipe's golden
// data, produced by the implementation itself (or a transcription of it) outside qscheme.
#pragma once

#include <span>
#include <string_view>

#include "scheme/byte_format.hpp"
#include "scheme/quantized.hpp"
#include "scheme/rules.hpp"
#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme {

struct Recipe {
  std::string_view name;
  // The schemes it reproduces, as scheme texts separated by "; " ("any" for every scheme
  // validate() accepts; "q8f:block[...]=f32" for any block of f32 scales). The first is the
  // default when no scheme is given.
  std::string_view schemes;
  Rules rules;
  // The implementation's own serialized bytes (ggml's blocks), else Burn's layout.
  ByteFormat format = ByteFormat::burn;
  std::string_view source;  // where the rules are read from: spec section, or repository, file, function
  std::string_view notes;   // what the rules reproduce that the exact profile does not
};

// Every recipe, profiles first.
std::span<const Recipe> recipes();

// The recipe called `name`; invalid-argument listing every name when there is none.
Result<const Recipe*> find_recipe(std::string_view name);

// The scheme a recipe runs: its default when `text` is empty, else `text` parsed (a preset or
// scheme text) if the recipe reproduces it; invalid-argument naming the recipe's schemes if not.
Result<Scheme> recipe_scheme(const Recipe& r, std::string_view text);

// Does the recipe reproduce this scheme?
bool recipe_accepts(const Recipe& r, const Scheme& s);

// QuantizeOptions under the recipe: its rules (a profile's recipe sets the profile instead), the
// given calibration and scales kept.
QuantizeOptions recipe_options(const Recipe& r, QuantizeOptions base = {});

}  // namespace qscheme
