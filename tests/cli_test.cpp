// The qscheme command line, run as a process: exit statuses (0 ok, 2 user error, 1 internal),
// "error: <code>: <message>" on stderr, no output written on error, the schemes/validate/verify
// commands, and quantize -> dequantize round trips on the golden vectors.

#include <algorithm>
#include <cmath>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/baseline.hpp"
#include "bench/peers.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/ostream.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/sanitized.hpp"
#include "tools/affinity.hpp"
#include "tools/command.hpp"
#include "io/file_io.hpp"
#include "tools/float_args.hpp"
#include "io/npy.hpp"
#include "io/qjson.hpp"

#ifndef QSCHEME_BIN
#error "QSCHEME_BIN must name the qscheme executable"
#endif
#ifndef QSCHEME_GOLDEN_JSON
#error "QSCHEME_GOLDEN_JSON must name burn-golden.json"
#endif
#ifndef QSCHEME_PROJECT_VERSION
#error "QSCHEME_PROJECT_VERSION must be the CMake project version"
#endif


using namespace qscheme;
namespace fs = std::filesystem;

namespace {

using qscheme::testing::Run;
using qscheme::testing::slurp;

struct Scratch : qscheme::testing::Scratch {
  Scratch() : qscheme::testing::Scratch("qscheme_cli_test") {}
};

// Runs qscheme with `args`, capturing stdout and stderr.
Run qscheme_run(const std::vector<std::string>& args) { return qscheme::testing::run_process(QSCHEME_BIN, args); }

std::string describe(const Run& r) { return "exit " + std::to_string(r.status) + "\nstdout: " + r.out + "\nstderr: " + r.err; }

void expect_ok(const Run& r) {
  BOOST_TEST(r.status == 0, describe(r));
}

// A user error: exit 2 and "error: <code>: " on stderr.
void expect_user_error(const Run& r, std::string_view code) {
  BOOST_TEST(r.status == 2, describe(r));
  BOOST_TEST(r.err.find("error: " + std::string(code) + ": ") != std::string::npos, describe(r));
}

void write_npy(const std::string& path, std::vector<std::uint64_t> shape, std::vector<float> values) {
  auto bytes = io::npy::serialize_f32(shape, values);
  BOOST_REQUIRE(bytes.ok());
  BOOST_REQUIRE(io::write_bytes(path, *bytes).ok());
}

std::vector<float> read_npy(const std::string& path) {
  auto a = io::npy::read_file(path);
  BOOST_REQUIRE_MESSAGE(a.ok(), a.status().to_string());
  return a->f32;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

nlohmann::json golden() {
  std::ifstream in(QSCHEME_GOLDEN_JSON);
  BOOST_REQUIRE_MESSAGE(in.good(), "cannot open golden vectors at " QSCHEME_GOLDEN_JSON);
  return nlohmann::json::parse(in);
}

std::string float_list(const nlohmann::json& values) {
  std::string s;
  for (const auto& v : values) {
    s += (s.empty() ? "" : ",");
    // The decimal as written in the file: strtof in the CLI rounds it once to f32.
    s += v.dump();
  }
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Exit statuses and the error line.

BOOST_AUTO_TEST_CASE(usage_errors_exit_2) {
  BOOST_TEST(qscheme_run({}).status == 2);
  BOOST_TEST(qscheme_run({"nosuchcommand"}).status == 2);
  BOOST_TEST(qscheme_run({"schemes", "--bogus"}).status == 2);
  BOOST_TEST(qscheme_run({"validate"}).status == 2);  // --scheme is required
  BOOST_TEST(qscheme_run({"quantize", "--scheme", "q8s"}).status == 2);
  BOOST_TEST(qscheme_run({"schemes", "--supported", "--rejected"}).status == 2);
  expect_ok(qscheme_run({"--version"}));
  expect_ok(qscheme_run({"--help"}));
  expect_ok(qscheme_run({"quantize", "--help"}));
  expect_ok(qscheme_run({"dequantize", "--help"}));
}

BOOST_AUTO_TEST_CASE(version_is_the_cmake_project_version) {
  // project(qscheme VERSION ...) is the one place the version is written.
  const Run v = qscheme_run({"--version"});
  expect_ok(v);
  BOOST_TEST(v.out == "qscheme " QSCHEME_PROJECT_VERSION "\n", describe(v));
  const Run j = qscheme_run({"info", "--json"});
  expect_ok(j);
  BOOST_TEST(nlohmann::json::parse(j.out)["version"].get<std::string>() == QSCHEME_PROJECT_VERSION, describe(j));
  const Run t = qscheme_run({"info"});
  expect_ok(t);
  BOOST_TEST(lines(t.out).at(0) == "qscheme        " QSCHEME_PROJECT_VERSION, describe(t));
}

BOOST_AUTO_TEST_CASE(report_maps_codes_to_exit_statuses) {
  // The internal-error path (exit 1) cannot be provoked from outside a correct build, so
  // report() itself is checked: internal -> 1, every other code -> 2.
  std::ostringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  const int internal = cli::report(Status(ErrorCode::internal, "broken invariant"));
  const int user = cli::report(Status(ErrorCode::unsupported_npy, "bad file"));
  std::cerr.rdbuf(old);
  BOOST_TEST(internal == 1);
  BOOST_TEST(user == 2);
  BOOST_TEST(captured.str() == "error: internal: broken invariant\nerror: unsupported-npy: bad file\n");
}

// ---------------------------------------------------------------------------------------------
// schemes, validate, verify.

BOOST_AUTO_TEST_CASE(schemes_summary_and_rows) {
  const Run r = qscheme_run({"schemes"});
  expect_ok(r);
  const auto ls = lines(r.out);
  BOOST_REQUIRE(ls.size() >= 2u);
  BOOST_TEST(ls[ls.size() - 2].rfind("burn space: 19656 tuples: 1599 supported, 18057 rejected", 0) == 0u, ls[ls.size() - 2]);
  BOOST_TEST(ls.back().rfind("extension space: 1028 tuples: 335 supported, 693 rejected", 0) == 0u, ls.back());
  int supported = 0, rejected = 0;
  for (const auto& l : ls) {
    supported += l.rfind("supported  ", 0) == 0;
    rejected += l.rfind("rejected   ", 0) == 0;
  }
  BOOST_TEST(supported == 1599 + 335);
  BOOST_TEST(rejected == 18057 + 693);

  const Run j = qscheme_run({"schemes", "--json"});
  expect_ok(j);
  const auto rows = nlohmann::json::parse(j.out);
  BOOST_REQUIRE(rows.is_array());
  BOOST_TEST(rows.size() == 19656u + 1028u);
  std::map<std::string, int> json_supported;
  for (const auto& row : rows) {
    BOOST_REQUIRE((row.contains("scheme") && row.contains("space") && row.contains("supported") &&
                   row.contains("error") && row.contains("message")));
    if (row["supported"].get<bool>()) {
      ++json_supported[row["space"].get<std::string>()];
      BOOST_REQUIRE(row["error"].is_null());
    } else {
      BOOST_REQUIRE(row["error"].is_string());
    }
  }
  BOOST_TEST(json_supported["burn"] == 1599);
  BOOST_TEST(json_supported["extension"] == 335);
  BOOST_TEST(j.err.find("burn space: 19656 tuples: 1599 supported") != std::string::npos, j.err);
  BOOST_TEST(j.err.find("extension space: 1028 tuples: 335 supported") != std::string::npos, j.err);
  const auto only = nlohmann::json::parse(qscheme_run({"schemes", "--json", "--supported"}).out);
  BOOST_TEST(only.size() == 1599u + 335u);
  const Run presets = qscheme_run({"schemes", "--presets", "--json"});
  expect_ok(presets);
  BOOST_TEST(nlohmann::json::parse(presets.out).size() >= 1u);
}

BOOST_AUTO_TEST_CASE(validate_fields_and_errors) {
  const Run r = qscheme_run({"validate", "--scheme", "q4s:packed-u32(0):block[32]=f16", "--shape", "3,3", "--json"});
  expect_ok(r);
  const auto j = nlohmann::json::parse(r.out);
  BOOST_TEST(j["valid"].get<bool>());
  BOOST_TEST(j["scheme"].get<std::string>() == "q4s:packed-u32(0):block[32]=f16");
  BOOST_TEST(j["shape"] == nlohmann::json({3, 3}));
  BOOST_TEST(j["blocks_per_dim"] == nlohmann::json({3, 1}));
  BOOST_TEST(j["scales"].get<int>() == 3);
  BOOST_TEST(j["storage_elements"].get<int>() == 3);  // per-line padding
  BOOST_TEST(j["bytes"].get<int>() == 3 * 4 + 3 * 2);
  expect_ok(qscheme_run({"validate", "--scheme", "nvfp4"}));
  expect_ok(qscheme_run({"validate", "--scheme", "q8s", "--shape", "4,8"}));

  const Run bad = qscheme_run({"validate", "--scheme", "q9s", "--json"});
  expect_user_error(bad, "malformed-scheme");
  const auto bj = nlohmann::json::parse(bad.out);
  BOOST_TEST(!bj["valid"].get<bool>());
  BOOST_TEST(bj["error"].get<std::string>() == "malformed-scheme");
  expect_user_error(qscheme_run({"validate", "--scheme", "q8s:packed-native(0)"}), "packed-native-unsupported");
  expect_user_error(qscheme_run({"validate", "--scheme", "q8s:packed-u32(1)", "--shape", "4"}), "packing-dim-out-of-range");
  expect_user_error(qscheme_run({"validate", "--scheme", "q8s", "--shape", "4,x"}), "invalid-argument");
}

BOOST_AUTO_TEST_CASE(verify_passes) {
  const Run r = qscheme_run({"verify"});
  expect_ok(r);
  BOOST_TEST(r.out.find("0 failed") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(verify_scheme_checks_pass) {
  const Run r = qscheme_run({"verify", "--scheme-only"});
  expect_ok(r);
  BOOST_TEST(r.out.find("0 failed") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("disagreements") == std::string::npos, r.out);
}

// ---------------------------------------------------------------------------------------------
// quantize / dequantize.

// --out-dtype f16 writes a '<f2' .npy of the f32 value rounded again (docs/SEMANTICS.md section
// 16): u16 code 59221 with scale 1.005859375 is 59567.998046875 exactly, f32 59568 (a tie to
// even), f16 0x7B46 (a tie to even again; rounded once it would be 0x7B45). bf16 has no .npy
// dtype: its patterns as '<u2' (the f32 0x4768B000 rounds to 0x4769: above the midpoint). The fast
// engine writes the same files, and nothing is written on error.
BOOST_AUTO_TEST_CASE(dequantize_to_f16_and_bf16) {
  Scratch tmp;
  write_npy(tmp / "x.npy", {1}, {59568.0f});
  write_npy(tmp / "s.npy", {1}, {1.005859375f});
  expect_ok(qscheme_run({"quantize", "--scheme", "u16", "--profile", "onnx", "--input", tmp / "x.npy", "--scales",
                         tmp / "s.npy", "--output", tmp / "q.json", "--engine", "reference"}));
  auto tail = [](const std::string& bytes) {
    return std::vector<unsigned>{static_cast<unsigned char>(bytes[bytes.size() - 2]),
                                 static_cast<unsigned char>(bytes[bytes.size() - 1])};
  };
  expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "h.npy", "--out-dtype", "f16",
                         "--engine", "reference"}));
  const std::string h = slurp(tmp / "h.npy");
  BOOST_TEST(h.find("'descr': '<f2'") != std::string::npos, h);
  BOOST_TEST(tail(h) == (std::vector<unsigned>{0x46, 0x7B}), boost::test_tools::per_element());
  expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "b.npy", "--out-dtype", "bf16",
                         "--engine", "reference"}));
  const std::string b = slurp(tmp / "b.npy");
  BOOST_TEST(b.find("'descr': '<u2'") != std::string::npos, b);
  BOOST_TEST(tail(b) == (std::vector<unsigned>{0x69, 0x47}), boost::test_tools::per_element());
  expect_ok(qscheme_run({"quantize", "--scheme", "u16", "--profile", "onnx", "--input", tmp / "x.npy", "--scales",
                         tmp / "s.npy", "--output", tmp / "qf.json"}));
  BOOST_TEST(slurp(tmp / "qf.json") == slurp(tmp / "q.json"));
  for (const char* d : {"f16", "bf16"}) {
    expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "f.npy", "--out-dtype", d}));
    BOOST_TEST(slurp(tmp / "f.npy") == slurp(tmp / (std::string(d) == "f16" ? "h.npy" : "b.npy")), d);
  }
  std::filesystem::remove(tmp / "f.npy");
  expect_user_error(qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "f.npy", "--out-dtype",
                                 "f8", "--engine", "reference"}),
                    "invalid-argument");
  BOOST_TEST(!std::filesystem::exists(tmp / "f.npy"));
}

