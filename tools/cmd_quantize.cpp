// `qscheme quantize`: an f32 .npy tensor to a quantized tensor, written as Q.json (.json) or as
// the raw serialized bytes (.bin, the engine's quantize_bytes); tools/file_formats.hpp decides
// which. Nothing is written on error.
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
#include "tools/command.hpp"
#include "tools/distinct_files.hpp"
#include "tools/file_formats.hpp"
#include "oracle/engine.hpp"
#include "tools/engine_options.hpp"
#include "tools/float_args.hpp"
#include "io/file_io.hpp"
#include "io/npy.hpp"
#include "io/qjson.hpp"

namespace qscheme::cli {
namespace {

struct QuantizeArgs {
  std::string scheme;
  std::string profile = "exact";
  std::string calibration = "minmax";
  std::string engine{oracle::kDefaultEngine};
  std::string input;
  std::string output;
  std::optional<std::string> format;
  std::optional<std::string> scales;
  std::optional<std::string> global;
  std::optional<std::string> threads;
};

int run_quantize(const QuantizeArgs& args) {
  const auto format = output_format("quantize", kQuantizeFormats, args.output, args.format);
  if (!format) return report(format.status());
  const bool scales_file = args.scales && has_extension(*args.scales, ".npy");
  const Status distinct = output_differs_from_inputs(
      {"--output", &args.output}, {{"--input", &args.input}, {"--scales", scales_file ? &*args.scales : nullptr}});
  if (!distinct.ok()) return report(distinct);
  auto scheme = parse_scheme(args.scheme);
  if (!scheme) return report(scheme.status());
  QuantizeOptions options;
  const auto profile = profile_from_string(args.profile);
  if (!profile) {
    return report({ErrorCode::invalid_argument, "--profile: " + quote(args.profile) + " is not " + profile_list()});
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

  auto x = io::npy::read_file(args.input);
  if (!x) return report(x.status());
  if (x->dtype != io::npy::Dtype::f32) {
    return report({ErrorCode::unsupported_npy, printable(args.input) + ": the input tensor must be float32 ('<f4'), got '" +
                                                   std::string(io::npy::descr(x->dtype)) + "'"});
  }
  // Both outputs start from the serialized bytes: Q.json is written from them, so that no
  // tensor of i32 codes exists beside the input.
  auto bytes = (*engine)->quantize_bytes(*scheme, x->shape, x->f32, options);
  if (!bytes) return report(bytes.status());
  if (format->name == "bin") {
    const Status st = io::write_bytes(args.output, *bytes);
    if (!st.ok()) return report(st);
    return kExitOk;
  }
  std::vector<float>().swap(x->f32);  // the input is not needed for the text
  // The text goes to the file as it is formatted, never whole in memory.
  auto out = io::OutputFile::open(args.output);
  if (!out) return report(out.status());
  const Status st = io::qjson::write(*scheme, options.profile, x->shape, *bytes,
                                     [&](std::span<const std::uint8_t> piece) { return out->write(piece); });
  // Only the file can fail here: bytes the engine made that do not check are a bug.
  if (!st.ok()) return report(st.code() == ErrorCode::io_error ? st : Status(ErrorCode::internal, st.message()));
  const Status committed = out->commit();
  if (!committed.ok()) return report(committed);
  return kExitOk;
}

}  // namespace

void add_quantize(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* app = root.add_subcommand("quantize", "Quantize an f32 .npy tensor; write Q.json (*.json) or raw bytes (*.bin)");
  app->add_option("--scheme", args->scheme, "scheme text or preset, e.g. q8s:block[32]=f16 or nvfp4")->required();
  app->add_option("--profile", args->profile, "arithmetic profile: " + profile_list() + " (default exact)");
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
  out.push_back({app, [args] { return run_quantize(*args); }});
}

}  // namespace qscheme::cli
