// `qscheme check` and `qscheme vectors` run as processes: check's exit statuses (0 identical,
// 3 differs, 2 bad input) and JSON report; vectors is deterministic (two runs, identical files)
// and everything it exports verifies under `qscheme check` in every representation.

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/run_process.hpp"
#include "tests/support/sanitized.hpp"
#include "io/file_io.hpp"
#include "io/npy.hpp"
#include "oracle/onnx/conformance.hpp"
#include "scheme/text.hpp"

#ifndef QSCHEME_BIN
#error "QSCHEME_BIN must name the qscheme executable"
#endif

namespace fs = std::filesystem;
using namespace qscheme;

namespace {

using qscheme::testing::Run;
using qscheme::testing::slurp;

struct Scratch : qscheme::testing::Scratch {
  Scratch() : qscheme::testing::Scratch("qscheme_oracle_test") {}
};

// Runs qscheme with `args`, capturing stdout and stderr.
Run qscheme_run(const std::vector<std::string>& args) { return qscheme::testing::run_process(QSCHEME_BIN, args); }

void write_f32(const std::string& path, std::vector<std::uint64_t> shape, const std::vector<float>& v) {
  auto b = io::npy::serialize_f32(shape, v);
  BOOST_REQUIRE(b.ok());
  BOOST_REQUIRE(io::write_bytes(path, *b).ok());
}

// An int32 .npy file of codes, as another implementation writes one.
void write_i32(const std::string& path, const std::vector<std::uint64_t>& shape, const std::vector<std::int32_t>& v) {
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  const std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (" + dims + "), }\n";
  std::vector<std::uint8_t> b{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(header.size()), 0};
  b.insert(b.end(), header.begin(), header.end());
  for (std::int32_t c : v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(c) >> (8 * i)));
  }
  BOOST_REQUIRE(io::write_bytes(path, b).ok());
}

// Every regular file under dir, relative path -> contents.
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).generic_string()] = slurp(e.path());
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(check_cli)

BOOST_AUTO_TEST_CASE(exit_statuses_and_json) {
  Scratch s;
  write_f32(s / "x.npy", {6}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 3});
  // Ties away from zero, written by hand: 1 2 3 -1 -3 3 (the reference gives 0 2 2 0 -2 3).
  write_f32(s / "away.npy", {6}, {1, 2, 3, -1, -3, 3});
  Run r = qscheme_run({"check", "--scheme", "q8s", "--input", s / "x.npy", "--scales", "1", "--candidate",
                       s / "away.npy", "--candidate-kind", "dequantized", "--json"});
  BOOST_TEST(r.status == 3);
  const auto j = nlohmann::json::parse(r.out);
  BOOST_TEST(j["result"] == "differs");
  BOOST_TEST(j["differing_elements"] == 4);
  // Burn's rounding (its f32 division by 1 is exact).
  BOOST_TEST(j["diagnosis"][0]["variant"] == "burn");
  BOOST_TEST(j["diagnosis"][0]["recipe"] == "burn");
  BOOST_TEST(j["recipe"] == "exact");
  BOOST_TEST(j["first"][0]["index"] == 0);
  BOOST_TEST(j["blocks"][0]["block"] == 0);
  BOOST_TEST(j["blocks"][0]["differing_elements"] == 4);
  BOOST_TEST(j["zero_signs_equal"] == true);
  BOOST_TEST(j["scales_compared"] == false);

  r = qscheme_run({"check", "--scheme", "q8s", "--input", s / "x.npy", "--scales", "1", "--candidate",
                   s / "away.npy", "--candidate-kind", "dequantized"});
  BOOST_TEST(r.status == 3);
  BOOST_TEST(r.out.find("DIFFERS from recipe exact: burn reproduces the candidate exactly\n") == 0u, r.out);
  BOOST_TEST(r.out.find("values: 4 of 6 differ") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("scale(s)") == std::string::npos, r.out);
  BOOST_TEST(r.out.find("diagnosis: burn: ") != std::string::npos, r.out);

  // The reference's own output.
  r = qscheme_run({"quantize", "--scheme", "q8s", "--input", s / "x.npy", "--scales", "1", "--output", s / "q.json"});
  BOOST_REQUIRE(r.status == 0);
  r = qscheme_run({"check", "--scheme", "q8s", "--input", s / "x.npy", "--scales", "1", "--candidate", s / "q.json"});
  BOOST_TEST(r.status == 0);
  BOOST_TEST(r.out.find("identical") == 0u);

  // Bad input: a missing candidate, a scheme mismatch, the wrong size.
  r = qscheme_run({"check", "--scheme", "q8s", "--input", s / "x.npy", "--scales", "1", "--candidate", s / "none.json"});
  BOOST_TEST(r.status == 2);
  r = qscheme_run({"check", "--scheme", "q8f", "--input", s / "x.npy", "--scales", "1", "--candidate", s / "q.json"});
  BOOST_TEST(r.status == 2);
  write_f32(s / "short.npy", {2}, {1, 2});
  r = qscheme_run({"check", "--scheme", "q8s", "--input", s / "x.npy", "--scales", "1", "--candidate",
                   s / "short.npy", "--candidate-kind", "dequantized"});
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.err.find("size-mismatch") != std::string::npos);
}

