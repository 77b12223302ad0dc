// `qscheme dequantize`: Q.json (or raw serialized bytes, *.bin) back to an f32 .npy tensor
// (tools/file_formats.hpp: *.npy, or `-` for standard output), or with --out-dtype to f16
// ('<f2') or bf16 (its patterns as '<u2': NumPy has no bfloat16).
// Scheme, shape and rules (profile, or a point of the rule space) come from Q.json; a .bin file
// needs --scheme and --shape (or --recipe, whose scheme is the default), its bytes in Burn's
// layout or ggml's (--byte-format, default the recipe's). With Q.json, --profile or --recipe
// overrides the file's rules, and --scheme / --shape, when given, must agree with the file.
// Nothing is written on error.
#include <memory>
#include <optional>
#include <string>

#include "scheme/errors.hpp"
#include "scheme/layout.hpp"
#include "scheme/printable.hpp"
#include "scheme/text.hpp"
#include "tools/command.hpp"
#include "tools/distinct_files.hpp"
#include "tools/file_formats.hpp"
#include "oracle/engine.hpp"
#include "tools/engine_options.hpp"
#include "io/file_io.hpp"
#include "io/huge_pages.hpp"
#include "io/npy.hpp"
#include "io/qjson.hpp"
#include "tools/recipe_options.hpp"
#include "tools/shape_arg.hpp"