// An extension kind: both engines quantize it with given scales to the same file, dequantize it
// alike, and refuse to calibrate an unsigned kind.
BOOST_AUTO_TEST_CASE(extension_kinds_through_the_cli) {
  Scratch tmp;
  write_npy(tmp / "x.npy", {4}, {-1.0f, 0.25f, 0.75f, 300.0f});
  write_npy(tmp / "s.npy", {1}, {0.5f});
  expect_ok(qscheme_run({"quantize", "--scheme", "u8", "--input", tmp / "x.npy", "--scales", tmp / "s.npy",
                         "--output", tmp / "q.json"}));
  auto q = io::qjson::read(slurp(tmp / "q.json"));
  BOOST_REQUIRE_MESSAGE(q.ok(), q.status().to_string());
  BOOST_TEST(q->codes == (std::vector<std::int32_t>{0, 0, 2, 255}), boost::test_tools::per_element());
  expect_ok(qscheme_run({"quantize", "--scheme", "u8", "--input", tmp / "x.npy", "--scales", tmp / "s.npy", "--output",
                         tmp / "qr.json", "--engine", "reference"}));
  BOOST_TEST(slurp(tmp / "q.json") == slurp(tmp / "qr.json"));
  expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "y.npy"}));
  BOOST_TEST(read_npy(tmp / "y.npy") == (std::vector<float>{0, 0, 1.0f, 127.5f}), boost::test_tools::per_element());
  for (const char* engine : {"fast", "reference"}) {
    expect_user_error(qscheme_run({"quantize", "--scheme", "u8", "--input", tmp / "x.npy", "--output", tmp / "q.json",
                                   "--engine", engine}),
                      "unsupported-profile");
  }
  // check and stats, which run the fast engine by default, compute an extension kind with the
  // reference instead of failing.
  expect_ok(qscheme_run({"quantize", "--scheme", "i16", "--input", tmp / "x.npy", "--output", tmp / "qi.json",
                         "--engine", "reference"}));
  const Run same = qscheme_run({"check", "--scheme", "i16", "--input", tmp / "x.npy", "--candidate", tmp / "qi.json"});
  BOOST_TEST(same.status == 0, describe(same));
  const Run stats = qscheme_run({"stats", "--input", tmp / "x.npy", "--schemes", "i16"});
  expect_ok(stats);
  BOOST_TEST(stats.out.find("i16") != std::string::npos, stats.out);
}

// Affine mode: --scales and --zero-points through both engines, calibration under both
// profiles, and typed errors that leave an existing output untouched.
BOOST_AUTO_TEST_CASE(affine_mode_through_the_cli) {
  Scratch tmp;
  write_npy(tmp / "x.npy", {4}, {-6.0f, -5.25f, 1.25f, 120.0f});
  const auto quantize = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"quantize", "--scheme", "u8:affine", "--input", tmp / "x.npy", "--output", tmp / "q.json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return qscheme_run(args);
  };
  // s = 1/2, z = 10: round(2x) + 10 = -2 -> 0, -0.5 -> 0 (-10.5 ties to -10), 12, 250.
  expect_ok(quantize({"--scales", "0.5", "--zero-points", "10", "--engine", "reference"}));
  auto q = io::qjson::read(slurp(tmp / "q.json"));
  BOOST_REQUIRE_MESSAGE(q.ok(), q.status().to_string());
  BOOST_TEST(q->codes == (std::vector<std::int32_t>{0, 0, 12, 250}), boost::test_tools::per_element());
  BOOST_TEST(q->zero_points == (std::vector<std::int32_t>{10}), boost::test_tools::per_element());
  expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "y.npy", "--engine", "reference"}));
  BOOST_TEST(read_npy(tmp / "y.npy") == (std::vector<float>{-5.0f, -5.0f, 1.0f, 120.0f}), boost::test_tools::per_element());
  const std::string before = slurp(tmp / "q.json");
  expect_user_error(quantize({"--scales", "0.5", "--zero-points", "256", "--engine", "reference"}), "invalid-scale");
  expect_user_error(quantize({"--scales", "0.5", "--zero-points", "1,2", "--engine", "reference"}), "size-mismatch");
  expect_user_error(quantize({"--scales", "0.5", "--zero-points", "1.5", "--engine", "reference"}), "invalid-argument");
  expect_user_error(quantize({"--scales", "-0.5", "--zero-points", "1", "--engine", "reference"}), "invalid-scale");
  expect_user_error(quantize({"--zero-points", "1", "--engine", "reference"}), "invalid-argument");
  expect_user_error(quantize({"--scales", "0.5", "--zero-points", "256"}), "invalid-scale");
  BOOST_TEST(slurp(tmp / "q.json") == before);
  expect_ok(quantize({"--scales", "0.5", "--zero-points", "10"}));
  BOOST_TEST(slurp(tmp / "q.json") == before);  // the fast engine's file is the reference's
  // Calibrated: DynamicQuantizeLinear under onnx (min -6, max 120: s = f32(126 / 255)).
  expect_ok(quantize({"--profile", "onnx", "--engine", "reference"}));
  q = io::qjson::read(slurp(tmp / "q.json"));
  BOOST_REQUIRE_MESSAGE(q.ok(), q.status().to_string());
  BOOST_TEST(q->scale_bits == (std::vector<std::uint32_t>{qscheme::f32_bits(126.0f / 255.0f)}), boost::test_tools::per_element());
  const std::string onnx = slurp(tmp / "q.json");
  expect_ok(quantize({"--profile", "onnx"}));
  BOOST_TEST(slurp(tmp / "q.json") == onnx);
  expect_ok(quantize({"--engine", "reference"}));
  const std::string exact = slurp(tmp / "q.json");
  expect_ok(quantize({}));
  BOOST_TEST(slurp(tmp / "q.json") == exact);
}

