// Throughput of the fast engine on 64 MiB of f32 against streaming baselines. The input, the
// baselines and the kernel list are bench/baseline.hpp's, shared with `qscheme bench`.
//   baseline_read4_write1: read 4 B, write 1 B per element (the least a quantizer must move)
//   baseline_read1_write4: read 1 B, write 4 B per element (the least a dequantizer must move)
//   baseline_read4_write1_stream, baseline_read1_write4_stream: the same with streaming stores
//   baseline_two_pass: read 4 B twice, write 0.5 B per element (the least a two-level quantizer
//     such as nvfp4 must move); baseline_two_pass_prefetched: the same with the engine's max |x|
//     pass and prefetching: a two-level kernel with no arithmetic, passes as fast as we found
//     them; baseline_two_pass_block_maxima: nvfp4's own bytes (the engine's block-maxima prepass,
//     then codes and scales) with no arithmetic in the second pass
//   baseline_read4_write1_in_cache, baseline_read1_write4_in_cache: the in-cache probe (the plain
//     loops on 64K elements that stay in L2), against which the in-cache rows are measured;
//     baseline_inexact_q8_0_in_cache: q8_0's arithmetic with nothing exact and nothing checked,
//     against that probe (bench::baseline_inexact_q8_0_range)
// The kernels' rows follow bench::kernels(): in-cache rows run warm on one thread; a process's
// first call runs this binary again as a child (QSCHEME_BENCH_FIRST_CALL_OF) and reports the
// child's first call as the iteration's time, its best later call as later_s. The peers' rows
// (bench/peers.hpp) add qscheme_over_peer, their qscheme row's throughput over theirs.
// Counters: GB/s of f32 data (input for quantize, output for dequantize) and vs_baseline, the
// ratio of this throughput to the matching baseline's (1.0 = memory-bound like the baseline).
// Run: build/bin/qscheme_bench [--benchmark_min_time=1] ; QSCHEME_TARGET=AVX2 to force a target;
// --threads is not a benchmark flag: set QSCHEME_BENCH_THREADS=n (the baselines use as many).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bench/baseline.hpp"
#include "bench/first_call.hpp"
#include "bench/peers.hpp"
#include "fast/fast.hpp"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"

