#include "tools/affinity.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "scheme/printable.hpp"

namespace qscheme::cli {
namespace {

constexpr int kMaxCpu = CPU_SETSIZE - 1;

Status bad_list(const std::string& text, const std::string& why) {
  return Status(ErrorCode::invalid_argument, "--cpus " + quote(text) + ": " + why +
                                                 "; give CPU numbers and ranges, e.g. 0 or 0,2-3 (allowed here: " +
                                                 allowed_cpus() + ")");
}

// One CPU number: decimal digits only, at most kMaxCpu.
bool parse_cpu(std::string_view s, int& out) {
  if (s.empty() || s.size() > 6) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= 0 && out <= kMaxCpu;
}

std::string format_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

Result<std::vector<int>> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view item =
        std::string_view(text).substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::size_t dash = item.find('-');
    int lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!parse_cpu(item, lo)) return bad_list(text, quote(item) + " is not a CPU number");
      hi = lo;
    } else if (!parse_cpu(item.substr(0, dash), lo) || !parse_cpu(item.substr(dash + 1), hi) || hi < lo) {
      return bad_list(text, quote(item) + " is not a range of CPU numbers (low-high)");
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

Status pin_to_cpus(const std::vector<int>& cpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return Status(ErrorCode::internal, std::string("sched_getaffinity failed: ") + std::strerror(errno));
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (!CPU_ISSET(c, &allowed)) {
      return Status(ErrorCode::invalid_argument, "--cpus: CPU " + std::to_string(c) +
                                                     " is not one this process may run on; choose among " +
                                                     allowed_cpus());
    }
    CPU_SET(c, &set);
  }
  if (cpus.empty()) return Status(ErrorCode::invalid_argument, "--cpus: no CPU given; choose among " + allowed_cpus());
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return Status(ErrorCode::invalid_argument, "--cpus " + format_list(cpus) + ": the system refused to pin the process (" +
                                                   std::strerror(errno) + "); choose among " + allowed_cpus());
  }
  return {};
}

std::string allowed_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return "unknown";
  std::vector<int> cpus;
  for (int c = 0; c <= kMaxCpu; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  return format_list(cpus);
}

}  // namespace qscheme::cli
