// `qscheme dequantize`: Q.json (or raw serialized bytes, *.bin) back to an f32 .npy tensor.
// Scheme, shape and profile come from Q.json; a .bin file needs --scheme and --shape (profile:
// exact unless given). With Q.json, --profile overrides the file's profile, and --scheme /
// --shape, when given, must agree with the file. Nothing is written on error.
#include <memory>
#include <optional>
#include <string>

#include "reference/reference.hpp"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"
#include "tools/command.hpp"
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
  std::optional<std::string> scheme;
  std::optional<std::string> shape;
  std::optional<std::string> profile;
  RecipeArgs recipe;
  std::string engine{oracle::kDefaultEngine};
  std::optional<unsigned> threads;
};

// The options, parsed, and the input file's bytes: read once, for whichever path takes them.
struct Inputs {
  std::optional<Scheme> scheme;
  std::optional<std::vector<std::uint64_t>> shape;
  std::optional<Profile> profile;
  const Recipe* recipe = nullptr;
  ByteFormat format = ByteFormat::burn;
  std::vector<std::uint8_t> bytes;
};

Result<Inputs> read_inputs(const DequantizeArgs& args) {
  Inputs in;
  auto recipe = chosen_recipe(args.recipe);
  if (!recipe) return recipe.status();
  in.recipe = *recipe;
  auto format = chosen_format(args.recipe, in.recipe);
  if (!format) return format.status();
  in.format = *format;
  if (in.recipe && args.profile) {
    return Status(ErrorCode::invalid_argument, "--profile and --recipe both choose the rules; give one");
  }
  if (args.scheme || (in.recipe && args.input.ends_with(".bin"))) {
    auto s = chosen_scheme(args.scheme, in.recipe);
    if (!s) return s.status();
    in.scheme = *s;
  }
  if (args.shape) {
    auto s = parse_shape(*args.shape);
    if (!s) return s.status();
    in.shape = std::move(*s);
  }
  if (args.profile) {
    in.profile = profile_from_string(*args.profile);
    if (!in.profile) {
      return Status(ErrorCode::invalid_argument, "--profile: '" + *args.profile + "' is not exact, burn or onnx");
    }
  }
  auto bytes = io::read_bytes(args.input);
  if (!bytes) return bytes.status();
  in.bytes = std::move(*bytes);
  return in;
}

// The rules the options choose: the recipe's, the profile's, or none given.
std::optional<Rules> chosen_rules(const Inputs& in) {
  if (in.recipe) return in.recipe->rules;
  if (in.profile) return profile_rules(*in.profile);
  return std::nullopt;
}