// A two-level candidate quantized under a known global amax: check under the same amax finds it
// identical; calibrated, the global and the scales differ.
BOOST_AUTO_TEST_CASE(a_candidate_of_a_known_global_amax_is_checked_under_it) {
  Scratch s;
  std::vector<float> x(32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 11) - 4.5f;
  write_f32(s / "x.npy", {32}, x);
  Run r = qscheme_run({"quantize", "--recipe", "nvidia-nvfp4", "--global-amax", "2", "--input", s / "x.npy",
                       "--output", s / "q.bin"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  r = qscheme_run({"check", "--recipe", "nvidia-nvfp4", "--global-amax", "2", "--input", s / "x.npy", "--candidate",
                   s / "q.bin"});
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST(r.out.find("identical") == 0u, r.out);
  r = qscheme_run({"check", "--recipe", "nvidia-nvfp4", "--input", s / "x.npy", "--candidate", s / "q.bin", "--json"});
  BOOST_TEST(r.status == 3, r.out << r.err);
  r = qscheme_run({"check", "--scheme", "q8_0", "--global-amax", "2", "--input", s / "x.npy", "--candidate",
                   s / "q.bin"});
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.err.find("invalid-argument") != std::string::npos, r.err);
}

// A candidate's scale that is inf or NaN is a difference the report names with its block, not
// bad input: q8s in blocks of 3 with given scales 1, the candidate's codes the reference's
// (0 2 2 | 0 -2 3: ties to even) and its second scale inf, then NaN.
BOOST_AUTO_TEST_CASE(a_non_finite_candidate_scale_is_a_difference_named_with_its_block) {
  Scratch s;
  write_f32(s / "x.npy", {6}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 3});
  write_i32(s / "codes.npy", {6}, {0, 2, 2, 0, -2, 3});
  for (const char* bad : {"inf", "nan"}) {
    const Run r = qscheme_run({"check", "--scheme", "q8s:block[3]=f32", "--input", s / "x.npy", "--scales", "1,1",
                               "--candidate", s / "codes.npy", "--candidate-scales", std::string("1,") + bad});
    BOOST_TEST(r.status == 3, bad << ": " << r.out << r.err);
    BOOST_TEST(r.out.find("scales: 1 of 2 differ") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("the candidate's scale is inf or NaN in block 1\n") != std::string::npos, r.out);
  }
}

