#include "io/temporaries.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>

namespace qscheme::io {
namespace {

constexpr int kSlots = 64;
constexpr int kFree = 0;
constexpr int kFilling = 1;
constexpr int kLive = 2;

// Plain arrays and lock-free atomics only: the handler reads them between any two instructions
// of the thread it interrupts.
struct Slot {
  std::atomic<int> state{kFree};
  TemporaryKind kind = TemporaryKind::file;
  char path[PATH_MAX];
};
Slot g_slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free);

// Removes `name` under parent_fd: a file, or a folder with what it holds down to `depth` more
// levels. Only async-signal-safe calls (openat, getdents64, unlinkat, close). True when gone.
bool remove_at(int parent_fd, const char* name, int depth) {
  if (::unlinkat(parent_fd, name, 0) == 0) return true;
  if (errno == ENOENT) return true;
  if (errno != EISDIR && errno != EPERM) return false;  // EPERM: Linux's answer for a folder
  if (depth > 0) {
    const int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    alignas(8) char buf[2048];
    // Removing entries while reading a folder may skip some: read again from the start until a
    // pass removes nothing.
    bool progress = true;
    while (progress) {
      progress = false;
      if (::lseek(fd, 0, SEEK_SET) != 0) break;
      const ssize_t n = ::getdents64(fd, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t off = 0; off < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
        off += d->d_reclen;
        const char* e = d->d_name;
        if (std::strcmp(e, ".") == 0 || std::strcmp(e, "..") == 0) continue;
        progress = remove_at(fd, e, depth - 1) || progress;
      }
    }
    ::close(fd);
  }
  return ::unlinkat(parent_fd, name, AT_REMOVEDIR) == 0;
}

extern "C" void remove_and_die(int sig) {
  const int saved = errno;
  for (Slot& s : g_slots) {
    if (s.state.load(std::memory_order_acquire) != kLive) continue;
    if (s.kind == TemporaryKind::file) ::unlink(s.path);
    else remove_at(AT_FDCWD, s.path, 3);
  }
  errno = saved;
  // SA_RESETHAND put back the default action; the signal stays blocked until this returns, and
  // then ends the process with the status a shell reports as killed by it.
  ::raise(sig);
}

std::uint64_t random_bits() {
  std::uint64_t v = 0;
  if (::getrandom(&v, sizeof v, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof v)) return v;
  // No entropy yet (early boot): still distinct between calls of this process; O_EXCL settles
  // the rest.
  static std::atomic<std::uint64_t> counter{0};
  const auto t = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return (t * 0x9E3779B97F4A7C15ull) ^ (counter.fetch_add(1) << 48) ^ reinterpret_cast<std::uintptr_t>(&v);
}

}  // namespace

std::string temporary_name(const std::string& target) {
  const std::filesystem::path t(target);
  static const char* const hex = "0123456789abcdef";
  std::string suffix = ".qscheme-tmp." + std::to_string(::getpid()) + ".";
  const std::uint64_t r = random_bits();
  for (int i = 15; i >= 0; --i) suffix.push_back(hex[(r >> (4 * i)) & 15]);
  std::string name = t.filename().string();
  constexpr std::size_t kNameMax = 255;
  const std::size_t room = kNameMax - 1 - suffix.size();
  if (name.size() > room) name.resize(room);
  return (t.parent_path() / ("." + name + suffix)).string();
}

Temporary::Temporary(const std::string& path, TemporaryKind kind) {
  if (path.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].kind = kind;
    g_slots[i].state.store(kLive, std::memory_order_release);
    slot_ = i;
    return;
  }
}

Temporary& Temporary::operator=(Temporary&& o) noexcept {
  if (this != &o) {
    release();
    slot_ = o.slot_;
    o.slot_ = -1;
  }
  return *this;
}

void Temporary::release() {
  if (slot_ >= 0) g_slots[slot_].state.store(kFree, std::memory_order_release);
  slot_ = -1;
}

void remove_temporaries_on_signals() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = remove_and_die;
  sa.sa_flags = SA_RESETHAND;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&sa.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace qscheme::io
