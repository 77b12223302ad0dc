// The fast engine's process-wide settings: worker threads, the kernels' target, kept scratch.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>

#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/support/big_buffer.hpp"
#include "fast/support/unit_scratch.hpp"

namespace qscheme::fast {
namespace {
std::atomic<unsigned> g_threads{1};
}  // namespace

Status set_threads(unsigned n) {
  if (n > kMaxThreads) {
    return Status(ErrorCode::invalid_argument,
                  "a thread count of " + std::to_string(n) + " is above the maximum of " + std::to_string(kMaxThreads) +
                      "; use 1 to " + std::to_string(kMaxThreads) + ", or 0 for one per hardware thread (at most " +
                      std::to_string(kMaxThreads) + ")");
  }
  if (n == 0) n = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  g_threads.store(n);
  return {};
}
unsigned threads() { return g_threads.load(); }

void release_scratch() noexcept {
  detail::release_kept();
  detail::release_unit_scratch();
}

std::string current_target() { return kernels::CurrentTarget(); }
std::vector<std::string> available_targets() { return kernels::AvailableTargets(); }
bool set_target(const std::string& name) { return kernels::ForceTarget(name); }
Status target_env_status() {
  const std::string bad = kernels::RejectedEnvTarget();
  if (bad.empty()) return {};
  std::string list;
  for (const auto& t : available_targets()) list += (list.empty() ? "" : ", ") + t;
  return Status(ErrorCode::invalid_argument, "QSCHEME_TARGET=" + bad +
                                                  " names no Highway target this build and CPU support, so it was not applied (the "
                                                 "kernels run on " + current_target() + "); set it to one of " +
                                                 list + ", or unset it");
}

}  // namespace qscheme::fast