BOOST_AUTO_TEST_CASE(a_candidate_of_another_shape_is_bad_input_naming_both_shapes) {
  // Transposed codes and a Q.json of another shape have the input's element count: they were
  // compared element by element and reported as differing with no known variant (exit 3).
  Scratch s;
  const std::vector<float> x{0.5f, -1.5f, 2.5f, 3.0f, -7.0f, 100.0f};
  write_f32(s / "x.npy", {2, 3}, x);
  write_f32(s / "x32.npy", {3, 2}, x);
  const std::vector<std::string> base{"check", "--scheme", "q8s:block[3]=f32", "--input", s / "x.npy"};
  auto check = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return qscheme_run(args);
  };
  Run r = qscheme_run({"quantize", "--scheme", "q8s:block[3]=f32", "--input", s / "x.npy", "--output", s / "q.json"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  r = qscheme_run({"quantize", "--scheme", "q8s:block[3]=f32", "--input", s / "x32.npy", "--output", s / "q32.json"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  BOOST_TEST(check({"--candidate", s / "q.json"}).status == 0);

  r = check({"--candidate", s / "q32.json"});
  BOOST_TEST(r.status == 2, r.out << r.err);
  BOOST_TEST(r.err.find("size-mismatch") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("[3,2]") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("[2,3]") != std::string::npos, r.err);
  BOOST_TEST(r.out.empty(), r.out);

  // The codes for [2,3] with blocks of 3, by hand: x * 127 / (the row's largest |x|), rounded
  // (scales 2.5/127 and 100/127 rounded up to f32 move no code): 25.4 -76.2 127, 3.81 -8.89 127.
  const std::vector<std::int32_t> codes{25, -76, 127, 4, -9, 127};
  write_i32(s / "codes.npy", {2, 3}, codes);
  write_i32(s / "codes_t.npy", {3, 2}, {codes[0], codes[3], codes[1], codes[4], codes[2], codes[5]});
  write_i32(s / "codes_flat.npy", {6}, codes);
  r = check({"--candidate", s / "codes.npy"});
  BOOST_TEST(r.status == 0, r.out << r.err);
  for (const std::string name : {"codes_t.npy", "codes_flat.npy"}) {
    r = check({"--candidate", s / name});
    BOOST_TEST(r.status == 2, name << ": " << r.out << r.err);
    BOOST_TEST(r.err.find("differs from the input's [2,3]") != std::string::npos, r.err);
  }
  write_f32(s / "values_t.npy", {3, 2}, {0, 0, 0, 0, 0, 0});
  r = check({"--candidate", s / "values_t.npy", "--candidate-kind", "dequantized"});
  BOOST_TEST(r.status == 2, r.out << r.err);
  BOOST_TEST(r.err.find("transposed or reshaped") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(conformance_cli)

BOOST_AUTO_TEST_CASE(prints_the_table_of_the_library) {
  const Run r = qscheme_run({"conformance", QSCHEME_ONNX_DIR});
  BOOST_TEST(r.status == 0, r.err);
  auto report = oracle::run_conformance(QSCHEME_ONNX_DIR);
  BOOST_REQUIRE(report.ok());
  BOOST_TEST(r.out == oracle::conformance_table(*report));
  BOOST_TEST(r.out.find("cases 27: run 27, passed 27 (reference and fast), 0 by the reference only (the fast engine "
                        "refuses them: unsupported-engine), not expressible 0, skipped 0") != std::string::npos,
             r.out);
  BOOST_TEST(qscheme_run({"conformance", "/nonexistent-qscheme-folder"}).status == 2);
}

// A case with a float64 scale (no qscheme scale type) and a case of another operator: nothing
// runs, which exits 2 with the reasons in the table, the other operator listed as skipped.
BOOST_AUTO_TEST_CASE(a_folder_of_cases_it_cannot_run_is_an_error_not_a_pass) {
  Scratch s;
  const fs::path dq = s.dir / "test_dequantizelinear_double_scale";
  fs::copy(fs::path(QSCHEME_ONNX_DIR) / "test_dequantizelinear_e4m3fn_float16", dq, fs::copy_options::recursive);
  // TensorProto{data_type = 11 (double), raw_data = 1.0}: field 2 varint, field 9 eight bytes.
  BOOST_REQUIRE(io::write_bytes((dq / "test_data_set_0" / "input_1.pb").string(),
                                std::vector<std::uint8_t>{0x10, 0x0B, 0x4A, 0x08, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F})
                    .ok());
  // ModelProto{graph{node{op_type "Abs"}}}: fields 7, 1 and 4.
  fs::create_directories(s.dir / "test_abs");
  BOOST_REQUIRE(io::write_bytes((s.dir / "test_abs" / "model.onnx").string(),
                                std::vector<std::uint8_t>{0x3A, 0x07, 0x0A, 0x05, 0x22, 0x03, 'A', 'b', 's'})
                    .ok());
  const Run r = qscheme_run({"conformance", s.dir.string()});
  BOOST_TEST(r.status == 2, r.out + r.err);
  BOOST_TEST(r.out.find("n/a       type 11 scale") != std::string::npos, r.out);  // the table says why
  BOOST_TEST(r.out.find("Abs               skip      not a quantization operator") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("not expressible 1, skipped 1") != std::string::npos, r.out);
  BOOST_TEST(r.err.find("ran none of the 2 case(s)") != std::string::npos, r.err);
}

// A case of float16 output passes in both engines.
BOOST_AUTO_TEST_CASE(a_float16_output_case_passes_in_both_engines) {
  Scratch s;
  fs::copy(fs::path(QSCHEME_ONNX_DIR) / "test_dequantizelinear_e4m3fn_float16", s.dir / "test_dequantizelinear_e4m3fn_float16",
           fs::copy_options::recursive);
  const Run r = qscheme_run({"conformance", s.dir.string()});
  BOOST_TEST(r.status == 0, r.out + r.err);
  BOOST_TEST(r.out.find("pass      e4m3 -> f16") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("run 1, passed 1 (reference and fast), 0 by the reference only") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(vectors_cli)

BOOST_AUTO_TEST_CASE(deterministic_and_verified_by_check) {
  Scratch a;
  Scratch b;
  Run r = qscheme_run({"vectors", "--out", a.dir.string()});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  r = qscheme_run({"vectors", "--out", b.dir.string()});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto ta = tree(a.dir);
  const auto tb = tree(b.dir);
  BOOST_TEST(ta.size() > 100u);
  BOOST_TEST(ta.count("index.json") == 1u);
  BOOST_TEST(ta.count("README.md") == 1u);
  BOOST_TEST((ta == tb), "two runs of qscheme vectors wrote different files");

  const auto index = nlohmann::json::parse(ta.at("index.json"));
  int checked = 0;
  int errors = 0;
  int cases_run = 0;
  // Every case in the release suite; under a sanitizer, where each of these ~1,500 processes
  // starts about ten times slower, every 11th (11 is prime to the 8 cases of a scheme, so the
  // sample meets every kind of case and most schemes).
  const std::size_t stride = qscheme::testing::SanitizerStride(11);
  std::size_t case_index = 0;
  for (const auto& c : index["cases"]) {
    if (case_index++ % stride != 0) continue;
    ++cases_run;
    const fs::path dir = a.dir / c["dir"].get<std::string>();
    std::vector<std::string> base{"--scheme", c["scheme"].get<std::string>(), "--input", (dir / "input.npy").string()};
    if (c.contains("given_scales")) {
      base.insert(base.end(), {"--scales", (dir / c["given_scales"].get<std::string>()).string()});
      if (c.contains("given_global")) base.insert(base.end(), {"--global", "1"});
    } else {
      base.insert(base.end(), {"--calibration", c["calibration"].get<std::string>()});
    }
    for (const auto& [profile, p] : c["profiles"].items()) {
      if (p.contains("error")) {
        ++errors;
        continue;
      }
      std::vector<std::vector<std::string>> candidates{
          {"--candidate", (dir / p["qjson"].get<std::string>()).string()},
          {"--candidate", (dir / p["bytes"].get<std::string>()).string()},
          {"--candidate", (dir / p["dequantized"].get<std::string>()).string(), "--candidate-kind", "dequantized"},
      };
      std::vector<std::string> codes{"--candidate", (dir / p["codes"].get<std::string>()).string(), "--candidate-scales",
                                     (dir / p["scales"].get<std::string>()).string()};
      candidates.push_back(codes);
      // Burn has no ue8m0 scales: check refuses to judge an MX candidate by Burn's rules.
      const Scheme scheme = parse_scheme(c["scheme"].get<std::string>()).value();
      const bool burn_cannot = profile == "burn" && scheme.scale_dtype() == ScaleDtype::ue8m0;
      for (const auto& cand : candidates) {
        std::vector<std::string> args{"check", "--profile", profile};
        args.insert(args.end(), base.begin(), base.end());
        args.insert(args.end(), cand.begin(), cand.end());
        const Run cr = qscheme_run(args);
        if (burn_cannot) {
          BOOST_TEST((cr.status == 2 && cr.err.find("error: unsupported-profile: profile burn cannot describe") == 0),
                     c["dir"].get<std::string>() << ": " << cr.out << cr.err);
        } else {
          BOOST_TEST(cr.status == 0, c["dir"].get<std::string>() << " " << profile << " " << cand[1] << ": " << cr.out << cr.err);
        }
        ++checked;
      }
    }
  }
  // 16 schemes x 8 cases x 3 profiles, 4 representations each, less the profile errors.
  BOOST_TEST(index["cases"].size() == 16u * 8u);
  BOOST_TEST(cases_run == static_cast<int>((16 * 8 + stride - 1) / stride));
  BOOST_TEST(checked == 4 * (cases_run * 3 - errors));
  BOOST_TEST(checked > 4 * cases_run * 2 - 4 * errors);
  if (stride == 1) BOOST_TEST(errors > 0);
}

BOOST_AUTO_TEST_SUITE_END()
