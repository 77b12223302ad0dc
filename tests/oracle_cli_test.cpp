// `qscheme check` and `qscheme vectors` run as processes: check's exit statuses (0 identical,
// 3 differs, 2 bad input) and JSON report; vectors is deterministic (two runs, identical files)
// and everything it exports verifies under `qscheme check` in every representation.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tools/file_io.hpp"
#include "tools/npy.hpp"
#include "tools/onnx/conformance.hpp"

#ifndef QSCHEME_BIN
#error "QSCHEME_BIN must name the qscheme executable"
#endif

extern char** environ;
namespace fs = std::filesystem;
using namespace qscheme;

namespace {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Scratch {
  fs::path dir;
  Scratch() {
    static int n = 0;
    dir = fs::temp_directory_path() / ("qscheme_oracle_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

Run qscheme_run(const std::vector<std::string>& args) {
  static int n = 0;
  const fs::path base = fs::temp_directory_path() / ("qscheme_oracle_run_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  const std::string out_path = base.string() + ".out";
  const std::string err_path = base.string() + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<std::string> argv_s{QSCHEME_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  Run r;
  if (posix_spawn(&pid, QSCHEME_BIN, &actions, nullptr, argv.data(), environ) == 0) {
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (WIFEXITED(ws)) r.status = WEXITSTATUS(ws);
  }
  posix_spawn_file_actions_destroy(&actions);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  fs::remove(out_path);
  fs::remove(err_path);
  return r;
}

void write_f32(const std::string& path, std::vector<std::uint64_t> shape, const std::vector<float>& v) {
  auto b = cli::npy::serialize_f32(shape, v);
  BOOST_REQUIRE(b.ok());
  BOOST_REQUIRE(cli::write_bytes(path, *b).ok());
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
  BOOST_TEST(j["diagnosis"][0]["variant"] == "ties-away");
  BOOST_TEST(j["first"][0]["index"] == 0);

  r = qscheme_run({"check", "--scheme", "q8s", "--input", s / "x.npy", "--scales", "1", "--candidate",
                   s / "away.npy", "--candidate-kind", "dequantized"});
  BOOST_TEST(r.status == 3);
  BOOST_TEST(r.out.find("DIFFERS: 4 of 6 elements") != std::string::npos);
  BOOST_TEST(r.out.find("diagnosis: ties-away") != std::string::npos);

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

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(conformance_cli)

BOOST_AUTO_TEST_CASE(prints_the_table_of_the_library) {
  const Run r = qscheme_run({"conformance", QSCHEME_ONNX_DIR});
  BOOST_TEST(r.status == 0, r.err);
  auto report = oracle::run_conformance(QSCHEME_ONNX_DIR);
  BOOST_REQUIRE(report.ok());
  BOOST_TEST(r.out == oracle::conformance_table(*report));
  BOOST_TEST(r.out.find("cases 27: run 8, passed 8 (reference and fast), not expressible 19") != std::string::npos);
  BOOST_TEST(qscheme_run({"conformance", "/nonexistent-qscheme-folder"}).status == 2);
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
  for (const auto& c : index["cases"]) {
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
      for (const auto& cand : candidates) {
        std::vector<std::string> args{"check", "--profile", profile};
        args.insert(args.end(), base.begin(), base.end());
        args.insert(args.end(), cand.begin(), cand.end());
        const Run cr = qscheme_run(args);
        BOOST_TEST(cr.status == 0, c["dir"].get<std::string>() << " " << profile << " " << cand[1] << ": " << cr.out << cr.err);
        ++checked;
      }
    }
  }
  // 16 schemes x 8 cases x 3 profiles, 4 representations each, less the profile errors.
  BOOST_TEST(index["cases"].size() == 16u * 8u);
  BOOST_TEST(checked == 4 * (16 * 8 * 3 - errors));
  BOOST_TEST(checked > 4 * 16 * 8 * 2 - 4 * errors);
  BOOST_TEST(errors > 0);
}

BOOST_AUTO_TEST_SUITE_END()