BOOST_AUTO_TEST_CASE(golden_int8_round_trip_through_the_cli) {
  const auto doc = golden();
  const nlohmann::json* v = nullptr;
  for (const auto& x : doc["vectors"]) {
    if (x["name"] == "int8_symmetric_per_tensor") v = &x;
  }
  BOOST_REQUIRE(v);
  Scratch tmp;
  write_npy(tmp / "x.npy", (*v)["shape"].get<std::vector<std::uint64_t>>(), (*v)["input"].get<std::vector<float>>());
  expect_ok(qscheme_run({"quantize", "--scheme", (*v)["scheme"], "--input", tmp / "x.npy", "--output", tmp / "q.json"}));
  auto q = io::qjson::read(slurp(tmp / "q.json"));
  BOOST_REQUIRE_MESSAGE(q.ok(), q.status().to_string());
  BOOST_TEST(q->codes == (*v)["codes"].get<std::vector<std::int32_t>>(), boost::test_tools::per_element());
  BOOST_TEST(q->scale_bits == qscheme::f32_bits((*v)["block_scales"].get<std::vector<float>>()), boost::test_tools::per_element());
  expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "y.npy"}));
  const auto y = read_npy(tmp / "y.npy");
  BOOST_TEST(qscheme::f32_bits(y) == qscheme::f32_bits((*v)["dequantized"].get<std::vector<float>>()), boost::test_tools::per_element());

  // The same through raw bytes: quantize to .bin, dequantize with --scheme and --shape.
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s", "--input", tmp / "x.npy", "--output", tmp / "q.bin"}));
  const std::string bin = slurp(tmp / "q.bin");
  BOOST_TEST(bin.size() == 8u);  // 4 codes + f32 scale
  expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.bin", "--scheme", "q8s", "--shape", "4", "--output", tmp / "y2.npy"}));
  BOOST_TEST(qscheme::f32_bits(read_npy(tmp / "y2.npy")) == qscheme::f32_bits(y), boost::test_tools::per_element());
  // --profile burn on the same file, and an explicit engine.
  expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.json", "--profile", "burn", "--engine", "reference", "--output",
                         tmp / "y3.npy"}));
  BOOST_TEST(qscheme::f32_bits(read_npy(tmp / "y3.npy")) == qscheme::f32_bits(y), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(golden_quantize_vectors_through_the_cli) {
  // Every quantize / quantize_given vector of the exact profile: codes and stored scales.
  const auto doc = golden();
  Scratch tmp;
  int checked = 0;
  for (const auto& v : doc["vectors"]) {
    const std::string op = v["op"];
    if (op != "quantize" && op != "quantize_given") continue;
    bool exact = false;
    for (const auto& p : v["profiles"]) exact = exact || p == "exact";
    if (!exact) continue;
    BOOST_TEST_CONTEXT("vector " << v["name"].get<std::string>()) {
      const auto shape = v["shape"].get<std::vector<std::uint64_t>>();
      write_npy(tmp / "x.npy", shape, v["input"].get<std::vector<float>>());
      std::vector<std::string> args{"quantize", "--scheme", v["scheme"], "--input", tmp / "x.npy", "--output", tmp / "q.json"};
      if (op == "quantize_given") {
        args.push_back("--scales");
        args.push_back(float_list(v["given_scales"]));
        if (!v["given_global"].is_null()) {
          args.push_back("--global");
          args.push_back(v["given_global"].dump());
        }
      }
      const Run r = qscheme_run(args);
      expect_ok(r);
      if (r.status != 0) continue;
      const std::string text = slurp(tmp / "q.json");
      auto q = io::qjson::read(text);
      BOOST_REQUIRE_MESSAGE(q.ok(), q.status().to_string());
      BOOST_TEST(q->codes == v["codes"].get<std::vector<std::int32_t>>(), boost::test_tools::per_element());
      const auto j = nlohmann::json::parse(text);
      BOOST_TEST(qscheme::f32_bits(j["block_scales"].get<std::vector<float>>()) == qscheme::f32_bits(v["block_scales"].get<std::vector<float>>()),
                 boost::test_tools::per_element());
      expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "y.npy"}));
      BOOST_TEST(read_npy(tmp / "y.npy").size() == v["input"].size());
      ++checked;
    }
  }
  BOOST_TEST(checked >= 10);
}

BOOST_AUTO_TEST_CASE(number_arguments_take_whole_f32_numbers_or_say_which_option_is_wrong) {
  BOOST_TEST(*cli::parse_f32("0x1p-3", "--global") == 0.125f);
  BOOST_TEST(*cli::parse_f32("-2.5e1", "--global") == -25.0f);
  BOOST_TEST(*cli::parse_f32("0.1", "--global") == 0.1f);  // rounded once, by strtof
  for (const char* bad : {"", " 1", "1 ", "1x", "abc", "1,2"}) {
    const auto r = cli::parse_f32(bad, "--global");
    BOOST_REQUIRE_MESSAGE(!r, bad);
    BOOST_TEST(r.status().code() == ErrorCode::invalid_argument);
    BOOST_TEST(r.status().message() == "--global: '" + std::string(bad) + "' is not a number");
  }
  BOOST_TEST(*cli::parse_f32_list("1,2.5,-0x1p2", "--scales") == (std::vector<float>{1.0f, 2.5f, -4.0f}),
             boost::test_tools::per_element());
  for (const char* bad : {"", "1,", ",1", "1,,2", "1;2"}) {
    const auto r = cli::parse_f32_list(bad, "--scales");
    BOOST_REQUIRE_MESSAGE(!r, bad);
    BOOST_TEST(r.status().message().starts_with("--scales: '"));
  }
  Scratch tmp;
  write_npy(tmp / "s.npy", {2}, {0.5f, 3.0f});
  BOOST_TEST(*cli::parse_f32_list(tmp / "s.npy", "--scales") == (std::vector<float>{0.5f, 3.0f}),
             boost::test_tools::per_element());
  const auto missing = cli::parse_f32_list(tmp / "none.npy", "--candidate-scales");
  BOOST_REQUIRE(!missing);
  BOOST_TEST(missing.status().code() == ErrorCode::io_error);
}

