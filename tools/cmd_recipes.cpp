// `qscheme recipes`: every recipe (scheme/recipes.hpp) with its schemes, its rules and the source
// it reproduces; --json prints every field of every point, --rules every field's choices.
#include <fmt/core.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "scheme/recipes.hpp"
#include "scheme/rules.hpp"
#include "tools/command.hpp"

namespace qscheme::cli {
namespace {

struct RecipesArgs {
  bool json = false;
  bool rules = false;
};

// "field=choice" for every field where r differs from the exact profile.
std::string differences(const Rules& r) {
  const Rules exact = profile_rules(Profile::exact);
  std::string out;
  const auto fields = rule_fields();
  for (std::size_t f = 0; f < fields.size(); ++f) {
    if (field_value(r, f) == field_value(exact, f)) continue;
    out += (out.empty() ? "" : ", ") + std::string(fields[f].name) + "=" +
           std::string(fields[f].choices[field_value(r, f)].name);
  }
  return out.empty() ? "(none: the exact profile)" : out;
}

nlohmann::ordered_json rules_json(const Rules& r) {
  nlohmann::ordered_json out;
  const auto fields = rule_fields();
  for (std::size_t f = 0; f < fields.size(); ++f) out[std::string(fields[f].name)] = fields[f].choices[field_value(r, f)].name;
  return out;
}

int run_recipes(const RecipesArgs& args) {
  if (args.rules) {
    if (args.json) {
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const RuleField& f : rule_fields()) {
        nlohmann::ordered_json choices = nlohmann::ordered_json::array();
        for (const RuleChoice& c : f.choices) choices.push_back({{"name", c.name}, {"meaning", c.meaning}});
        rows.push_back({{"field", f.name}, {"meaning", f.meaning}, {"choices", choices}});
      }
      std::cout << rows.dump(1) << '\n';
      return kExitOk;
    }
    for (const RuleField& f : rule_fields()) {
      fmt::print("{}: {}\n", f.name, f.meaning);
      for (const RuleChoice& c : f.choices) fmt::print("  {:<28} {}\n", c.name, c.meaning);
    }
    return kExitOk;
  }
  if (args.json) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const Recipe& r : recipes()) {
      rows.push_back({{"name", r.name},
                      {"schemes", r.schemes},
                      {"format", to_string(r.format)},
                      {"profile", profile_of(r.rules) ? nlohmann::ordered_json(to_string(*profile_of(r.rules)))
                                                      : nlohmann::ordered_json(nullptr)},
                      {"rules", rules_json(r.rules)},
                      {"rules_text", format_rules(r.rules)},
                      {"source", r.source},
                      {"notes", r.notes}});
    }
    std::cout << rows.dump(1) << '\n';
    return kExitOk;
  }
  for (const Recipe& r : recipes()) {
    fmt::print("{}\n  schemes  {}\n  bytes    {}\n  rules    {}\n  source   {}\n  notes    {}\n", r.name, r.schemes,
               to_string(r.format), differences(r.rules), r.source, r.notes);
  }
  return kExitOk;
}

}  // namespace

void add_recipes(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<RecipesArgs>();
  CLI::App* app = root.add_subcommand(
      "recipes", "The recipes: other implementations' rules as points of the rule space, with their sources");
  app->add_flag("--json", args->json, "one JSON array: every recipe with every rule field, its source and notes");
  app->add_flag("--rules", args->rules, "list the fields of the rule space and their choices instead");
  out.push_back({app, [args] { return run_recipes(*args); }});
}

}  // namespace qscheme::cli
