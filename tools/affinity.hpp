// `qscheme bench --cpus LIST`: pin the process (and the engine's worker threads, which inherit
// it) to a set of CPUs. On the two-vCPU machine this project is measured on, the vCPUs do not run
// alike (docs/PERFORMANCE.md), so a figure is reproducible only when it says where it ran.
#pragma once

#include <string>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::cli {

// "0", "0,2", "1-3", "0,2-3": the CPUs listed, ascending and without repeats; invalid-argument
// for anything else (empty items, reversed ranges, numbers past the largest CPU id).
Result<std::vector<int>> parse_cpu_list(const std::string& text);

// Restricts the calling process to `cpus`; invalid-argument naming the CPUs it may use when one
// of them is not among those.
Status pin_to_cpus(const std::vector<int>& cpus);

// The CPUs the calling process may run on, as a list ("0-1" for CPUs 0 and 1).
std::string allowed_cpus();

}  // namespace qscheme::cli
