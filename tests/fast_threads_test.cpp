// The fast engine's threads: the bound on their count, and the worker pool (fast/support/worker_pool.hpp):
// every chunk runs once
// whichever thread takes it; a chunk may call the engine again; many host threads call at once;
// an exception in a chunk reaches the caller; a forked child computes in parallel; threads the
// system refuses to start (in a child process whose address space is then too small for one
// more thread stack) leave the calls running on the threads there are, with the same bytes.
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fast/fast.hpp"
#include "fast/support/worker_pool.hpp"
#include "scheme/text.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/sanitized.hpp"

namespace fast = qscheme::fast;

namespace {

// Above the 2^15 elements below which a call stays on its thread; 64 rows to split.
const std::vector<std::uint64_t> kShape{64, 1024};

std::vector<float> Input() {
  std::vector<float> x(kShape[0] * kShape[1]);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * 5 + (i % 7) * 0.125f;
  return x;
}

// The fused and the two-level drivers.
const char* const kSchemes[] = {"q8_0", "nvfp4"};

std::vector<std::uint8_t> Bytes(const char* scheme, const std::vector<float>& x) {
  const auto s = qscheme::parse_scheme(scheme).value();
  const auto l = qscheme::make_layout(s, kShape).value();
  std::vector<std::uint8_t> out(l.total_bytes);
  const qscheme::Status st = fast::quantize_to_bytes(s, kShape, x.data(), x.size(), {}, out.data(), out.size());
  if (!st.ok()) throw std::runtime_error(st.to_string());
  return out;
}

// The bytes of every scheme on one thread.
std::vector<std::vector<std::uint8_t>> OneThreadBytes(const std::vector<float>& x) {
  const unsigned was = fast::threads();
  BOOST_REQUIRE(fast::set_threads(1).ok());
  std::vector<std::vector<std::uint8_t>> want;
  for (const char* s : kSchemes) want.push_back(Bytes(s, x));
  BOOST_REQUIRE(fast::set_threads(was).ok());
  return want;
}

// Threads of this process (/proc/self/task).
std::size_t ThreadsNow() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

struct Counts {
  std::vector<std::atomic<int>> runs;
  explicit Counts(unsigned n) : runs(n) {}
  static void Run(void* ctx, unsigned k) { static_cast<Counts*>(ctx)->runs[k].fetch_add(1); }
};

// Runs the test case `name` of this binary, one disabled by default, in a child process.
void RunInChild(const std::string& name) {
  const auto& suite = boost::unit_test::framework::master_test_suite();
  const qscheme::testing::Run r =
      qscheme::testing::run_process(suite.argv[0], {"--run_test=" + name, "--color_output=false"});
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST((r.out + r.err).find("No errors detected") != std::string::npos, r.out << r.err);
}

// Lowers this process's address-space limit to what it uses now plus less than one thread
// stack, so that no further thread can start while small allocations still succeed. Lifted
// again when the object goes away (the soft limit only, which needs no privilege to restore).
class NoRoomForAThread {
 public:
  NoRoomForAThread() {
    BOOST_REQUIRE(getrlimit(RLIMIT_AS, &was_) == 0);
    pthread_attr_t a;
    std::size_t stack = 0;
    BOOST_REQUIRE(pthread_getattr_default_np(&a) == 0);
    pthread_attr_getstacksize(&a, &stack);
    pthread_attr_destroy(&a);
    BOOST_REQUIRE(stack >= (std::size_t{1} << 20));
    rlimit lower = was_;
    lower.rlim_cur = VmBytes() + stack / 2;
    BOOST_REQUIRE(setrlimit(RLIMIT_AS, &lower) == 0);
  }
  ~NoRoomForAThread() { setrlimit(RLIMIT_AS, &was_); }

 private:
  static std::size_t VmBytes() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
    }
    BOOST_FAIL("no VmSize in /proc/self/status");
    return 0;
  }
  rlimit was_{};
};

}  // namespace

