// `qscheme quantize`: an f32 .npy tensor to a quantized tensor, written as Q.json or, for an
// output ending in .bin, as the raw serialized bytes (the engine's encode). Nothing is written on
// error.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "reference/reference.hpp"
#include "scheme/text.hpp"
#include "tools/command.hpp"
#include "oracle/engine.hpp"
#include "tools/engine_options.hpp"
#include "tools/float_args.hpp"
#include "tools/recipe_options.hpp"
#include "io/file_io.hpp"
#include "io/npy.hpp"
#include "io/qjson.hpp"

namespace qscheme::cli {
namespace {

struct QuantizeArgs {
  std::optional<std::string> scheme;
  std::optional<std::string> profile;
  RecipeArgs recipe;
  std::string calibration = "minmax";
  std::string engine{oracle::kDefaultEngine};
  std::string input;
  std::string output;
  std::optional<std::string> scales;
  std::optional<std::string> global;
  std::optional<unsigned> threads;
};

int run_quantize(const QuantizeArgs& args) {
  auto recipe = chosen_recipe(args.recipe);
  if (!recipe) return report(recipe.status());
  auto scheme = chosen_scheme(args.scheme, *recipe);
  if (!scheme) return report(scheme.status());
  auto format = chosen_format(args.recipe, *recipe);
  if (!format) return report(format.status());
  if (*recipe && args.profile) {
    return report({ErrorCode::invalid_argument, "--profile and --recipe both choose the rules; give one (the "
                                                "profiles are recipes too: --recipe exact, burn or onnx)"});
  }
  QuantizeOptions options;
  const auto profile = profile_from_string(args.profile.value_or("exact"));
  if (!profile) {
    return report({ErrorCode::invalid_argument, "--profile: '" + *args.profile + "' is not exact, burn or onnx"});
  }
  options.profile = *profile;
  const auto calibration = calibration_from_string(args.calibration);
  if (!calibration) {
    return report({ErrorCode::invalid_argument, "--calibration: '" + args.calibration + "' is not minmax or absmean"});
  }
  options.calibration = *calibration;
  auto engine = oracle::find_engine(args.engine);
  if (!engine) return report(engine.status());
  apply_threads(args.threads);
  if (args.global && !args.scales) {
    return report({ErrorCode::invalid_argument, "--global is only meaningful with --scales"});
  }
  if (args.scales) {
    GivenScales given;
    auto block = parse_f32_list(*args.scales, "--scales");
    if (!block) return report(block.status());
    given.block = std::move(*block);
    if (args.global) {
      auto g = parse_f32(*args.global, "--global");
      if (!g) return report(g.status());
      given.global = *g;
    }
    options.scales = std::move(given);
  }
  if (*recipe) options = recipe_options(**recipe, std::move(options));

  auto x = io::npy::read_file(args.input);
  if (!x) return report(x.status());
  if (x->dtype != io::npy::Dtype::f32) {
    return report({ErrorCode::unsupported_npy, args.input + ": the input tensor must be float32 ('<f4'), got '" +
                                                   std::string(io::npy::descr(x->dtype)) + "'"});
  }
  std::vector<std::uint8_t> out;
  if (args.output.ends_with(".bin") && *format == ByteFormat::ggml) {
    auto q = (*engine)->quantize(*scheme, x->shape, x->f32, options);
    if (!q) return report(q.status());
    auto bytes = (*engine)->encode_as(*q, ByteFormat::ggml);
    if (!bytes) return report(bytes.status());
    out = std::move(*bytes);
  } else if (args.output.ends_with(".bin")) {
    auto bytes = (*engine)->quantize_bytes(*scheme, x->shape, x->f32, options);
    if (!bytes) return report(bytes.status());
    out = std::move(*bytes);
  } else {
    auto q = (*engine)->quantize(*scheme, x->shape, x->f32, options);
    if (!q) return report(q.status());
    auto text = io::qjson::write(*q);
    if (!text) return report(text.status());
    out.assign(text->begin(), text->end());
  }
  const Status st = io::write_bytes(args.output, out);
  if (!st.ok()) return report(st);
  return kExitOk;
}

}  // namespace

void add_quantize(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* app = root.add_subcommand("quantize", "Quantize an f32 .npy tensor; write Q.json (or raw bytes for *.bin)");
  app->add_option("--scheme", args->scheme,
                  "scheme text or preset, e.g. q8s:block[32]=f16 or nvfp4 (default with --recipe: the recipe's)");
  app->add_option("--profile", args->profile, "arithmetic profile: exact (default), burn or onnx");
  add_recipe_options(*app, args->recipe);
  app->add_option("--calibration", args->calibration, "minmax (default) or absmean; ignored with --scales");
  app->add_option("--engine", args->engine, "engine: fast (default, Highway SIMD) or reference");
  add_threads_option(*app, args->threads);
  app->add_option("--input", args->input, "input tensor: little-endian float32 .npy, C order")->required();
  app->add_option("--output", args->output,
                  "output: *.bin for the serialized bytes (--format), anything else Q.json")->required();
  app->add_option("--scales", args->scales,
                  "given scales instead of calibration: a,b,... or a float32 .npy, one per block (one for per-tensor)");
  app->add_option("--global", args->global, "the given global scale of a two-level scheme (with --scales)");
  out.push_back({app, [args] { return run_quantize(*args); }});
}

}  // namespace qscheme::cli
