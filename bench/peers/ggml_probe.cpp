// ggml's own q8_0 and q4_0 quantizers and its q8_0 dequantizer (ggml-org/ggml's CPU libraries,
// built as bench/peers/README.md says) on the input of `qscheme bench` (64 MiB of N(0, 1) f32,
// [4096, 4096]), each call cold (512 MiB read before it), in rounds with the same-run baseline
// loop of its direction (read4/write1, read1/write4) and the qscheme row that writes or reads the
// same blocks; best of each over the rounds. Also checks that qscheme's blocks and values are
// ggml's where the recipe is that function's. With --in-cache: the same pairs on the in-cache
// rows' input (bench::kInCacheElements, warm, bench::kInCacheCalls calls per timing) against the
// in-cache probe (bench::probe_in_cache), as `qscheme bench` times its in-cache rows.
//   ggml_probe [REPS [MIB]]        (pin it: taskset -c 1 build/bin/ggml_probe 5)
//   ggml_probe --in-cache [REPS]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/baseline.hpp"
#include "fast/fast.hpp"

// ggml's functions, declared here so that no ggml header is needed (ggml-cpu/quants.h,
// ggml-quants.h): the blocks are block_q8_0 (34 bytes) and block_q4_0 (18 bytes).
extern "C" {
void quantize_row_q8_0(const float* x, void* y, std::int64_t k);      // ggml-cpu: x86's AVX2 branch
void quantize_row_q4_0(const float* x, void* y, std::int64_t k);      // ggml-cpu: quantize_row_q4_0_ref
void quantize_row_q8_0_ref(const float* x, void* y, std::int64_t k);  // ggml-base: what writes model files
void dequantize_row_q8_0(const void* x, float* y, std::int64_t k);    // ggml-base: q8_0's to_float
void dequantize_row_q4_0(const void* x, float* y, std::int64_t k);    // ggml-base: q4_0's to_float
}

