#include "fast/support/worker_pool.hpp"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "scheme/fp_env.hpp"

namespace qscheme::fast::detail {
namespace {

// One run_chunks call. Lives on its caller's stack: the caller leaves run_chunks only once the
// job is out of the queue and no worker is attached to it.
struct Job {
  void (*run)(void*, unsigned) = nullptr;
  void* ctx = nullptr;
  unsigned chunks = 0;
  std::atomic<unsigned> next_chunk{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // written by the thread that set `failed`
  // Guarded by Pool::m.
  unsigned attached = 0;
  bool queued = false;
  Job* prev = nullptr;
  Job* next = nullptr;
  std::condition_variable detached;  // attached dropped to 0

  // Claims and runs chunks until every one is taken. Which thread runs a chunk never matters:
  // each chunk is a fixed index range (parallel_chunks), so the output is the same.
  void work() noexcept {
    for (unsigned k; (k = next_chunk.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      if (failed.load(std::memory_order_relaxed)) continue;
      try {
        run(ctx, k);
      } catch (...) {
        if (!failed.exchange(true)) error = std::current_exception();
      }
    }
  }
};

class Pool {
 public:
  void run(Job& job);
  void shutdown() noexcept;
  Pool* forsaken_next = nullptr;  // see forsake_after_fork

 private:
  void grow(std::size_t want);
  void enqueue(Job& j);
  void dequeue(Job& j);
  void worker_main();

  std::mutex m;
  std::condition_variable wake;  // a job was queued, or the pool is closing
  Job* head = nullptr;           // jobs that still take helpers, oldest first
  Job* tail = nullptr;
  std::vector<std::thread> workers;
  std::size_t idle = 0;
  bool closed = false;
};

void Pool::enqueue(Job& j) {
  j.prev = tail;
  j.next = nullptr;
  (tail ? tail->next : head) = &j;
  tail = &j;
  j.queued = true;
}

void Pool::dequeue(Job& j) {
  (j.prev ? j.prev->next : head) = j.next;
  (j.next ? j.next->prev : tail) = j.prev;
  j.prev = j.next = nullptr;
  j.queued = false;
}

// Starts workers until there are `want`. A thread that cannot be started (thread or memory
// limits) ends the attempt: the call runs with the workers there are, and the next call tries
// again, as the limit may have been lifted meanwhile.
void Pool::grow(std::size_t want) {
  if (workers.size() >= want) return;
  try {
    workers.reserve(want);  // so that emplace_back cannot throw after a thread has started
  } catch (...) {
    return;
  }
  while (workers.size() < want) {
    try {
      workers.emplace_back([this] { worker_main(); });
    } catch (...) {
      break;
    }
  }
}

void Pool::worker_main() {
  // Chunks compute in IEEE defaults whatever environment the thread started in (scheme/fp_env.hpp).
  const FpEnvGuard fp_env;
  std::unique_lock lk(m);
  for (;;) {
    ++idle;
    wake.wait(lk, [this] { return closed || head != nullptr; });
    --idle;
    if (closed) return;
    Job& j = *head;
    // The caller takes one chunk: a job with all its other chunks covered leaves the queue,
    // so the next worker serves the next caller.
    if (++j.attached >= j.chunks - 1) dequeue(j);
    lk.unlock();
    j.work();
    lk.lock();
    if (j.queued) dequeue(j);  // every chunk is taken
    // Under the lock: the caller cannot see 0 and free the job before this signal is sent.
    if (--j.attached == 0) j.detached.notify_all();
  }
}

void Pool::run(Job& job) {
  std::size_t to_wake = 0;
  {
    std::lock_guard lk(m);
    if (!closed) {
      grow(job.chunks - 1);
      if (!workers.empty()) {
        enqueue(job);
        to_wake = idle;
      }
    }
  }
  // After the unlock, so that a woken worker does not block on the lock at once.
  if (to_wake > job.chunks - 1) {
    for (unsigned k = 1; k < job.chunks; ++k) wake.notify_one();
  } else if (to_wake > 0) {
    wake.notify_all();
  }
  job.work();
  std::unique_lock lk(m);
  if (job.queued) dequeue(job);
  job.detached.wait(lk, [&] { return job.attached == 0; });
}

// Joins every worker: they finish the chunks they hold and take no more; callers run whatever
// is left themselves. Later calls find the pool closed and run on their own thread.
void Pool::shutdown() noexcept {
  {
    std::lock_guard lk(m);
    closed = true;
  }
  wake.notify_all();
  for (std::thread& t : workers) {
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();
    } else if (t.joinable()) {
      t.join();
    }
  }
}

std::atomic<Pool*> g_pool{nullptr};
// Pools abandoned by fork(), kept reachable: their threads do not exist in the child, so they
// can be neither joined nor destroyed (destroying a joinable std::thread ends the process).
Pool* g_forsaken = nullptr;

Pool* pool() {
  Pool* p = g_pool.load(std::memory_order_acquire);
  if (p) return p;
  Pool* fresh = new Pool;
  if (g_pool.compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return p;
}

// In a child of fork() only the forking thread exists, and the pool's mutex may have been held
// by a worker: the child starts a pool of its own on its first parallel call.
void forsake_after_fork() {
  if (Pool* p = g_pool.load(std::memory_order_relaxed)) {
    p->forsaken_next = g_forsaken;
    g_forsaken = p;
    g_pool.store(nullptr, std::memory_order_relaxed);
  }
}

// Workers are joined when static objects are destroyed (exit or the end of main), so none is
// left running qscheme code while the process or a library unloading it tears down.
struct Lifetime {
  Lifetime() { pthread_atfork(nullptr, nullptr, forsake_after_fork); }
  ~Lifetime() {
    if (Pool* p = g_pool.load(std::memory_order_acquire)) p->shutdown();
  }
} g_lifetime;

}  // namespace

void run_chunks(unsigned chunks, void (*run)(void* ctx, unsigned k), void* ctx) {
  Job job;
  job.run = run;
  job.ctx = ctx;
  job.chunks = chunks;
  if (chunks > 1) {
    Pool* p = nullptr;
    try {
      p = pool();
    } catch (...) {  // no memory for the pool: every chunk on this thread
    }
    if (p) {
      p->run(job);
    } else {
      job.work();
    }
  } else {
    job.work();
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace qscheme::fast::detail
