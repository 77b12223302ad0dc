#include "tools/engine_options.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

#include "fast/fast.hpp"
#include "scheme/printable.hpp"

namespace qscheme::cli {

void add_threads_option(CLI::App& app, std::optional<std::string>& threads) {
  app.add_option("--threads", threads,
                 "threads of the fast engine, 1 to " + std::to_string(fast::kMaxThreads) +
                     " (default: all cores; 0 = all cores)");
}

Result<unsigned> parse_threads(std::string_view text) {
  unsigned n = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || n > fast::kMaxThreads) {
    return Status(ErrorCode::invalid_argument, "--threads: " + quote(text) + " is not a thread count; use 1 to " +
                                                   std::to_string(fast::kMaxThreads) + ", or 0 for all cores");
  }
  return n;
}

Status apply_threads(const std::optional<std::string>& threads) {
  unsigned n = 0;
  if (threads) {
    const auto parsed = parse_threads(*threads);
    if (!parsed) return parsed.status();
    n = *parsed;
  }
  return fast::set_threads(n);
}

Status apply_target(const std::string& name) {
  if (fast::set_target(name)) return Status();
  std::string list;
  for (const auto& t : fast::available_targets()) list += (list.empty() ? "" : ", ") + t;
  return Status(ErrorCode::invalid_argument,
                "--target: " + quote(name) + " is not a Highway target this build and CPU support; choose one of " + list);
}

}  // namespace qscheme::cli