BOOST_AUTO_TEST_CASE(quantize_errors_write_nothing) {
  Scratch tmp;
  write_npy(tmp / "x.npy", {4}, {1, 2, 3, 4});
  // An f64 file and an int32 file.
  {
    std::string h = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }\n";
    std::vector<std::uint8_t> b{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(h.size()), 0};
    b.insert(b.end(), h.begin(), h.end());
    b.insert(b.end(), 8, 0);
    BOOST_REQUIRE(io::write_bytes(tmp / "f64.npy", b).ok());
    h = "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }\n";
    b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(h.size()), 0};
    b.insert(b.end(), h.begin(), h.end());
    b.insert(b.end(), 4, 0);
    BOOST_REQUIRE(io::write_bytes(tmp / "i32.npy", b).ok());
    BOOST_REQUIRE(io::write_bytes(tmp / "junk.npy", std::vector<std::uint8_t>{'h', 'i'}).ok());
  }
  const std::string out = tmp / "q.json";
  struct Case {
    std::vector<std::string> args;
    std::string code;
  };
  const std::vector<Case> cases{
      {{"--scheme", "q9s", "--input", tmp / "x.npy"}, "malformed-scheme"},
      {{"--scheme", "q8s:packed-native(0)", "--input", tmp / "x.npy"}, "packed-native-unsupported"},
      {{"--scheme", "q8s:block[2]=f32:tensor=f32", "--input", tmp / "x.npy"}, "two-level-block-dtype"},
      {{"--scheme", "q8s:lookup", "--input", tmp / "x.npy"}, "lookup-table-missing"},
      {{"--scheme", "q8s:packed-u32(1)", "--input", tmp / "x.npy"}, "packing-dim-out-of-range"},
      {{"--scheme", "q8s", "--input", tmp / "missing.npy"}, "io-error"},
      {{"--scheme", "q8s", "--input", tmp / "f64.npy"}, "unsupported-npy"},
      {{"--scheme", "q8s", "--input", tmp / "i32.npy"}, "unsupported-npy"},
      {{"--scheme", "q8s", "--input", tmp / "junk.npy"}, "unsupported-npy"},
      {{"--scheme", "q8s", "--profile", "fastest", "--input", tmp / "x.npy"}, "invalid-argument"},
      {{"--scheme", "q8s", "--calibration", "mse", "--input", tmp / "x.npy"}, "invalid-argument"},
      {{"--scheme", "q8s", "--engine", "gpu", "--input", tmp / "x.npy"}, "invalid-argument"},
      {{"--scheme", "q8s", "--global", "1", "--input", tmp / "x.npy"}, "invalid-argument"},
      {{"--scheme", "q8s", "--scales", "abc", "--input", tmp / "x.npy"}, "invalid-argument"},
      {{"--scheme", "q8s", "--scales", "1,2", "--input", tmp / "x.npy"}, "size-mismatch"},
      {{"--scheme", "q8s", "--scales", "-1", "--input", tmp / "x.npy"}, "invalid-scale"},
      {{"--scheme", "q8s", "--scales", tmp / "i32.npy", "--input", tmp / "x.npy"}, "unsupported-npy"},
      {{"--scheme", "q8s", "--global-amax", "4", "--input", tmp / "x.npy"}, "invalid-argument"},
      {{"--scheme", "q8s:block[2]=ue4m3:tensor=f32", "--global-amax", "x", "--input", tmp / "x.npy"}, "invalid-argument"},
      {{"--scheme", "q8s:block[2]=ue4m3:tensor=f32", "--global-amax", "-1", "--input", tmp / "x.npy"}, "invalid-scale"},
      {{"--scheme", "q8s:block[2]=ue4m3:tensor=f32", "--profile", "burn", "--global-amax", "4", "--input", tmp / "x.npy"},
       "unsupported-profile"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"quantize", "--output", out};
    args.insert(args.end(), c.args.begin(), c.args.end());
    BOOST_TEST_CONTEXT(c.args[1] << " " << c.args.back()) {
      expect_user_error(qscheme_run(args), c.code);
      BOOST_TEST(!fs::exists(out));
    }
  }
  // An existing output stays untouched on error.
  BOOST_REQUIRE(io::write_bytes(out, std::vector<std::uint8_t>{'k', 'e', 'e', 'p'}).ok());
  expect_user_error(qscheme_run({"quantize", "--scheme", "q9s", "--input", tmp / "x.npy", "--output", out}), "malformed-scheme");
  expect_user_error(qscheme_run({"quantize", "--scheme", "q8s", "--input", tmp / "f64.npy", "--output", out}), "unsupported-npy");
  BOOST_TEST(slurp(out) == "keep");
  // An output in a directory that does not exist.
  expect_user_error(qscheme_run({"quantize", "--scheme", "q8s", "--input", tmp / "x.npy", "--output", tmp / "no/q.json"}),
                    "io-error");
  // A known global amax: x's own gives the calibrated tensor; a smaller one other bytes (a
  // saturated block), the same from both engines.
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s:block[2]=ue4m3:tensor=f32", "--global-amax", "4", "--input",
                         tmp / "x.npy", "--output", tmp / "amax.json"}));
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s:block[2]=ue4m3:tensor=f32", "--input", tmp / "x.npy", "--output",
                         tmp / "calibrated.json"}));
  BOOST_TEST(slurp(tmp / "amax.json") == slurp(tmp / "calibrated.json"));
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s:block[2]=ue4m3:tensor=f32", "--global-amax", "1", "--engine",
                         "reference", "--input", tmp / "x.npy", "--output", tmp / "low.bin"}));
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s:block[2]=ue4m3:tensor=f32", "--global-amax", "1", "--input",
                         tmp / "x.npy", "--output", tmp / "low_fast.bin"}));
  BOOST_TEST(slurp(tmp / "low.bin") == slurp(tmp / "low_fast.bin"));
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s:block[2]=ue4m3:tensor=f32", "--input", tmp / "x.npy", "--output",
                         tmp / "calibrated.bin"}));
  BOOST_TEST(slurp(tmp / "low.bin") != slurp(tmp / "calibrated.bin"));
  // Given scales from a .npy file work.
  write_npy(tmp / "s.npy", {2}, {0.5f, 0.25f});
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s:block[2]=f32", "--scales", tmp / "s.npy", "--input", tmp / "x.npy",
                         "--output", tmp / "given.json"}));
  auto q = io::qjson::read(slurp(tmp / "given.json"));
  BOOST_REQUIRE(q.ok());
  BOOST_TEST(q->codes == (std::vector<std::int32_t>{2, 4, 12, 16}), boost::test_tools::per_element());
  // Only the expected files exist: no temporaries left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(tmp.dir)) files += e.is_regular_file();
  // x, f64, i32, junk, q.json (keep), amax, calibrated (json, bin), low, low_fast, s, given
  BOOST_TEST(files == 12);
}

