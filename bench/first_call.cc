#include "bench/first_call.hpp"

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace qscheme::bench {

Result<FirstCall> time_first_call(const Kernel& k, std::size_t n, int later) {
  if (k.direction != Direction::quantize || k.given) {
    return Status(ErrorCode::invalid_argument,
                  std::string(k.name) + ": a process's first call is timed for quantize rows without given scales "
                                        "only (the others call the engine to make their input)");
  }
  if (k.in_cache) (void)fast::set_threads(1);  // in-cache rows run on one thread
  const Buffer<float> x = make_input(n);
  KernelRun run(k, x);  // parses the scheme and sizes the output (zero-filled, so resident)
  if (!run.status().ok()) return run.status();
  Status st;
  FirstCall f;
  if (k.warm_up) f.warm_up_s = best_seconds(1, [] { fast::warm_up(); });
  // The clock's own first reading faults in the vDSO's data pages (two faults here, some
  // microseconds each): taken now, so that the first call is not charged for its timer.
  (void)std::chrono::steady_clock::now();
  auto minor_faults = [] {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
  };
  const long faults = minor_faults();
  f.first_s = best_seconds(1, [&] { st = run.run(); });
  f.first_faults = minor_faults() - faults;
  if (!st.ok()) return st;
  f.later_s = best_seconds(later, [&] { st = run.run(); });
  if (!st.ok()) return st;
  return f;
}

std::string format_first_call(const FirstCall& f) {
  char line[128];
  std::snprintf(line, sizeof line, "first-call %.9e %.9e %ld %.9e\n", f.first_s, f.later_s, f.first_faults,
                f.warm_up_s);
  return line;
}

namespace {

Status spawn_error(const std::string& what) {
  return Status(ErrorCode::internal, "timing a process's first call: " + what);
}

}  // namespace

Result<FirstCall> first_call_in_child(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::string self = "/proc/self/exe";
  std::vector<char*> argv{self.data()};
  std::vector<std::string> a = args;
  for (std::string& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> e = env;
  std::vector<char*> envp;
  for (std::string& s : e) envp.push_back(s.data());
  for (char** p = environ; *p; ++p) envp.push_back(*p);
  envp.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) return spawn_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, self.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return spawn_error(std::string("posix_spawn: ") + std::strerror(rc));
  }
  std::string out;
  char buf[256];
  for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    out.append(buf, static_cast<std::size_t>(got));
  }
  close(fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return spawn_error("the child exited with status " + std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) +
                       " (output: " + out.substr(0, 200) + ")");
  }
  FirstCall f;
  const std::size_t at = out.find("first-call ");
  if (at == std::string::npos || std::sscanf(out.c_str() + at, "first-call %lf %lf %ld %lf", &f.first_s, &f.later_s, &f.first_faults,
                                            &f.warm_up_s) != 4) {
    return spawn_error("the child printed no timing (output: " + out.substr(0, 200) + ")");
  }
  return f;
}

}  // namespace qscheme::bench
