// Shared helpers for the fuzz targets: always-on assertions that print what failed, and a
// reader that takes parameters from the end of the input so mutating them does not shift the
// payload (zstd's fuzz_data_producer idea).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

// Fails the run in every build type (NDEBUG included) with file, line, condition and message.
#define FUZZ_ASSERT_MSG(cond, msg)                                                            \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "%s:%d: FUZZ_ASSERT(%s) failed: %s\n", __FILE__, __LINE__, #cond, \
                   std::string(msg).c_str());                                                 \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
#define FUZZ_ASSERT(cond) FUZZ_ASSERT_MSG(cond, "")

namespace qscheme::fuzz {

// QSCHEME_FUZZ_TRACE=1 in the environment makes the targets print one line per input saying
// which path it took (to check that a seed corpus reaches the success paths).
inline bool trace_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("QSCHEME_FUZZ_TRACE");
    return v != nullptr && v[0] != '\0' && v[0] != '0';
  }();
  return on;
}
#define FUZZ_TRACE(...)                                                 \
  do {                                                                  \
    if (::qscheme::fuzz::trace_enabled()) std::fprintf(stderr, __VA_ARGS__); \
  } while (0)

// Splits an input into a payload (from the front) and parameters (from the back).
class InputReader {
 public:
  InputReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  // Takes one parameter byte from the end; 0 once the input is exhausted.
  std::uint8_t param_byte() {
    if (size_ == 0) return 0;
    return data_[--size_];
  }
  // A parameter in [0, n) for n > 0.
  std::size_t param_below(std::size_t n) { return param_byte() % n; }

  // Takes up to `n` payload bytes from the front.
  std::span<const std::uint8_t> payload(std::size_t n) {
    const std::size_t k = n < size_ ? n : size_;
    std::span<const std::uint8_t> out(data_, k);
    data_ += k;
    size_ -= k;
    return out;
  }
  std::span<const std::uint8_t> rest() { return payload(size_); }
  std::size_t remaining() const { return size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
};

}  // namespace qscheme::fuzz
