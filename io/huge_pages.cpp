#include "io/huge_pages.hpp"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace qscheme::io {

void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (a + kHuge - 1) & ~(kHuge - 1), end = (a + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice: failure is fine
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace qscheme::io
