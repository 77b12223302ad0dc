// The command line on a large tensor (16M elements, a 64 MiB f32 input): Q.json costs about
// what the serialized bytes cost, and check about its input and the bytes compared. Peak
// resident memory of each child process (getrusage) against the .bin path's and the input's;
// wall time of check against quantize to .bin. This process streams every large file in
// pieces, so its own small peak is all it adds to a child's (run_process.hpp). Under a
// sanitizer the tensor is smaller and only the results are checked (ASan's shadow memory and
// quarantine make RSS meaningless).
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/run_process.hpp"
#include "tests/support/sanitized.hpp"

#ifndef QSCHEME_BIN
#error "QSCHEME_BIN must name the qscheme executable"
#endif

using namespace qscheme;
using qscheme::testing::kSanitized;
using qscheme::testing::Run;

namespace {

constexpr std::uint64_t kRows = kSanitized ? 256 : 4096;
constexpr std::uint64_t kCols = 4096;
constexpr double kInputKib = 4.0 * kRows * kCols / 1024;

struct Timed {
  Run run;
  double seconds = 0;
};

Timed qscheme_run(const std::vector<std::string>& args) {
  const auto start = std::chrono::steady_clock::now();
  Run r = qscheme::testing::run_process(QSCHEME_BIN, args);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  BOOST_TEST_MESSAGE(args[0] << " " << args.back() << ": " << r.max_rss_kib / 1024 << " MiB, " << took.count() << " s");
  return {std::move(r), took.count()};
}

void expect_status(const Timed& t, int status) { BOOST_TEST(t.run.status == status, t.run.out << t.run.err); }

// The input .npy, written a row at a time: pseudo-random values in [-4, 4).
void write_input(const std::string& path) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(kRows) + ", " +
                       std::to_string(kCols) + "), }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 255), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  std::vector<float> row(kCols);
  std::uint64_t state = 1;
  for (std::uint64_t r = 0; r < kRows; ++r) {
    for (float& v : row) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      v = static_cast<float>(static_cast<std::int64_t>(state >> 40) - (1 << 23)) / static_cast<float>(1 << 21);
    }
    out.write(reinterpret_cast<const char*>(row.data()), static_cast<std::streamsize>(4 * kCols));
  }
  BOOST_REQUIRE(out.good());
}

bool same_files(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary);
  std::ifstream fb(b, std::ios::binary);
  std::vector<char> ba(1 << 20), bb(1 << 20);
  while (fa && fb) {
    fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
    fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
    if (fa.gcount() != fb.gcount() || !std::equal(ba.begin(), ba.begin() + fa.gcount(), bb.begin())) return false;
  }
  return fa.eof() && fb.eof();
}

}  // namespace

BOOST_AUTO_TEST_CASE(qjson_and_check_cost_about_the_serialized_bytes) {
  qscheme::testing::Scratch tmp("qscheme_scale_test");
  write_input(tmp / "x.npy");
  const std::string shape = std::to_string(kRows) + "," + std::to_string(kCols);

  const Timed bin = qscheme_run({"quantize", "--scheme", "q8_0", "--input", tmp / "x.npy", "--output", tmp / "q.bin"});
  expect_status(bin, 0);
  const Timed json = qscheme_run({"quantize", "--scheme", "q8_0", "--input", tmp / "x.npy", "--output", tmp / "q.json"});
  expect_status(json, 0);
  const Timed from_bin = qscheme_run(
      {"dequantize", "--input", tmp / "q.bin", "--scheme", "q8_0", "--shape", shape, "--output", tmp / "y_bin.npy"});
  expect_status(from_bin, 0);
  const Timed from_json = qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "y_json.npy"});
  expect_status(from_json, 0);
  BOOST_TEST(same_files(tmp / "y_json.npy", tmp / "y_bin.npy"));

  const Timed check_bin = qscheme_run({"check", "--scheme", "q8_0", "--input", tmp / "x.npy", "--candidate", tmp / "q.bin"});
  expect_status(check_bin, 0);
  const Timed check_json = qscheme_run({"check", "--scheme", "q8_0", "--input", tmp / "x.npy", "--candidate", tmp / "q.json"});
  expect_status(check_json, 0);
  // One code changed: exit 3, one element, and no deviation runs over the whole tensor.
  std::filesystem::copy_file(tmp / "q.bin", tmp / "one.bin");
  {
    std::fstream f(tmp / "one.bin", std::ios::binary | std::ios::in | std::ios::out);
    f.seekg(1000);
    const char c = static_cast<char>(f.get());
    f.seekp(1000);
    f.put(static_cast<char>(c == 0 ? 1 : 0));
    BOOST_REQUIRE(f.good());
  }
  const Timed check_one = qscheme_run({"check", "--scheme", "q8_0", "--input", tmp / "x.npy", "--candidate", tmp / "one.bin"});
  expect_status(check_one, 3);
  BOOST_TEST(check_one.run.out.find("codes: 1 of " + std::to_string(kRows * kCols) + " differ") != std::string::npos,
             check_one.run.out);
  BOOST_TEST(check_one.run.out.find("DIFFERS from recipe exact: no recipe with up to two rules changed reproduces the "
                                    "candidate; closest: exact, reproduces all but 1 element(s) in block ") == 0u,
             check_one.run.out);
  if (kSanitized) return;

  // Q.json costs what the .bin path costs (the JSON text itself is never in memory), where it
  // cost about ten times the input.
  BOOST_TEST(json.run.max_rss_kib < 1.5 * bin.run.max_rss_kib);
  BOOST_TEST(from_json.run.max_rss_kib < 1.5 * from_bin.run.max_rss_kib);
  // check holds the input, the expected bytes and the candidate's: under twice the input,
  // where it held the reference's tensors (ten times).
  for (const Timed* t : {&check_bin, &check_json, &check_one}) BOOST_TEST(t->run.max_rss_kib < 2 * kInputKib);
  // And it takes about what quantize takes: the fast engine, not the exact one over the whole
  // tensor (some hundred times slower). The margin is wide for a loaded machine.
  BOOST_TEST(check_bin.seconds < 10 * bin.seconds + 2);
  BOOST_TEST(check_one.seconds < 10 * bin.seconds + 2);
}
