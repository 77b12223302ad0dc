// A process's first call, timed in a process of its own. Whatever the engine sets up once per
// process (Highway's choice of target, the kernel table, its code and tables paged in, scratch
// mappings) is paid by that call; timing it in the benchmark's own process would find all of it
// done by the rows before. So the benchmark runs itself again (/proc/self/exe, pinned as it is)
// with arguments that make it call first_call_child(), and reads what it prints.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/baseline.hpp"
#include "scheme/status.hpp"

namespace qscheme::bench {

struct FirstCall {
  double first_s = 0;  // the process's first call
  double later_s = 0;  // the best of the calls after it
  long first_faults = 0;  // minor page faults the first call took
  double warm_up_s = 0;  // fast::warm_up() before it (rows with warm_up; else 0)
};

// In the child: times the first call of k on `n` elements of the benchmark input in this
// process, then the best of `later` calls. The row's buffers are written before the first call,
// so that it pays for the library's set-up, not for the caller's pages; a row with warm_up first
// calls fast::warm_up(), untimed. Only rows whose set-up does not call the engine
// (quantize without given scales) qualify.
Result<FirstCall> time_first_call(const Kernel& k, std::size_t n, int later);
// The one line the child prints and the parent parses.
std::string format_first_call(const FirstCall& f);

// In the parent: runs this executable with `args` (after argv[0]) and `env` ("NAME=value"
// entries added to the environment), waits for it, and parses its line.
Result<FirstCall> first_call_in_child(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

}  // namespace qscheme::bench
