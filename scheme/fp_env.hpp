// The floating-point environment both engines compute in: IEEE defaults (round to nearest even,
// subnormals neither flushed nor read as zero, every exception masked). Callers often run with
// something else: ML frameworks set flush-to-zero and denormals-are-zero (SSE MXCSR FTZ/DAZ) for
// speed, numerical code changes the rounding mode or unmasks exceptions. Under FTZ/DAZ the fast
// engine's f32 lanes would silently give other bits than the reference for inputs or scales near
// the subnormal range, and an unmasked overflow trap would fire on the saturating estimates the
// kernels rely on. So every public entry point of fast/ and reference/ holds an FpEnvGuard: the
// call runs in the default environment (so do the fast engine's pool workers, fast/support/worker_pool.cc)
// and the caller's environment, exception flags included, is back when the call returns.
#pragma once

#include <cfenv>
#include <cstdint>

namespace qscheme {

class FpEnvGuard {
 public:
  FpEnvGuard() noexcept;
  ~FpEnvGuard();
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;

 private:
#if defined(__x86_64__)
  std::uint32_t mxcsr_ = 0;  // SSE/AVX: rounding, FTZ, DAZ, exception masks and flags
  std::uint16_t x87_ = 0;    // x87 control word: rounding, precision and masks of long double
#else
  std::fenv_t env_{};
#endif
};

}  // namespace qscheme
