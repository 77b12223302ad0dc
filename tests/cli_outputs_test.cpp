// The command line's outputs and messages, run as a process: devices, FIFOs, symlinks and `-`
// are written through; interrupted runs leave no temporary; an output that is an input is
// refused; formats are chosen case-insensitively and unknown extensions refused; vectors
// writes all or nothing; user strings are escaped in messages; every error line has the
// "error: <code>: " form, CLI11's own included.
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "io/file_io.hpp"
#include "io/npy.hpp"
#include "tests/support/run_process.hpp"

#ifndef QSCHEME_BIN
#error "QSCHEME_BIN must name the qscheme executable"
#endif

using namespace qscheme;
namespace fs = std::filesystem;
using qscheme::testing::Run;
using qscheme::testing::slurp;

namespace {

struct Scratch : qscheme::testing::Scratch {
  Scratch() : qscheme::testing::Scratch("qscheme_cli_outputs_test") {}
};

Run qscheme_run(const std::vector<std::string>& args) { return qscheme::testing::run_process(QSCHEME_BIN, args); }

// A shell command line, for redirections (`> /dev/full`, `>> file`); `cd` into dir first.
Run shell_run(const fs::path& dir, const std::string& command) {
  return qscheme::testing::run_process("/bin/sh", {"-c", "cd '" + dir.string() + "' && " + command});
}

std::string describe(const Run& r) { return "exit " + std::to_string(r.status) + "\nstdout: " + r.out + "\nstderr: " + r.err; }

// Every line of stderr is an error line: nothing else (CLI11's usage hints, a second line of a
// message) reaches it.
bool all_error_lines(const std::string& err) {
  if (err.empty() || err.back() != '\n') return false;
  for (std::size_t at = 0; at < err.size(); at = err.find('\n', at) + 1) {
    if (err.compare(at, 7, "error: ") != 0) return false;
  }
  return true;
}

void expect_error(const Run& r, const std::string& code, const std::string& says = "") {
  BOOST_TEST(r.status == 2, describe(r));
  BOOST_TEST(r.err.starts_with("error: " + code + ": "), describe(r));
  BOOST_TEST(all_error_lines(r.err), describe(r));
  if (!says.empty()) BOOST_TEST(r.err.find(says) != std::string::npos, describe(r));
}

void write_npy(const std::string& path, std::vector<std::uint64_t> shape, const std::vector<float>& values) {
  auto bytes = io::npy::serialize_f32(shape, values);
  BOOST_REQUIRE(bytes.ok());
  BOOST_REQUIRE(io::write_bytes(path, *bytes).ok());
}

const std::vector<float> kX{0.5f, -1.25f, 3.0f, 7.75f, -0.0f, 2.5f, -6.0f, 1.0f};

// The scratch folder with x.npy and the reference outputs of `quantize --scheme q8_0` on it as
// plain files: q.json, q.bin, and y.npy from dequantizing q.json.
struct Fixture {
  Scratch s;
  std::string json, bin, npy;
  Fixture() {
    write_npy(s / "x.npy", {8}, kX);
    BOOST_REQUIRE(qscheme_run({"quantize", "--scheme", "q8_0", "--input", s / "x.npy", "--output", s / "q.json"}).status == 0);
    BOOST_REQUIRE(qscheme_run({"quantize", "--scheme", "q8_0", "--input", s / "x.npy", "--output", s / "q.bin"}).status == 0);
    BOOST_REQUIRE(qscheme_run({"dequantize", "--input", s / "q.json", "--output", s / "y.npy"}).status == 0);
    json = slurp(s / "q.json");
    bin = slurp(s / "q.bin");
    npy = slurp(s / "y.npy");
    BOOST_REQUIRE(json.starts_with("{"));
    BOOST_REQUIRE(json != bin);
  }
  std::vector<std::string> quantize(const std::string& output) const {
    return {"quantize", "--scheme", "q8_0", "--input", s / "x.npy", "--output", output};
  }
};

bool is_temporary(const fs::path& p) { return p.filename().string().find(".qscheme-tmp.") != std::string::npos; }

std::vector<fs::path> temporaries_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (is_temporary(e.path())) out.push_back(e.path());
  }
  return out;
}