namespace {

namespace qb = qscheme::bench;
constexpr std::size_t kN = qb::kDefaultMiB * (std::size_t{1} << 20) / sizeof(float);

const qb::Buffer<float>& Input() {
  static const qb::Buffer<float> x = qb::make_input(kN);
  return x;
}

const qb::Buffer<float>& InCacheInput() {
  static const qb::Buffer<float> x = qb::make_input(qb::kInCacheElements);
  return x;
}

double g_base_q = 0, g_base_dq = 0;    // baseline GB/s
double g_probe_q = 0, g_probe_dq = 0;  // in-cache probe GB/s

// Before every timed call, as `qscheme bench` does (its --evict-mib; here QSCHEME_BENCH_EVICT_MIB,
// default and cap as there): every call starts with cold caches.
void Evict() {
  static qb::CacheEvictor evict([] {
    const char* m = std::getenv("QSCHEME_BENCH_EVICT_MIB");
    const std::size_t mib = m ? static_cast<std::size_t>(std::strtoull(m, nullptr, 10)) : qb::kDefaultEvictMiB;
    return std::min(mib, qb::kMaxEvictMiB) << 20;
  }());
  evict();
}

void Report(benchmark::State& state, double seconds, double base, bool is_baseline, double* store,
            std::size_t elements = kN) {
  const double gbps = static_cast<double>(state.iterations()) * elements * sizeof(float) / seconds / 1e9;
  state.counters["GB/s"] = gbps;
  if (is_baseline) *store = gbps;
  if (base > 0) state.counters["vs_baseline"] = gbps / base;
}

template <class F>
double Timed(F f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A baseline loop f32 -> bytes (fn(x, out, n, threads)) over the benchmark input. vs_baseline
// against *base when given; the plain read4/write1 loop stores its own GB/s instead.
template <class Fn>
void QuantizeBaseline(benchmark::State& state, Fn fn, const double* base, double* store) {
  const unsigned threads = qscheme::fast::threads();
  const auto& x = Input();
  qb::Buffer<std::uint8_t> out(kN);
  double secs = 0;
  for (auto _ : state) {
    Evict();
    secs += Timed([&] { fn(x.data(), out.data(), kN, threads); });
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state, secs, base ? *base : 0, store != nullptr, store);
}

// The same for a loop bytes -> f32 (the dequantize direction).
template <class Fn>
void DequantizeBaseline(benchmark::State& state, Fn fn, const double* base, double* store) {
  const unsigned threads = qscheme::fast::threads();
  qb::Buffer<std::uint8_t> in(kN);
  for (std::size_t i = 0; i < kN; ++i) in[i] = static_cast<std::uint8_t>(i * 7);
  qb::Buffer<float> out(kN);
  double secs = 0;
  for (auto _ : state) {
    Evict();
    secs += Timed([&] { fn(in.data(), out.data(), kN, threads); });
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state, secs, base ? *base : 0, store != nullptr, store);
}

void BM_baseline_read4_write1(benchmark::State& state) {
  QuantizeBaseline(state, qb::baseline_read4_write1, nullptr, &g_base_q);
}
void BM_baseline_read1_write4(benchmark::State& state) {
  DequantizeBaseline(state, qb::baseline_read1_write4, nullptr, &g_base_dq);
}
// The streaming-store loops (bench/baseline.hpp); vs_baseline against their plain loops.
void BM_baseline_read4_write1_stream(benchmark::State& state) {
  QuantizeBaseline(state, qb::baseline_read4_write1_stream, &g_base_q, nullptr);
}
void BM_baseline_read1_write4_stream(benchmark::State& state) {
  DequantizeBaseline(state, qb::baseline_read1_write4_stream, &g_base_dq, nullptr);
}
// The two-pass bound of two-level kernels (bench/baseline.hpp); vs_baseline against read4/write1.
void BM_baseline_two_pass(benchmark::State& state) {
  QuantizeBaseline(state, qb::baseline_two_pass, &g_base_q, nullptr);
}
void BM_baseline_two_pass_prefetched(benchmark::State& state) {
  QuantizeBaseline(state, qb::baseline_two_pass_prefetched, &g_base_q, nullptr);
}
void BM_baseline_two_pass_block_maxima(benchmark::State& state) {
  QuantizeBaseline(state, qb::baseline_two_pass_block_maxima, &g_base_q, nullptr);
}

// The in-cache probe (bench::probe_in_cache): kInCacheCalls passes per iteration, one thread.
void BM_probe_in_cache(benchmark::State& state, qb::Direction d) {
  const auto& x = InCacheInput();
  qb::Buffer<std::uint8_t> q(qb::kInCacheElements), dq_in(qb::kInCacheElements);
  qb::Buffer<float> dq_out(qb::kInCacheElements);
  for (std::size_t i = 0; i < dq_in.size(); ++i) dq_in[i] = static_cast<std::uint8_t>(i * 7);
  qb::probe_in_cache(d, x.data(), q.data(), dq_in.data(), dq_out.data());
  double secs = 0;
  for (auto _ : state) {
    secs += Timed([&] { qb::probe_in_cache(d, x.data(), q.data(), dq_in.data(), dq_out.data()); });
    benchmark::ClobberMemory();
  }
  Report(state, secs, 0, true, d == qb::Direction::quantize ? &g_probe_q : &g_probe_dq,
         qb::kInCacheElements * qb::kInCacheCalls);
}

// q8_0's arithmetic with nothing exact and nothing checked (bench::baseline_inexact_q8_0_range):
// kInCacheCalls passes per iteration, one thread, against the in-cache probe.
void BM_baseline_inexact_q8_0_in_cache(benchmark::State& state) {
  const auto& x = InCacheInput();
  qb::Buffer<std::int8_t> codes(qb::kInCacheElements);
  qb::Buffer<float> scales(qb::kInCacheElements / 32);
  auto pass = [&] {
    for (int c = 0; c < qb::kInCacheCalls; ++c) {
      qb::baseline_inexact_q8_0_range(x.data(), codes.data(), scales.data(), qb::kInCacheElements);
    }
  };
  pass();
  double secs = 0;
  for (auto _ : state) {
    secs += Timed(pass);
    benchmark::ClobberMemory();
  }
  Report(state, secs, g_probe_q, false, nullptr, qb::kInCacheElements * qb::kInCacheCalls);
}

// The engine on one thread while it lives, as the in-cache rows run.
struct OneThread {
  unsigned was = qscheme::fast::threads();
  OneThread() { (void)qscheme::fast::set_threads(1); }
  ~OneThread() { (void)qscheme::fast::set_threads(was); }
};

// A row of kernels() with in_cache: kInCacheCalls warm calls per iteration.
void BM_kernel_in_cache(benchmark::State& state, const qb::Kernel& k) {
  const OneThread one;
  qb::KernelRun run(k, InCacheInput());
  if (const auto st = run.run(); !st.ok()) state.SkipWithError(st.to_string().c_str());
  double secs = 0;
  for (auto _ : state) {
    qscheme::Status st;
    secs += Timed([&] {
      for (int c = 0; c < qb::kInCacheCalls; ++c) st = run.run();
    });
    if (!st.ok()) state.SkipWithError(st.to_string().c_str());
    benchmark::ClobberMemory();
  }
  Report(state, secs, k.direction == qb::Direction::quantize ? g_probe_q : g_probe_dq, false, nullptr,
         qb::kInCacheElements * qb::kInCacheCalls);
  state.SetLabel(qscheme::fast::current_target());
}

// A row of kernels() with process_first_call: each iteration a child process's first call.
void BM_process_first_call(benchmark::State& state, const qb::Kernel& k) {
  double secs = 0, later = 1e300, warm_up = 1e300;
  for (auto _ : state) {
    auto f = qb::first_call_in_child({}, {std::string("QSCHEME_BENCH_FIRST_CALL_OF=") + k.name});
    if (!f) {
      state.SkipWithError(f.status().to_string().c_str());
      break;
    }
    state.SetIterationTime(f->first_s);
    secs += f->first_s;
    later = std::min(later, f->later_s);
    warm_up = std::min(warm_up, f->warm_up_s);
  }
  Report(state, secs, k.direction == qb::Direction::quantize ? g_probe_q : g_probe_dq, false, nullptr,
         qb::kInCacheElements);
  state.counters["later_s"] = later;
  state.counters["first_over_later"] = secs / static_cast<double>(state.iterations()) / later;
  if (k.warm_up) state.counters["warm_up_s"] = warm_up;
}

// One kernel of qb::kernels(): what `qscheme bench` times, here under Google Benchmark.
void BM_kernel(benchmark::State& state, const qb::Kernel& k) {
  qb::KernelRun run(k, Input());
  double secs = 0;
  for (auto _ : state) {
    qscheme::Status st;
    run.before_timing();
    Evict();
    secs += Timed([&] { st = run.run(); });
    if (!st.ok()) state.SkipWithError(st.to_string().c_str());
    benchmark::ClobberMemory();
  }
  Report(state, secs, k.direction == qb::Direction::quantize ? g_base_q : g_base_dq, false, nullptr);
  state.SetLabel(qscheme::fast::current_target());
}

// A peer (bench/peers.hpp) on its qscheme row's input; each iteration times the qscheme row and
// then the peer, both cold, and counts the peer's time.
void BM_peer(benchmark::State& state, const qb::Peer& p) {
  const qb::Kernel* k = nullptr;
  for (const qb::Kernel& c : qb::kernels()) {
    if (std::string_view(c.name) == p.qscheme_row) k = &c;
  }
  if (!k) {
    state.SkipWithError("the peer's qscheme row is not in bench::kernels()");
    return;
  }
  qb::KernelRun q(*k, Input());
  auto in = qb::peer_input(q, p.direction, qscheme::fast::threads());
  if (!in) {
    state.SkipWithError(in.status().to_string().c_str());
    return;
  }
  auto peer = qb::make_peer_run(p, *in);
  if (!peer) {
    state.SkipWithError(peer.status().to_string().c_str());
    return;
  }
  double secs = 0, qsecs = 0;
  for (auto _ : state) {
    qscheme::Status qs, ps;
    Evict();
    qsecs += Timed([&] { qs = q.run(); });
    Evict();
    const double t = Timed([&] { ps = (*peer)->run(); });
    if (!qs.ok()) state.SkipWithError(qs.to_string().c_str());
    if (!ps.ok()) state.SkipWithError(ps.to_string().c_str());
    state.SetIterationTime(t);
    secs += t;
    benchmark::ClobberMemory();
  }
  Report(state, secs, p.direction == qb::Direction::quantize ? g_base_q : g_base_dq, false, nullptr);
  state.counters["qscheme_over_peer"] = secs / qsecs;
}

// The allocating path an engine gets bytes through (C API qscheme_fast_quantize):
// fast::quantize then fast::encode into fresh vectors.
void BM_quantize_encode(benchmark::State& state, const char* scheme) {
  const auto s = qscheme::parse_scheme(scheme).value();
  const auto shape = qb::input_shape(kN);
  double secs = 0;
  for (auto _ : state) {
    Evict();
    secs += Timed([&] {
      auto q = qscheme::fast::quantize(s, shape, Input());
      if (!q) state.SkipWithError(q.status().to_string().c_str());
      auto b = qscheme::fast::encode(*q);
      benchmark::DoNotOptimize(b->data());
    });
  }
  Report(state, secs, g_base_q, false, nullptr);
  state.SetLabel(qscheme::fast::current_target());
}

}  // namespace

int main(int argc, char** argv) {
  // The child of a process_first_call row: nothing may call the engine before it.
  if (const char* name = std::getenv("QSCHEME_BENCH_FIRST_CALL_OF")) {
    for (const qb::Kernel& k : qb::kernels()) {
      if (k.process_first_call && std::string_view(k.name) == name) {
        (void)qscheme::fast::set_threads(1);
        auto f = qb::time_first_call(k, qb::kInCacheElements, 20 * qb::kInCacheCalls);
        if (!f) {
          std::fprintf(stderr, "qscheme_bench: %s\n", f.status().to_string().c_str());
          return 1;
        }
        std::fputs(qb::format_first_call(*f).c_str(), stdout);
        return 0;
      }
    }
    std::fprintf(stderr, "qscheme_bench: QSCHEME_BENCH_FIRST_CALL_OF=%s names no first-call row\n", name);
    return 2;
  }
  // Figures for another target than the one QSCHEME_TARGET asks for would be mislabelled.
  if (const qscheme::Status st = qscheme::fast::target_env_status(); !st.ok()) {
    std::fprintf(stderr, "qscheme_bench: %s\n", st.to_string().c_str());
    return 2;
  }
  if (const char* t = std::getenv("QSCHEME_BENCH_THREADS")) {
    if (const qscheme::Status st = qscheme::fast::set_threads(static_cast<unsigned>(std::atoi(t))); !st.ok()) {
      std::fprintf(stderr, "qscheme_bench: QSCHEME_BENCH_THREADS=%s: %s\n", t, st.to_string().c_str());
      return 2;
    }
  }
  benchmark::RegisterBenchmark("baseline_read4_write1", BM_baseline_read4_write1)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("baseline_read1_write4", BM_baseline_read1_write4)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("baseline_read4_write1_stream", BM_baseline_read4_write1_stream)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("baseline_read1_write4_stream", BM_baseline_read1_write4_stream)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("baseline_two_pass", BM_baseline_two_pass)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("baseline_two_pass_prefetched", BM_baseline_two_pass_prefetched)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("baseline_two_pass_block_maxima", BM_baseline_two_pass_block_maxima)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("baseline_read4_write1_in_cache",
                               [](benchmark::State& s) { BM_probe_in_cache(s, qb::Direction::quantize); })
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("baseline_read1_write4_in_cache",
                               [](benchmark::State& s) { BM_probe_in_cache(s, qb::Direction::dequantize); })
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("baseline_inexact_q8_0_in_cache", BM_baseline_inexact_q8_0_in_cache)
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  auto row_name = [](const char* text) {
    std::string name = text;
    for (char& c : name) c = c == ' ' ? '_' : c;
    return name;
  };
  for (const qb::Kernel& k : qb::kernels()) {
    const std::string name = row_name(k.name);
    if (k.process_first_call) {
      benchmark::RegisterBenchmark(name.c_str(), [&k](benchmark::State& s) { BM_process_first_call(s, k); })
          ->Unit(benchmark::kMicrosecond)
          ->UseManualTime()
          ->Iterations(5);
    } else if (k.in_cache) {
      benchmark::RegisterBenchmark(name.c_str(), [&k](benchmark::State& s) { BM_kernel_in_cache(s, k); })
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    } else {
      benchmark::RegisterBenchmark(name.c_str(), [&k](benchmark::State& s) { BM_kernel(s, k); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  for (const qb::Peer& p : qb::peers()) {
    benchmark::RegisterBenchmark(row_name(p.name).c_str(), [&p](benchmark::State& s) { BM_peer(s, p); })
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime();
  }
  if (const std::string why = qb::peers_absent_reason(); !why.empty()) std::fprintf(stderr, "qscheme_bench: %s\n", why.c_str());
  benchmark::RegisterBenchmark("quantize_encode_q8_0", [](benchmark::State& s) { BM_quantize_encode(s, "q8_0"); })
      ->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("quantize_encode_q4_0", [](benchmark::State& s) { BM_quantize_encode(s, "q4_0"); })
      ->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
