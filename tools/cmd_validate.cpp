// `qscheme validate`: the canonical form of a scheme and, given a shape, its layout.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "scheme/layout.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"
#include "tools/command.hpp"
#include "tools/shape_arg.hpp"

namespace qscheme::cli {
namespace {

struct ValidateArgs {
  std::string scheme;
  std::optional<std::string> shape;
  bool json = false;
};

int fail(const ValidateArgs& args, const Status& st, const std::string& canonical) {
  if (args.json) {
    nlohmann::json j{{"valid", false}, {"error", to_code(st.code())}, {"message", st.message()}};
    if (!canonical.empty()) j["scheme"] = canonical;
    std::cout << j.dump() << '\n';
  }
  return report(st);
}

int run_validate(const ValidateArgs& args) {
  auto scheme = parse_scheme(args.scheme);
  if (!scheme) return fail(args, scheme.status(), "");
  const std::string canonical = format_scheme(*scheme);
  if (!args.shape) {
    const Status st = validate_scheme(*scheme);
    if (!st.ok()) return fail(args, st, canonical);
    if (args.json) {
      std::cout << nlohmann::json{{"scheme", canonical}, {"valid", true}}.dump() << '\n';
    } else {
      fmt::print("scheme   {}\nvalid    yes (give --shape to see its layout)\n", canonical);
    }
    return kExitOk;
  }
  auto shape = parse_shape(*args.shape);
  if (!shape) return fail(args, shape.status(), canonical);
  auto layout = make_layout(*scheme, *shape);
  if (!layout) return fail(args, layout.status(), canonical);
  const Layout& l = *layout;
  if (args.json) {
    nlohmann::json j{{"scheme", canonical},
                     {"valid", true},
                     {"shape", l.shape},
                     {"blocks_per_dim", l.blocks_per_dim},
                     {"scales", l.scales},
                     {"storage_elements", l.storage_elements},
                     {"bytes", l.total_bytes}};
    std::cout << j.dump() << '\n';
    return kExitOk;
  }
  const char* element = l.storage_element_bytes == 4 ? "u32" : "u8";
  fmt::print("scheme     {}\n", canonical);
  fmt::print("valid      yes\n");
  fmt::print("shape      [{}]\n", fmt::join(l.shape, ","));
  fmt::print("block      [{}] (right-aligned, rank-expanded)\n", fmt::join(l.block, ","));
  fmt::print("blocks     [{}] per dim\n", fmt::join(l.blocks_per_dim, ","));
  fmt::print("scales     {} x {}{}\n", l.scales, to_string(scheme->scale_dtype()),
             scheme->two_level() ? " + 1 x f32 global" : "");
  fmt::print("storage    {} x {} ({} codes each{})\n", l.storage_elements, element, l.codes_per_storage_element,
             l.packed_axis >= 0 ? fmt::format(", packed along axis {}", l.packed_axis) : "");
  fmt::print("bytes      {} = values {} + scales {} + global {}\n", l.total_bytes, l.value_bytes, l.scale_bytes,
             l.global_bytes);
  return kExitOk;
}

}  // namespace

void add_validate(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* app = root.add_subcommand("validate", "Check a scheme (and a shape): canonical form and layout, or the error");
  app->add_option("--scheme", args->scheme, "scheme text or preset, e.g. q4s:packed-u32(0):block[32]=f16 or nvfp4")
      ->required();
  app->add_option("--shape", args->shape, "tensor shape, e.g. 4,8 (empty or 'scalar' for rank 0)");
  app->add_flag("--json", args->json, "print one JSON object");
  out.push_back({app, [args] { return run_validate(*args); }});
}

}  // namespace qscheme::cli
