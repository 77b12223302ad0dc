#include "fast/support/unit_scratch.hpp"

#include <cstdlib>
#include <new>

namespace qscheme::fast::detail {
namespace {

// The thread's kept block, freed when the thread exits.
struct Kept {
  void* p = nullptr;
  std::size_t cap = 0;
  bool busy = false;
  ~Kept() { std::free(p); }
};
thread_local Kept kept;

void* aligned_block(std::size_t bytes) {
  void* p = std::aligned_alloc(64, UnitScratch::rounded(bytes == 0 ? 1 : bytes));
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

void release_unit_scratch() noexcept {
  if (kept.busy) return;
  std::free(kept.p);
  kept.p = nullptr;
  kept.cap = 0;
}

UnitScratch::UnitScratch(std::size_t bytes) {
  if (bytes > SIZE_MAX - 64) throw std::bad_alloc();
  if (bytes == 0) return;
  if (kept.busy) {
    p_ = static_cast<std::uint8_t*>(aligned_block(bytes));
    own_ = true;
    return;
  }
  if (kept.cap < bytes) {
    void* p = aligned_block(bytes);
    std::free(kept.p);
    kept.p = p;
    kept.cap = rounded(bytes);
  }
  kept.busy = true;
  p_ = static_cast<std::uint8_t*>(kept.p);
}

UnitScratch::~UnitScratch() {
  if (p_ == nullptr) return;
  if (own_) {
    std::free(p_);
  } else {
    kept.busy = false;
  }
}

}  // namespace qscheme::fast::detail
