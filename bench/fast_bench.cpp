// Throughput of the fast engine on 64 MiB of f32 against streaming baselines.
//   baseline_read4_write1: read 4 B, write 1 B per element (the least a quantizer must move)
//   baseline_read1_write4: read 1 B, write 4 B per element (the least a dequantizer must move)
// Counters: GB/s of f32 data (input for quantize, output for dequantize) and vs_baseline, the
// ratio of this throughput to the matching baseline's (1.0 = memory-bound like the baseline).
// Run: build/bin/qscheme_bench [--benchmark_min_time=1] ; QSCHEME_TARGET=AVX2 to force a target;
// --threads is not a benchmark flag: set QSCHEME_BENCH_THREADS=n.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "fast/fast.hpp"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"

namespace {

constexpr std::size_t kN = (64u << 20) / sizeof(float);  // 64 MiB of f32

const std::vector<float>& Input() {
  static const std::vector<float> x = [] {
    std::vector<float> v(kN);
    std::mt19937 rng(1);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (auto& f : v) f = nd(rng);
    return v;
  }();
  return x;
}

double g_base_q = 0, g_base_dq = 0;  // baseline GB/s

void Report(benchmark::State& state, double seconds, double base, bool is_baseline, double* store) {
  const double gbps = static_cast<double>(state.iterations()) * kN * sizeof(float) / seconds / 1e9;
  state.counters["GB/s"] = gbps;
  if (is_baseline) *store = gbps;
  if (base > 0) state.counters["vs_baseline"] = gbps / base;
}

void ApplyThreads() {
  if (const char* t = std::getenv("QSCHEME_BENCH_THREADS")) qscheme::fast::set_threads(static_cast<unsigned>(std::atoi(t)));
}

void BM_baseline_read4_write1(benchmark::State& state) {
  const auto& x = Input();
  std::vector<std::uint8_t> out(kN);
  double secs = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const float* p = x.data();
    std::uint8_t* o = out.data();
    for (std::size_t i = 0; i < kN; ++i) {
      std::uint32_t b;
      std::memcpy(&b, p + i, 4);
      o[i] = static_cast<std::uint8_t>(b >> 24);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  Report(state, secs, 0, true, &g_base_q);
}

void BM_baseline_read1_write4(benchmark::State& state) {
  std::vector<std::uint8_t> in(kN);
  for (std::size_t i = 0; i < kN; ++i) in[i] = static_cast<std::uint8_t>(i * 7);
  std::vector<float> out(kN);
  double secs = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < kN; ++i) out[i] = static_cast<float>(static_cast<std::int8_t>(in[i]));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  Report(state, secs, 0, true, &g_base_dq);
}

void Quantize(benchmark::State& state, const char* scheme, bool bytes) {
  ApplyThreads();
  const auto s = qscheme::parse_scheme(scheme).value();
  const std::vector<std::uint64_t> shape{kN / 4096, 4096};
  const auto& x = Input();
  double secs = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto q = qscheme::fast::quantize(s, shape, x);
    if (!q) state.SkipWithError(q.status().to_string().c_str());
    if (bytes) {
      auto b = qscheme::fast::encode(*q);
      benchmark::DoNotOptimize(b->data());
    }
    benchmark::DoNotOptimize(q->codes.data());
    secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  Report(state, secs, g_base_q, false, nullptr);
  state.SetLabel(qscheme::fast::current_target());
}

// quantize_into with preallocated outputs: the engine without the allocation of a fresh 64 MiB
// codes vector (page faults) per call.
void QuantizeInto(benchmark::State& state, const char* scheme) {
  ApplyThreads();
  const auto s = qscheme::parse_scheme(scheme).value();
  const std::vector<std::uint64_t> shape{kN / 4096, 4096};
  const auto l = qscheme::make_layout(s, shape).value();
  const auto& x = Input();
  std::vector<std::int32_t> codes(kN);
  std::vector<std::uint32_t> sb(l.scales);
  std::uint32_t gb = 0;
  double secs = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto st = qscheme::fast::quantize_into(s, shape, x.data(), x.size(), {}, codes.data(), sb.data(), &gb);
    if (!st.ok()) state.SkipWithError(st.to_string().c_str());
    benchmark::DoNotOptimize(codes.data());
    secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  Report(state, secs, g_base_q, false, nullptr);
  state.SetLabel(qscheme::fast::current_target());
}
void BM_quantize_into_q8_0(benchmark::State& s) { QuantizeInto(s, "q8s:block[32]=f16"); }
void BM_quantize_into_nvfp4(benchmark::State& s) { QuantizeInto(s, "e2m1:packed-native(0):block[16]=ue4m3:tensor=f32"); }

void BM_quantize_q8_0(benchmark::State& s) { Quantize(s, "q8s:block[32]=f16", false); }
void BM_quantize_q4_0(benchmark::State& s) { Quantize(s, "q4s:packed-u32(0):block[32]=f16", false); }
void BM_quantize_nvfp4(benchmark::State& s) { Quantize(s, "e2m1:packed-native(0):block[16]=ue4m3:tensor=f32", false); }
void BM_quantize_mxfp8(benchmark::State& s) { Quantize(s, "e4m3:block[32]=ue8m0", false); }
void BM_quantize_encode_q8_0(benchmark::State& s) { Quantize(s, "q8s:block[32]=f16", true); }
void BM_quantize_encode_q4_0(benchmark::State& s) { Quantize(s, "q4s:packed-u32(0):block[32]=f16", true); }

void BM_dequantize_q8_0(benchmark::State& state) {
  ApplyThreads();
  const auto s = qscheme::parse_scheme("q8s:block[32]=f16").value();
  const std::vector<std::uint64_t> shape{kN / 4096, 4096};
  const auto q = qscheme::fast::quantize(s, shape, Input()).value();
  std::vector<float> out(kN);
  double secs = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto st = qscheme::fast::dequantize_into(q, out.data(), out.size());
    if (!st.ok()) state.SkipWithError(st.to_string().c_str());
    benchmark::DoNotOptimize(out.data());
    secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  Report(state, secs, g_base_dq, false, nullptr);
  state.SetLabel(qscheme::fast::current_target());
}

}  // namespace

BENCHMARK(BM_baseline_read4_write1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_baseline_read1_write4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quantize_q8_0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quantize_q4_0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quantize_nvfp4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quantize_mxfp8)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quantize_encode_q8_0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quantize_encode_q4_0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quantize_into_q8_0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quantize_into_nvfp4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequantize_q8_0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
