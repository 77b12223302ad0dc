#include "scheme/fp_env.hpp"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace qscheme {

#if defined(__x86_64__)

namespace {
constexpr std::uint32_t kDefaultMxcsr = 0x1F80;  // all exceptions masked, round to nearest, no FTZ/DAZ
constexpr std::uint16_t kDefaultX87 = 0x037F;    // all masked, 64-bit significand, round to nearest

std::uint16_t x87_control() {
  std::uint16_t cw;
  __asm__ volatile("fnstcw %0" : "=m"(cw));
  return cw;
}
void set_x87_control(std::uint16_t cw) { __asm__ volatile("fldcw %0" : : "m"(cw)); }
}  // namespace

FpEnvGuard::FpEnvGuard() noexcept : mxcsr_(_mm_getcsr()), x87_(x87_control()) {
  _mm_setcsr(kDefaultMxcsr);  // also clears the sticky flags, restored with the rest below
  if (x87_ != kDefaultX87) set_x87_control(kDefaultX87);
}

FpEnvGuard::~FpEnvGuard() {
  if (x87_ != kDefaultX87) set_x87_control(x87_);
  _mm_setcsr(mxcsr_);
}

#else

FpEnvGuard::FpEnvGuard() noexcept {
  std::fegetenv(&env_);
  std::fesetenv(FE_DFL_ENV);
}

FpEnvGuard::~FpEnvGuard() { std::fesetenv(&env_); }

#endif

}  // namespace qscheme
