// `qscheme quantize`: an f32 .npy tensor to a quantized tensor, written as Q.json (.json) or as
// the raw serialized bytes (.bin: the engine's quantize_bytes in Burn's layout, or ggml's blocks
// with --byte-format ggml); tools/file_formats.hpp decides which. The rules are a profile's
// (--profile) or a recipe's (--recipe). Nothing is written on error.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "reference/reference.hpp"
#include "scheme/printable.hpp"
#include "scheme/text.hpp"
#include "tools/progress.hpp"
#include "tools/command.hpp"
#include "tools/distinct_files.hpp"
#include "tools/file_formats.hpp"
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
  std::optional<std::string> format;
  std::optional<std::string> scales;
  std::optional<std::string> global;
  std::optional<std::string> zero_points;
  std::optional<std::string> global_amax;
  std::optional<std::string> threads;
};

int run_quantize(const QuantizeArgs& args) {
  const auto format = output_format("quantize", kQuantizeFormats, args.output, args.format);
  if (!format) return report(format.status());
  const bool scales_file = args.scales && has_extension(*args.scales, ".npy");
  const bool zero_points_file = args.zero_points && has_extension(*args.zero_points, ".npy");
  const Status distinct = output_differs_from_inputs(
      {"--output", &args.output}, {{"--input", &args.input},
                                   {"--scales", scales_file ? &*args.scales : nullptr},
                                   {"--zero-points", zero_points_file ? &*args.zero_points : nullptr}});
  if (!distinct.ok()) return report(distinct);
  auto recipe = chosen_recipe(args.recipe);
  if (!recipe) return report(recipe.status());
  auto scheme = chosen_scheme(args.scheme, *recipe);
  if (!scheme) return report(scheme.status());
  auto byte_format = chosen_format(args.recipe, *recipe);
  if (!byte_format) return report(byte_format.status());
  if (args.recipe.byte_format && format->name != "bin") {
    return report({ErrorCode::invalid_argument, "--byte-format is the layout of a .bin output; Q.json holds Burn's"});
  }
  if (*recipe && args.profile) {
    return report({ErrorCode::invalid_argument, "--profile and --recipe both choose the rules; give one (the "
                                                "profiles are recipes too: --recipe exact, burn or onnx)"});
  }
  QuantizeOptions options;
  const auto profile = profile_from_string(args.profile.value_or("exact"));
  if (!profile) {
    return report({ErrorCode::invalid_argument, "--profile: " + quote(*args.profile) + " is not " + profile_list()});
  }
  options.profile = *profile;
  const auto calibration = calibration_from_string(args.calibration);
  if (!calibration) {
    return report({ErrorCode::invalid_argument, "--calibration: " + quote(args.calibration) + " is not minmax or absmean"});
  }
  options.calibration = *calibration;
  auto engine = oracle::find_engine(args.engine);
  if (!engine) return report(engine.status());
  if (Status st = apply_threads(args.threads); !st.ok()) return report(st);
  if (args.global && !args.scales) {
    return report({ErrorCode::invalid_argument, "--global is only meaningful with --scales"});
  }
  if (args.zero_points && !args.scales) {
    return report({ErrorCode::invalid_argument, "--zero-points is only meaningful with --scales"});
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
    if (args.zero_points) {
      auto z = parse_int_list(*args.zero_points, "--zero-points");
      if (!z) return report(z.status());
      given.zero_points = std::move(*z);
    }
    options.scales = std::move(given);
  }
  if (args.global_amax) {
    auto a = parse_f32(*args.global_amax, "--global-amax");
    if (!a) return report(a.status());
    options.global_amax = *a;  // the engines check where it applies (check_global_amax)
  }
  if (*recipe) options = recipe_options(**recipe, std::move(options));

  TerminalProgress progress("quantize");
  progress.phase("reading " + printable(args.input));
  auto x = io::npy::read_file(args.input);
  if (!x) return report(x.status());
  progress.phase("quantizing " + std::to_string(x->f32.size()) + " elements");
  if (x->dtype != io::npy::Dtype::f32) {
    return report({ErrorCode::unsupported_npy, printable(args.input) + ": the input tensor must be float32 ('<f4'), got '" +
                                                   std::string(io::npy::descr(x->dtype)) + "'"});
  }
  if (format->name == "bin" && *byte_format == ByteFormat::ggml) {
    auto bytes = (*engine)->quantize_bytes_as(*scheme, x->shape, x->f32, options, ByteFormat::ggml);
    if (!bytes) return report(bytes.status());
    progress.phase("writing " + printable(args.output));
    const Status st = io::write_bytes(args.output, *bytes);
    if (!st.ok()) return report(st);
    return kExitOk;
  }
  // Both outputs start from the serialized bytes: Q.json is written from them, so that no
  // tensor of i32 codes exists beside the input.
  auto bytes = (*engine)->quantize_bytes(*scheme, x->shape, x->f32, options);
  if (!bytes) return report(bytes.status());
  progress.phase("writing " + printable(args.output));
  if (format->name == "bin") {
    const Status st = io::write_bytes(args.output, *bytes);
    if (!st.ok()) return report(st);
    return kExitOk;
  }
  std::vector<float>().swap(x->f32);  // the input is not needed for the text
  // The text goes to the file as it is formatted, never whole in memory.
  auto out = io::OutputFile::open(args.output);
  if (!out) return report(out.status());
  const Status st = io::qjson::write(*scheme, rules_of(options), x->shape, *bytes,
                                     [&](std::span<const std::uint8_t> piece) { return out->write(piece); });
  // Only the file, or a scale JSON cannot write (an infinite one, which some recipes store), can
  // fail here: bytes the engine made that do not check are a bug.
  if (!st.ok()) {
    const bool expected = st.code() == ErrorCode::io_error || st.code() == ErrorCode::invalid_argument;
    return report(expected ? st : Status(ErrorCode::internal, st.message()));
  }
  const Status committed = out->commit();
  if (!committed.ok()) return report(committed);
  return kExitOk;
}

}  // namespace