BOOST_AUTO_TEST_CASE(every_chunk_runs_exactly_once) {
  for (unsigned chunks : {1u, 2u, 3u, 7u, 64u, fast::kMaxThreads}) {
    BOOST_TEST_CONTEXT(chunks << " chunks") {
      Counts c(chunks);
      fast::detail::run_chunks(chunks, &Counts::Run, &c);
      for (unsigned k = 0; k < chunks; ++k) BOOST_TEST(c.runs[k].load() == 1, "chunk " << k);
    }
  }
}

// A chunk that calls the engine, which splits its own call over the same pool: no thread waits
// for a chunk that nobody runs, and the bytes are the one-thread bytes.
BOOST_AUTO_TEST_CASE(a_chunk_may_call_the_engine_again) {
  const std::vector<float> x = Input();
  const auto want = OneThreadBytes(x);
  BOOST_REQUIRE(fast::set_threads(4).ok());
  struct Ctx {
    const std::vector<float>* x;
    const std::vector<std::vector<std::uint8_t>>* want;
    std::atomic<int> same{0};
  } ctx{&x, &want};
  fast::detail::run_chunks(8, [](void* p, unsigned k) {
    Ctx& c = *static_cast<Ctx*>(p);
    const std::size_t s = k % std::size(kSchemes);
    if (Bytes(kSchemes[s], *c.x) == (*c.want)[s]) c.same.fetch_add(1);
  }, &ctx);
  BOOST_TEST(ctx.same.load() == 8);
  BOOST_REQUIRE(fast::set_threads(1).ok());
}