// quantize to .bin takes the fast engine's fused f32 -> bytes path (one pass; no i32 codes):
// a NaN or an infinity anywhere is the same error, with the same message and index, as the
// reference engine's, and nothing is written.
BOOST_AUTO_TEST_CASE(quantize_bin_of_non_finite_input_is_the_reference_error) {
  Scratch tmp;
  for (const std::string scheme : {"q8_0", "nvfp4", "q4_0"}) {
    for (std::size_t at : {std::size_t{0}, std::size_t{1000}, std::size_t{4095}}) {
      for (float bad : {NAN, INFINITY}) {
        std::vector<float> x(64 * 64);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
        x[at] = bad;
        write_npy(tmp / "x.npy", {64, 64}, x);
        std::vector<Run> runs;
        for (const std::string engine : {"fast", "reference"}) {
          runs.push_back(qscheme_run(
              {"quantize", "--scheme", scheme, "--engine", engine, "--input", tmp / "x.npy", "--output", tmp / "q.bin"}));
          expect_user_error(runs.back(), "non-finite-input");
          BOOST_TEST(!fs::exists(tmp / "q.bin"));
        }
        BOOST_TEST(runs[0].err == runs[1].err, scheme << " at " << at);
        BOOST_TEST(runs[0].err.find(std::to_string(at)) != std::string::npos, runs[0].err);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(dequantize_errors_write_nothing) {
  Scratch tmp;
  write_npy(tmp / "x.npy", {4}, {1, 2, 3, 4});
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s", "--input", tmp / "x.npy", "--output", tmp / "q.json"}));
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s", "--input", tmp / "x.npy", "--output", tmp / "q.bin"}));
  std::string bad = slurp(tmp / "q.json");
  const auto at = bad.find("\"codes\": [");
  BOOST_REQUIRE(at != std::string::npos);
  bad.replace(at, 10, "\"codes\": [1,");  // five codes for four elements
  BOOST_REQUIRE(io::write_bytes(tmp / "count.json", std::vector<std::uint8_t>(bad.begin(), bad.end())).ok());
  std::string corrupt = slurp(tmp / "q.json");
  const auto c = corrupt.find("\"codes\": [");
  corrupt.replace(c + 10, corrupt.find(',', c) - (c + 10), "-128");
  BOOST_REQUIRE(io::write_bytes(tmp / "corrupt.json", std::vector<std::uint8_t>(corrupt.begin(), corrupt.end())).ok());
  std::string bin = slurp(tmp / "q.bin");
  bin[0] = static_cast<char>(0x80);  // -128 under q8s
  BOOST_REQUIRE(io::write_bytes(tmp / "corrupt.bin", std::vector<std::uint8_t>(bin.begin(), bin.end())).ok());
  BOOST_REQUIRE(io::write_bytes(tmp / "junk.json", std::vector<std::uint8_t>{'{'}).ok());

  const std::string out = tmp / "y.npy";
  struct Case {
    std::vector<std::string> args;
    std::string code;
  };
  const std::vector<Case> cases{
      {{"--input", tmp / "missing.json"}, "io-error"},
      {{"--input", tmp / "junk.json"}, "invalid-argument"},
      {{"--input", tmp / "count.json"}, "size-mismatch"},
      {{"--input", tmp / "corrupt.json"}, "corrupt-bytes"},
      {{"--input", tmp / "q.bin"}, "invalid-argument"},
      {{"--input", tmp / "q.bin", "--scheme", "q8s"}, "invalid-argument"},
      {{"--input", tmp / "q.bin", "--scheme", "q8s", "--shape", "5"}, "size-mismatch"},
      {{"--input", tmp / "q.bin", "--scheme", "q9s", "--shape", "4"}, "malformed-scheme"},
      {{"--input", tmp / "corrupt.bin", "--scheme", "q8s", "--shape", "4"}, "corrupt-bytes"},
      {{"--input", tmp / "q.json", "--scheme", "q8f"}, "invalid-argument"},
      {{"--input", tmp / "q.json", "--shape", "2,2"}, "invalid-argument"},
      {{"--input", tmp / "q.json", "--profile", "x"}, "invalid-argument"},
      {{"--input", tmp / "q.json", "--engine", "gpu"}, "invalid-argument"},
  };
  for (const Case& k : cases) {
    std::vector<std::string> args{"dequantize", "--output", out};
    args.insert(args.end(), k.args.begin(), k.args.end());
    BOOST_TEST_CONTEXT(k.args.front() << " " << k.args.back()) {
      const Run run = qscheme_run(args);
      expect_user_error(run, k.code);
      BOOST_TEST(!fs::exists(out));
      // Both engines print the same error, word for word (scheme/errors.hpp).
      if (std::find(args.begin(), args.end(), "--engine") == args.end()) {
        args.insert(args.end(), {"--engine", "reference"});
        BOOST_TEST(qscheme_run(args).err == run.err);
        BOOST_TEST(!fs::exists(out));
      }
    }
  }
  // Matching --scheme and --shape with Q.json are fine.
  expect_ok(qscheme_run({"dequantize", "--input", tmp / "q.json", "--scheme", "q8s", "--shape", "4", "--output", out}));
  BOOST_TEST(read_npy(out).size() == 4u);
}

BOOST_AUTO_TEST_CASE(a_qjson_key_given_twice_is_rejected_naming_it) {
  // The value read last used to win silently: a file with two "codes" dequantized to whichever
  // came second. Every key, repeated after the original with another value, is now a user error.
  Scratch tmp;
  write_npy(tmp / "x.npy", {4}, {1, 2, 3, 4});
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s", "--input", tmp / "x.npy", "--output", tmp / "q.json"}));
  const std::string good = slurp(tmp / "q.json");
  const std::vector<std::pair<std::string, std::string>> twice{
      {"scheme", "\"q8f\""},         {"profile", "\"burn\""}, {"shape", "[2,2]"},          {"codes", "[0,0,0,0]"},
      {"block_scales", "[2.0]"}, {"global_scale", "null"},  {"bytes", "\"0000000000000040\""}};
  for (const auto& [key, value] : twice) {
    std::string text = good;
    text.insert(text.rfind('}'), ",\"" + key + "\": " + value + "\n");
    BOOST_REQUIRE(io::write_bytes(tmp / "twice.json", std::vector<std::uint8_t>(text.begin(), text.end())).ok());
    BOOST_TEST_CONTEXT(key) {
      const Run r = qscheme_run({"dequantize", "--input", tmp / "twice.json", "--output", tmp / "y.npy"});
      expect_user_error(r, "invalid-argument");
      BOOST_TEST(r.err.find("duplicate key \"" + key + "\"") != std::string::npos, r.err);
      BOOST_TEST(!fs::exists(tmp / "y.npy"));
      const Run c = qscheme_run({"check", "--scheme", "q8s", "--input", tmp / "x.npy", "--candidate", tmp / "twice.json"});
      expect_user_error(c, "invalid-argument");
    }
  }
}

BOOST_AUTO_TEST_CASE(an_extent_past_63_bits_beside_a_zero_is_shape_overflow) {
  // [0, 2^64-1] has no elements, so no product overflowed and the shape was accepted: validate
  // said valid, quantize wrote a file with an extent numpy cannot load.
  expect_user_error(qscheme_run({"validate", "--scheme", "q8s", "--shape", "0,18446744073709551615"}), "shape-overflow");
  expect_user_error(qscheme_run({"validate", "--scheme", "q8_0", "--shape", "18446744073709551615,0"}), "shape-overflow");
  expect_ok(qscheme_run({"validate", "--scheme", "q8s", "--shape", "0,9223372036854775807"}));
  Scratch tmp;
  const std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 18446744073709551615), }\n";
  std::vector<std::uint8_t> b{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(h.size()), 0};
  b.insert(b.end(), h.begin(), h.end());
  BOOST_REQUIRE(io::write_bytes(tmp / "x.npy", b).ok());
  expect_user_error(qscheme_run({"quantize", "--scheme", "q8s", "--input", tmp / "x.npy", "--output", tmp / "q.json"}),
                    "shape-overflow");
  BOOST_TEST(!fs::exists(tmp / "q.json"));
  const std::string doc = R"({"scheme": "q8s", "shape": [0, 18446744073709551615], "codes": [], "block_scales": [1.0], "global_scale": null})";
  BOOST_REQUIRE(io::write_bytes(tmp / "q.json", std::vector<std::uint8_t>(doc.begin(), doc.end())).ok());
  expect_user_error(qscheme_run({"dequantize", "--input", tmp / "q.json", "--output", tmp / "y.npy"}), "shape-overflow");
  BOOST_TEST(!fs::exists(tmp / "y.npy"));
}

BOOST_AUTO_TEST_CASE(rank_0_and_empty_tensors) {
  Scratch tmp;
  write_npy(tmp / "s.npy", {}, {2.5f});
  expect_ok(qscheme_run({"quantize", "--scheme", "q8s", "--input", tmp / "s.npy", "--output", tmp / "s.json"}));
  expect_ok(qscheme_run({"dequantize", "--input", tmp / "s.json", "--output", tmp / "s2.npy"}));
  auto a = io::npy::read_file(tmp / "s2.npy");
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(a->shape.empty());
  BOOST_REQUIRE(a->f32.size() == 1u);
  BOOST_TEST(std::abs(a->f32[0] - 2.5f) < 1e-5f);  // the exact profile rounds the scale up: 2.50000024
  write_npy(tmp / "e.npy", {0, 3}, {});
  const Run r = qscheme_run({"quantize", "--scheme", "q4s:packed-u32(0):block[2]=f16", "--input", tmp / "e.npy", "--output",
                             tmp / "e.json"});
  expect_ok(r);
  if (r.status == 0) {
    expect_ok(qscheme_run({"dequantize", "--input", tmp / "e.json", "--output", tmp / "e2.npy"}));
    auto e = io::npy::read_file(tmp / "e2.npy");
    BOOST_REQUIRE(e.ok());
    BOOST_TEST(e->shape == (std::vector<std::uint64_t>{0, 3}), boost::test_tools::per_element());
  }
}

// ---------------------------------------------------------------------------------------------
// engines, info, bench.

BOOST_AUTO_TEST_CASE(engine_fast_and_reference_write_identical_outputs) {
  Scratch tmp;
  std::vector<float> x(3 * 40);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>(i * 37 % 101) - 50) * 0.37f;
  }
  x[3] = 0.0f;
  x[4] = -0.0f;
  x[5] = 1e-40f;   // subnormal
  x[6] = 2.5f;     // a tie for some scales
  for (std::size_t i = 80; i < 96; ++i) x[i] = 1.5f;  // a constant block
  write_npy(tmp / "x.npy", {3, 40}, x);
  const std::vector<std::string> schemes{"q8_0", "q4_0", "nvfp4", "mxfp8", "mxfp4", "q8s:block[16]=f32", "q4a:packed-u32(1):tensor=f32"};
  for (const std::string& scheme : schemes) {
    for (const std::string profile : {"exact", "burn"}) {
      const std::string tag = scheme + " " + profile;
      std::map<std::string, std::string> files;
      for (const std::string engine : {"fast", "reference"}) {
        for (const std::string ext : {".json", ".bin"}) {
          const std::string out = tmp / ("q_" + engine + ext);
          const Run r = qscheme_run({"quantize", "--scheme", scheme, "--profile", profile, "--engine", engine, "--input",
                                     tmp / "x.npy", "--output", out});
          if (r.status != 0) {
            // Rejected (e.g. burn on a scheme it cannot run): both engines must say the same.
            files[engine + ext] = "error " + r.err;
            continue;
          }
          files[engine + ext] = slurp(out);
        }
      }
      BOOST_TEST(files["fast.json"] == files["reference.json"], tag);
      BOOST_TEST(files["fast.bin"] == files["reference.bin"], tag);
      if (files["fast.json"].rfind("error", 0) == 0) continue;
      // Default engine (fast), with one thread and with all cores, and reference: same .npy.
      std::map<std::string, std::string> y;
      for (const std::vector<std::string>& extra :
           {std::vector<std::string>{"--engine", "reference"}, std::vector<std::string>{},
            std::vector<std::string>{"--threads", "1"}, std::vector<std::string>{"--engine", "fast", "--threads", "2"}}) {
        std::vector<std::string> args{"dequantize", "--input", tmp / "q_reference.json", "--output", tmp / "y.npy"};
        args.insert(args.end(), extra.begin(), extra.end());
        const Run r = qscheme_run(args);
        expect_ok(r);
        y[extra.empty() ? "default" : extra[1]] = slurp(tmp / "y.npy");
      }
      BOOST_TEST(y["reference"] == y["default"], tag);
      BOOST_TEST(y["reference"] == y["1"], tag);
      BOOST_TEST(y["reference"] == y["fast"], tag);
      // .bin through both engines' decode.
      const Run rb = qscheme_run({"dequantize", "--input", tmp / "q_fast.bin", "--scheme", scheme, "--shape", "3,40",
                                  "--profile", profile, "--output", tmp / "yb.npy"});
      expect_ok(rb);
      BOOST_TEST(slurp(tmp / "yb.npy") == y["reference"], tag);
    }
  }
  // --threads 1 on quantize: same bytes.
  expect_ok(qscheme_run({"quantize", "--scheme", "q4_0", "--threads", "1", "--input", tmp / "x.npy", "--output", tmp / "t1.bin"}));
  expect_ok(qscheme_run({"quantize", "--scheme", "q4_0", "--engine", "reference", "--input", tmp / "x.npy", "--output", tmp / "r.bin"}));
  BOOST_TEST(slurp(tmp / "t1.bin") == slurp(tmp / "r.bin"));
}

