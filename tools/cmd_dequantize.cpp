// `qscheme dequantize`: Q.json (or raw serialized bytes, *.bin) back to an f32 .npy tensor
// (tools/file_formats.hpp: *.npy, or `-` for standard output).
// Scheme, shape and profile come from Q.json; a .bin file needs --scheme and --shape (profile:
// exact unless given). With Q.json, --profile overrides the file's profile, and --scheme /
// --shape, when given, must agree with the file. Nothing is written on error.
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
  std::string engine{oracle::kDefaultEngine};
  std::optional<std::string> threads;
};

// The options, parsed, and the serialized tensor: a .bin file's bytes with --scheme and --shape,
// or what Q.json holds (checked against the options).
struct Inputs {
  std::optional<Scheme> scheme;
  std::optional<std::vector<std::uint64_t>> shape;
  std::optional<Profile> profile;
  std::vector<std::uint8_t> bytes;
};

Status with_path(const std::string& path, const Status& st) {
  return Status(st.code(), printable(path) + ": " + st.message(), st.index());
}

Result<Inputs> read_inputs(const DequantizeArgs& args) {
  Inputs in;
  if (args.scheme) {
    auto s = parse_scheme(*args.scheme);
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
      return Status(ErrorCode::invalid_argument, "--profile: " + quote(*args.profile) + " is not " + profile_list());
    }
  }
  if (has_extension(args.input, ".bin")) {
    auto bytes = io::read_bytes(args.input);
    if (!bytes) return bytes.status();
    if (!in.scheme || !in.shape) {
      return Status(ErrorCode::invalid_argument,
                    "a .bin input holds only the serialized bytes; give --scheme and --shape");
    }
    in.bytes = std::move(*bytes);
    return in;
  }
  auto doc = io::qjson::read_file(args.input);  // its errors name the file
  if (!doc) return doc.status();
  if (in.scheme && !(*in.scheme == doc->scheme)) {
    return Status(ErrorCode::invalid_argument, "--scheme '" + format_scheme(*in.scheme) + "' disagrees with " +
                                                   printable(args.input) + ", which holds '" + format_scheme(doc->scheme) + "'");
  }
  if (in.shape && *in.shape != doc->shape) {
    return Status(ErrorCode::invalid_argument, "--shape disagrees with the shape " + printable(args.input) + " holds");
  }
  in.scheme = doc->scheme;
  in.shape = std::move(doc->shape);
  if (!in.profile) in.profile = doc->profile;
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
  if (Status st = apply_threads(args.threads); !st.ok()) return report(st);
  auto in = read_inputs(args);
  if (!in) return report(in.status());
  // The same path for both inputs: serialized bytes straight to f32 (the engine's
  // dequantize_bytes: no tensor of i32 codes between).
  auto l = layout_for_bytes(*in->scheme, *in->shape, in->bytes.size());
  if (!l) return report(with_path(args.input, l.status()));
  std::vector<float> y;
  io::resize_on_huge_pages(y, static_cast<std::size_t>(l->elements));
  const Status st =
      (*engine)->dequantize_bytes(*in->scheme, *in->shape, in->bytes, in->profile.value_or(Profile::exact), y);
  if (!st.ok()) return report(with_path(args.input, st));
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
  app->add_option("--scheme", args->scheme, "scheme of a .bin input (with Q.json: must match the file)");
  app->add_option("--shape", args->shape, "shape of a .bin input, e.g. 4,8 (with Q.json: must match the file)");
  app->add_option("--profile", args->profile, profile_list() + " (default: the file's, exact for .bin)");
  app->add_option("--engine", args->engine, "engine: fast (default, Highway SIMD) or reference");
  add_threads_option(*app, args->threads);
  out.push_back({app, [args] { return run_dequantize(*args); }});
}

}  // namespace qscheme::cli