namespace qscheme::cli {
namespace {

struct DequantizeArgs {
  std::string input;
  std::string output;
  std::optional<std::string> format;
  std::optional<std::string> scheme;
  std::optional<std::string> shape;
  std::optional<std::string> profile;
  RecipeArgs recipe;
  std::string engine{oracle::kDefaultEngine};
  std::optional<std::string> threads;
  std::string out_dtype{"f32"};
};

// The options, parsed, and the serialized tensor: a .bin file's bytes with --scheme and --shape,
// or what Q.json holds (checked against the options).
struct Inputs {
  std::optional<Scheme> scheme;
  std::optional<std::vector<std::uint64_t>> shape;
  std::optional<Rules> rules;  // --recipe's, --profile's, else the file's; exact's without any
  ByteFormat format = ByteFormat::burn;
  std::vector<std::uint8_t> bytes;
};

Status with_path(const std::string& path, const Status& st) {
  return Status(st.code(), printable(path) + ": " + st.message(), st.index());
}

Result<Inputs> read_inputs(const DequantizeArgs& args) {
  Inputs in;
  auto recipe = chosen_recipe(args.recipe);
  if (!recipe) return recipe.status();
  auto format = chosen_format(args.recipe, *recipe);
  if (!format) return format.status();
  in.format = *format;
  if (*recipe && args.profile) {
    return Status(ErrorCode::invalid_argument, "--profile and --recipe both choose the rules; give one (the "
                                               "profiles are recipes too: --recipe exact, burn or onnx)");
  }
  const bool bin = has_extension(args.input, ".bin");
  if (args.scheme || (*recipe && bin)) {
    auto s = chosen_scheme(args.scheme, *recipe);
    if (!s) return s.status();
    in.scheme = *s;
  }
  if (*recipe) in.rules = (*recipe)->rules;
  if (args.shape) {
    auto s = parse_shape(*args.shape);
    if (!s) return s.status();
    in.shape = std::move(*s);
  }
  if (args.profile) {
    const std::optional<Profile> p = profile_from_string(*args.profile);
    if (!p) {
      return Status(ErrorCode::invalid_argument, "--profile: " + quote(*args.profile) + " is not " + profile_list());
    }
    in.rules = profile_rules(*p);
  }
  if (bin) {
    auto bytes = io::read_bytes(args.input);
    if (!bytes) return bytes.status();
    if (!in.scheme || !in.shape) {
      return Status(ErrorCode::invalid_argument,
                    "a .bin input holds only the serialized bytes; give --scheme (or --recipe) and --shape");
    }
    in.bytes = std::move(*bytes);
    return in;
  }
  if (args.recipe.byte_format) {
    return Status(ErrorCode::invalid_argument, "--byte-format is the layout of a .bin input; Q.json holds Burn's");
  }
  in.format = ByteFormat::burn;
  auto doc = io::qjson::read_file(args.input);  // its errors name the file
  if (!doc) return doc.status();
  if (in.scheme && !(*in.scheme == doc->scheme)) {
    return Status(ErrorCode::invalid_argument, "--scheme '" + format_scheme(*in.scheme) + "' disagrees with " +
                                                   printable(args.input) + ", which holds '" + format_scheme(doc->scheme) + "'");
  }
  if (in.shape && *in.shape != doc->shape) {
    return Status(ErrorCode::invalid_argument, "--shape disagrees with the shape " + printable(args.input) + " holds");
  }
  if (*recipe && !recipe_accepts(**recipe, doc->scheme)) {
    return Status(ErrorCode::invalid_argument, "--recipe " + std::string((*recipe)->name) + " reproduces " +
                                                   std::string((*recipe)->schemes) + ", not " + printable(args.input) +
                                                   "'s '" + format_scheme(doc->scheme) + "'");
  }
  in.scheme = doc->scheme;
  in.shape = std::move(doc->shape);
  if (!in.rules) in.rules = doc->rules ? *doc->rules : profile_rules(doc->profile);
  in.bytes = std::move(doc->bytes);
  return in;
}

int run_dequantize(const DequantizeArgs& args) {
  const auto format = output_format("dequantize", kDequantizeFormats, args.output, args.format);
  if (!format) return report(format.status());
  const Status distinct = output_differs_from_inputs({"--output", &args.output}, {{"--input", &args.input}});
  if (!distinct.ok()) return report(distinct);
  auto engine = oracle::find_engine(args.engine);
  if (!engine) return report(engine.status());
  const std::optional<OutputDtype> out_dtype = output_dtype_from_string(args.out_dtype);
  if (!out_dtype) {
    return report(Status(ErrorCode::invalid_argument, "--out-dtype: " + quote(args.out_dtype) + " is not f32, f16 or bf16"));
  }
  if (Status st = apply_threads(args.threads); !st.ok()) return report(st);
  auto in = read_inputs(args);
  if (!in) return report(in.status());
  const Rules rules = in->rules.value_or(profile_rules(Profile::exact));
  const std::optional<Profile> profile = profile_of(rules);
  if (*out_dtype != OutputDtype::f32) {
    // f16 / bf16: through the logical tensor to the engine's dequantize_16.
    in->rules = rules;
    auto q = (*engine)->decode_as(*in->scheme, *in->shape, in->bytes, *in->rules, in->format);
    if (!q) return report(with_path(args.input, q.status()));
    auto bits = (*engine)->dequantize_16(*q, *out_dtype);
    if (!bits) return report(with_path(args.input, bits.status()));
    const Status written =
        io::npy::write_16_file(args.output, *out_dtype == OutputDtype::f16 ? "<f2" : "<u2", *in->shape, *bits);
    if (!written.ok()) {
      return report(written.code() == ErrorCode::io_error ? written : Status(ErrorCode::internal, written.message()));
    }
    return kExitOk;
  }
  std::vector<float> y;
  if (profile && in->format == ByteFormat::burn) {
    // The same path for both inputs: serialized bytes straight to f32 (the engine's
    // dequantize_bytes: no tensor of i32 codes between).
    auto l = layout_for_bytes(*in->scheme, *in->shape, in->bytes.size());
    if (!l) return report(with_path(args.input, l.status()));
    io::resize_on_huge_pages(y, static_cast<std::size_t>(l->elements));
    const Status st = (*engine)->dequantize_bytes(*in->scheme, *in->shape, in->bytes, *profile, y);
    if (!st.ok()) return report(with_path(args.input, st));
  } else {
    // Under rules other than a profile's, or in ggml's blocks: the engine's dequantize_bytes_as
    // (an engine that does not run the point or the format says so). A shape without a layout
    // gets no room: the engine reports its error.
    const auto l = make_layout(*in->scheme, *in->shape);
    io::resize_on_huge_pages(y, l ? static_cast<std::size_t>(l->elements) : 0);
    const Status st = (*engine)->dequantize_bytes_as(*in->scheme, *in->shape, in->bytes, rules, in->format, y);
    if (!st.ok()) return report(with_path(args.input, st));
  }
  std::vector<std::uint8_t>().swap(in->bytes);
  const Status written = io::npy::write_f32_file(args.output, *in->shape, y);
  if (!written.ok()) {
    // Only writing can fail for a reason outside qscheme: a header that disagrees with the values
    // is a bug here.
    return report(written.code() == ErrorCode::io_error ? written : Status(ErrorCode::internal, written.message()));
  }
  return kExitOk;
}

}  // namespace

void add_dequantize(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<DequantizeArgs>();
  CLI::App* app = root.add_subcommand("dequantize", "Dequantize Q.json (or *.bin bytes) to an f32 .npy tensor");
  app->add_option("--input", args->input, "Q.json, or *.bin serialized bytes (then --scheme and --shape)")->required();
  app->add_option("--output", args->output, "output .npy (float32, C order), or - for standard output")->required();
  app->add_option("--format", args->format, format_option_help(kDequantizeFormats));
  app->add_option("--scheme", args->scheme,
                  "scheme of a .bin input (with Q.json: must match the file; with --recipe: the recipe's by default)");
  app->add_option("--shape", args->shape, "shape of a .bin input, e.g. 4,8 (with Q.json: must match the file)");
  app->add_option("--profile", args->profile, profile_list() + " (default: the file's, exact for .bin)");
  add_recipe_options(*app, args->recipe);
  app->add_option("--engine", args->engine, "engine: fast (default, Highway SIMD) or reference");
  add_threads_option(*app, args->threads);
  app->add_option("--out-dtype", args->out_dtype,
                  "f32 (default), f16 ('<f2' .npy) or bf16 (no .npy dtype: its bit patterns as '<u2'): the f32 "
                  "value rounded to it, as ONNX DequantizeLinear with a float16 scale (--engine reference)");
  out.push_back({app, [args] { return run_dequantize(*args); }});
}

}  // namespace qscheme::cli