BOOST_AUTO_TEST_CASE(info_reports_targets_and_threads) {
  const Run r = qscheme_run({"info"});
  expect_ok(r);
  BOOST_TEST(r.out.find("targets        ") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("target         ") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("threads        ") != std::string::npos, r.out);

  const Run j = qscheme_run({"info", "--json", "--threads", "1"});
  expect_ok(j);
  const auto doc = nlohmann::json::parse(j.out);
  BOOST_TEST(doc["threads"].get<unsigned>() == 1u);
  BOOST_TEST(doc["default_engine"].get<std::string>() == "fast");
  const auto targets = doc["targets"].get<std::vector<std::string>>();
  BOOST_REQUIRE(!targets.empty());
  BOOST_TEST(doc["target"].get<std::string>() == targets.front());  // automatic = the best
  // --target forces any listed target; an unknown one is a user error.
  const Run forced = qscheme_run({"info", "--json", "--target", targets.back()});
  expect_ok(forced);
  BOOST_TEST(nlohmann::json::parse(forced.out)["target"].get<std::string>() == targets.back());
  expect_user_error(qscheme_run({"info", "--target", "NOT_A_TARGET"}), "invalid-argument");
}

// --threads takes 0 (all cores) to 256; any other text is invalid-argument naming the range, on
// every command that has the option, before a file is read or written. 4294967295 used to be
// taken (a thread per row block), and -1 drew CLI11's own parse error.
BOOST_AUTO_TEST_CASE(threads_outside_0_to_256_are_a_user_error) {
  Scratch tmp;
  write_npy(tmp / "x.npy", {4}, {1, 2, 3, 4});
  for (const std::string t : {"-1", "257", "4294967295", "4294967296", "-4294967297", "1.5", "abc", ""}) {
    BOOST_TEST_CONTEXT("--threads '" << t << "'") {
      const std::string why = "error: invalid-argument: --threads: '" + t + "' is not a thread count; use 1 to 256, or 0 for all cores\n";
      for (const std::vector<std::string>& cmd :
           {std::vector<std::string>{"info"}, {"verify", "--scheme-only"}, {"bench", "--mib", "1", "--reps", "1"},
            {"quantize", "--scheme", "q8_0", "--input", tmp / "x.npy", "--output", tmp / "q.bin"},
            {"dequantize", "--scheme", "q8_0", "--shape", "4", "--input", tmp / "q.bin", "--output", tmp / "y.npy"}}) {
        std::vector<std::string> args = cmd;
        args.insert(args.end(), {"--threads", t});
        const Run r = qscheme_run(args);
        BOOST_TEST(r.status == 2, cmd[0] << ": " << describe(r));
        BOOST_TEST(r.err == why, cmd[0] << ": " << describe(r));
        BOOST_TEST(r.out.empty(), cmd[0] << ": " << describe(r));
      }
      BOOST_TEST(!fs::exists(tmp / "q.bin"));
      BOOST_TEST(!fs::exists(tmp / "y.npy"));
    }
  }
  const Run most = qscheme_run({"info", "--json", "--threads", "256"});
  expect_ok(most);
  BOOST_TEST(nlohmann::json::parse(most.out)["threads"].get<unsigned>() == 256u);
}

// A process that cannot start every thread it asks for: 200 thread stacks of 8 MiB do not fit in
// 1.5 GB of address space. The first thread that failed to start used to end the process
// (SIGABRT, "terminate called without an active exception"); the call now runs on the threads
// that started, with the one-thread bytes. Not under the sanitizers: an ASan process reserves
// terabytes of shadow memory at start-up, which no such limit admits (fast_threads_test
// refuses threads to an ASan process after it has started instead).
BOOST_AUTO_TEST_CASE(threads_the_system_refuses_change_nothing_but_speed) {
  if (qscheme::testing::kSanitized) return;
  Scratch tmp;
  std::vector<float> x(2048 * 2048);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * 5;
  write_npy(tmp / "x.npy", {2048, 2048}, x);
  expect_ok(qscheme_run({"quantize", "--scheme", "q8_0", "--input", tmp / "x.npy", "--output", tmp / "one.bin", "--threads", "1"}));
  const Run r = qscheme::testing::run_process(
      "/bin/sh", {"-c", "ulimit -s 8192 && ulimit -v 1500000 && exec \"$0\" \"$@\"", QSCHEME_BIN, "quantize", "--scheme",
                  "q8_0", "--input", tmp / "x.npy", "--output", tmp / "many.bin", "--threads", "200"});
  expect_ok(r);
  BOOST_TEST(r.err.empty(), describe(r));
  BOOST_TEST(slurp(tmp / "one.bin") == slurp(tmp / "many.bin"));
}

BOOST_AUTO_TEST_CASE(a_qscheme_target_the_build_lacks_stops_every_command) {
  // Falling back to the best target in silence would run every figure and check on another
  // target than the one asked for, while `qscheme info` printed the request beside it.
  const std::vector<std::string> targets =
      nlohmann::json::parse(qscheme_run({"info", "--json"}).out)["targets"].get<std::vector<std::string>>();
  std::string list;
  for (const auto& t : targets) list += (list.empty() ? "" : ", ") + t;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"info"}, std::vector<std::string>{"schemes"},
                                               std::vector<std::string>{"verify"}}) {
    for (const char* bad : {"QSCHEME_TARGET=NOT_A_TARGET", "QSCHEME_TARGET=avx2", "QSCHEME_TARGET=AVX3_ZEN4"}) {
      const Run r = qscheme::testing::run_process(QSCHEME_BIN, args, {bad});
      expect_user_error(r, "invalid-argument");
      BOOST_TEST(r.err.find(std::string(bad) + " names no Highway target") != std::string::npos, describe(r));
      BOOST_TEST(r.err.find("set it to one of " + list + ", or unset it") != std::string::npos, describe(r));
      BOOST_TEST(r.out.empty(), describe(r));
    }
  }
  // Every listed target, "auto" and an empty value are taken.
  for (const auto& t : targets) {
    const Run r = qscheme::testing::run_process(QSCHEME_BIN, {"info", "--json"}, {"QSCHEME_TARGET=" + t});
    expect_ok(r);
    BOOST_TEST(nlohmann::json::parse(r.out)["target"].get<std::string>() == t);
  }
  for (const char* ok : {"QSCHEME_TARGET=auto", "QSCHEME_TARGET="}) {
    const Run r = qscheme::testing::run_process(QSCHEME_BIN, {"info", "--json"}, {ok});
    expect_ok(r);
    BOOST_TEST(nlohmann::json::parse(r.out)["target"].get<std::string>() == targets.front());
  }
}