namespace {

using qscheme::bench::Direction;

struct Pair {
  const char* ggml;
  const char* qscheme_row;  // a row of bench::kernels() on ggml's blocks
  Direction direction;
  std::function<void(const float* x, const std::uint8_t* blocks_in, void* out, std::int64_t k)> run;
};

const qscheme::bench::Kernel* find_kernel(const char* name) {
  for (const auto& k : qscheme::bench::kernels()) {
    if (std::strcmp(k.name, name) == 0) return &k;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const bool in_cache = argc > 1 && std::strcmp(argv[1], "--in-cache") == 0;
  if (in_cache) {
    --argc;
    ++argv;
  }
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::size_t mib = argc > 2 ? static_cast<std::size_t>(std::max(1, std::atoi(argv[2]))) : 64;
  if (!qscheme::fast::set_threads(1).ok()) return 2;
  const std::size_t n = in_cache ? qscheme::bench::kInCacheElements : mib * (std::size_t{1} << 20) / sizeof(float);
  const auto k = static_cast<std::int64_t>(n);
  const auto x = qscheme::bench::make_input(n);
  qscheme::bench::Buffer<std::uint8_t> base_q(n), base_dq_in(n), blocks(n / 32 * 34);
  qscheme::bench::Buffer<float> base_dq(n), values(n);
  for (std::size_t i = 0; i < n; ++i) base_dq_in[i] = static_cast<std::uint8_t>(i * 7);
  qscheme::bench::CacheEvictor evict(qscheme::bench::kDefaultEvictMiB << 20);
  // Cold: one call after the evictor. In cache: kInCacheCalls warm calls, per call, the best of
  // 20 such timings (a 64K call takes microseconds: one timing would be mostly noise).
  auto timed = [&](auto f) {
    if (!in_cache) {
      evict();
      return qscheme::bench::best_seconds(1, f);
    }
    f();
    return qscheme::bench::best_seconds(20, [&] {
             for (int c = 0; c < qscheme::bench::kInCacheCalls; ++c) f();
           }) /
           qscheme::bench::kInCacheCalls;
  };
  const std::vector<Pair> pairs = {
      {"quantize_row_q8_0 (ggml-cpu, AVX2)", "quantize q8_0 ggml-q8_0-x86", Direction::quantize,
       [](const float* in, const std::uint8_t*, void* out, std::int64_t m) { quantize_row_q8_0(in, out, m); }},
      {"quantize_row_q8_0_ref", "quantize q8_0 ggml-q8_0", Direction::quantize,
       [](const float* in, const std::uint8_t*, void* out, std::int64_t m) { quantize_row_q8_0_ref(in, out, m); }},
      {"quantize_row_q4_0 (= _ref)", "quantize q4_0 ggml-q4_0", Direction::quantize,
       [](const float* in, const std::uint8_t*, void* out, std::int64_t m) { quantize_row_q4_0(in, out, m); }},
      {"dequantize_row_q8_0", "dequantize q8_0 ggml bytes", Direction::dequantize,
       [](const float*, const std::uint8_t* in, void* out, std::int64_t m) {
         dequantize_row_q8_0(in, static_cast<float*>(out), m);
       }},
      {"dequantize_row_q4_0", "dequantize q4_0 ggml bytes", Direction::dequantize,
       [](const float*, const std::uint8_t* in, void* out, std::int64_t m) {
         dequantize_row_q4_0(in, static_cast<float*>(out), m);
       }},
  };
  if (in_cache) {
    std::printf("ggml_probe --in-cache: %zu f32 (the in-cache rows' input), one thread, warm, %d calls per timing, "
                "best of %d rounds; ratios to the in-cache probe of the same rounds\n",
                n, qscheme::bench::kInCacheCalls, reps);
  } else {
    std::printf("ggml_probe: %zu MiB of f32 (%zu elements, qscheme bench's input), one thread, every call cold, best "
                "of %d rounds; ratios to the baseline loop of the same rounds\n",
                mib, n, reps);
  }
  std::printf("%-36s %10s %8s   %-28s %8s %14s  %s\n", "ggml", "GB/s f32", "ratio", "qscheme row", "ratio",
              "qscheme/ggml", "same output");
  for (const Pair& p : pairs) {
    const qscheme::bench::Kernel* kq = find_kernel(p.qscheme_row);
    if (!kq) return 2;
    qscheme::bench::KernelRun q(*kq, std::span<const float>(x.data(), n));
    if (!q.run().ok()) {
      std::fprintf(stderr, "%s: %s\n", p.qscheme_row, q.run().to_string().c_str());
      return 2;
    }
    const bool quantize = p.direction == Direction::quantize;
    void* out = quantize ? static_cast<void*>(blocks.data()) : static_cast<void*>(values.data());
    // The same output: ggml's blocks are qscheme's bytes; ggml's values are qscheme's dequantize
    // of the same blocks, bit for bit.
    p.run(x.data(), q.bytes().data(), out, k);
    bool same = false;
    if (quantize) {
      same = q.bytes().size() <= blocks.size() && std::memcmp(q.bytes().data(), blocks.data(), q.bytes().size()) == 0;
    } else {
      qscheme::bench::Buffer<float> mine(n);
      const auto st = qscheme::fast::dequantize_from_bytes(q.quantized().scheme, q.quantized().shape, q.bytes().data(),
                                                           q.bytes().size(), qscheme::rules_of(q.options()),
                                                           qscheme::ByteFormat::ggml, mine.data(), n);
      same = st.ok() && std::memcmp(mine.data(), values.data(), n * sizeof(float)) == 0;
    }
    double base = 1e300, qs = 1e300, gg = 1e300;
    for (int r = 0; r < reps; ++r) {
      base = std::min(base, timed([&] {
                        if (quantize) {
                          qscheme::bench::baseline_read4_write1(x.data(), base_q.data(), n);
                        } else {
                          qscheme::bench::baseline_read1_write4(base_dq_in.data(), base_dq.data(), n);
                        }
                      }));
      qs = std::min(qs, timed([&] { (void)q.run(); }));
      gg = std::min(gg, timed([&] { p.run(x.data(), q.bytes().data(), out, k); }));
    }
    std::printf("%-36s %10.2f %8.3f   %-28s %8.3f %14.3f  %s\n", p.ggml, static_cast<double>(n) * 4 / gg / 1e9,
                base / gg, p.qscheme_row, base / qs, gg / qs, same ? "yes" : "NO");
  }
  return 0;
}