// Host threads calling at once share the pool: 8 of them, 1,600 calls in all (160 under the
// sanitizers), each the one-thread bytes.
BOOST_AUTO_TEST_CASE(host_threads_share_the_pool) {
  const std::vector<float> x = Input();
  const auto want = OneThreadBytes(x);
  BOOST_REQUIRE(fast::set_threads(3).ok());
  const int calls = 200 / static_cast<int>(qscheme::testing::SanitizerStride(10));
  std::atomic<int> same{0}, failed{0};
  std::vector<std::thread> hosts;
  for (int h = 0; h < 8; ++h) {
    hosts.emplace_back([&, h] {
      for (int i = 0; i < calls; ++i) {
        const std::size_t s = static_cast<std::size_t>(h + i) % std::size(kSchemes);
        try {
          if (Bytes(kSchemes[s], x) == want[s]) same.fetch_add(1);
        } catch (...) {
          failed.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : hosts) t.join();
  BOOST_TEST(failed.load() == 0);
  BOOST_TEST(same.load() == 8 * calls);
  BOOST_REQUIRE(fast::set_threads(1).ok());
}

BOOST_AUTO_TEST_CASE(an_exception_in_a_chunk_reaches_the_caller) {
  struct Ctx {
    std::atomic<int> ran{0};
  } ctx;
  auto throwing = [](void* p, unsigned k) {
    static_cast<Ctx*>(p)->ran.fetch_add(1);
    if (k == 3) throw std::runtime_error("chunk 3");
  };
  BOOST_CHECK_EXCEPTION(fast::detail::run_chunks(16, throwing, &ctx), std::runtime_error,
                        [](const std::runtime_error& e) { return std::string(e.what()) == "chunk 3"; });
  BOOST_TEST(ctx.ran.load() >= 1);
  BOOST_TEST(ctx.ran.load() <= 16);
  // The pool is whole afterwards.
  Counts c(16);
  fast::detail::run_chunks(16, &Counts::Run, &c);
  for (unsigned k = 0; k < 16; ++k) BOOST_TEST(c.runs[k].load() == 1, "chunk " << k);
}

// The child of a fork has none of the parent's workers: it starts its own, and its parallel
// calls finish with the one-thread bytes (a call that waited for the parent's workers would
// hang until the alarm ends the child).
BOOST_AUTO_TEST_CASE(a_forked_child_computes_in_parallel) {
  const std::vector<float> x = Input();
  const auto want = OneThreadBytes(x);
  BOOST_REQUIRE(fast::set_threads(3).ok());
  BOOST_TEST((Bytes("q8_0", x) == want[0]));  // the parent's pool has its workers
  const pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    alarm(60);
    bool ok = true;
    try {
      for (int i = 0; i < 20; ++i) ok = ok && Bytes(kSchemes[i % 2], x) == want[i % 2];
      ok = ok && ThreadsNow() == 3;  // this thread and the child's own two workers
    } catch (...) {
      ok = false;
    }
    _exit(ok ? 0 : 1);
  }
  int ws = 0;
  BOOST_REQUIRE(waitpid(pid, &ws, 0) == pid);
  BOOST_TEST(WIFEXITED(ws), "child ended by signal " << (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0));
  BOOST_TEST((WIFEXITED(ws) && WEXITSTATUS(ws) == 0));
  BOOST_TEST((Bytes("nvfp4", x) == want[1]));
  BOOST_REQUIRE(fast::set_threads(1).ok());
}

// No worker can start at all: every chunk runs on the calling thread. Run in a child process
// (below): the limit must meet a process with no workers yet.
BOOST_AUTO_TEST_CASE(no_worker_can_start, *boost::unit_test::disabled()) {
  const std::vector<float> x = Input();
  const auto want = OneThreadBytes(x);
  BOOST_REQUIRE(ThreadsNow() == 1);
  BOOST_REQUIRE(fast::set_threads(4).ok());
  {
    const NoRoomForAThread limit;
    for (std::size_t s = 0; s < std::size(kSchemes); ++s) BOOST_TEST((Bytes(kSchemes[s], x) == want[s]), kSchemes[s]);
    BOOST_TEST(ThreadsNow() == 1);
  }
}
BOOST_AUTO_TEST_CASE(no_worker_can_start_in_a_child) { RunInChild("no_worker_can_start"); }

// Workers stop starting part of the way: the call runs on the one worker there is and this
// thread; once the limit is lifted the next call starts the rest. Run in a child process
// (below), as it counts the process's threads.
BOOST_AUTO_TEST_CASE(workers_stop_starting_part_of_the_way, *boost::unit_test::disabled()) {
  const std::vector<float> x = Input();
  const auto want = OneThreadBytes(x);
  BOOST_REQUIRE(ThreadsNow() == 1);
  BOOST_REQUIRE(fast::set_threads(2).ok());
  BOOST_TEST((Bytes("q8_0", x) == want[0]));
  BOOST_REQUIRE(ThreadsNow() == 2);
  BOOST_REQUIRE(fast::set_threads(8).ok());
  {
    const NoRoomForAThread limit;
    for (std::size_t s = 0; s < std::size(kSchemes); ++s) BOOST_TEST((Bytes(kSchemes[s], x) == want[s]), kSchemes[s]);
    BOOST_TEST(ThreadsNow() == 2);
  }
  BOOST_TEST((Bytes("q8_0", x) == want[0]));
  BOOST_TEST(ThreadsNow() == 8);
}
BOOST_AUTO_TEST_CASE(workers_stop_starting_part_of_the_way_in_a_child) {
  RunInChild("workers_stop_starting_part_of_the_way");
}

// The bound on the thread count: above it, invalid-argument naming the range, and the count
// stays; 0 is one per hardware thread, at most the bound.
BOOST_AUTO_TEST_CASE(the_thread_count_is_bounded) {
  BOOST_REQUIRE(fast::set_threads(5).ok());
  for (unsigned n : {fast::kMaxThreads + 1, 100000u, 4294967295u}) {
    const qscheme::Status st = fast::set_threads(n);
    BOOST_TEST((st.code() == qscheme::ErrorCode::invalid_argument));
    BOOST_TEST(st.message() == "a thread count of " + std::to_string(n) +
                                   " is above the maximum of 256; use 1 to 256, or 0 for one per hardware thread (at "
                                   "most 256)");
    BOOST_TEST(fast::threads() == 5u);
  }
  BOOST_TEST(fast::set_threads(fast::kMaxThreads).ok());
  BOOST_TEST(fast::threads() == fast::kMaxThreads);
  BOOST_TEST(fast::set_threads(0).ok());
  BOOST_TEST(fast::threads() >= 1u);
  BOOST_TEST(fast::threads() <= fast::kMaxThreads);
  BOOST_REQUIRE(fast::set_threads(1).ok());
}
