// Per-thread scratch of the units stages (a unit's codes, its blocks' maxima and scales), kept
// for the thread's next call, so that a call allocates none: eight new[] and delete[] per quantize
// call (and the malloc_consolidate that freeing 32 KiB of codes sets off) took about 3% of an
// in-cache 64K q8_0 quantize and a quarter of a 32-element one (perf, cpu-clock). One user at a
// time per thread: a call that finds its thread's scratch in use takes a block of its own.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qscheme::fast::detail {

// Frees the calling thread's kept block unless a call holds it (release_scratch, fast.hpp).
void release_unit_scratch() noexcept;

class UnitScratch {
 public:
  // At least `bytes` bytes, 64-byte aligned, uninitialised; throws std::bad_alloc as new[] does.
  // None for 0 bytes (data() null): the thread's block stays free for another user.
  explicit UnitScratch(std::size_t bytes);
  UnitScratch(const UnitScratch&) = delete;
  UnitScratch& operator=(const UnitScratch&) = delete;
  ~UnitScratch();

  std::uint8_t* data() const { return p_; }

  // Carves consecutive arrays out of the block: n elements of T at the next 64-byte boundary.
  template <class T>
  T* take(std::size_t n) {
    T* t = reinterpret_cast<T*>(p_ + used_);
    used_ += (n * sizeof(T) + 63) / 64 * 64;
    return t;
  }
  // The bytes a sequence of take() calls for these counts needs.
  static constexpr std::size_t rounded(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

 private:
  std::uint8_t* p_ = nullptr;
  std::size_t used_ = 0;
  bool own_ = false;  // a block of this call's own, freed with it
};

}  // namespace qscheme::fast::detail