void add_quantize(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* app = root.add_subcommand("quantize", "Quantize an f32 .npy tensor; write Q.json (*.json) or raw bytes (*.bin)");
  app->add_option("--scheme", args->scheme,
                  "scheme text or preset, e.g. q8s:block[32]=f16 or nvfp4 (default with --recipe: the recipe's)");
  app->add_option("--profile", args->profile, "arithmetic profile: " + profile_list() + " (default exact)");
  add_recipe_options(*app, args->recipe);
  app->add_option("--calibration", args->calibration, "minmax (default) or absmean; ignored with --scales");
  app->add_option("--engine", args->engine, "engine: fast (default, Highway SIMD) or reference");
  add_threads_option(*app, args->threads);
  app->add_option("--input", args->input, "input tensor: little-endian float32 .npy, C order")->required();
  app->add_option("--output", args->output, "output: *.json for Q.json, *.bin for the serialized bytes, - for standard output")
      ->required();
  app->add_option("--format", args->format, format_option_help(kQuantizeFormats));
  app->add_option("--scales", args->scales,
                  "given scales instead of calibration: a,b,... or a float32 .npy, one per block (one for per-tensor)");
  app->add_option("--global", args->global, "the given global scale of a two-level scheme (with --scales)");
  app->add_option("--zero-points", args->zero_points,
                  "given zero points of an affine scheme (with --scales): a,b,... or a float32 .npy of integers, "
                  "one per scale; none means 0");
  app->add_option("--global-amax", args->global_amax,
                  "a two-level scheme's max |x| known ahead (static calibration, delayed scaling): its global "
                  "scale follows from it, the block scales from the data (one pass; blocks above it saturate)");
  out.push_back({app, [args] { return run_quantize(*args); }});
}

}  // namespace qscheme::cli
