// Whether the test binary runs under a sanitizer (the asan preset: gcc -fsanitize=address,undefined).
// The costliest matrix tests sample their cases more sparsely there: the same code paths, run
// about ten times slower, would otherwise dominate the CI time (docs/TESTING.md).
#pragma once

#include <cstddef>

namespace qscheme::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Keep every k-th case of a sampled loop: 1 normally, `k` under a sanitizer.
constexpr std::size_t SanitizerStride(std::size_t k) { return kSanitized ? k : 1; }

}  // namespace qscheme::testing
