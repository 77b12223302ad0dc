#include "tools/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace qscheme::cli {
namespace {

constexpr auto kRedraw = std::chrono::milliseconds(100);
// Whether a progress line is on the terminal now (one at a time: the command line's thread).
bool g_line_drawn = false;

}  // namespace

TerminalProgress::TerminalProgress(std::string what, std::string unit)
    : what_(std::move(what)), unit_(std::move(unit)), active_(isatty(STDERR_FILENO) == 1) {}

TerminalProgress::~TerminalProgress() { done(); }

void TerminalProgress::done() {
  if (drawn_) clear_progress_line();
  drawn_ = false;
}

void clear_progress_line() {
  if (!g_line_drawn) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  g_line_drawn = false;
}

oracle::Progress TerminalProgress::callback() {
  if (!active_) return {};
  return [this](std::uint64_t done, std::uint64_t total) { update(done, total); };
}

void TerminalProgress::update(std::uint64_t done, std::uint64_t total) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - last_ < kRedraw) return;
  last_ = now;
  const unsigned percent = total ? static_cast<unsigned>(done * 100 / total) : 100;
  draw(what_ + ": " + std::to_string(done) + " of " + std::to_string(total) + (unit_.empty() ? "" : " " + unit_) + " (" +
       std::to_string(percent) + "%)");
}

void TerminalProgress::phase(const std::string& text) {
  if (!active_) return;
  last_ = std::chrono::steady_clock::now();
  draw(what_ + ": " + text);
}

void TerminalProgress::draw(const std::string& line) {
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
  g_line_drawn = true;
}

}  // namespace qscheme::cli
