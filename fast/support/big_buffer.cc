#include "fast/support/big_buffer.hpp"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace qscheme::fast::detail {
namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;
constexpr std::size_t kKeepFrom = std::size_t{64} << 10;  // glibc maps 128 KiB and more afresh
constexpr std::size_t kPage = std::size_t{4} << 10;

#if defined(__linux__)
constexpr bool kMapped = true;
#else
constexpr bool kMapped = false;
#endif

bool mapped(std::size_t cap) { return kMapped && cap >= kKeepFrom; }

#if defined(__linux__)
// bytes <= SIZE_MAX - 2 * kHuge (big_alloc checks), so the roundings below cannot wrap.
BigBlock map_fresh(std::size_t bytes) {
  if (bytes < kHuge) {
    // No whole huge page to advise: page-aligned is enough. Populated up front, since every byte
    // is written soon after: one system call instead of a fault per 4 KiB page halved the first
    // touch of 1 MiB here (2.6 -> 1.4 ms).
    const std::size_t len = (bytes + kPage - 1) / kPage * kPage;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return {p, len};
  }
  const std::size_t len = (bytes + kHuge - 1) / kHuge * kHuge;
  // Over-map by one huge page, then trim, so that the block starts on a 2 MiB boundary: only
  // whole, aligned 2 MiB ranges can be backed by huge pages.
  void* raw = mmap(nullptr, len + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto a = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = (a + kHuge - 1) / kHuge * kHuge;
  if (start > a) munmap(raw, start - a);
  const std::uintptr_t end = start + len, raw_end = a + len + kHuge;
  if (raw_end > end) munmap(reinterpret_cast<void*>(end), raw_end - end);
  madvise(reinterpret_cast<void*>(start), len, MADV_HUGEPAGE);  // advice only: failure is fine
  return {reinterpret_cast<void*>(start), len};
}

void unmap(BigBlock b) noexcept { munmap(b.p, b.cap); }

// The thread's kept mapping, unmapped when the thread exits.
struct Kept {
  BigBlock b;
  ~Kept() {
    if (b.p) unmap(b);
  }
};
thread_local Kept kept;
#endif

}  // namespace

BigBlock big_alloc(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes > SIZE_MAX - 2 * kHuge) throw std::bad_alloc();  // for the roundings here and in map_fresh
  // big_free tells the two kinds apart by cap alone.
  const std::size_t cap = (bytes + 63) / 64 * 64;
  if (!mapped(cap)) {
    void* p = std::aligned_alloc(64, cap);
    if (!p) throw std::bad_alloc();
    return {p, cap};
  }
#if defined(__linux__)
  if (kept.b.p && kept.b.cap >= bytes) {
    const BigBlock b = kept.b;
    kept.b = {};
    return b;
  }
  return map_fresh(bytes);
#else
  return {};
#endif
}

void big_free(BigBlock b) noexcept {
  if (!b.p) return;
  if (!mapped(b.cap)) {
    std::free(b.p);
    return;
  }
#if defined(__linux__)
  if (kept.b.p && kept.b.cap >= b.cap) {
    unmap(b);
    return;
  }
  if (kept.b.p) unmap(kept.b);
  kept.b = b;
#endif
}

void release_kept() noexcept {
#if defined(__linux__)
  if (kept.b.p) unmap(kept.b);
  kept.b = {};
#endif
}

}  // namespace qscheme::fast::detail
