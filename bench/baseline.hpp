// One definition, shared by bench/fast_bench.cpp (Google Benchmark) and `qscheme bench`
// (tools/cmd_bench.cpp), of: the benchmark input, the streaming-bandwidth baselines, the list of
// kernels and how one run of each kernel is made.
//
//   baseline read4/write1: read 4 B, write 1 B per element (the least a quantizer must move)
//   baseline read1/write4: read 1 B, write 4 B per element (the least a dequantizer must move)
//   the same two with streaming stores (the fast engine streams outputs of 8 MiB or more)
//   baseline two-pass: read 4 B twice, write 0.5 B per element (the least a two-level quantizer
//     such as nvfp4 must move: its global scale needs the whole tensor's max |x| before any code)
//   the same with the engine's max |x| pass and prefetching (two-pass prefetched)
//   two-pass with block maxima: the bytes nvfp4 moves as built, with no arithmetic in its second
//     pass (two-pass block maxima)
//
// A kernel row times one entry point (Api): by default fast::quantize_to_bytes (f32 to Burn's
// serialized bytes, calibration included) or fast::dequantize_from_bytes, into preallocated
// buffers. Baselines run on the same number of threads as the engine (contiguous chunks).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "bench/aligned_buffer.hpp"
#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/support/big_buffer.hpp"
#include "scheme/layout.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"

namespace qscheme::bench {

inline constexpr std::size_t kDefaultMiB = 64;
// What CacheEvictor reads before every timed call, by default and at most (more than the
// largest L3 seen, 508 MiB; the cap keeps a mistyped value from exhausting memory).
inline constexpr std::size_t kDefaultEvictMiB = 512, kMaxEvictMiB = 4096;
inline constexpr std::uint64_t kRowLength = 4096;  // inputs are [n / 4096, 4096] (or [n] if smaller)

// Normal-ish f32 data from a fixed seed (mt19937(1), N(0, 1)).
inline Buffer<float> make_input(std::size_t n, std::uint32_t seed = 1) {
  Buffer<float> v(n);
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& f : v) f = nd(rng);
  return v;
}

inline std::vector<std::uint64_t> input_shape(std::size_t n) {
  if (n >= kRowLength && n % kRowLength == 0) return {n / kRowLength, kRowLength};
  return {n};
}