mode_t lmode(const std::string& path) {
  struct stat st {};
  BOOST_REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Outputs that are not regular files are written through.

BOOST_AUTO_TEST_CASE(a_device_is_written_through_and_its_errors_reported) {
  Fixture f;
  // A node with /dev/full's numbers in the scratch folder, so that a writer which replaces the
  // node harms nothing else; without the privilege to make one, a link to /dev/full.
  const std::string full = f.s / "full.json";
  if (::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)) != 0) BOOST_REQUIRE(::symlink("/dev/full", full.c_str()) == 0);
  const Run r = qscheme_run(f.quantize(full));
  expect_error(r, "io-error", "No space left on device");
  BOOST_TEST((S_ISCHR(lmode(full)) || S_ISLNK(lmode(full))));
  struct stat st {};
  BOOST_TEST((::stat(full.c_str(), &st) == 0 && S_ISCHR(st.st_mode)));
  const std::string null = f.s / "null.npy";
  if (::mknod(null.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) BOOST_REQUIRE(::symlink("/dev/null", null.c_str()) == 0);
  BOOST_TEST(qscheme_run({"dequantize", "--input", f.s / "q.json", "--output", null}).status == 0);
  BOOST_TEST((::stat(null.c_str(), &st) == 0 && S_ISCHR(st.st_mode)));
  // Standard output on a full device: an error exit with a message, as for a file.
  expect_error(shell_run(f.s.dir, "'" QSCHEME_BIN "' dequantize --input q.json --output - > /dev/full"), "io-error",
               "cannot write standard output: No space left on device");
  BOOST_TEST(temporaries_in(f.s.dir).empty());
  BOOST_TEST(!fs::exists(f.s / "-"));
}

BOOST_AUTO_TEST_CASE(a_fifo_is_written_through) {
  Fixture f;
  const std::string fifo = f.s / "pipe.json";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // The read end open (non-blocking) before qscheme runs, so its open for writing does not
  // wait; a Q.json of 8 elements fits in the pipe's buffer.
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  BOOST_REQUIRE(rd >= 0);
  const Run r = qscheme_run(f.quantize(fifo));
  std::string got(1 << 16, '\0');
  const ssize_t n = ::read(rd, got.data(), got.size());
  ::close(rd);
  got.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  BOOST_TEST(r.status == 0, describe(r));
  BOOST_TEST(got == f.json);
  BOOST_TEST(S_ISFIFO(lmode(fifo)));
}

BOOST_AUTO_TEST_CASE(a_symlink_keeps_pointing_where_it_pointed) {
  Fixture f;
  BOOST_REQUIRE(io::write_bytes(f.s / "real.json", std::vector<std::uint8_t>{'o', 'l', 'd'}).ok());
  fs::create_symlink("real.json", f.s / "link.json");
  BOOST_TEST(qscheme_run(f.quantize(f.s / "link.json")).status == 0);
  BOOST_TEST(fs::is_symlink(f.s / "link.json"));
  BOOST_TEST(fs::read_symlink(f.s / "link.json") == "real.json");
  BOOST_TEST(slurp(f.s / "real.json") == f.json);
  // A link to the process's standard output (what /dev/stdout is): the bytes reach stdout.
  fs::create_symlink("/proc/self/fd/1", f.s / "stdout.json");
  const Run r = qscheme_run(f.quantize(f.s / "stdout.json"));
  BOOST_TEST(r.status == 0, describe(r));
  BOOST_TEST(r.out == f.json);
  BOOST_TEST(fs::is_symlink(f.s / "stdout.json"));
  // Standard output appended to a file (>>): the bytes go after what is there, as with `-`.
  // (The link stands for /dev/stdout, which a writer that replaces links would replace for the
  // whole machine.)
  const Run app = shell_run(f.s.dir, "echo first > out.json && '" QSCHEME_BIN
                                     "' quantize --scheme q8_0 --input x.npy --output stdout.json >> out.json");
  BOOST_TEST(app.status == 0, describe(app));
  BOOST_TEST(slurp(f.s / "out.json") == "first\n" + f.json);
  BOOST_TEST(fs::is_symlink(f.s / "stdout.json"));
  BOOST_TEST(temporaries_in(f.s.dir).empty());
}

