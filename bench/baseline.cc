// The streaming baselines of bench/baseline.hpp. target_clones gives each loop an AVX-512, an
// AVX2 and a baseline x86-64 body, chosen once at load time, so the baseline measures memory
// bandwidth on this CPU rather than the SSE2 code the default -O3 build would emit.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "bench/baseline.hpp"
#include "fast/kernels/dispatch.h"
#include "hwy/cache_control.h"

namespace qscheme::bench {

#if defined(__x86_64__) && defined(__GNUC__)
#define QSCHEME_BASELINE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define QSCHEME_BASELINE_CLONES
#endif

QSCHEME_BASELINE_CLONES void baseline_read4_write1_range(const float* x, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, x + i, 4);
    out[i] = static_cast<std::uint8_t>(u >> 24);
  }
}

// GCC's vector types, so that each clone runs vectors of 16 lanes (the default one as four SSE
// registers): the plain-loop form of this does not vectorize (a float max reduction, a rounding
// call).
typedef float V16f __attribute__((vector_size(64)));
typedef std::int32_t V16i __attribute__((vector_size(64)));
typedef std::int8_t V16b __attribute__((vector_size(16)));

QSCHEME_BASELINE_CLONES void baseline_inexact_q8_0_range(const float* x, std::int8_t* codes, float* scales,
                                                         std::size_t n) {
  // (No lambda takes or returns these vectors: the default clone would pass them by a non-AVX ABI.)
  const V16i abs_mask = V16i{} + 0x7FFFFFFF;
  for (std::size_t i = 0; i + 512 <= n; i += 512) {
    V16f m[16];
    for (int b = 0; b < 16; ++b) {
      V16i u, v;
      std::memcpy(&u, x + i + 32 * b, sizeof u);
      std::memcpy(&v, x + i + 32 * b + 16, sizeof v);
      const V16f a = reinterpret_cast<V16f>(u & abs_mask), c = reinterpret_cast<V16f>(v & abs_mask);
      m[b] = a > c ? a : c;
    }
    // The sixteen blocks' maxima into one vector by halving: lane j ends with block j's.
    V16f l1[8], l2[4], l3[2];
    for (int b = 0; b < 8; ++b) {
      const V16f lo = __builtin_shufflevector(m[b], m[b + 8], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
      const V16f hi = __builtin_shufflevector(m[b], m[b + 8], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
      l1[b] = lo > hi ? lo : hi;
    }
    for (int b = 0; b < 4; ++b) {
      const V16f lo = __builtin_shufflevector(l1[b], l1[b + 4], 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
      const V16f hi = __builtin_shufflevector(l1[b], l1[b + 4], 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
      l2[b] = lo > hi ? lo : hi;
    }
    for (int b = 0; b < 2; ++b) {
      const V16f lo = __builtin_shufflevector(l2[b], l2[b + 2], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
      const V16f hi = __builtin_shufflevector(l2[b], l2[b + 2], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
      l3[b] = lo > hi ? lo : hi;
    }
    const V16f lo = __builtin_shufflevector(l3[0], l3[1], 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
    const V16f hi = __builtin_shufflevector(l3[0], l3[1], 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
    const V16f amax = lo > hi ? lo : hi;
    const V16f d = amax / 127.0f;
    const V16f id = reinterpret_cast<V16f>(reinterpret_cast<V16i>(127.0f / amax) & (amax > 0.0f));
    std::memcpy(scales + i / 32, &d, sizeof d);
    for (int b = 0; b < 16; ++b) {
      const V16f s = V16f{} + id[b];
      for (int h = 0; h < 2; ++h) {
        V16f v;
        std::memcpy(&v, x + i + 32 * b + 16 * h, sizeof v);
        // + 1.5 2^23 rounds to the nearest integer (ties to even) for |x s| <= 2^22.
        const V16f r = v * s + 12582912.0f;
        const V16b c = __builtin_convertvector(reinterpret_cast<V16i>(r) - 0x4B400000, V16b);
        std::memcpy(codes + i + 32 * b + 16 * h, &c, sizeof c);
      }
    }
  }
}

QSCHEME_BASELINE_CLONES std::uint32_t baseline_max_bits_range(const float* x, std::size_t n) {
  std::uint32_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, x + i, 4);
    u &= 0x7FFFFFFFu;
    m = u > m ? u : m;
  }
  return m;
}

QSCHEME_BASELINE_CLONES void baseline_read8_write1_range(const float* x0, const float* x1, std::uint8_t mix,
                                                         std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u0, u1;
    std::memcpy(&u0, x0 + i, 4);
    std::memcpy(&u1, x1 + i, 4);
    out[i] = static_cast<std::uint8_t>(((u0 >> 28) | ((u1 >> 24) & 0xF0u)) ^ mix);
  }
}

// The same with a software prefetch 8 KiB ahead on each stream: the fastest pass 2 found for a
// two-level kernel on this machine (docs/PERFORMANCE.md).
QSCHEME_BASELINE_CLONES void baseline_read8_write1_prefetch_range(const float* x0, const float* x1, std::uint8_t mix,
                                                                  std::uint8_t* out, std::size_t n) {
  constexpr std::size_t kAhead = 2048, kStep = 64;
  std::size_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    for (std::size_t l = 0; l < kStep; l += 16) {
      __builtin_prefetch(x0 + i + kAhead + l);
      __builtin_prefetch(x1 + i + kAhead + l);
    }
    for (std::size_t j = i; j < i + kStep; ++j) {
      std::uint32_t u0, u1;
      std::memcpy(&u0, x0 + j, 4);
      std::memcpy(&u1, x1 + j, 4);
      out[j] = static_cast<std::uint8_t>(((u0 >> 28) | ((u1 >> 24) & 0xF0u)) ^ mix);
    }
  }
  for (; i < n; ++i) {
    std::uint32_t u0, u1;
    std::memcpy(&u0, x0 + i, 4);
    std::memcpy(&u1, x1 + i, 4);
    out[i] = static_cast<std::uint8_t>(((u0 >> 28) | ((u1 >> 24) & 0xF0u)) ^ mix);
  }
}

// Element pairs as one 8-byte load, so that the loop vectorizes without a shuffle; 6 KiB ahead as
// nvfp4's second pass (kColdLead).
QSCHEME_BASELINE_CLONES void baseline_read4_write_half_blocks_range(const float* x, const std::uint32_t* maxima,
                                                                    std::uint8_t mix, std::uint8_t* codes,
                                                                    std::uint8_t* scales, std::size_t n) {
  constexpr std::size_t kAhead = 1536, kStep = 8 * kNvfp4Block;
  auto pair = [&](std::size_t i) {
    std::uint64_t v;
    std::memcpy(&v, x + i, 8);
    return static_cast<std::uint8_t>((((v >> 28) & 0xFu) | ((v >> 56) & 0xF0u)) ^ mix);
  };
  std::size_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    for (std::size_t l = 0; l < kStep; l += 16) __builtin_prefetch(x + i + kAhead + l);
    for (std::size_t j = 0; j < kStep / 2; ++j) codes[i / 2 + j] = pair(i + 2 * j);
    for (std::size_t b = 0; b < kStep / kNvfp4Block; ++b) {
      scales[i / kNvfp4Block + b] = static_cast<std::uint8_t>((maxima[i / kNvfp4Block + b] >> 23) ^ mix);
    }
  }
  for (std::size_t b = i / kNvfp4Block; b < (n + kNvfp4Block - 1) / kNvfp4Block; ++b) {
    scales[b] = static_cast<std::uint8_t>((maxima[b] >> 23) ^ mix);
  }
  for (; i + 2 <= n; i += 2) codes[i / 2] = pair(i);
  if (i < n) {
    std::uint32_t u;
    std::memcpy(&u, x + i, 4);
    codes[i / 2] = static_cast<std::uint8_t>((u >> 28) ^ mix);
  }
}

QSCHEME_BASELINE_CLONES void baseline_read1_write4_range(const std::uint8_t* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<std::int8_t>(in[i]));
}

// The same two loops into an L1-sized buffer, copied out by the engine's streaming copy
// (the kernels' stream_copy, Highway's Stream): no read for ownership of the lines written.
void baseline_read4_write1_stream_range(const float* x, std::uint8_t* out, std::size_t n) {
  alignas(64) std::uint8_t b[4096];
  for (std::size_t i = 0; i < n; i += sizeof b) {
    const std::size_t m = std::min(sizeof b, n - i);
    baseline_read4_write1_range(x + i, b, m);
    fast::kernels::Get().stream_copy(out + i, b, m);
  }
  hwy::FlushStream();
}

void baseline_read1_write4_stream_range(const std::uint8_t* in, float* out, std::size_t n) {
  alignas(64) float b[1024];
  for (std::size_t i = 0; i < n; i += 1024) {
    const std::size_t m = std::min<std::size_t>(1024, n - i);
    baseline_read1_write4_range(in + i, b, m);
    fast::kernels::Get().stream_copy(reinterpret_cast<std::uint8_t*>(out + i), reinterpret_cast<const std::uint8_t*>(b),
                              m * sizeof(float));
  }
  hwy::FlushStream();
}

}  // namespace qscheme::bench
