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

// GCC's vector types: the plain-loop form of this does not vectorize (a float max reduction, a
// rounding call). One body of L lanes: 16 where AVX-512 runs them in one register, else 8, two
// halves of an SSE register pair on the baseline build. The AVX2 build of 16 lanes ran at 0.035 of
// the in-cache probe: GCC splits its cross-half shuffles and the sixteen block maxima no longer
// fit the sixteen ymm registers.
// (Plain typedefs: GCC 12 drops vector_size from an alias template, and takes no
// __builtin_shufflevector of a template-dependent type.)
typedef float V16f __attribute__((vector_size(64)));
typedef std::int32_t V16i __attribute__((vector_size(64)));
typedef std::int8_t V16b __attribute__((vector_size(16)));
typedef float V8f __attribute__((vector_size(32)));
typedef std::int32_t V8i __attribute__((vector_size(32)));
typedef std::int8_t V8b __attribute__((vector_size(8)));
template <int L>
struct Lanes;
template <>
struct Lanes<16> {
  using F = V16f;
  using I = V16i;
  using B = V16b;
};
template <>
struct Lanes<8> {
  using F = V8f;
  using I = V8i;
  using B = V8b;
};
template <int L>
using VecF = typename Lanes<L>::F;
template <int L>
using VecI = typename Lanes<L>::I;
template <int L>
using VecB = typename Lanes<L>::B;

// Lane j of out gets m[j]'s largest lane: L vectors reduced by halving, each level
// pairing vector b with b + L/2 and keeping the larger of the lanes it interleaves.
[[gnu::always_inline]] inline void lane_maxima(V16f (&m)[16], V16f& out) {
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
  out = lo > hi ? lo : hi;
}

[[gnu::always_inline]] inline void lane_maxima(V8f (&m)[8], V8f& out) {
  V8f l1[4], l2[2];
  for (int b = 0; b < 4; ++b) {
    const V8f lo = __builtin_shufflevector(m[b], m[b + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    const V8f hi = __builtin_shufflevector(m[b], m[b + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    l1[b] = lo > hi ? lo : hi;
  }
  for (int b = 0; b < 2; ++b) {
    const V8f lo = __builtin_shufflevector(l1[b], l1[b + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    const V8f hi = __builtin_shufflevector(l1[b], l1[b + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    l2[b] = lo > hi ? lo : hi;
  }
  const V8f lo = __builtin_shufflevector(l2[0], l2[1], 0, 8, 2, 10, 4, 12, 6, 14);
  const V8f hi = __builtin_shufflevector(l2[0], l2[1], 1, 9, 3, 11, 5, 13, 7, 15);
  out = lo > hi ? lo : hi;
}

// The low byte of each lane. On 8 lanes a byte shuffle: GCC's conversion there went through
// general registers a byte at a time.
[[gnu::always_inline]] inline void narrow(const V16i& r, V16b& c) { c = __builtin_convertvector(r, V16b); }
[[gnu::always_inline]] inline void narrow(const V8i& r, V8b& c) {
  typedef std::int8_t V32b __attribute__((vector_size(32)));
  const V32b bytes = reinterpret_cast<V32b>(r);
  c = __builtin_shufflevector(bytes, bytes, 0, 4, 8, 12, 16, 20, 24, 28);
}

// L blocks of 32 at a time (n a multiple of 32 L). No lambda takes or returns these vectors: the
// baseline build would pass them by a non-AVX ABI (so lane_maxima gives its result by reference).
template <int L>
[[gnu::always_inline]] inline void inexact_q8_0(const float* x, std::int8_t* codes, float* scales, std::size_t n) {
  constexpr int kPer = 32 / L;  // vectors a block
  const VecI<L> abs_mask = VecI<L>{} + 0x7FFFFFFF;
  for (std::size_t i = 0; i + 32 * L <= n; i += 32 * L) {
    VecF<L> m[L];
    for (int b = 0; b < L; ++b) {
      for (int k = 0; k < kPer; ++k) {
        VecI<L> u;
        std::memcpy(&u, x + i + 32 * b + L * k, sizeof u);
        const VecF<L> a = reinterpret_cast<VecF<L>>(u & abs_mask);
        m[b] = k == 0 || a > m[b] ? a : m[b];
      }
    }
    VecF<L> amax;
    lane_maxima(m, amax);
    const VecF<L> d = amax / 127.0f;
    const VecF<L> id = reinterpret_cast<VecF<L>>(reinterpret_cast<VecI<L>>(127.0f / amax) & (amax > 0.0f));
    std::memcpy(scales + i / 32, &d, sizeof d);
    for (int b = 0; b < L; ++b) {
      const VecF<L> s = VecF<L>{} + id[b];
      for (int k = 0; k < kPer; ++k) {
        VecF<L> v;
        std::memcpy(&v, x + i + 32 * b + L * k, sizeof v);
        // + 1.5 2^23 rounds to the nearest integer (ties to even) for |x s| <= 2^22.
        const VecF<L> r = v * s + 12582912.0f;
        VecB<L> c;
        narrow(reinterpret_cast<VecI<L>>(r) - 0x4B400000, c);
        std::memcpy(codes + i + 32 * b + L * k, &c, sizeof c);
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("arch=x86-64-v4"))) void inexact_q8_0_v4(const float* x, std::int8_t* codes, float* scales,
                                                                std::size_t n) {
  inexact_q8_0<16>(x, codes, scales, n);
}
__attribute__((target("arch=x86-64-v3"))) void inexact_q8_0_v3(const float* x, std::int8_t* codes, float* scales,
                                                                std::size_t n) {
  inexact_q8_0<8>(x, codes, scales, n);
}
#endif

void baseline_inexact_q8_0_range(const float* x, std::int8_t* codes, float* scales, std::size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("x86-64-v4")) return inexact_q8_0_v4(x, codes, scales, n);
  if (__builtin_cpu_supports("x86-64-v3")) return inexact_q8_0_v3(x, codes, scales, n);
#endif
  inexact_q8_0<8>(x, codes, scales, n);
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
