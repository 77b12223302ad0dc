// The command line's outputs and messages, run as a process: devices, FIFOs, symlinks and `-`
// are written through; interrupted runs leave no temporary; an output that is an input is
// refused; formats are chosen case-insensitively and unknown extensions refused; vectors
// writes all or nothing; user strings are escaped in messages; every error line has the
// "error: <code>: " form, CLI11's own included.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
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

}  // namespace

// ---------------------------------------------------------------------------------------------
// Item 10: control bytes and invalid UTF-8 in user strings are escaped in messages.

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

