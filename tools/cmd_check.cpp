// `qscheme check`: is another implementation's output the reference's under a profile or a
// recipe, bit for bit? If not, how many elements and scales differ, in which blocks, and which
// recipe, or recipe with a rule or two changed, reproduces it (oracle/check.hpp). The expected
// output comes from the fast engine on every core (--threads N to choose), or the reference for
// a recipe the fast engine does not run. Exit 0 identical, 3 differs, 2 bad input, 1 internal error.
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "scheme/printable.hpp"
#include "scheme/text.hpp"
#include "oracle/candidate.hpp"
#include "oracle/check.hpp"
#include "tools/progress.hpp"
#include "tools/command.hpp"
#include "tools/engine_options.hpp"
#include "tools/float_args.hpp"
#include "tools/recipe_options.hpp"
#include "reference/reference.hpp"
#include "io/file_io.hpp"
#include "io/npy.hpp"
#include "io/qjson.hpp"

namespace qscheme::cli {
namespace {

inline constexpr int kExitDiffers = 3;

struct CheckArgs {
  std::optional<std::string> scheme;
  std::optional<std::string> profile;
  RecipeArgs recipe;
  std::string calibration = "minmax";
  std::string input;
  std::string candidate;
  std::string kind = "auto";
  std::optional<std::string> candidate_scales;
  std::optional<std::string> candidate_global;
  std::optional<std::string> scales;
  std::optional<std::string> global;
  std::optional<std::string> global_amax;
  bool json = false;
  std::size_t max_shown = oracle::CheckRequest{}.max_shown.value();
  bool all = false;
  std::optional<std::string> threads;
};

// The candidate file, read as the kind the flags and its extension say.
Result<oracle::Candidate> read_candidate(const CheckArgs& a, const Scheme& scheme, const std::vector<std::uint64_t>& shape,
                                         const Rules& rules, ByteFormat byte_format) {
  oracle::Candidate c;
  std::string kind = a.kind;
  if (kind == "auto") {
    if (a.candidate.ends_with(".bin")) kind = "bytes";
    else if (a.candidate.ends_with(".npy")) kind = "codes";
    else kind = "qjson";
  }
  if (kind == "bytes") {
    auto b = io::read_bytes(a.candidate);
    if (!b) return b.status();
    auto from_bytes = oracle::candidate_from_bytes(scheme, shape, std::move(*b), rules, byte_format);
    if (!from_bytes) return Status(from_bytes.status().code(), printable(a.candidate) + ": " + from_bytes.status().message());
    return from_bytes;
  }
  if (kind == "qjson") {
    // Codes and scales in their serialized form, a byte or less a code; the file's shape too.
    auto doc = io::qjson::read_file(a.candidate);
    if (!doc) return doc.status();
    if (!(doc->scheme == scheme)) {
      return Status(ErrorCode::invalid_argument, printable(a.candidate) + ": the candidate's scheme '" + format_scheme(doc->scheme) +
                                                     "' differs from --scheme '" + format_scheme(scheme) + "'");
    }
    c.kind = oracle::CandidateKind::quantized;
    c.encoded = true;
    c.bytes = std::move(doc->bytes);
    c.shape = std::move(doc->shape);
    return c;
  }
  auto arr = io::npy::read_file(a.candidate);
  if (!arr) return arr.status();
  c.shape = arr->shape;
  if (kind == "dequantized") {
    if (arr->dtype != io::npy::Dtype::f32) {
      return Status(ErrorCode::unsupported_npy, a.candidate + ": dequantized values must be float32 ('<f4')");
    }
    c.kind = oracle::CandidateKind::dequantized;
    c.values = std::move(arr->f32);
    return c;
  }
  if (kind != "codes") {
    return Status(ErrorCode::invalid_argument,
                  "--candidate-kind: '" + a.kind + "' is not auto, qjson, bytes, codes or dequantized");
  }
  if (arr->dtype == io::npy::Dtype::f32) {
    return Status(ErrorCode::unsupported_npy,
                  a.candidate + ": codes must be an integer array; use --candidate-kind dequantized for values");
  }
  c.kind = oracle::CandidateKind::quantized;
  c.codes.reserve(arr->ints.size());
  for (std::int64_t v : arr->ints) c.codes.push_back(static_cast<std::int32_t>(v));
  std::vector<std::int64_t>().swap(arr->ints);
  if (a.candidate_scales) {
    auto s = parse_f32_list(*a.candidate_scales, "--candidate-scales");
    if (!s) return s.status();
    std::vector<std::uint32_t> bits;
    for (float v : *s) {
      auto b = oracle::candidate_scale_bits(scheme.scale_dtype(), v);
      if (!b) return Status(ErrorCode::corrupt_bytes, "--candidate-scales: " + b.status().message());
      bits.push_back(*b);
    }
    c.scale_bits = std::move(bits);
  }
  if (a.candidate_global) {
    auto g = parse_f32(*a.candidate_global, "--candidate-global");
    if (!g) return g.status();
    c.global_bits = std::bit_cast<std::uint32_t>(*g);
  }
  return c;
}

int run_check(const CheckArgs& a) {
  auto recipe = chosen_recipe(a.recipe);
  if (!recipe) return report(recipe.status());
  if (*recipe && a.profile) {
    return report({ErrorCode::invalid_argument, "--profile and --recipe both choose the rules; give one (the "
                                                "profiles are recipes too: --recipe exact, burn or onnx)"});
  }
  auto scheme = chosen_scheme(a.scheme, *recipe);
  if (!scheme) return report(scheme.status());
  auto byte_format = chosen_format(a.recipe, *recipe);
  if (!byte_format) return report(byte_format.status());
  oracle::CheckRequest rq;
  rq.scheme = *scheme;
  const auto profile = profile_from_string(a.profile.value_or("exact"));
  if (!profile) return report({ErrorCode::invalid_argument, "--profile: " + quote(*a.profile) + " is not " + profile_list()});
  rq.options.profile = *profile;
  if (a.all) {
    rq.max_shown.reset();
  } else {
    rq.max_shown = a.max_shown;
  }
  const auto calibration = calibration_from_string(a.calibration);
  if (!calibration) return report({ErrorCode::invalid_argument, "--calibration: '" + a.calibration + "' is not minmax or absmean"});
  rq.options.calibration = *calibration;
  if (a.global && !a.scales) return report({ErrorCode::invalid_argument, "--global is only meaningful with --scales"});
  if (a.scales) {
    GivenScales given;
    auto block = parse_f32_list(*a.scales, "--scales");
    if (!block) return report(block.status());
    given.block = std::move(*block);
    if (a.global) {
      auto g = parse_f32(*a.global, "--global");
      if (!g) return report(g.status());
      given.global = *g;
    }
    rq.options.scales = std::move(given);
  }
  if (a.global_amax) {
    auto g = parse_f32(*a.global_amax, "--global-amax");
    if (!g) return report(g.status());
    rq.options.global_amax = *g;
  }
  if (*recipe) {
    rq.options = recipe_options(**recipe, std::move(rq.options));
    rq.recipe = (*recipe)->name;
  }
  auto x = io::npy::read_file(a.input);
  if (!x) return report(x.status());
  if (x->dtype != io::npy::Dtype::f32) {
    return report({ErrorCode::unsupported_npy, a.input + ": the input tensor must be float32 ('<f4')"});
  }
  rq.shape = x->shape;
  rq.x = std::move(x->f32);
  if (Status st = apply_threads(a.threads); !st.ok()) return report(st);
  auto c = read_candidate(a, *scheme, rq.shape, rules_of(rq.options), *byte_format);
  if (!c) return report(c.status());
  TerminalProgress progress("check: searching the rule space", "element quantizations");
  rq.progress = progress.callback();
  auto r = oracle::check(rq, *c);
  progress.done();
  if (!r) return report(r.status());
  std::cout << (a.json ? oracle::to_json(*r) : oracle::to_text(*r));
  return r->identical ? kExitOk : kExitDiffers;
}

}  // namespace

void add_check(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* app = root.add_subcommand(
      "check", "Check another implementation's result against the reference; diagnose any difference");
  app->add_option("--scheme", args->scheme, "scheme text or preset (default with --recipe: the recipe's)");
  app->add_option("--profile", args->profile, "arithmetic profile the candidate claims: " + profile_list() + " (default exact)");
  add_recipe_options(*app, args->recipe);
  app->add_option("--calibration", args->calibration, "minmax (default) or absmean; ignored with --scales");
  app->add_option("--input", args->input, "the f32 .npy input the candidate was computed from")->required();
  app->add_option("--candidate", args->candidate,
                  "the candidate: Q.json, *.bin (bytes: Burn's layout, or ggml's blocks under --byte-format ggml or a ggml recipe) or *.npy (codes, or values)")->required();
  app->add_option("--candidate-kind", args->kind, "auto (default: by extension), qjson, bytes, codes, dequantized");
  app->add_option("--candidate-scales", args->candidate_scales, "the candidate's stored scales (a,b,... or f32 .npy)");
  app->add_option("--candidate-global", args->candidate_global, "the candidate's global scale (two-level)");
  app->add_option("--scales", args->scales, "given scales (as for quantize)");
  app->add_option("--global", args->global, "given global scale of a two-level scheme");
  app->add_option("--global-amax", args->global_amax,
                  "the max |x| the candidate's global came from, when it was known ahead (as for quantize)");
  app->add_flag("--json", args->json, "print the report as JSON");
  app->add_option("--max-shown", args->max_shown, "differing elements and blocks listed (default 8)");
  app->add_flag("--all", args->all, "list every differing element and block");
  add_threads_option(*app, args->threads);
  out.push_back({app, [args] { return run_check(*args); }});
}

}  // namespace qscheme::cli