BOOST_AUTO_TEST_CASE(dash_is_standard_output_for_every_output) {
  Fixture f;
  Run r = qscheme_run({"quantize", "--scheme", "q8_0", "--input", f.s / "x.npy", "--output", "-", "--format", "json"});
  BOOST_TEST(r.status == 0, describe(r));
  BOOST_TEST(r.out == f.json);
  r = qscheme_run({"quantize", "--scheme", "q8_0", "--input", f.s / "x.npy", "--output", "-", "--format", "bin"});
  BOOST_TEST(r.status == 0, describe(r));
  BOOST_TEST(r.out == f.bin);
  r = qscheme_run({"dequantize", "--input", f.s / "q.json", "--output", "-"});
  BOOST_TEST(r.status == 0, describe(r));
  BOOST_TEST(r.out == f.npy);
  // quantize writes two formats: `-` alone does not say which.
  r = qscheme_run({"quantize", "--scheme", "q8_0", "--input", f.s / "x.npy", "--output", "-"});
  expect_error(r, "invalid-argument", "--format json|bin");
  BOOST_TEST(r.out.empty());
}

// ---------------------------------------------------------------------------------------------
// SIGINT and SIGTERM remove the temporary; SIGKILL's leftover is never an output.

namespace {

// Starts qscheme with `args` (stdout and stderr discarded) and returns its pid.
pid_t spawn(const std::vector<std::string>& args) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> argv_s{QSCHEME_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, QSCHEME_BIN, &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Runs `args`, stops the process once a temporary appears in `dir` (SIGSTOP cannot be caught or
// delayed), sends `sig`, lets it go on, and returns its wait status. Retries (a fast machine can
// finish the write between two looks) and gives up with nullopt after a few tries.
std::optional<int> interrupt_while_writing(const std::vector<std::string>& args, const fs::path& dir, int sig,
                                           const std::function<bool()>& still_writing) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    // Left by an earlier failure (already reported): not this run's.
    for (const auto& t : temporaries_in(dir)) fs::remove_all(t);
    const pid_t pid = spawn(args);
    BOOST_REQUIRE(pid > 0);
    bool stopped = false;
    int ws = 0;
    for (;;) {
      if (::waitpid(pid, &ws, WNOHANG) == pid) break;  // finished before a temporary was seen
      if (!temporaries_in(dir).empty()) {
        ::kill(pid, SIGSTOP);
        ::waitpid(pid, &ws, WUNTRACED);
        stopped = WIFSTOPPED(ws);
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (!stopped) continue;
    const bool in_time = still_writing() && !temporaries_in(dir).empty();
    ::kill(pid, sig);
    ::kill(pid, SIGCONT);
    ::waitpid(pid, &ws, 0);
    if (in_time) {
      BOOST_TEST_MESSAGE("signal " << sig << " sent on attempt " << attempt + 1);
      return ws;
    }
  }
  return std::nullopt;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sigint_and_sigterm_remove_the_temporary) {
  Scratch s;
  // 2 Mi elements: Q.json of about 14 MB, written long enough to be caught in the act.
  std::vector<float> big(std::size_t{1} << 21);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(static_cast<int>(i % 2001) - 1000) / 64.0f;
  write_npy(s / "big.npy", {big.size()}, big);
  big = {};
  const std::string target = s / "q.json";
  for (int sig : {SIGINT, SIGTERM}) {
    BOOST_TEST_CONTEXT(strsignal(sig)) {
      BOOST_REQUIRE(io::write_bytes(target, std::vector<std::uint8_t>{'k', 'e', 'e', 'p'}).ok());
      const auto ws = interrupt_while_writing({"quantize", "--scheme", "q8_0", "--input", s / "big.npy", "--output", target},
                                              s.dir, sig, [&] { return slurp(target) == "keep"; });
      BOOST_REQUIRE_MESSAGE(ws.has_value(), "the write was never caught in progress");
      BOOST_TEST(WIFSIGNALED(*ws));
      BOOST_TEST((WIFSIGNALED(*ws) && WTERMSIG(*ws) == sig));
      BOOST_TEST(temporaries_in(s.dir).empty());
      BOOST_TEST(slurp(target) == "keep");
    }
  }
  // SIGKILL cannot be caught: the temporary stays, hidden and named so that nothing takes it for
  // an output; the next run writes the target as if it were not there.
  const auto ws = interrupt_while_writing({"quantize", "--scheme", "q8_0", "--input", s / "big.npy", "--output", target},
                                          s.dir, SIGKILL, [&] { return slurp(target) == "keep"; });
  BOOST_REQUIRE(ws.has_value());
  const auto stale = temporaries_in(s.dir);
  BOOST_REQUIRE(stale.size() == 1u);
  BOOST_TEST(stale[0].filename().string().starts_with(".q.json.qscheme-tmp."));
  BOOST_TEST(stale[0].extension() != ".json");
  const auto stale_size = fs::file_size(stale[0]);
  write_npy(s / "x.npy", {8}, kX);
  BOOST_TEST(qscheme_run({"quantize", "--scheme", "q8_0", "--input", s / "x.npy", "--output", target}).status == 0);
  BOOST_TEST(slurp(target).starts_with("{"));
  BOOST_TEST(fs::file_size(stale[0]) == stale_size);
}

BOOST_AUTO_TEST_CASE(sigterm_removes_the_vectors_folder_in_progress) {
  Scratch s;
  const std::string out = s / "vectors";
  const auto ws = interrupt_while_writing({"vectors", "--out", out}, s.dir, SIGTERM, [&] { return !fs::exists(out); });
  BOOST_REQUIRE_MESSAGE(ws.has_value(), "the export was never caught in progress");
  BOOST_TEST((WIFSIGNALED(*ws) && WTERMSIG(*ws) == SIGTERM));
  BOOST_TEST(fs::is_empty(s.dir));
}

// ---------------------------------------------------------------------------------------------
// An output that is an input is refused, whatever the spelling.

BOOST_AUTO_TEST_CASE(an_output_that_is_an_input_is_refused) {
  Fixture f;
  const std::string x = f.s / "x.npy";
  const std::string before = slurp(x);
  // The reproducer: same text (--format so that the name's extension is not what refuses it).
  expect_error(qscheme_run({"quantize", "--scheme", "q8_0", "--input", x, "--output", x, "--format", "json"}),
               "invalid-argument", "is the same file as --input");
  // A symlink, a hard link, another spelling.
  fs::create_symlink("x.npy", f.s / "sym.json");
  fs::create_hard_link(x, f.s / "hard.json");
  for (const std::string& out : {f.s / "sym.json", f.s / "hard.json", (f.s.dir / "." / "x.npy").string()}) {
    BOOST_TEST_CONTEXT(out) {
      expect_error(qscheme_run({"quantize", "--scheme", "q8_0", "--input", x, "--output", out, "--format", "json"}),
                   "invalid-argument", "is the same file as --input");
    }
  }
  // Given scales from a file count as an input.
  write_npy(f.s / "s.npy", {1}, {0.25f});
  fs::create_hard_link(f.s / "s.npy", f.s / "s.json");
  expect_error(qscheme_run({"quantize", "--scheme", "q8_0", "--input", x, "--scales", f.s / "s.npy", "--output", f.s / "s.json"}),
               "invalid-argument", "is the same file as --scales");
  // dequantize, and standard output appended to the input.
  const std::string q = f.s / "q.json";
  expect_error(qscheme_run({"dequantize", "--input", q, "--output", q, "--format", "npy"}), "invalid-argument",
               "is the same file as --input");
  expect_error(shell_run(f.s.dir, "'" QSCHEME_BIN "' dequantize --input q.json --output - >> q.json"), "invalid-argument",
               "- (standard output) is the same file as --input");
  BOOST_TEST(slurp(x) == before);
  BOOST_TEST(slurp(q) == f.json);
  BOOST_TEST(fs::is_symlink(f.s / "sym.json"));
}

// ---------------------------------------------------------------------------------------------
// Formats by extension, case-insensitive; an extension a command cannot write refused.

BOOST_AUTO_TEST_CASE(formats_follow_the_extension_in_any_case) {
  Fixture f;
  BOOST_TEST(qscheme_run(f.quantize(f.s / "upper.BIN")).status == 0);
  BOOST_TEST(slurp(f.s / "upper.BIN") == f.bin);
  BOOST_TEST(qscheme_run(f.quantize(f.s / "upper.Json")).status == 0);
  BOOST_TEST(slurp(f.s / "upper.Json") == f.json);
  BOOST_TEST(qscheme_run({"dequantize", "--input", f.s / "upper.BIN", "--scheme", "q8_0", "--shape", "8", "--output",
                          f.s / "y.NPY"}).status == 0);
  BOOST_TEST(slurp(f.s / "y.NPY") == f.npy);
  // --scales names a file by its extension too.
  write_npy(f.s / "S.NPY", {1}, {0.25f});
  BOOST_TEST(qscheme_run({"quantize", "--scheme", "q8_0", "--input", f.s / "x.npy", "--scales", f.s / "S.NPY", "--output",
                          f.s / "given.json"}).status == 0);
  // --format for a name without the extension.
  BOOST_TEST(qscheme_run({"quantize", "--scheme", "q8_0", "--input", f.s / "x.npy", "--output", f.s / "raw", "--format",
                          "bin"}).status == 0);
  BOOST_TEST(slurp(f.s / "raw") == f.bin);
}

BOOST_AUTO_TEST_CASE(an_extension_a_command_cannot_write_is_refused) {
  Fixture f;
  const Run r = qscheme_run(f.quantize(f.s / "z.npy"));
  expect_error(r, "invalid-argument", "--output '" + (f.s / "z.npy") + "': quantize writes .json (Q.json) or .bin (Burn's bytes)");
  BOOST_TEST(!fs::exists(f.s / "z.npy"));
  expect_error(qscheme_run(f.quantize(f.s / "noext")), "invalid-argument", "quantize writes .json");
  expect_error(qscheme_run({"dequantize", "--input", f.s / "q.json", "--output", f.s / "y.json"}), "invalid-argument",
               "dequantize writes .npy (a float32 tensor)");
  BOOST_TEST(!fs::exists(f.s / "y.json"));
  // A --format the command does not write, or one the extension contradicts.
  expect_error(qscheme_run({"quantize", "--scheme", "q8_0", "--input", f.s / "x.npy", "--output", "-", "--format", "npy"}),
               "invalid-argument", "--format 'npy': quantize writes json (Q.json) or bin (Burn's bytes)");
  expect_error(qscheme_run({"quantize", "--scheme", "q8_0", "--input", f.s / "x.npy", "--output", f.s / "z.bin", "--format",
                            "json"}), "invalid-argument", "is a .bin name but --format is json");
  BOOST_TEST(!fs::exists(f.s / "z.bin"));
}

// ---------------------------------------------------------------------------------------------
// `vectors` checks every scheme first and writes its folder all or nothing.

BOOST_AUTO_TEST_CASE(vectors_writes_all_or_nothing) {
  Scratch s;
  const std::string out = s / "v";
  expect_error(qscheme_run({"vectors", "--out", out, "--schemes", "q8_0;bogus"}), "malformed-scheme", "bogus");
  BOOST_TEST(fs::is_empty(s.dir));
  expect_error(qscheme_run({"vectors", "--out", out, "--schemes", "q8_0;q4s:packed-native(0)"}), "packed-native-unsupported");
  BOOST_TEST(fs::is_empty(s.dir));
  // A folder with files in it is never mixed with new ones.
  fs::create_directories(s / "full");
  BOOST_REQUIRE(io::write_bytes(s / "full/mine.txt", std::vector<std::uint8_t>{'m'}).ok());
  expect_error(qscheme_run({"vectors", "--out", s / "full", "--schemes", "q8_0"}), "io-error", "not empty");
  BOOST_TEST(slurp(s / "full/mine.txt") == "m");
  BOOST_TEST(std::distance(fs::directory_iterator(s / "full"), fs::directory_iterator()) == 1);
  // Standard output cannot hold a folder.
  expect_error(qscheme_run({"vectors", "--out", "-", "--schemes", "q8_0"}), "invalid-argument", "standard output");
  BOOST_TEST(!fs::exists("-"));
  // A new nested path and an empty folder both work.
  BOOST_TEST(qscheme_run({"vectors", "--out", s / "a/b/c", "--schemes", "q8_0"}).status == 0);
  BOOST_TEST(fs::exists(s / "a/b/c/index.json"));
  fs::create_directories(s / "empty");
  BOOST_TEST(qscheme_run({"vectors", "--out", s / "empty", "--schemes", "q8_0"}).status == 0);
  BOOST_TEST(fs::exists(s / "empty/q8_0"));
  BOOST_TEST(temporaries_in(s.dir).empty());
  BOOST_TEST(temporaries_in(s / "a/b").empty());
}

// ---------------------------------------------------------------------------------------------
// Control bytes and invalid UTF-8 in user strings are escaped in messages.

BOOST_AUTO_TEST_CASE(user_strings_are_escaped_in_messages) {
  Scratch s;
  Run r = qscheme_run({"validate", "--scheme", "\x1b[31mred\x1b[0m"});
  expect_error(r, "malformed-scheme", "found '\\x1B[31mred\\x1B[0m'");
  BOOST_TEST(r.err.find('\x1b') == std::string::npos);
  r = qscheme_run({"validate", "--scheme", "q8s:\xff\xfe"});
  expect_error(r, "malformed-scheme", "found '\\xFF\\xFE'");
  // A file name with a newline and an escape: one error line, nothing raw.
  const std::string name = s / "x\n\x1b]0;title\x07.npy";
  r = qscheme_run({"quantize", "--scheme", "q8s", "--input", name, "--output", s / "q.json"});
  expect_error(r, "io-error", "x\\x0A\\x1B]0;title\\x07.npy");
  BOOST_TEST(r.err.find('\x1b') == std::string::npos);
  BOOST_TEST(r.err.find('\x07') == std::string::npos);
  // Option values echoed by the command line.
  r = qscheme_run({"quantize", "--scheme", "q8s", "--profile", "\x1b[2J", "--input", s / "x.npy", "--output", s / "q.json"});
  expect_error(r, "invalid-argument", "--profile: '\\x1B[2J'");
  // Valid UTF-8 passes through.
  r = qscheme_run({"validate", "--scheme", "q8s:bl\xc3\xb6\x63k"});
  expect_error(r, "malformed-scheme", "found 'bl\xc3\xb6\x63k'");
}

// ---------------------------------------------------------------------------------------------
// CLI11's errors in the error line form; --profile's help names every profile.

BOOST_AUTO_TEST_CASE(usage_errors_are_error_lines) {
  expect_error(qscheme_run({}), "invalid-argument", "A subcommand is required");
  expect_error(qscheme_run({"nosuchcommand"}), "invalid-argument", "A subcommand is required");
  expect_error(qscheme_run({"schemes", "--bogus"}), "invalid-argument", "--bogus");
  expect_error(qscheme_run({"quantize", "--scheme", "q8s"}), "invalid-argument", "--input is required");
  expect_error(qscheme_run({"quantize", "--scheme", "q8s"}), "invalid-argument", "qscheme quantize --help");
  expect_error(qscheme_run({"schemes", "--supported", "--rejected"}), "invalid-argument");
  expect_error(qscheme_run({"validate", "--scheme", "q9s"}), "malformed-scheme");
  // CLI11 echoes what it did not expect: escaped too.
  const Run esc = qscheme_run({"schemes", "--\x1b[31m"});
  expect_error(esc, "invalid-argument");
  BOOST_TEST(esc.err.find('\x1b') == std::string::npos);
  for (const std::vector<std::string>& help : {std::vector<std::string>{"--help"}, {"quantize", "--help"}}) {
    const Run r = qscheme_run(help);
    BOOST_TEST(r.status == 0, describe(r));
    BOOST_TEST(r.out.find("quantize") != std::string::npos, describe(r));
    BOOST_TEST(r.err.empty());
  }
}

BOOST_AUTO_TEST_CASE(profile_help_names_every_accepted_profile) {
  for (const char* cmd : {"quantize", "dequantize", "check"}) {
    const Run r = qscheme_run({cmd, "--help"});
    BOOST_TEST_CONTEXT(cmd) {
      const std::size_t at = r.out.find("--profile");
      BOOST_REQUIRE(at != std::string::npos);
      const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
      BOOST_TEST(line.find("exact, burn or onnx") != std::string::npos, line);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Progress: drawn on standard error while it is a terminal, cleared before results and errors,
// absent from files and pipes.

namespace {

// Runs qscheme with standard error on a pseudo-terminal (standard output to /dev/null): what the
// terminal received, and the exit status.
std::pair<std::string, int> qscheme_on_terminal(const std::vector<std::string>& args) {
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    std::vector<std::string> argv_s{QSCHEME_BIN};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(QSCHEME_BIN, argv.data());
    ::_exit(127);
  }
  std::string seen;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the child has closed the terminal
    seen.append(buf, static_cast<std::size_t>(n));
  }
  ::close(master);
  int ws = 0;
  ::waitpid(pid, &ws, 0);
  return {seen, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1};
}

}  // namespace

BOOST_AUTO_TEST_CASE(progress_shows_on_a_terminal_only_and_is_cleared_before_errors) {
  Scratch scratch;
  const auto [drawn, status] = qscheme_on_terminal({"vectors", "--schemes", "q8_0", "--out", scratch / "v"});
  BOOST_TEST(status == 0, drawn);
  BOOST_TEST(drawn.find("\rvectors: 0 of ") != std::string::npos, drawn);
  BOOST_TEST(drawn.ends_with("\r\033[K"), drawn);  // the line is cleared at the end
  const Run piped = qscheme_run({"vectors", "--schemes", "q8_0", "--out", scratch / "w"});
  BOOST_TEST(piped.status == 0, describe(piped));
  BOOST_TEST(piped.err.find('\r') == std::string::npos, describe(piped));
  BOOST_TEST(piped.err.find("vectors:") == std::string::npos, describe(piped));
  // An error after a progress line starts on a clean line.
  const auto [failed, code] =
      qscheme_on_terminal({"quantize", "--scheme", "q8_0", "--input", scratch / "missing.npy", "--output", scratch / "q.json"});
  BOOST_TEST(code == 2, failed);
  BOOST_TEST(failed.find("quantize: reading") != std::string::npos, failed);
  BOOST_TEST(failed.find("\r\033[Kerror: ") != std::string::npos, failed);
}
