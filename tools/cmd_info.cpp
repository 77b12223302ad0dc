// `qscheme info`: the version, the Highway targets compiled into this build that this CPU
// supports, the target in use and the fast engine's threads. Honours QSCHEME_TARGET (read by
// the library at first use) and --target NAME (which overrides it). --json for a JSON object.
#include <fmt/core.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "fast/fast.hpp"
#include "tools/command.hpp"
#include "oracle/engine.hpp"
#include "tools/engine_options.hpp"

#ifndef QSCHEME_VERSION
#error "QSCHEME_VERSION must be defined by the build"
#endif

namespace qscheme::cli {
namespace {

struct InfoArgs {
  bool json = false;
  std::optional<std::string> target;
  std::optional<std::string> threads;
};

int run_info(const InfoArgs& args) {
  if (Status st = apply_threads(args.threads); !st.ok()) return report(st);
  if (args.target) {
    if (Status st = apply_target(*args.target); !st.ok()) return report(st);
  }
  const std::vector<std::string> targets = fast::available_targets();
  const std::string current = fast::current_target();
  const char* env = std::getenv("QSCHEME_TARGET");
  const unsigned threads = fast::threads();
  const unsigned cores = std::thread::hardware_concurrency();
  if (args.json) {
    nlohmann::json j;
    j["version"] = QSCHEME_VERSION;
    j["targets"] = targets;
    j["target"] = current;
    j["target_env"] = env ? nlohmann::json(env) : nlohmann::json(nullptr);
    j["threads"] = threads;
    j["hardware_concurrency"] = cores;
    j["engines"] = nlohmann::json::array();
    for (const oracle::Engine& e : oracle::engines()) j["engines"].push_back(std::string(e.name));
    j["default_engine"] = std::string(oracle::kDefaultEngine);
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  std::string list;
  for (const auto& t : targets) list += (list.empty() ? "" : " ") + t;
  fmt::print("qscheme        {}\n", QSCHEME_VERSION);
  fmt::print("targets        {}  (Highway targets compiled in and supported by this CPU, best first)\n", list);
  fmt::print("target         {}{}\n", current,
             args.target ? "  (--target)" : env ? fmt::format("  (QSCHEME_TARGET={})", env) : std::string("  (automatic)"));
  fmt::print("threads        {}{}\n", threads, args.threads && *parse_threads(*args.threads) != 0 ? "  (--threads)" : "  (all cores)");
  fmt::print("engines        fast (default), reference\n");
  return kExitOk;
}

}  // namespace

void add_info(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* app = root.add_subcommand("info", "Version, Highway targets (compiled and supported, in use), threads");
  app->add_flag("--json", args->json, "print a JSON object");
  app->add_option("--target", args->target, "force a Highway target (as listed), overriding QSCHEME_TARGET");
  add_threads_option(*app, args->threads);
  out.push_back({app, [args] { return run_info(*args); }});
}

}  // namespace qscheme::cli