// --rows runs the kernel rows whose names hold a part, with the baselines they are compared with:
// nvidia-nvfp4's rows alone, the calibrated one with its ratio to the two-pass bound, the one of a
// known global amax (one pass) without.
BOOST_AUTO_TEST_CASE(bench_rows_selects_kernel_rows) {
  const Run r = qscheme_run({"bench", "--json", "--mib", "1", "--reps", "1", "--threads", "1", "--evict-mib", "1",
                             "--rows", "nvfp4 nvidia;no such row"});
  expect_ok(r);
  std::vector<std::string> names;
  for (const auto& row : nlohmann::json::parse(r.out)) names.push_back(row["kernel"].get<std::string>());
  const std::vector<std::string> expected{"baseline read4 write1",
                                          "baseline read4 write1 streaming",
                                          "baseline read1 write4 streaming",
                                          "baseline two-pass read4 read4 write0.5",
                                          "baseline two-pass prefetched",
                                          "baseline two-pass block maxima",
                                          "quantize nvfp4 nvidia-nvfp4",
                                          "quantize nvfp4 nvidia-nvfp4 global amax"};
  BOOST_TEST(names == expected, boost::test_tools::per_element());
  const auto rows = nlohmann::json::parse(r.out);
  BOOST_REQUIRE(rows.size() == expected.size());
  BOOST_TEST(rows[rows.size() - 2]["ratio_to_two_pass"].get<double>() > 0.0);
  BOOST_TEST(!rows.back().contains("ratio_to_two_pass"));
}

BOOST_AUTO_TEST_CASE(bench_json_rows) {
  // A small eviction read keeps the test quick; the option itself is what is checked here.
  const Run r = qscheme_run({"bench", "--json", "--mib", "1", "--reps", "1", "--threads", "1", "--evict-mib", "1"});
  expect_ok(r);
  const auto rows = nlohmann::json::parse(r.out);
  BOOST_REQUIRE(rows.is_array());
  std::vector<std::string> names;
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& row : rows) {
    BOOST_REQUIRE(row.is_object());
    BOOST_REQUIRE(row.contains("kernel") && row["kernel"].is_string());
    for (const char* k : {"elements_per_s", "gb_per_s", "ratio_to_baseline"}) {
      BOOST_REQUIRE(row.contains(k) && row[k].is_number());
      BOOST_TEST(row[k].get<double>() > 0.0);
    }
    names.push_back(row["kernel"].get<std::string>());
    by_name[names.back()] = row;
  }
  // The baselines, then every kernel of the bench's one list, in its order, then the peers this
  // build has (none without XNNPACK).
  std::vector<std::string> expected{"baseline read4 write1",
                                    "baseline read1 write4",
                                    "baseline read4 write1 streaming",
                                    "baseline read1 write4 streaming",
                                    "baseline two-pass read4 read4 write0.5",
                                    "baseline two-pass prefetched",
                                    "baseline two-pass block maxima",
                                    "baseline read4 write1 in cache",
                                    "baseline read1 write4 in cache",
                                    "baseline q8_0 arithmetic in cache, inexact and unchecked"};
  int in_cache = 0, first_calls = 0;
  for (const auto& k : qscheme::bench::kernels()) {
    expected.emplace_back(k.name);
    in_cache += k.in_cache && !k.process_first_call;
    first_calls += k.process_first_call;
  }
  BOOST_TEST(in_cache == 8);
  BOOST_TEST(first_calls == 8);
  for (const auto& p : qscheme::bench::peers()) expected.emplace_back(p.name);
  BOOST_TEST(expected.size() > 40u);
  BOOST_TEST(names == expected, boost::test_tools::per_element());
  // Each row holds the four keys; a process's first call adds its two times, their ratio and the
  // page faults of the first call (after fast::warm_up(), also the warm-up's time), a two-level
  // row its ratio to the two-pass bound, a peer the qscheme row it is compared with and that
  // row's throughput over the peer's.
  for (const auto& k : qscheme::bench::kernels()) {
    const nlohmann::json& row = by_name[k.name];
    if (k.two_pass) {
      BOOST_TEST(row.size() == 5u, k.name);
      BOOST_REQUIRE_MESSAGE(row.contains("ratio_to_two_pass") && row["ratio_to_two_pass"].is_number(), k.name);
      BOOST_TEST(row["ratio_to_two_pass"].get<double>() > 0.0, k.name);
      continue;
    }
    if (!k.process_first_call) {
      BOOST_TEST(row.size() == 4u, k.name);
      continue;
    }
    BOOST_TEST(row.size() == (k.warm_up ? 9u : 8u), k.name);
    BOOST_TEST(row.contains("warm_up_s") == k.warm_up, k.name);
    for (const char* key : {"first_call_s", "later_call_s", "first_over_later"}) {
      BOOST_REQUIRE_MESSAGE(row.contains(key) && row[key].is_number(), k.name);
      BOOST_TEST(row[key].get<double>() > 0.0, k.name);
    }
    BOOST_REQUIRE_MESSAGE(row.contains("first_call_minor_faults") && row["first_call_minor_faults"].is_number_integer(),
                          k.name);
    BOOST_TEST(row["first_call_minor_faults"].get<long>() >= 0, k.name);
    if (k.warm_up) BOOST_TEST(row["warm_up_s"].get<double>() > 0.0, k.name);
    BOOST_TEST(row["first_over_later"].get<double>() ==
                   row["first_call_s"].get<double>() / row["later_call_s"].get<double>(),
               boost::test_tools::tolerance(1e-12));
  }
  for (const auto& p : qscheme::bench::peers()) {
    const nlohmann::json& row = by_name[p.name];
    BOOST_TEST(row.size() == 6u, p.name);
    BOOST_TEST(row.value("qscheme_row", std::string()) == p.qscheme_row, p.name);
    BOOST_TEST(by_name.count(p.qscheme_row) == 1u, p.name);
    BOOST_REQUIRE_MESSAGE(row.contains("qscheme_over_peer") && row["qscheme_over_peer"].is_number(), p.name);
    BOOST_TEST(row["qscheme_over_peer"].get<double>() > 0.0, p.name);
  }
  // The headers on this system say whether CMake had to find XNNPACK.
#if __has_include(<xnnpack.h>) && __has_include(<pthreadpool.h>)
  BOOST_TEST(qscheme::bench::peers().size() == 2u);
  BOOST_TEST(qscheme::bench::peers_absent_reason().empty());
#else
  BOOST_TEST(qscheme::bench::peers().empty());
  BOOST_TEST(qscheme::bench::peers_absent_reason().find("XNNPACK") != std::string::npos);
  const Run text = qscheme_run({"bench", "--mib", "1", "--reps", "1", "--threads", "1", "--evict-mib", "1"});
  expect_ok(text);
  BOOST_TEST(text.out.find(qscheme::bench::peers_absent_reason()) != std::string::npos, describe(text));
#endif
  expect_user_error(qscheme_run({"bench", "--target", "NOT_A_TARGET", "--mib", "1"}), "invalid-argument");
  for (const char* bad : {"-1", "4097"}) {  // CLI11's range check: at most 4 GiB is read
    const Run r2 = qscheme_run({"bench", "--evict-mib", bad, "--mib", "1"});
    BOOST_TEST(r2.status == 2, describe(r2));
    BOOST_TEST(r2.err.find("--evict-mib") != std::string::npos, describe(r2));
  }
}

BOOST_AUTO_TEST_CASE(bench_inputs_sit_where_the_rows_say) {
  // The baselines' split loads on an input 16 bytes past a line made them 13-30% slower than the
  // memory allows (docs/PERFORMANCE.md, "What is measured"): the benchmark's buffers are
  // page-aligned, and only the rows that say so move the input.
  const std::size_t n = 4096 * 3;
  const auto x = qscheme::bench::make_input(n, 5);
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(x.data()) % qscheme::bench::kBufferAlign == 0u);
  int offset_rows = 0;
  for (const qscheme::bench::Kernel& k : qscheme::bench::kernels()) {
    qscheme::bench::KernelRun run(k, x);
    BOOST_REQUIRE_MESSAGE(run.status().ok(), k.name);
    const std::span<const float> in = run.input();
    BOOST_TEST(reinterpret_cast<std::uintptr_t>(in.data()) % qscheme::bench::kBufferAlign == k.input_offset, k.name);
    BOOST_TEST(std::equal(in.begin(), in.end(), x.begin(), x.end()), k.name);
    const bool says = std::string(k.name).find(std::to_string(k.input_offset) + " B past a line") != std::string::npos;
    BOOST_TEST((k.input_offset == 0 || says), k.name);
    offset_rows += k.input_offset != 0;
  }
  BOOST_TEST(offset_rows == 2);
}

BOOST_AUTO_TEST_CASE(cpu_lists_parse_to_sorted_cpus_or_a_typed_error) {
  using V = std::vector<int>;
  const std::pair<const char*, V> good[] = {{"0", V{0}}, {"3,1", V{1, 3}}, {"0-2", V{0, 1, 2}},
                                            {"2-3,0,3", V{0, 2, 3}}, {"5-5", V{5}}};
  for (const auto& [text, want] : good) {
    const auto got = cli::parse_cpu_list(text);
    BOOST_REQUIRE_MESSAGE(got.ok(), text);
    BOOST_TEST(*got == want, boost::test_tools::per_element());
  }
  for (const char* text : {"", ",", "0,", "a", "-1", "1-", "-", "3-1", "0x1", "1 ", "99999999", "1-99999999"}) {
    const auto got = cli::parse_cpu_list(text);
    BOOST_TEST(!got.ok(), text);
    if (!got.ok()) BOOST_TEST(to_code(got.status().code()) == "invalid-argument", text);
  }
}

