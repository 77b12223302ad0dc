// Page-aligned vectors for the benchmark's inputs and outputs. A 64 MiB std::vector comes from
// mmap with malloc's 16-byte header in front, so its data sits 16 bytes past a cache line: then
// every 64-byte load of the baseline loops spans two lines, which on the Zen 5 VM this is measured
// on makes read4/write1 take 0.13 instead of 0.09-0.10 ns per element, while the engine loses
// little. A baseline slowed that way is not the machine's memory bandwidth, and every ratio
// against it would be too high (docs/PERFORMANCE.md, "What is measured").
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace qscheme::bench {

inline constexpr std::size_t kBufferAlign = 4096;

template <class T>
struct PageAllocator {
  using value_type = T;
  PageAllocator() = default;
  template <class U>
  PageAllocator(const PageAllocator<U>&) noexcept {}  // NOLINT: allocators convert implicitly
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kBufferAlign}));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{kBufferAlign}); }
  template <class U>
  bool operator==(const PageAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using Buffer = std::vector<T, PageAllocator<T>>;

}  // namespace qscheme::bench