Result<QuantizedTensor> load(const DequantizeArgs& args, const Inputs& in, const oracle::Engine& engine) {
  const auto& [scheme, shape, profile, recipe, format, bytes] = in;
  if (args.input.ends_with(".bin")) {
    if (!scheme || !shape) {
      return Status(ErrorCode::invalid_argument,
                    "a .bin input holds only the serialized bytes; give --scheme (or --recipe) and --shape");
    }
    auto q = engine.decode_as(*scheme, *shape, bytes, chosen_rules(in).value_or(profile_rules(Profile::exact)), format);
    if (!q) return Status(q.status().code(), args.input + ": " + q.status().message(), q.status().index());
    return q;
  }
  auto q = io::qjson::read(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  if (!q) return Status(q.status().code(), args.input + ": " + q.status().message(), q.status().index());
  if (scheme && !(*scheme == q->scheme)) {
    return Status(ErrorCode::invalid_argument, "--scheme '" + format_scheme(*scheme) + "' disagrees with " + args.input +
                                                   ", which holds '" + format_scheme(q->scheme) + "'");
  }
  if (shape && *shape != q->shape) {
    return Status(ErrorCode::invalid_argument, "--shape disagrees with the shape " + args.input + " holds");
  }
  if (recipe && !recipe_accepts(*recipe, q->scheme)) {
    return Status(ErrorCode::invalid_argument, "--recipe " + std::string(recipe->name) + " reproduces " +
                                                   std::string(recipe->schemes) + ", not " + args.input + "'s '" +
                                                   format_scheme(q->scheme) + "'");
  }
  if (const std::optional<Rules> r = chosen_rules(in)) {  // the options override the file's rules
    q->rules.reset();
    q->profile = Profile::exact;
    if (const std::optional<Profile> p = profile_of(*r)) q->profile = *p;
    else q->rules = *r;
  }
  return q;
}

// Writes y as the output .npy (nothing on error).
int write_output(const DequantizeArgs& args, std::span<const std::uint64_t> shape, std::span<const float> y) {
  const Status st = io::npy::write_f32_file(args.output, shape, y);
  if (!st.ok()) {
    // Only writing can fail for a reason outside qscheme: a header that disagrees with the values
    // is a bug here.
    return report(st.code() == ErrorCode::io_error ? st : Status(ErrorCode::internal, st.message()));
  }
  return kExitOk;
}

// A .bin input straight to f32 (the engine's dequantize_bytes: no tensor of i32 codes between).
// None when anything is amiss: load and dequantize below then report it, with their messages.
std::optional<int> dequantize_bin(const DequantizeArgs& args, const Inputs& in, const oracle::Engine& engine) {
  if (!in.scheme || !in.shape || in.format != ByteFormat::burn) return std::nullopt;
  if (in.recipe && !profile_of(in.recipe->rules)) return std::nullopt;
  auto l = make_layout(*in.scheme, *in.shape);
  // A length the layout does not have is the general path's size-mismatch, before any output is
  // allocated for a shape the bytes cannot hold.
  if (!l || in.bytes.size() != l->total_bytes) return std::nullopt;
  std::vector<float> y;
  io::resize_on_huge_pages(y, static_cast<std::size_t>(l->elements));
  const Profile p = in.recipe ? *profile_of(in.recipe->rules) : in.profile.value_or(Profile::exact);
  if (!engine.dequantize_bytes(*in.scheme, *in.shape, in.bytes, p, y).ok()) {
    return std::nullopt;
  }
  return write_output(args, *in.shape, y);
}

int run_dequantize(const DequantizeArgs& args) {
  auto engine = oracle::find_engine(args.engine);
  if (!engine) return report(engine.status());
  apply_threads(args.threads);
  auto in = read_inputs(args);
  if (!in) return report(in.status());
  if (args.input.ends_with(".bin")) {
    if (const auto done = dequantize_bin(args, *in, **engine)) return *done;
  }
  auto q = load(args, *in, **engine);
  if (!q) return report(q.status());
  auto y = (*engine)->dequantize(*q);
  if (!y) return report(y.status());
  return write_output(args, q->shape, *y);
}

}  // namespace

void add_dequantize(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<DequantizeArgs>();
  CLI::App* app = root.add_subcommand("dequantize", "Dequantize Q.json (or *.bin bytes) to an f32 .npy tensor");
  app->add_option("--input", args->input, "Q.json, or *.bin serialized bytes (then --scheme and --shape)")->required();
  app->add_option("--output", args->output, "output .npy (float32, C order)")->required();
  app->add_option("--scheme", args->scheme,
                  "scheme of a .bin input (with Q.json: must match the file; with --recipe: the recipe's by default)");
  app->add_option("--shape", args->shape, "shape of a .bin input, e.g. 4,8 (with Q.json: must match the file)");
  app->add_option("--profile", args->profile, "exact, burn or onnx (default: the file's, exact for .bin)");
  add_recipe_options(*app, args->recipe);
  app->add_option("--engine", args->engine, "engine: fast (default, Highway SIMD) or reference");
  add_threads_option(*app, args->threads);
  out.push_back({app, [args] { return run_dequantize(*args); }});
}

}  // namespace qscheme::cli