BOOST_AUTO_TEST_CASE(bench_runs_on_the_cpus_it_is_given) {
  // The first CPU this test may run on (not necessarily 0 in a container).
  const auto allowed = cli::parse_cpu_list(cli::allowed_cpus());
  BOOST_REQUIRE(allowed.ok() && !allowed->empty());
  const std::string first = std::to_string(allowed->front());
  const Run r = qscheme_run({"bench", "--mib", "1", "--reps", "1", "--cpus", first, "--evict-mib", "1"});
  expect_ok(r);
  BOOST_TEST(r.out.find("1 thread(s) on CPUs " + first + ",") != std::string::npos, describe(r));
  // CPU 1023 is not one of this machine's: rejected before anything runs, naming the ones there are.
  const Run far = qscheme_run({"bench", "--mib", "1", "--reps", "1", "--cpus", "1023"});
  expect_user_error(far, "invalid-argument");
  BOOST_TEST(far.err.find("choose among " + cli::allowed_cpus()) != std::string::npos, describe(far));
  expect_user_error(qscheme_run({"bench", "--mib", "1", "--cpus", "1-0"}), "invalid-argument");
}

BOOST_AUTO_TEST_CASE(bench_baselines_write_what_they_claim_to_move) {
  // The baselines must really do their passes (a loop the compiler could drop would inflate the
  // ratios): the bytes they write are checked here, odd lengths and two threads included.
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{10001}}) {
    const auto x = qscheme::bench::make_input(n, 3);
    std::uint32_t top = 0;
    for (float v : x) top = std::max(top, qscheme::f32_bits(v) & 0x7FFFFFFFu);
    const auto mix = static_cast<std::uint8_t>(top >> 23);
    for (unsigned threads : {1u, 2u}) {
      std::vector<std::uint8_t> q(n, 0xAB), two(n, 0xAB);
      qscheme::bench::baseline_read4_write1(x.data(), q.data(), n, threads);
      std::vector<std::uint8_t> qs(n, 0xAB);
      qscheme::bench::baseline_read4_write1_stream(x.data(), qs.data(), n, threads);
      BOOST_TEST(qs == q);
      qscheme::bench::baseline_two_pass(x.data(), two.data(), n, threads);
      std::vector<std::uint8_t> twop(n, 0xAB);
      qscheme::bench::baseline_two_pass_prefetched(x.data(), twop.data(), n, threads);
      BOOST_TEST(twop == two);
      const std::size_t h = n / 2;
      for (std::size_t i = 0; i < n; ++i) {
        BOOST_TEST(q[i] == (qscheme::f32_bits(x[i]) >> 24));
        if (i < h) {
          const std::uint32_t u0 = qscheme::f32_bits(x[i]), u1 = qscheme::f32_bits(x[h + i]);
          BOOST_TEST(two[i] == static_cast<std::uint8_t>(((u0 >> 28) | ((u1 >> 24) & 0xF0u)) ^ mix));
        } else if (i == h && n % 2) {
          BOOST_TEST(two[i] == static_cast<std::uint8_t>(mix ^ (x[n - 1] > 0 ? 1 : 0)));
        } else {
          BOOST_TEST(two[i] == 0xAB);  // half a byte per element: the rest is not written
        }
      }
      // nvfp4's bytes: a code byte per element pair, then a scale byte per block of 16, from the
      // engine's block maxima; one byte past them stays as it was.
      const std::size_t nc = (n + 1) / 2, nb = (n + 15) / 16;
      std::vector<std::uint8_t> blk(nc + nb + 1, 0xAB);
      qscheme::bench::baseline_two_pass_block_maxima(x.data(), blk.data(), n, threads);
      for (std::size_t j = 0; j < nc; ++j) {
        const std::uint32_t lo = qscheme::f32_bits(x[2 * j]);
        const std::uint32_t hi = 2 * j + 1 < n ? qscheme::f32_bits(x[2 * j + 1]) : 0u;
        BOOST_TEST(blk[j] == static_cast<std::uint8_t>(((lo >> 28) | ((hi >> 24) & 0xF0u)) ^ mix), "code " << j);
      }
      for (std::size_t k = 0; k < nb; ++k) {
        std::uint32_t m = 0;
        for (std::size_t i = 16 * k; i < std::min(n, 16 * k + 16); ++i) {
          m = std::max(m, qscheme::f32_bits(x[i]) & 0x7FFFFFFFu);
        }
        BOOST_TEST(blk[nc + k] == static_cast<std::uint8_t>((m >> 23) ^ mix), "scale " << k);
      }
      BOOST_TEST(blk[nc + nb] == 0xAB);
      std::vector<float> d(n, 0.0f);
      qscheme::bench::baseline_read1_write4(q.data(), d.data(), n, threads);
      for (std::size_t i = 0; i < n; ++i) BOOST_TEST(d[i] == static_cast<float>(static_cast<std::int8_t>(q[i])));
      std::vector<float> ds(n + 1, 0.0f);
      qscheme::bench::baseline_read1_write4_stream(q.data(), ds.data() + 1, n, threads);  // misaligned
      BOOST_TEST(std::equal(d.begin(), d.end(), ds.begin() + 1));
    }
  }
  // The inexact q8_0 arithmetic, block by block against its definition: codes nearbyint(x 127 /
  // amax) in f32 (0 for an all-zero block), scales amax / 127; input past the last whole group of
  // 16 blocks is not read, its outputs not written.
  const std::size_t n = 2 * 512 + 40;
  auto x = qscheme::bench::make_input(n, 5);
  for (std::size_t i = 96; i < 128; ++i) x[i] = 0.0f;  // block 3: all zeros
  for (std::size_t b = 0; b < 32; ++b) x[32 * b + b % 32] *= 40.0f;  // block maxima of every size
  // Block 5 gets elements whose exact product x m lies just below a half-integer while the f32
  // product rounds onto it: x m rounded, then + 1.5 2^23 rounded, gives the even neighbour above
  // or below; a contracted x m + 1.5 2^23 (one rounding) gives the one below. So the test fails
  // if the baseline is built with FMA contraction, which would make its clones disagree.
  std::size_t planted = 0;
  {
    float amax = 0.0f;
    for (std::size_t i = 160; i < 192; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float m = 127.0f / amax;
    for (int k = 3; k < 120 && planted < 8; k += 2) {  // odd k: k + 0.5 rounds to k + 1 (even)
      float t = static_cast<float>((k + 0.5) / m);
      for (int step = 0; step < 64 && planted < 8; ++step, t = std::nextafter(t, 0.0f)) {
        const double exact = static_cast<double>(t) * static_cast<double>(m);
        if (std::fabs(t) < amax && exact < k + 0.5 && t * m == static_cast<float>(k + 0.5)) {
          x[176 + planted++] = t;  // past block 5's maximum (at 165)
          break;
        }
      }
    }
  }
  BOOST_TEST_REQUIRE(planted > 0u, "no double-rounding element found for block 5");
  std::vector<std::int8_t> codes(n, 99);
  std::vector<float> scales(n / 32 + 2, -1.0f);
  qscheme::bench::baseline_inexact_q8_0_range(x.data(), codes.data(), scales.data(), n);
  for (std::size_t b = 0; b < 32; ++b) {
    float amax = 0.0f;
    for (std::size_t i = 32 * b; i < 32 * b + 32; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float m = amax > 0.0f ? 127.0f / amax : 0.0f;
    BOOST_TEST(scales[b] == amax / 127.0f, "block " << b);
    for (std::size_t i = 32 * b; i < 32 * b + 32; ++i) {
      BOOST_TEST(codes[i] == static_cast<std::int8_t>(std::nearbyint(x[i] * m)), "element " << i);
    }
  }
  BOOST_TEST(scales[32] == -1.0f);
  for (std::size_t i = 1024; i < n; ++i) BOOST_TEST(codes[i] == 99);
}

BOOST_AUTO_TEST_CASE(bench_vs_reference_agrees) {
  const Run r = qscheme_run({"bench", "--vs-reference", "--json", "--reps", "1", "--schemes", "q8_0;nvfp4"});
  expect_ok(r);
  const auto rows = nlohmann::json::parse(r.out);
  BOOST_REQUIRE(rows.is_array());
  BOOST_TEST(rows.size() == 2u);
  for (const auto& row : rows) BOOST_TEST(row["agree"].get<bool>(), row.dump());
}
