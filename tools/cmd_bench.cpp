// `qscheme bench`: in one run, the streaming-bandwidth baselines and the fast engine's kernels on
// the same f32 input (bench/baseline.hpp: the one definition of input, baselines and kernel list,
// shared with the Google Benchmark binary bench/qscheme_bench). Each figure is the best of --reps
// timed calls after one warm-up call. --vs-reference instead times reference vs fast quantize and
// dequantize on 1 MiB of f32 for every supported tuple of tuple_space() (or --schemes LIST),
// reference best of --reps and fast best of max(20, 10 x reps) in each of --sweeps passes over
// the tuples (best of all passes), and checks that their outputs agree.
#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "bench/baseline.hpp"
#include "bench/first_call.hpp"
#include "bench/peers.hpp"
#include "fast/fast.hpp"
#include "reference/reference.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"
#include "tools/affinity.hpp"
#include "tools/command.hpp"
#include "oracle/engine.hpp"
#include "tools/engine_options.hpp"

namespace qscheme::cli {
namespace {

struct BenchArgs {
  bool json = false;
  std::optional<std::string> threads;
  std::size_t mib = bench::kDefaultMiB;
  int reps = 5;
  bool vs_reference = false;
  int sweeps = 2;
  std::size_t evict_mib = bench::kDefaultEvictMiB;
  std::optional<std::string> schemes;
  std::optional<std::string> target;
  std::optional<std::string> cpus;
  std::optional<std::string> first_call_of;  // the child of a process_first_call row
  std::optional<std::string> rows;           // ';'-separated parts of the kernel rows' names to run
};

struct Row {
  std::string kernel;
  double elements_per_s;
  double gb_per_s;  // f32 data: the input of quantize, the output of dequantize
  double ratio_to_baseline;
  // Further keys of this row's JSON object (a first call's times, a peer's comparison); printed
  // after the row in the table.
  nlohmann::json extra = nlohmann::json::object();
};

Row make_row(std::string name, std::size_t elements, double secs, double base_secs) {
  const double eps = static_cast<double>(elements) / secs;
  return {std::move(name), eps, eps * sizeof(float) / 1e9, base_secs > 0 ? base_secs / secs : 1.0};
}

std::vector<std::string> split_list(const std::string& s, char sep);

// Whether --rows (parts of names, ';'-separated) selects the kernel row `name`; every row without it.
bool selected(const BenchArgs& args, std::string_view name) {
  if (!args.rows) return true;
  for (const std::string& part : split_list(*args.rows, ';')) {
    if (!part.empty() && name.find(part) != std::string_view::npos) return true;
  }
  return false;
}

const bench::Kernel* find_kernel(std::string_view name) {
  for (const bench::Kernel& k : bench::kernels()) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

// The child of a `process_first_call` row (bench/first_call.hpp): its first call, then later
// ones, printed for the parent. Nothing before it calls the engine.
int run_first_call_child(const BenchArgs& args) {
  const bench::Kernel* k = find_kernel(*args.first_call_of);
  if (!k || !k->process_first_call) {
    return report(Status(ErrorCode::invalid_argument, "--first-call-of: no such first-call row"));
  }
  auto f = bench::time_first_call(*k, bench::kInCacheElements, 20 * bench::kInCacheCalls);
  if (!f) return report(f.status());
  fmt::print("{}", bench::format_first_call(*f));
  return kExitOk;
}

// The engine on one thread while it lives (in-cache rows), the previous count restored after.
class OneThread {
 public:
  OneThread() : was_(fast::threads()) { (void)fast::set_threads(1); }
  ~OneThread() { (void)fast::set_threads(was_); }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  unsigned was_;
};

int run_kernels(const BenchArgs& args) {
  const std::size_t n = args.mib * (std::size_t{1} << 20) / sizeof(float);
  const unsigned threads = fast::threads();
  const bench::Buffer<float> x = bench::make_input(n);
  std::vector<Row> rows;
  // The machine's speed drifts (a shared VM): each kernel's ratio is taken against baseline runs
  // interleaved with its own, best of --reps each, so both see the same conditions.
  bench::Buffer<std::uint8_t> q_out(n), dq_in(n);
  bench::Buffer<float> dq_out(n);
  for (std::size_t i = 0; i < n; ++i) dq_in[i] = static_cast<std::uint8_t>(i * 7);
  auto base = [&](bench::Direction d) {
    if (d == bench::Direction::quantize) {
      bench::baseline_read4_write1(x.data(), q_out.data(), n, threads);
    } else {
      bench::baseline_read1_write4(dq_in.data(), dq_out.data(), n, threads);
    }
  };
  base(bench::Direction::quantize);  // warm-up, faults the pages in
  base(bench::Direction::dequantize);
  // The in-cache rows' input and the probe's buffers (bench::probe_in_cache).
  constexpr std::size_t nc = bench::kInCacheElements;
  const bench::Buffer<float> xc = bench::make_input(nc);
  bench::Buffer<std::uint8_t> qc(nc), dqc_in(nc);
  bench::Buffer<float> dqc_out(nc);
  for (std::size_t i = 0; i < nc; ++i) dqc_in[i] = static_cast<std::uint8_t>(i * 7);
  auto probe = [&](bench::Direction d) { bench::probe_in_cache(d, xc.data(), qc.data(), dqc_in.data(), dqc_out.data()); };
  // In-cache timings: kInCacheCalls calls each, so per call the time over kInCacheCalls.
  const int cache_rounds = 4 * args.reps;
  auto per_call = [](double batch) { return batch / bench::kInCacheCalls; };
  bench::CacheEvictor evict(args.evict_mib << 20);
  // One timed call, cold (CacheEvictor).
  auto timed = [&](auto f) {
    evict();
    return bench::best_seconds(1, f);
  };
  double best_q = 1e300, best_dq = 1e300, best_probe_q = 1e300, best_probe_dq = 1e300;
  // The baseline rows: the best of every interleaved run of the direction's loop.
  auto keep_best = [](bench::Direction d, double& q, double& dq, double t) {
    double& b = d == bench::Direction::quantize ? q : dq;
    b = std::min(b, t);
  };
  std::vector<Row> kernel_rows;
  for (const bench::Kernel& k : bench::kernels()) {
    if (!selected(args, k.name)) continue;
    double kbest = 1e300, bbest = 1e300;
    if (k.process_first_call) {
      std::vector<std::string> child{"bench", "--first-call-of", k.name};
      if (args.target) child.insert(child.end(), {"--target", *args.target});
      double later = 1e300;
      long faults = 0;
      double warm_up = 1e300;
      for (int r = 0; r < args.reps; ++r) {
        {
          const OneThread one;
          bbest = std::min(bbest, per_call(bench::best_seconds(1, [&] { probe(k.direction); })));
        }
        auto f = bench::first_call_in_child(child);
        if (!f) return report(Status(f.status().code(), std::string(k.name) + ": " + f.status().message()));
        if (f->first_s < kbest) faults = f->first_faults;
        kbest = std::min(kbest, f->first_s);
        later = std::min(later, f->later_s);
        warm_up = std::min(warm_up, f->warm_up_s);
      }
      keep_best(k.direction, best_probe_q, best_probe_dq, bbest);
      Row row = make_row(k.name, nc, kbest, bbest);
      row.extra = {{"first_call_s", kbest}, {"later_call_s", later}, {"first_over_later", kbest / later},
                   {"first_call_minor_faults", faults}};
      if (k.warm_up) row.extra["warm_up_s"] = warm_up;
      kernel_rows.push_back(std::move(row));
      continue;
    }
    if (k.in_cache) {
      const OneThread one;
      bench::KernelRun run(k, xc);
      if (Status st = run.run(); !st.ok()) return report(Status(st.code(), std::string(k.name) + ": " + st.message()));
      probe(k.direction);
      Status last;
      for (int r = 0; r < cache_rounds; ++r) {
        bbest = std::min(bbest, per_call(bench::best_seconds(1, [&] { probe(k.direction); })));
        kbest = std::min(kbest, per_call(bench::best_seconds(1, [&] {
                                  for (int c = 0; c < bench::kInCacheCalls; ++c) last = run.run();
                                })));
        if (!last.ok()) return report(last);
      }
      keep_best(k.direction, best_probe_q, best_probe_dq, bbest);
      kernel_rows.push_back(make_row(k.name, nc, kbest, bbest));
      continue;
    }
    bench::KernelRun run(k, x);
    if (Status st = run.run(); !st.ok()) return report(Status(st.code(), std::string(k.name) + ": " + st.message()));
    Status last;
    double two_best = 1e300;
    for (int r = 0; r < args.reps; ++r) {
      bbest = std::min(bbest, timed([&] { base(k.direction); }));
      if (k.two_pass) two_best = std::min(two_best, timed([&] { bench::baseline_two_pass(x.data(), q_out.data(), n, threads); }));
      run.before_timing();
      kbest = std::min(kbest, timed([&] { last = run.run(); }));
      if (!last.ok()) return report(last);
    }
    keep_best(k.direction, best_q, best_dq, bbest);
    Row row = make_row(k.name, n, kbest, bbest);
    if (k.two_pass) row.extra = {{"ratio_to_two_pass", two_best / kbest}};
    kernel_rows.push_back(std::move(row));
  }
  // What the in-cache quantize rows are up against: q8_0's arithmetic with nothing exact and
  // nothing checked (bench::baseline_inexact_q8_0_range), interleaved with the in-cache probe;
  // timed when a row timed that probe.
  double ibest = 1e300, ibase = 1e300;
  if (best_probe_q < 1e300) {
    const OneThread one;
    bench::Buffer<float> scales(nc / 32);
    auto* codes = reinterpret_cast<std::int8_t*>(qc.data());
    for (int r = 0; r < cache_rounds; ++r) {
      ibase = std::min(ibase, per_call(bench::best_seconds(1, [&] { probe(bench::Direction::quantize); })));
      ibest = std::min(ibest, per_call(bench::best_seconds(1, [&] {
                         for (int c = 0; c < bench::kInCacheCalls; ++c) {
                           bench::baseline_inexact_q8_0_range(xc.data(), codes, scales.data(), nc);
                         }
                       })));
    }
  }
  // The peers (bench/peers.hpp): each timed interleaved with its plain baseline and with the
  // qscheme row it pairs with, on that row's input.
  std::vector<Row> peer_rows;
  for (const bench::Peer& p : bench::peers()) {
    if (!selected(args, p.name) && !selected(args, p.qscheme_row)) continue;
    auto fail = [&](const Status& st) { return report(Status(st.code(), std::string(p.name) + ": " + st.message())); };
    const bench::Kernel* k = find_kernel(p.qscheme_row);
    if (!k) return fail(Status(ErrorCode::internal, std::string("no row ") + p.qscheme_row));
    bench::KernelRun qrun(*k, x);
    if (Status st = qrun.run(); !st.ok()) return fail(st);
    auto in = bench::peer_input(qrun, p.direction, threads);
    if (!in) return fail(in.status());
    auto peer = bench::make_peer_run(p, *in);
    if (!peer) return fail(peer.status());
    if (Status st = (*peer)->run(); !st.ok()) return fail(st);
    double pbest = 1e300, qbest = 1e300, bbest = 1e300;
    Status qlast, plast;
    for (int r = 0; r < args.reps; ++r) {
      bbest = std::min(bbest, timed([&] { base(p.direction); }));
      qbest = std::min(qbest, timed([&] { qlast = qrun.run(); }));
      pbest = std::min(pbest, timed([&] { plast = (*peer)->run(); }));
      if (!qlast.ok()) return fail(qlast);
      if (!plast.ok()) return fail(plast);
    }
    keep_best(p.direction, best_q, best_dq, bbest);
    Row row = make_row(p.name, n, pbest, bbest);
    row.extra = {{"qscheme_row", p.qscheme_row}, {"qscheme_over_peer", pbest / qbest}};
    peer_rows.push_back(std::move(row));
  }
  // The streaming-store loops and the two-pass bound of two-level kernels (bench/baseline.hpp),
  // each interleaved with its plain loop and shown as a ratio to it.
  double sq = 1e300, sq_base = 1e300, sdq = 1e300, sdq_base = 1e300, tbest = 1e300, tbase = 1e300, pbest = 1e300,
         pbase = 1e300, mbest = 1e300, mbase = 1e300;
  for (int r = 0; r < args.reps; ++r) {
    sq_base = std::min(sq_base, timed([&] { base(bench::Direction::quantize); }));
    sq = std::min(sq, timed([&] { bench::baseline_read4_write1_stream(x.data(), q_out.data(), n, threads); }));
    sdq_base = std::min(sdq_base, timed([&] { base(bench::Direction::dequantize); }));
    sdq = std::min(sdq, timed([&] { bench::baseline_read1_write4_stream(dq_in.data(), dq_out.data(), n, threads); }));
    tbase = std::min(tbase, timed([&] { base(bench::Direction::quantize); }));
    tbest = std::min(tbest, timed([&] { bench::baseline_two_pass(x.data(), q_out.data(), n, threads); }));
    pbase = std::min(pbase, timed([&] { base(bench::Direction::quantize); }));
    pbest = std::min(pbest, timed([&] { bench::baseline_two_pass_prefetched(x.data(), q_out.data(), n, threads); }));
    mbase = std::min(mbase, timed([&] { base(bench::Direction::quantize); }));
    mbest = std::min(mbest, timed([&] { bench::baseline_two_pass_block_maxima(x.data(), q_out.data(), n, threads); }));
  }
  // A baseline that only the kernel rows time is left out when --rows selects none of them.
  auto baseline = [&](const char* name, std::size_t elements, double secs, double base_secs) {
    if (secs < 1e300) rows.push_back(make_row(name, elements, secs, base_secs));
  };
  baseline("baseline read4 write1", n, best_q, 0);
  baseline("baseline read1 write4", n, best_dq, 0);
  baseline("baseline read4 write1 streaming", n, sq, sq_base);
  baseline("baseline read1 write4 streaming", n, sdq, sdq_base);
  baseline("baseline two-pass read4 read4 write0.5", n, tbest, tbase);
  baseline("baseline two-pass prefetched", n, pbest, pbase);
  baseline("baseline two-pass block maxima", n, mbest, mbase);
  baseline("baseline read4 write1 in cache", nc, best_probe_q, 0);
  baseline("baseline read1 write4 in cache", nc, best_probe_dq, 0);
  baseline("baseline q8_0 arithmetic in cache, inexact and unchecked", nc, ibest, ibase);
  rows.insert(rows.end(), kernel_rows.begin(), kernel_rows.end());
  rows.insert(rows.end(), peer_rows.begin(), peer_rows.end());
  if (args.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json o = {{"kernel", r.kernel},
                          {"elements_per_s", r.elements_per_s},
                          {"gb_per_s", r.gb_per_s},
                          {"ratio_to_baseline", r.ratio_to_baseline}};
      o.update(r.extra);
      j.push_back(std::move(o));
    }
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  fmt::print("qscheme bench: {} MiB of f32 ({} elements), target {}, {} thread(s) on CPUs {}, best of {}, {}\n",
             args.mib, n, fast::current_target(), threads, allowed_cpus(), args.reps,
             args.evict_mib ? fmt::format("every call cold ({} MiB read before it)", args.evict_mib)
                            : std::string("every call warm (--evict-mib 0)"));
  fmt::print("quantize = fast::quantize_to_bytes (f32 -> serialized bytes, calibration included), "
             "dequantize = fast::dequantize_from_bytes; OutputPolicy single_pass unless the row says "
             "untouched-on-error; first-call rows: before each timed call the library's kept scratch and malloc's "
             "free memory go back to the kernel, as for a process's first call; (i32 codes) rows: quantize_into / "
             "dequantize_into; ratios against baseline runs "
             "interleaved with each kernel's; buffers page-aligned, except the input of the rows that say otherwise. The streaming baselines (ratio to their plain loop) write as the "
             "engine does with streaming stores on (the streamed row; QSCHEME_STREAM_BYTES); the two-pass "
             "baseline's ratio (to read4 write1) bounds two-level kernels such as nvfp4, which must read the input "
             "twice; its prefetched row runs the engine's max |x| pass and a prefetching second pass; the block "
             "maxima row moves nvfp4's own bytes (its prepass, then codes and scales) with no arithmetic in the "
             "second pass\n");
  fmt::print("in cache: {} elements ({} KiB of f32) on one thread, warm, {} calls per timing, best of {}, against "
             "the in-cache probe (the plain loops on buffers that stay in L2; the q8_0 arithmetic row is a "
             "q8_0 quantizer with nothing exact and nothing checked, beside which the in-cache quantize rows stand); a "
             "process's first call: the "
             "bench run again as a child process, best of {} children, against its best later call\n",
             nc, nc * sizeof(float) / 1024, bench::kInCacheCalls, cache_rounds, args.reps);
  if (const std::string why = bench::peers_absent_reason(); !why.empty()) {
    fmt::print("{}\n", why);
  } else {
    fmt::print("peers: other libraries' operators on the same input as the qscheme row named, ratio to the same "
               "baseline; qscheme/peer is the qscheme row's throughput over the peer's, timed interleaved\n");
  }
  fmt::print("{:<64} {:>14} {:>10} {:>12}\n", "kernel", "elements/s", "GB/s f32", "vs baseline");
  for (const Row& r : rows) {
    std::string note;
    if (r.extra.contains("first_over_later")) {
      note = fmt::format("  first {:.1f} us ({} page faults), later {:.1f} us: {:.2f}x",
                         r.extra["first_call_s"].get<double>() * 1e6, r.extra["first_call_minor_faults"].get<long>(),
                         r.extra["later_call_s"].get<double>() * 1e6, r.extra["first_over_later"].get<double>());
      if (r.extra.contains("warm_up_s")) {
        note += fmt::format("; fast::warm_up() {:.2f} ms", r.extra["warm_up_s"].get<double>() * 1e3);
      }
    } else if (r.extra.contains("qscheme_over_peer")) {
      note = fmt::format("  qscheme/peer {:.3f} ({})", r.extra["qscheme_over_peer"].get<double>(),
                         r.extra["qscheme_row"].get<std::string>());
    } else if (r.extra.contains("ratio_to_two_pass")) {
      note = fmt::format("  {:.3f} of the two-pass bound", r.extra["ratio_to_two_pass"].get<double>());
    }
    fmt::print("{:<64} {:>14.4g} {:>10.3f} {:>12.3f}{}\n", r.kernel, r.elements_per_s, r.gb_per_s,
               r.ratio_to_baseline, note);
  }
  return kExitOk;
}

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t e = s.find(sep, pos);
    out.push_back(s.substr(pos, e == std::string::npos ? std::string::npos : e - pos));
    if (e == std::string::npos) break;
    pos = e + 1;
  }
  return out;
}

int run_vs_reference(const BenchArgs& args) {
  std::vector<Scheme> schemes;
  if (args.schemes) {
    // ';' separates schemes: scheme text may hold ',' (block[4,8]) and ':'.
    for (const std::string& t : split_list(*args.schemes, ';')) {
      auto s = parse_scheme(t);
      if (!s) return report(Status(s.status().code(), "--schemes: " + s.status().message()));
      schemes.push_back(*s);
    }
  } else {
    for (const Scheme& s : tuple_space()) {
      if (validate_scheme(s).ok()) schemes.push_back(s);
    }
  }
  const std::size_t n = (std::size_t{1} << 20) / sizeof(float);
  const bench::Buffer<float> x = bench::make_input(n);
  // 1 MiB of f32 in the first of these shapes the tuple accepts (blocks of rank 3 to 5 and
  // packing along an outer dim need more dims).
  const std::vector<std::vector<std::uint64_t>> kShapes{
      {64, 4096}, {64, 64, 64}, {16, 16, 16, 64}, {8, 8, 8, 8, 64}, {4, 4, 4, 4, 16, 64}};
  // The fast engine's calls are short (about a millisecond): on a loaded machine one preemption
  // decides a single timing, so it gets more repetitions than the reference (best of each).
  const int fast_reps = std::max(20, 10 * args.reps);
  nlohmann::json rows = nlohmann::json::array();
  if (!args.json) {
    fmt::print("reference vs fast on 1 MiB of f32, {} thread(s), target {}; reference best of {}, fast best of {}, "
               "in each of {} sweep(s) over the tuples (best of all sweeps)\n",
               fast::threads(), fast::current_target(), args.reps, fast_reps, args.sweeps);
    fmt::print("{:<48} {:>12} {:>12} {:>10} {:>12} {:>12} {:>10}\n", "scheme", "ref q s", "fast q s", "q x",
               "ref dq s", "fast dq s", "dq x");
  }
  // Every tuple is timed in each of --sweeps passes over the list and keeps, per engine and
  // direction, its best time: the VM's slow spells last longer than one tuple's repetitions (the
  // same fast call measured 0.16 and 0.44 ms in two runs minutes apart), not longer than a sweep.
  struct Tuple {
    const Scheme* s;
    std::vector<std::uint64_t> shape;
    double ref_q = 1e300, fast_q = 1e300, ref_dq = 1e300, fast_dq = 1e300;
    bool ok = false, agree = true;
  };
  std::vector<Tuple> tuples;
  int skipped = 0;
  for (const Scheme& s : schemes) {
    const std::vector<std::uint64_t>* found = nullptr;
    for (const auto& c : kShapes) {
      if (validate(s, c).ok()) {
        found = &c;
        break;
      }
    }
    if (!found) {
      ++skipped;
      continue;
    }
    tuples.push_back({&s, *found});
  }
  for (int sweep = 0; sweep < args.sweeps; ++sweep) {
    for (Tuple& t : tuples) {
      const Scheme& s = *t.s;
      std::optional<Result<QuantizedTensor>> rq, fq;
      t.ref_q = std::min(t.ref_q, bench::best_seconds(args.reps, [&] { rq = reference::quantize(s, t.shape, x, {}); }));
      t.fast_q = std::min(t.fast_q, bench::best_seconds(fast_reps, [&] { fq = fast::quantize(s, t.shape, x, {}); }));
      bool agree = rq->ok() == fq->ok() && (rq->ok() ? **rq == **fq : rq->status().code() == fq->status().code());
      t.ok = rq->ok();
      if (rq->ok()) {
        std::optional<Result<std::vector<float>>> ry, fy;
        t.ref_dq = std::min(t.ref_dq, bench::best_seconds(args.reps, [&] { ry = reference::dequantize(**rq); }));
        t.fast_dq = std::min(t.fast_dq, bench::best_seconds(fast_reps, [&] { fy = fast::dequantize(**rq); }));
        agree = agree && ry->ok() && fy->ok() &&
                std::memcmp(ry->value().data(), fy->value().data(), n * sizeof(float)) == 0;
      }
      t.agree = t.agree && agree;
    }
  }
  double min_speedup = 1e300;
  int below = 0, disagree = 0;
  for (const Tuple& t : tuples) {
    const std::string text = format_scheme(*t.s);
    const double ref_dq = t.ok ? t.ref_dq : 0, fast_dq = t.ok ? t.fast_dq : 0;
    if (!t.agree) ++disagree;
    const double sq = t.ref_q / t.fast_q;
    const double sdq = t.ok ? ref_dq / fast_dq : 0;
    min_speedup = std::min(min_speedup, sq);
    if (t.ok) min_speedup = std::min(min_speedup, sdq);
    if (sq < 50 || (t.ok && sdq < 50)) ++below;
    if (args.json) {
      rows.push_back({{"scheme", text},
                      {"shape", t.shape},
                      {"quantize_reference_s", t.ref_q},
                      {"quantize_fast_s", t.fast_q},
                      {"quantize_speedup", sq},
                      {"dequantize_reference_s", ref_dq},
                      {"dequantize_fast_s", fast_dq},
                      {"dequantize_speedup", sdq},
                      {"agree", t.agree}});
    } else {
      fmt::print("{:<48} {:>12.5f} {:>12.6f} {:>10.1f} {:>12.5f} {:>12.6f} {:>10.1f}{}\n", text, t.ref_q, t.fast_q, sq,
                 ref_dq, fast_dq, sdq, t.agree ? "" : "  DISAGREE");
    }
  }
  if (args.json) {
    fmt::print("{}\n", rows.dump(2));
  } else {
    fmt::print("tuples {} timed, {} skipped (shape rejected); minimum speed-up {:.1f}x; {} below 50x; {} disagree\n",
               schemes.size() - skipped, skipped, min_speedup, below, disagree);
  }
  return disagree == 0 ? kExitOk : kExitInternal;
}

}  // namespace

