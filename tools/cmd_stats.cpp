// `qscheme stats`: error statistics of schemes on one's own tensor (oracle/stats.hpp): bits per
// element with the scales, max abs error, RMSE, SQNR, saturated elements and all-zero blocks,
// sorted by bits per element; --json for one JSON array.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "io/npy.hpp"
#include "oracle/stats.hpp"
#include "scheme/printable.hpp"
#include "tools/command.hpp"
#include "tools/engine_options.hpp"

namespace qscheme::cli {
namespace {

struct StatsArgs {
  std::string input;
  std::string schemes = "q8_0;q4_0;nvfp4;mxfp8;mxfp4";
  std::string profile = "exact";
  std::string calibration = "minmax";
  bool json = false;
  std::optional<std::string> threads;
};

int run_stats(const StatsArgs& args) {
  const auto profile = profile_from_string(args.profile);
  if (!profile) return report({ErrorCode::invalid_argument, "--profile: " + quote(args.profile) + " is not " + profile_list()});
  const auto calibration = calibration_from_string(args.calibration);
  if (!calibration) {
    return report({ErrorCode::invalid_argument, "--calibration: " + quote(args.calibration) + " is not minmax or absmean"});
  }
  QuantizeOptions options;
  options.profile = *profile;
  options.calibration = *calibration;
  if (Status st = apply_threads(args.threads); !st.ok()) return report(st);
  auto x = io::npy::read_file(args.input);
  if (!x) return report(x.status());
  if (x->dtype != io::npy::Dtype::f32) {
    return report({ErrorCode::unsupported_npy, printable(args.input) + ": the input tensor must be float32 ('<f4'), got '" +
                                                   std::string(io::npy::descr(x->dtype)) + "'"});
  }
  const std::vector<std::string> names = oracle::split_schemes(args.schemes);
  auto stats = oracle::scheme_stats(names, x->shape, x->f32, options);
  if (!stats) return report(stats.status());
  std::cout << (args.json ? oracle::stats_json(*stats) : oracle::stats_text(*stats));
  return kExitOk;
}

}  // namespace

void add_stats(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App* app = root.add_subcommand("stats", "Error statistics of schemes on your tensor, sorted by bits per element");
  app->add_option("--input", args->input, "the tensor: little-endian float32 .npy, C order")->required();
  app->add_option("--schemes", args->schemes, "schemes separated by ';' (default q8_0;q4_0;nvfp4;mxfp8;mxfp4)");
  app->add_option("--profile", args->profile, "arithmetic profile: " + profile_list() + " (default exact)");
  app->add_option("--calibration", args->calibration, "minmax (default) or absmean");
  app->add_flag("--json", args->json, "one JSON array of objects");
  add_threads_option(*app, args->threads);
  out.push_back({app, [args] { return run_stats(*args); }});
}

}  // namespace qscheme::cli
