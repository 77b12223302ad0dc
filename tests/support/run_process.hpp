// Runs a program as a child process for the command-line tests (cli_test, oracle_cli_test):
// stdout and stderr captured through temporary files, the exit status kept; plus a scratch
// directory per test case.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

extern char** environ;

namespace qscheme::testing {

struct Run {
  int status = -1;  // exit status, or -1 when the process did not start or exit normally
  std::string out;
  std::string err;
  // The child's peak resident set (ru_maxrss). posix_spawn starts the child in this process's
  // memory until it execs, so this is at least this process's own peak: keep that small when
  // measuring.
  long max_rss_kib = 0;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A scratch directory, removed when the object goes away. `tag` names it in /tmp.
struct Scratch {
  std::filesystem::path dir;
  explicit Scratch(const std::string& tag = "qscheme_test") {
    static int n = 0;
    dir = std::filesystem::temp_directory_path() / (tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

// Runs `program` with `args` (argv[0] is the program path) in this process's environment plus
// `env` ("NAME=value" entries, which take precedence).
inline Run run_process(const std::string& program, const std::vector<std::string>& args,
                       const std::vector<std::string>& env = {}) {
  static int n = 0;
  const auto base = std::filesystem::temp_directory_path() /
                    ("qscheme_run_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  const std::string out_path = base.string() + ".out";
  const std::string err_path = base.string() + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<std::string> argv_s{program};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s(env);
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& x : env) overridden = overridden || x.substr(0, x.find('=')) == name;
    if (!overridden) env_s.push_back(entry);
  }
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  Run r;
  if (posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data()) == 0) {
    int ws = 0;
    struct rusage usage {};
    if (wait4(pid, &ws, 0, &usage) == pid && WIFEXITED(ws)) r.status = WEXITSTATUS(ws);
    r.max_rss_kib = usage.ru_maxrss;
  }
  posix_spawn_file_actions_destroy(&actions);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::error_code ec;
  std::filesystem::remove(out_path, ec);
  std::filesystem::remove(err_path, ec);
  return r;
}

}  // namespace qscheme::testing
