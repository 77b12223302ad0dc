// Whole-tensor scratch of one call: the block maxima of a two-pass quantize, the decoded scales
// of a dequantize. Arrays of 64 KiB or more are mapped on their own, and each thread keeps its
// largest such mapping for its next call; those of 2 MiB or more start on a 2 MiB boundary and
// are advised onto 2 MiB pages (madvise(MADV_HUGEPAGE)), smaller ones are populated as they are
// mapped (MAP_POPULATE: one system call instead of a fault per page).
// Why: the first touch of a 4 KiB page cost about 13 us on the VM this was measured on, so a call
// whose 4 MiB scratch came fresh from the kernel (every first call, and any call larger than the
// ones before) ran three times as long as the same call with recycled scratch; and fresh huge
// pages on every call cost a steady stream of calls about a third (zeroing, and compaction when
// none is free). Nor does malloc recycle reliably: glibc serves aligned_alloc of 128 KiB and more
// from a fresh mmap on every call: with a bound of 2 MiB instead of 64 KiB a 16 MiB nvfp4 tensor's
// 1 MiB of maxima faults in on every call, which takes 3.3 times as long as it should
// (docs/PERFORMANCE.md, "First calls"). Kept: at most one mapping per thread, the largest
// scratch that thread has used (1/16 of its largest input for nvfp4), freed when the thread exits
// (docs/PERFORMANCE.md, "First calls"). Where the kernel grants no huge pages the memory is what
// new[] would give.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

namespace qscheme::fast::detail {

// At least `bytes` bytes, 64-byte aligned, in `cap` bytes; throws std::bad_alloc as new[] does.
struct BigBlock {
  void* p = nullptr;
  std::size_t cap = 0;
};
BigBlock big_alloc(std::size_t bytes);
void big_free(BigBlock b) noexcept;

// Unmaps the calling thread's kept mapping: the next call starts as a process's first would
// (the "first call" rows of `qscheme bench`).
void release_kept() noexcept;

// An uninitialised array of n trivially copyable T (every entry is written before it is read).
template <class T>
class BigBuffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  BigBuffer() = default;
  explicit BigBuffer(std::size_t n) : n_(n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    b_ = big_alloc(n * sizeof(T));
  }
  BigBuffer(const BigBuffer&) = delete;
  BigBuffer& operator=(const BigBuffer&) = delete;
  BigBuffer(BigBuffer&& o) noexcept : b_(o.b_), n_(o.n_) {
    o.b_ = {};
    o.n_ = 0;
  }
  BigBuffer& operator=(BigBuffer&& o) noexcept {
    if (this != &o) {
      release();
      b_ = o.b_;
      n_ = o.n_;
      o.b_ = {};
      o.n_ = 0;
    }
    return *this;
  }
  ~BigBuffer() { release(); }

  T* data() { return static_cast<T*>(b_.p); }
  const T* data() const { return static_cast<const T*>(b_.p); }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  std::size_t size() const { return n_; }

 private:
  void release() noexcept {
    if (b_.p) big_free(b_);
    b_ = {};
  }
  BigBlock b_;
  std::size_t n_ = 0;
};

}  // namespace qscheme::fast::detail
