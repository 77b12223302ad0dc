// Progress on standard error while it is a terminal: one line, redrawn at most ten times a
// second, cleared when the work ends. Nothing at all when standard error is a file or a pipe, so
// logs and scripts see the same output as before.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "oracle/progress.hpp"

namespace qscheme::cli {

class TerminalProgress {
 public:
  // `what` names the work, `unit` what it counts: "verify", "tuples" draws
  // "verify: 1200 of 19656 tuples (6%)".
  explicit TerminalProgress(std::string what, std::string unit = "");
  ~TerminalProgress();
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  // A callback for the oracle (empty when standard error is no terminal); valid while this lives.
  oracle::Progress callback();
  void update(std::uint64_t done, std::uint64_t total);
  // A phase of work with no count (reading, quantizing, writing).
  void phase(const std::string& text);
  // The work is over: the line is cleared (before results are printed on the same terminal).
  void done();

 private:
  void draw(const std::string& line);

  std::string what_;
  std::string unit_;
  bool active_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// Clears a progress line left on the terminal, so that an error message starts on a clean
// line (report() calls it).
void clear_progress_line();

}  // namespace qscheme::cli