// Runs body(begin, end) over [0, n) on `threads` threads (contiguous chunks, 64-element aligned).
template <class F>
void parallel_chunks(std::size_t n, unsigned threads, F body) {
  if (threads <= 1 || n < 4096) {
    body(std::size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  const std::size_t chunk = ((n + threads - 1) / threads + 63) / 64 * 64;
  for (unsigned t = 1; t < threads; ++t) {
    const std::size_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    if (b < e) pool.emplace_back([=] { body(b, e); });
  }
  body(0, std::min(n, chunk));
  for (auto& th : pool) th.join();
}

// read 4 B, write 1 B per element: the top byte of each f32. read 1 B, write 4 B: int8 -> f32.
// Plain loops in bench/baseline.cc, compiled for AVX-512, AVX2 and baseline x86-64 and chosen at
// run time (gcc target_clones): the widest vectors the CPU has, so that the loop is bound by
// memory, not by the instruction set the rest of the build assumes.
void baseline_read4_write1_range(const float* x, std::uint8_t* out, std::size_t n);
void baseline_read1_write4_range(const std::uint8_t* in, float* out, std::size_t n);
// The same with streaming stores (no read for ownership of the written lines), as the fast
// engine writes outputs of at least fast::kernels::StreamBytes(): shown beside the plain loops so
// that a ratio above 1 has its explanation in the same run.
void baseline_read4_write1_stream_range(const float* x, std::uint8_t* out, std::size_t n);
void baseline_read1_write4_stream_range(const std::uint8_t* in, float* out, std::size_t n);

inline void baseline_read4_write1(const float* x, std::uint8_t* out, std::size_t n, unsigned threads = 1) {
  parallel_chunks(n, threads, [=](std::size_t b, std::size_t e) { baseline_read4_write1_range(x + b, out + b, e - b); });
}
inline void baseline_read1_write4(const std::uint8_t* in, float* out, std::size_t n, unsigned threads = 1) {
  parallel_chunks(n, threads, [=](std::size_t b, std::size_t e) { baseline_read1_write4_range(in + b, out + b, e - b); });
}

inline void baseline_read4_write1_stream(const float* x, std::uint8_t* out, std::size_t n, unsigned threads = 1) {
  parallel_chunks(n, threads,
                  [=](std::size_t b, std::size_t e) { baseline_read4_write1_stream_range(x + b, out + b, e - b); });
}
inline void baseline_read1_write4_stream(const std::uint8_t* in, float* out, std::size_t n, unsigned threads = 1) {
  parallel_chunks(n, threads,
                  [=](std::size_t b, std::size_t e) { baseline_read1_write4_stream_range(in + b, out + b, e - b); });
}

// The two-pass bound: a pass that reads x for the largest |x| bits, then a pass that reads x
// again and writes a 4-bit code per element (one byte from x[i] and x[i + h], h = n / 2: two
// contiguous streams, so the loop vectorizes), mixed with the maximum so neither pass can be
// dropped. Once x outgrows the caches no exact two-level quantizer moves less; its ratio to
// read4/write1 bounds what such a kernel can reach on this machine.
std::uint32_t baseline_max_bits_range(const float* x, std::size_t n);
void baseline_read8_write1_range(const float* x0, const float* x1, std::uint8_t mix, std::uint8_t* out, std::size_t n);

// top = max(top, m), from any thread: the two-pass loops' first passes gather their chunks' maxima.
inline void raise_to(std::atomic<std::uint32_t>& top, std::uint32_t m) {
  std::uint32_t cur = top.load();
  while (m > cur && !top.compare_exchange_weak(cur, m)) {
  }
}

// Both two-pass loops: max_bits(x, n) over chunks of x, then pass2(x0, x1, mix, out, n) over
// the two halves.
template <class MaxBits, class Pass2>
void two_pass(const float* x, std::uint8_t* out, std::size_t n, unsigned threads, MaxBits max_bits, Pass2 pass2) {
  std::atomic<std::uint32_t> top{0};
  parallel_chunks(n, threads, [&](std::size_t b, std::size_t e) {
    raise_to(top, max_bits(x + b, e - b));
  });
  const auto mix = static_cast<std::uint8_t>(top.load() >> 23);
  const std::size_t h = n / 2;
  parallel_chunks(h, threads, [=](std::size_t b, std::size_t e) { pass2(x + b, x + h + b, mix, out + b, e - b); });
  if (n % 2) out[h] = static_cast<std::uint8_t>(mix ^ static_cast<std::uint8_t>(x[n - 1] > 0));
}

inline void baseline_two_pass(const float* x, std::uint8_t* out, std::size_t n, unsigned threads = 1) {
  two_pass(x, out, n, threads, baseline_max_bits_range, baseline_read8_write1_range);
}

// The two-pass bound with the engine's own max |x| pass (the kernels' max_abs_bits, prefetching
// 4 KiB ahead) and a pass 2 that prefetches 8 KiB ahead on both streams: a two-level kernel
// with no arithmetic, its passes as fast as we found them on this machine.
void baseline_read8_write1_prefetch_range(const float* x0, const float* x1, std::uint8_t mix, std::uint8_t* out,
                                          std::size_t n);

inline void baseline_two_pass_prefetched(const float* x, std::uint8_t* out, std::size_t n, unsigned threads = 1) {
  two_pass(x, out, n, threads, [](const float* p, std::size_t m) { return fast::kernels::Get().max_abs_bits(p, m); },
           baseline_read8_write1_prefetch_range);
}

// nvfp4's own traffic with no arithmetic in its second pass: the engine's prepass
// (the kernels' prepass_block_max_abs_bits: read x, write a u32 maximum per block of 16), then a
// pass that reads x and the maxima and writes 0.5 B per element (the codes) and a byte per block
// (the scales), prefetching x as nvfp4's second pass does. For 64 MiB of input it moves what
// nvfp4 moves, 158 MiB with the reads for ownership, against the two-pass bound's 144 (nvfp4 keeps
// its block maxima between the passes: finding them again in the second pass cost more than the
// 12 MiB it saves, docs/PERFORMANCE.md). nvfp4's ratio over this row's is the share of its own
// memory traffic's speed that its arithmetic leaves it.
inline constexpr std::size_t kNvfp4Block = 16;
void baseline_read4_write_half_blocks_range(const float* x, const std::uint32_t* maxima, std::uint8_t mix,
                                            std::uint8_t* codes, std::uint8_t* scales, std::size_t n);

// out: ceil(n / 2) code bytes, then ceil(n / 16) scale bytes (at most n bytes from n = 2 on).
inline void baseline_two_pass_block_maxima(const float* x, std::uint8_t* out, std::size_t n, unsigned threads = 1) {
  const std::size_t blocks = (n + kNvfp4Block - 1) / kNvfp4Block;
  fast::detail::BigBuffer<std::uint32_t> maxima(blocks);  // kept between calls, as nvfp4's are
  std::uint32_t* const m = maxima.data();
  std::atomic<std::uint32_t> top{0};
  // Chunks are 64-element aligned (parallel_chunks), so each starts on a block.
  parallel_chunks(n, threads, [&](std::size_t b, std::size_t e) {
    raise_to(top, fast::kernels::Get().prepass_block_max_abs_bits(x + b, e - b, kNvfp4Block, m + b / kNvfp4Block));
  });
  const auto mix = static_cast<std::uint8_t>(top.load() >> 23);
  std::uint8_t* const scales = out + (n + 1) / 2;
  parallel_chunks(n, threads, [=](std::size_t b, std::size_t e) {
    baseline_read4_write_half_blocks_range(x + b, m + b / kNvfp4Block, mix, out + b / 2, scales + b / kNvfp4Block,
                                           e - b);
  });
}

enum class Direction { quantize, dequantize };

// Which entry point a kernel row times.
enum class Api {
  bytes,              // quantize_to_bytes / dequantize_from_bytes, OutputPolicy::untouched_on_error
  bytes_single_pass,  // the same with OutputPolicy::single_pass
  codes,              // quantize_into (i32 codes) / dequantize_into (from a QuantizedTensor)
};

struct Kernel {
  const char* name;    // "quantize q8_0": also the row name of `qscheme bench --json`
  const char* scheme;  // preset or scheme text
  Profile profile;
  Direction direction;
  Api api = Api::bytes;
  bool streamed = false;  // dequantize: outputs written by streaming stores (kernels::SetStreamBytes(0))
  bool first_call = false;  // before each timed call, all memory the library keeps is given back
  // quantize: the input starts this many bytes past a page (a copy of it), as a malloc'd tensor
  // does (16): the benchmark's own buffers are page-aligned (bench/aligned_buffer.hpp).
  std::size_t input_offset = 0;
  // quantize: the scales are given (QuantizeOptions::scales), the input's own calibrated ones
  bool given = false;
  // quantize of a two-level scheme with its global amax given (QuantizeOptions::global_amax, the
  // input's own max |x|): the global known ahead, the block scales calibrated in one pass
  bool global_amax = false;
  // In cache: kInCacheElements on one thread, warm, against the in-cache probe (the L2-resident
  // baselines), kInCacheCalls calls per timing; not a streaming figure.
  bool in_cache = false;
  // A process's first call (bench/first_call.hpp), in a child process of its own, against the
  // best later call there.
  bool process_first_call = false;
  // With process_first_call: the child first calls fast::warm_up(), untimed, as a host that sets
  // the engine up ahead of time does (docs/PERFORMANCE.md, "First calls").
  bool warm_up = false;
  // quantize under a recipe's point (scheme/recipes.hpp) instead of `profile`
  const char* recipe = nullptr;
  // The bytes quantize writes and dequantize reads: Burn's layout, or ggml's blocks (the point's
  // own: `recipe`'s, else `profile`'s).
  ByteFormat format = ByteFormat::burn;
  // quantize of a two-level scheme, whose global needs the tensor's max |x| before any code: also
  // timed against the two-pass bound (baseline_two_pass: read 4 B twice, write 0.5 B), its own
  // least traffic, interleaved with its calls.
  bool two_pass = false;
};

// In-cache rows: 64K f32 (256 KiB) and their bytes stay in L2 (1 MiB per core here), not in L1
// (48 KiB); one call takes some 10-30 us, so each timing covers kInCacheCalls calls.
inline constexpr std::size_t kInCacheElements = 65536;
inline constexpr int kInCacheCalls = 16;

// The in-cache probe: the two plain baselines on one thread over buffers of kInCacheElements that
// stay in L2, repeated: what the cache moves per element when no arithmetic is in the way.
inline void probe_in_cache(Direction d, const float* x, std::uint8_t* q, const std::uint8_t* dq_in, float* dq_out) {
  for (int c = 0; c < kInCacheCalls; ++c) {
    if (d == Direction::quantize) {
      baseline_read4_write1_range(x, q, kInCacheElements);
    } else {
      baseline_read1_write4_range(dq_in, dq_out, kInCacheElements);
    }
  }
}

// The arithmetic of a q8_0 quantizer with nothing exact and nothing checked, in whole groups of
// 16 blocks of 32 on AVX-512 machines, 8 elsewhere (n a multiple of 512): per block the largest |x|, the f32 multiplier 127 / amax
// (0 for an all-zero block), codes x * multiplier rounded to nearest by adding 1.5 2^23, narrowed
// to bytes; the scale amax / 127 as f32. Timed in cache beside the in-cache quantize rows: how
// near a calibrating quantizer gets to the probe when exactness and checks cost nothing.
void baseline_inexact_q8_0_range(const float* x, std::int8_t* codes, float* scales, std::size_t n);

// The kernels both benchmark binaries measure.
inline const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> k{
      // The kernels: one pass (OutputPolicy::single_pass), calibration included.
      {"quantize q8_0", "q8_0", Profile::exact, Direction::quantize, Api::bytes_single_pass},
      {"quantize q4_0", "q4_0", Profile::exact, Direction::quantize, Api::bytes_single_pass},
      {.name = "quantize nvfp4", .scheme = "nvfp4", .profile = Profile::exact, .direction = Direction::quantize,
       .api = Api::bytes_single_pass, .two_pass = true},
      {"quantize mxfp8", "mxfp8", Profile::exact, Direction::quantize, Api::bytes_single_pass},
      {"quantize mxfp4", "mxfp4", Profile::exact, Direction::quantize, Api::bytes_single_pass},
      {"quantize q8_0 burn", "q8_0", Profile::burn, Direction::quantize, Api::bytes_single_pass},
      {"dequantize q8_0", "q8_0", Profile::exact, Direction::dequantize, Api::bytes_single_pass},
      {"dequantize nvfp4", "nvfp4", Profile::exact, Direction::dequantize, Api::bytes_single_pass},
      // Streaming stores instead of plain ones (off by default; which wins depends on the machine).
      {"dequantize q8_0 streamed", "q8_0", Profile::exact, Direction::dequantize, Api::bytes_single_pass, true},
      // The library default (OutputPolicy::untouched_on_error): the input checked before writing.
      {"quantize q8_0 untouched-on-error", "q8_0", Profile::exact, Direction::quantize, Api::bytes},
      {"quantize q4_0 untouched-on-error", "q4_0", Profile::exact, Direction::quantize, Api::bytes},
      {"quantize mxfp8 untouched-on-error", "mxfp8", Profile::exact, Direction::quantize, Api::bytes},
      {"dequantize q8_0 untouched-on-error", "q8_0", Profile::exact, Direction::dequantize, Api::bytes},
      // As a process's first call: its scratch fresh from the kernel (KernelRun::before_timing).
      {"quantize nvfp4 first call", "nvfp4", Profile::exact, Direction::quantize, Api::bytes_single_pass, false, true},
      {"dequantize q8_0 first call", "q8_0", Profile::exact, Direction::dequantize, Api::bytes_single_pass, false, true},
      // The input 16 bytes past a line, as malloc places a large tensor.
      {"quantize q8_0 input 16 B past a line", "q8_0", Profile::exact, Direction::quantize, Api::bytes_single_pass, false,
       false, 16},
      {"quantize nvfp4 input 16 B past a line", "nvfp4", Profile::exact, Direction::quantize, Api::bytes_single_pass,
       false, false, 16},
      // Given scales (the input's own calibrated ones, passed in): int8 with one f32 scale for the
      // tensor, and nvfp4 with its block scales and global.
      {"quantize q8s given scale", "q8s", Profile::exact, Direction::quantize, Api::bytes_single_pass, false, false, 0,
       true},
      {"quantize nvfp4 given scales", "nvfp4", Profile::exact, Direction::quantize, Api::bytes_single_pass, false,
       false, 0, true},
      {"quantize q8_0 given scales untouched-on-error", "q8_0", Profile::exact, Direction::quantize, Api::bytes, false,
       false, 0, true},
      // int8 with one f32 scale, decoded: the other half of the XNNPACK comparison (bench/peers.hpp).
      {"dequantize q8s", "q8s", Profile::exact, Direction::dequantize, Api::bytes_single_pass},
      // In cache (kInCacheElements, one thread, warm): the arithmetic, against the in-cache probe.
      {.name = "quantize q8_0 in cache", .scheme = "q8_0", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true},
      {.name = "quantize q4_0 in cache", .scheme = "q4_0", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true},
      {.name = "quantize mxfp8 in cache", .scheme = "mxfp8", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true},
      {.name = "quantize mxfp4 in cache", .scheme = "mxfp4", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true},
      {.name = "dequantize q8_0 in cache", .scheme = "q8_0", .profile = Profile::exact,
       .direction = Direction::dequantize, .api = Api::bytes_single_pass, .in_cache = true},
      {.name = "dequantize q4_0 in cache", .scheme = "q4_0", .profile = Profile::exact,
       .direction = Direction::dequantize, .api = Api::bytes_single_pass, .in_cache = true},
      {.name = "dequantize mxfp8 in cache", .scheme = "mxfp8", .profile = Profile::exact,
       .direction = Direction::dequantize, .api = Api::bytes_single_pass, .in_cache = true},
      {.name = "dequantize mxfp4 in cache", .scheme = "mxfp4", .profile = Profile::exact,
       .direction = Direction::dequantize, .api = Api::bytes_single_pass, .in_cache = true},
      // The same quantize calls as a process's first (bench/first_call.hpp), in cache.
      {.name = "quantize q8_0 in cache, a process's first call", .scheme = "q8_0", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true,
       .process_first_call = true},
      {.name = "quantize q4_0 in cache, a process's first call", .scheme = "q4_0", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true,
       .process_first_call = true},
      {.name = "quantize mxfp8 in cache, a process's first call", .scheme = "mxfp8", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true,
       .process_first_call = true},
      {.name = "quantize mxfp4 in cache, a process's first call", .scheme = "mxfp4", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true,
       .process_first_call = true},
      // The same after fast::warm_up(): what is left for a host that sets the engine up ahead of time.
      {.name = "quantize q8_0 in cache, a process's first call after fast::warm_up()", .scheme = "q8_0",
       .profile = Profile::exact, .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true,
       .process_first_call = true, .warm_up = true},
      {.name = "quantize q4_0 in cache, a process's first call after fast::warm_up()", .scheme = "q4_0",
       .profile = Profile::exact, .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true,
       .process_first_call = true, .warm_up = true},
      {.name = "quantize mxfp8 in cache, a process's first call after fast::warm_up()", .scheme = "mxfp8",
       .profile = Profile::exact, .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true,
       .process_first_call = true, .warm_up = true},
      {.name = "quantize mxfp4 in cache, a process's first call after fast::warm_up()", .scheme = "mxfp4",
       .profile = Profile::exact, .direction = Direction::quantize, .api = Api::bytes_single_pass, .in_cache = true,
       .process_first_call = true, .warm_up = true},
      // The recipes the fast engine runs, one pass: the MX family (torchao-mx-floor is ocp-mx's point).
      {.name = "quantize mxfp8 ocp-mx", .scheme = "mxfp8", .profile = Profile::exact, .direction = Direction::quantize,
       .api = Api::bytes_single_pass, .recipe = "ocp-mx"},
      {.name = "quantize mxfp8 torchao-mx-ceil", .scheme = "mxfp8", .profile = Profile::exact, .direction = Direction::quantize,
       .api = Api::bytes_single_pass, .recipe = "torchao-mx-ceil"},
      {.name = "quantize mxfp8 torchao-mx-even", .scheme = "mxfp8", .profile = Profile::exact, .direction = Direction::quantize,
       .api = Api::bytes_single_pass, .recipe = "torchao-mx-even"},
      {.name = "quantize mxfp8 torchao-mx-rceil", .scheme = "mxfp8", .profile = Profile::exact, .direction = Direction::quantize,
       .api = Api::bytes_single_pass, .recipe = "torchao-mx-rceil"},
      {.name = "quantize mxfp4 ocp-mx", .scheme = "mxfp4", .profile = Profile::exact, .direction = Direction::quantize,
       .api = Api::bytes_single_pass, .recipe = "ocp-mx"},
      // TransformerEngine's NVFP4 reference quantizer: its f32 global and block scale steps, its
      // codes from f32 reciprocals (te_nvfp4.hpp).
      {.name = "quantize nvfp4 nvidia-nvfp4", .scheme = "nvfp4", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .recipe = "nvidia-nvfp4", .two_pass = true},
      // nvfp4 with its global amax known ahead (delayed scaling, static calibration): one pass.
      {.name = "quantize nvfp4 global amax", .scheme = "nvfp4", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .global_amax = true},
      {.name = "quantize nvfp4 nvidia-nvfp4 global amax", .scheme = "nvfp4", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .global_amax = true, .recipe = "nvidia-nvfp4"},
      // microxcaling: its exponent rule, f32 division and its own minifloat rounding (mx_steps.hpp).
      {.name = "quantize mxfp8 microxcaling", .scheme = "mxfp8", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .recipe = "microxcaling"},
      {.name = "quantize mxfp4 microxcaling", .scheme = "mxfp4", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .recipe = "microxcaling"},
      // The f32-step recipes over given f32 scales (the input's own, calibrated by the exact
      // profile), q8_0's blocks with f32 scales, against the exact profile's codes of the same.
      {.name = "quantize q8s:block[32]=f32 given scales", .scheme = "q8s:block[32]=f32", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .given = true},
      {.name = "quantize q8s:block[32]=f32 onnx", .scheme = "q8s:block[32]=f32", .profile = Profile::onnx,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .given = true},
      {.name = "quantize q8s:block[32]=f32 onnx untouched-on-error", .scheme = "q8s:block[32]=f32",
       .profile = Profile::onnx, .direction = Direction::quantize, .api = Api::bytes, .given = true},
      {.name = "quantize q8s:block[32]=f32 torch-qint8", .scheme = "q8s:block[32]=f32", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .given = true, .recipe = "torch-qint8"},
      // ggml's recipes into ggml's own blocks (block_q8_0, block_q4_0), one pass, and both back.
      {.name = "quantize q8_0 ggml-q8_0", .scheme = "q8_0", .profile = Profile::exact, .direction = Direction::quantize,
       .api = Api::bytes_single_pass, .recipe = "ggml-q8_0", .format = ByteFormat::ggml},
      {.name = "quantize q8_0 ggml-q8_0-x86", .scheme = "q8_0", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .recipe = "ggml-q8_0-x86",
       .format = ByteFormat::ggml},
      {.name = "quantize q4_0 ggml-q4_0", .scheme = "q4f:packed-u32(0):block[32]=f16", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .recipe = "ggml-q4_0",
       .format = ByteFormat::ggml},
      {.name = "dequantize q8_0 ggml bytes", .scheme = "q8_0", .profile = Profile::exact,
       .direction = Direction::dequantize, .api = Api::bytes_single_pass, .recipe = "ggml-q8_0",
       .format = ByteFormat::ggml},
      {.name = "dequantize q4_0 ggml bytes", .scheme = "q4f:packed-u32(0):block[32]=f16", .profile = Profile::exact,
       .direction = Direction::dequantize, .api = Api::bytes_single_pass, .recipe = "ggml-q4_0",
       .format = ByteFormat::ggml},
      // Affine mode (zero points), u8: one scale for the tensor, calibrated (min and max first: two
      // passes) or given (the input's own, with its zero point: one pass); a scale per row
      // (axis(1) of [n / 4096, 4096]), calibrated row by row in one pass, or given; and back to f32.
      {.name = "quantize u8:affine calibrated", .scheme = "u8:affine", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass},
      {.name = "quantize u8:affine given", .scheme = "u8:affine", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .given = true},
      {.name = "quantize u8:affine per-row (axis)", .scheme = "u8:affine:axis(1)=f32", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass},
      {.name = "quantize u8:affine per-row given", .scheme = "u8:affine:axis(1)=f32", .profile = Profile::exact,
       .direction = Direction::quantize, .api = Api::bytes_single_pass, .given = true},
      {.name = "dequantize u8:affine", .scheme = "u8:affine", .profile = Profile::exact,
       .direction = Direction::dequantize, .api = Api::bytes_single_pass},
      // The QuantizedTensor entry points (i32 codes), for comparison.
      {"quantize_into q8_0 (i32 codes)", "q8_0", Profile::exact, Direction::quantize, Api::codes},
      {"dequantize_into q8_0 (i32 codes)", "q8_0", Profile::exact, Direction::dequantize, Api::codes},
  };
  return k;
}

// Buffers of one kernel on one input; run() is one timed call of the engine.
class KernelRun {
 public:
  KernelRun(const Kernel& k, std::span<const float> x) : kernel_(k), x_(x) {
    if (k.input_offset % sizeof(float) != 0) {
      status_ = Status(ErrorCode::invalid_argument, "input_offset must be a multiple of 4 bytes");
      return;
    }
    if (k.input_offset != 0) {
      const std::size_t skip = k.input_offset / sizeof(float);
      shifted_.resize(skip + x.size());
      std::copy(x.begin(), x.end(), shifted_.begin() + static_cast<std::ptrdiff_t>(skip));
      x_ = std::span<const float>(shifted_.data() + skip, x.size());
    }
    auto s = parse_scheme(k.scheme);
    if (!s) {
      status_ = s.status();
      return;
    }
    scheme_ = *s;
    shape_ = input_shape(x.size());
    auto l = make_layout(scheme_, shape_);
    if (!l) {
      status_ = l.status();
      return;
    }
    options_.profile = k.profile;
    if (k.recipe) {
      auto r = find_recipe(k.recipe);
      if (!r) {
        status_ = r.status();
        return;
      }
      options_ = recipe_options(**r, options_);
    }
    auto total = total_bytes(scheme_, shape_, k.format);
    if (!total) {
      status_ = total.status();
      return;
    }
    bytes_.resize(*total);
    if (k.direction == Direction::quantize && k.given) {
      // The exact profile calibrates them: onnx and torch-qint8 take only given scales.
      QuantizeOptions calibrate;
      calibrate.profile = Profile::exact;
      auto q = fast::quantize(scheme_, shape_, x_, calibrate);
      if (!q) {
        status_ = q.status();
        return;
      }
      auto g = fast::given_scales(*q);
      if (!g) {
        status_ = g.status();
        return;
      }
      options_.scales = std::move(*g);
    }
    if (k.direction == Direction::quantize && k.global_amax) {
      float top = 0;
      for (float v : x_) top = std::max(top, std::fabs(v));
      options_.global_amax = top;
    }
    if (k.direction == Direction::quantize) {
      if (k.api == Api::codes) {
        codes_.resize(l->elements);
        scale_bits_.resize(l->scales);
        zero_points_.resize(l->zero_points);
      }
    } else {
      auto q = fast::quantize(scheme_, shape_, x, options_);
      if (!q) {
        status_ = q.status();
        return;
      }
      q_ = std::move(*q);
      auto b = fast::encode(q_, k.format);
      if (!b) {
        status_ = b.status();
        return;
      }
      bytes_.assign(b->begin(), b->end());
      out_.resize(x.size());
    }
  }
  const Status& status() const { return status_; }
  std::span<const float> input() const { return x_; }  // what run() quantizes
  const QuantizeOptions& options() const { return options_; }
  std::span<const std::uint8_t> bytes() const { return bytes_; }  // what run() dequantizes
  const QuantizedTensor& quantized() const { return q_; }         // the same, before encoding

  // Untimed, before each timed run(): for a first-call row, hands the thread's kept scratch
  // (fast::release_scratch: the whole-tensor mapping and the per-unit block) and malloc's free
  // memory back to the kernel, so that the call faults its scratch in as a process's first call does.
  void before_timing() {
    if (!kernel_.first_call) return;
    fast::release_scratch();
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
  }

  Status run() {
    if (!status_.ok()) return status_;
    const fast::OutputPolicy pol = kernel_.api == Api::bytes_single_pass ? fast::OutputPolicy::single_pass
                                                                          : fast::OutputPolicy::untouched_on_error;
    if (kernel_.direction == Direction::quantize) {
      if (kernel_.api == Api::codes) {
        return fast::quantize_into(scheme_, shape_, x_.data(), x_.size(), options_, codes_.data(), scale_bits_.data(),
                                   &global_bits_, zero_points_.data());
      }
      return fast::quantize_to_bytes(scheme_, shape_, x_.data(), x_.size(), options_, kernel_.format, bytes_.data(),
                                     bytes_.size(), pol);
    }
    if (kernel_.api == Api::codes) return fast::dequantize_into(q_, out_.data(), out_.size());
    const std::size_t was = fast::kernels::StreamBytes();
    if (kernel_.streamed) fast::kernels::SetStreamBytes(0);
    const Status st = kernel_.recipe || kernel_.format != ByteFormat::burn
                          ? fast::dequantize_from_bytes(scheme_, shape_, bytes_.data(), bytes_.size(), rules_of(options_),
                                                        kernel_.format, out_.data(), out_.size(), pol)
                          : fast::dequantize_from_bytes(scheme_, shape_, bytes_.data(), bytes_.size(), kernel_.profile,
                                                        out_.data(), out_.size(), pol);
    fast::kernels::SetStreamBytes(was);
    return st;
  }

 private:
  Kernel kernel_;
  std::span<const float> x_;
  Buffer<float> shifted_;  // the input at input_offset, when there is one
  Status status_;
  Scheme scheme_{};
  std::vector<std::uint64_t> shape_;
  QuantizeOptions options_;
  std::vector<std::int32_t> codes_;
  std::vector<std::uint32_t> scale_bits_;
  std::uint32_t global_bits_ = 0;
  std::vector<std::int32_t> zero_points_;
  Buffer<std::uint8_t> bytes_;
  QuantizedTensor q_{};
  Buffer<float> out_;
};

// Reads a buffer of its own before a timed call, so that the call finds neither its input nor
// the previous call's output in any cache: every row starts cold. Without it a call ran on what
// the call before left in the L3, and how much that was depended on the pair (the last lines one
// call read are the first the next one misses, or not): the ratio of a kernel to the baseline
// run just after it measured the order of the runs as much as the kernel.
class CacheEvictor {
 public:
  explicit CacheEvictor(std::size_t bytes) : buf_(bytes / sizeof(std::uint64_t)) {
    for (std::size_t i = 0; i < buf_.size(); ++i) buf_[i] = i;
  }
  void operator()() {
    std::uint64_t sum = 0;
    for (std::uint64_t v : buf_) sum += v;
    sink_ = sum;
  }

 private:
  Buffer<std::uint64_t> buf_;
  volatile std::uint64_t sink_ = 0;
};

// Best (smallest) wall time in seconds of `reps` calls of f.
template <class F>
double best_seconds(int reps, F f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace qscheme::bench
