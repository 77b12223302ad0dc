#include "tools/engine_options.hpp"

#include <CLI/CLI.hpp>

#include "fast/fast.hpp"

namespace qscheme::cli {

void add_threads_option(CLI::App& app, std::optional<unsigned>& threads) {
  app.add_option("--threads", threads, "worker threads of the fast engine (default: all cores; 0 = all cores)");
}

void apply_threads(const std::optional<unsigned>& threads) { fast::set_threads(threads.value_or(0u)); }

Status apply_target(const std::string& name) {
  if (fast::set_target(name)) return Status();
  std::string list;
  for (const auto& t : fast::available_targets()) list += (list.empty() ? "" : ", ") + t;
  return Status(ErrorCode::invalid_argument,
                "--target: '" + name + "' is not a Highway target this build and CPU support; choose one of " + list);
}

}  // namespace qscheme::cli