void add_bench(CLI::App& root, std::vector<Command>& out) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* app = root.add_subcommand(
      "bench", "Throughput of the fast engine against streaming baselines (or --vs-reference: speed-up over reference)");
  app->add_flag("--json", args->json, "print a JSON list of rows");
  add_threads_option(*app, args->threads);
  app->add_option("--mib", args->mib, "MiB of f32 input (default 64)")->check(CLI::Range(1, 4096));
  app->add_option("--reps", args->reps, "timed repetitions per figure; the best is kept (default 5)")
      ->check(CLI::Range(1, 1000));
  app->add_option("--evict-mib", args->evict_mib,
                  "MiB read before every timed call so that it starts with cold caches (default 512; 0: each call "
                  "runs on what the previous one left in cache)")
      ->check(CLI::Range(std::size_t{0}, bench::kMaxEvictMiB));
  app->add_flag("--vs-reference", args->vs_reference,
                "time reference vs fast (quantize, dequantize) on 1 MiB for every supported tuple");
  app->add_option("--schemes", args->schemes, "with --vs-reference: ';'-separated schemes or presets instead");
  app->add_option("--sweeps", args->sweeps,
                  "with --vs-reference: passes over the tuples; each timing is the best of all passes (default 2)")
      ->check(CLI::Range(1, 100));
  app->add_option("--rows", args->rows,
                  "run only the kernel rows whose names contain one of these ';'-separated parts, e.g. "
                  "'quantize nvfp4' (the baselines always run)");
  app->add_option("--target", args->target, "force a Highway target (see qscheme info)");
  app->add_option("--cpus", args->cpus,
                  "run on these CPUs only, e.g. 0 or 0,2-3 (threads default to their count); figures differ "
                  "between the CPUs of a virtual machine");
  // The bench runs itself with this to time a process's first call (bench/first_call.hpp).
  app->add_option("--first-call-of", args->first_call_of, "")->group("");
  out.push_back({app, [args] {
                   std::optional<std::string> threads = args->threads;
                   if (args->cpus) {
                     auto cpus = parse_cpu_list(*args->cpus);
                     if (!cpus) return report(cpus.status());
                     if (Status st = pin_to_cpus(*cpus); !st.ok()) return report(st);
                     if (!threads) threads = std::to_string(std::min<std::size_t>(cpus->size(), fast::kMaxThreads));
                   }
                   if (Status st = apply_threads(threads); !st.ok()) return report(st);
                   if (args->target) {
                     if (Status st = apply_target(*args->target); !st.ok()) return report(st);
                   }
                   if (args->first_call_of) return run_first_call_child(*args);
                   return args->vs_reference ? run_vs_reference(*args) : run_kernels(*args);
                 }});
}

}  // namespace qscheme::cli
