// The recipe options of the command line, run as a process: `qscheme recipes`, and quantize /
// dequantize / vectors with --recipe, checked against the golden data the implementations
// produced (tests/data/recipes); the fast engine refuses a recipe it does not run with a typed
// error and writes nothing.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/file_io.hpp"
#include "io/npy.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/recipes.hpp"
#include "tests/support/run_process.hpp"

#ifndef QSCHEME_BIN
#error "QSCHEME_BIN must name the qscheme executable"
#endif

using namespace qscheme;
namespace fs = std::filesystem;
using qscheme::testing::Run;
using qscheme::testing::slurp;

namespace {

const fs::path kData = QSCHEME_RECIPES_DIR;

struct Scratch : qscheme::testing::Scratch {
  Scratch() : qscheme::testing::Scratch("qscheme_cli_recipes_test") {}
};

Run qscheme_run(const std::vector<std::string>& args) { return qscheme::testing::run_process(QSCHEME_BIN, args); }

std::string describe(const Run& r) { return "exit " + std::to_string(r.status) + "\nstdout: " + r.out + "\nstderr: " + r.err; }

void expect_user_error(const Run& r, std::string_view code) {
  BOOST_TEST(r.status == 2, describe(r));
  BOOST_TEST(r.err.find("error: " + std::string(code) + ": ") != std::string::npos, describe(r));
}

std::vector<std::uint8_t> bytes_of(const fs::path& p) {
  auto b = io::read_bytes(p.string());
  BOOST_TEST_REQUIRE(b.ok(), b.status().to_string());
  return *b;
}

std::vector<std::uint32_t> npy_bits(const fs::path& p) {
  auto a = io::npy::read_file(p.string());
  BOOST_TEST_REQUIRE(a.ok(), a.status().to_string());
  return qscheme::f32_bits(a->f32);
}

std::vector<std::uint32_t> raw_bits(const fs::path& p) {
  const std::vector<std::uint8_t> b = bytes_of(p);
  std::vector<std::uint32_t> out(b.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::uint32_t>(b[4 * i]) | static_cast<std::uint32_t>(b[4 * i + 1]) << 8 |
             static_cast<std::uint32_t>(b[4 * i + 2]) << 16 | static_cast<std::uint32_t>(b[4 * i + 3]) << 24;
  }
  return out;
}

const std::string kCrafted = (kData / "inputs" / "crafted.npy").string();

}  // namespace

BOOST_AUTO_TEST_CASE(recipes_lists_every_recipe_with_all_its_rules) {
  const Run r = qscheme_run({"recipes", "--json"});
  BOOST_TEST_REQUIRE(r.status == 0, describe(r));
  const auto j = nlohmann::json::parse(r.out);
  BOOST_TEST_REQUIRE(j.size() == recipes().size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    BOOST_TEST(j[i]["name"].get<std::string>() == recipes()[i].name);
    BOOST_TEST(j[i]["rules"].size() == rule_fields().size());
    BOOST_TEST(!j[i]["source"].get<std::string>().empty());
    BOOST_TEST((parse_rules(j[i]["rules_text"].get<std::string>()).value() == recipes()[i].rules));
  }
  const Run text = qscheme_run({"recipes"});
  BOOST_TEST(text.status == 0);
  for (const Recipe& rec : recipes()) BOOST_TEST(text.out.find(std::string(rec.name) + "\n") != std::string::npos);
  const Run fields = qscheme_run({"recipes", "--rules"});
  BOOST_TEST(fields.status == 0);
  for (const RuleField& f : rule_fields()) BOOST_TEST(fields.out.find(std::string(f.name) + ": ") != std::string::npos);
}

// quantize --recipe writes ggml's own blocks, equal to the blocks ggml wrote; dequantize --recipe
// reads them back to ggml's dequantized values; check --recipe finds them identical. Each engine.
BOOST_AUTO_TEST_CASE(ggml_recipes_reproduce_ggml_bytes_through_the_command_line) {
  Scratch s;
  for (const char* engine : {"fast", "reference"}) {
    for (const char* recipe : {"ggml-q8_0", "ggml-q8_0-x86", "ggml-q4_0"}) {
      BOOST_TEST_CONTEXT(engine << " " << recipe) {
        const std::string bin = (s / (std::string(engine) + recipe + ".bin"));
        const Run q = qscheme_run({"quantize", "--recipe", recipe, "--engine", engine, "--input", kCrafted,
                                   "--output", bin});
        BOOST_TEST_REQUIRE(q.status == 0, describe(q));
        BOOST_TEST((bytes_of(bin) == bytes_of(kData / recipe / "crafted.blocks")));
        const std::string y = (s / (std::string(engine) + recipe + ".npy"));
        const Run d = qscheme_run({"dequantize", "--recipe", recipe, "--engine", engine, "--input", bin,
                                   "--shape", "30,32", "--output", y});
        BOOST_TEST_REQUIRE(d.status == 0, describe(d));
        BOOST_TEST((npy_bits(y) == raw_bits(kData / recipe / "crafted.deq.f32")));
      }
    }
  }
}

// nvidia-nvfp4 through the command line, each engine: quantize --recipe writes TE's codes (two a
// byte, the even element low), block scales and decode global in Burn's layout; dequantize
// --recipe reads them, and Q.json carries the point; a global whose product with a block scale
// overflows f32 is the same unsupported-profile in both engines, nothing written.
BOOST_AUTO_TEST_CASE(nvidia_nvfp4_runs_on_both_engines_through_the_command_line) {
  Scratch s;
  const std::string randn = (kData / "inputs" / "randn.npy").string();
  const std::vector<std::uint8_t> codes = bytes_of(kData / "nvidia-nvfp4" / "randn.codes.u8");
  std::vector<std::uint8_t> te;
  for (std::size_t i = 0; i + 1 < codes.size(); i += 2) te.push_back(static_cast<std::uint8_t>(codes[i] | codes[i + 1] << 4));
  for (const char* f : {"randn.scales.u8", "randn.global.f32"}) {
    const std::vector<std::uint8_t> b = bytes_of(kData / "nvidia-nvfp4" / f);
    te.insert(te.end(), b.begin(), b.end());
  }
  std::vector<std::uint32_t> values[2];
  for (int e = 0; e < 2; ++e) {
    const std::string engine = e == 0 ? "fast" : "reference";
    BOOST_TEST_CONTEXT(engine) {
      const std::string bin = (s / (engine + ".bin")), y = (s / (engine + ".npy"));
      const Run q = qscheme_run({"quantize", "--recipe", "nvidia-nvfp4", "--engine", engine, "--input", randn,
                                 "--output", bin});
      BOOST_TEST_REQUIRE(q.status == 0, describe(q));
      BOOST_TEST((bytes_of(bin) == te));
      const Run d = qscheme_run({"dequantize", "--recipe", "nvidia-nvfp4", "--engine", engine, "--input", bin,
                                 "--shape", "128,32", "--output", y});
      BOOST_TEST_REQUIRE(d.status == 0, describe(d));
      values[e] = npy_bits(y);
      const std::string qj = (s / (engine + ".json")), yj = (s / (engine + "j.npy"));
      BOOST_TEST_REQUIRE(qscheme_run({"quantize", "--recipe", "nvidia-nvfp4", "--engine", engine, "--input", randn,
                                      "--output", qj}).status == 0);
      const Run dj = qscheme_run({"dequantize", "--engine", engine, "--input", qj, "--output", yj});
      BOOST_TEST_REQUIRE(dj.status == 0, describe(dj));
      BOOST_TEST((npy_bits(yj) == values[e]));
      // The global f32 max: f32(448 * g) is inf for a block scale of 448 (TE's largest).
      std::vector<std::uint8_t> big = te;
      const std::size_t at = big.size() - 4;
      big[at] = 0xFF, big[at + 1] = 0xFF, big[at + 2] = 0x7F, big[at + 3] = 0x7F;
      const std::string bad = (s / (engine + "-big.bin")), yb = (s / (engine + "-big.npy"));
      BOOST_TEST_REQUIRE(io::write_bytes(bad, big).ok());
      const Run o = qscheme_run({"dequantize", "--recipe", "nvidia-nvfp4", "--engine", engine, "--input", bad,
                                 "--shape", "128,32", "--output", yb});
      expect_user_error(o, "unsupported-profile");
      BOOST_TEST(o.err.find("overflows f32 (product=f32)") != std::string::npos, describe(o));
      BOOST_TEST(!fs::exists(yb));
    }
  }
  BOOST_TEST((values[0] == values[1]));
}

// Q.json carries the rules: a ggml q4_0 tensor (signed scales) written as Q.json dequantizes
// without --recipe to ggml's values; torch's given scales go through --scales.
BOOST_AUTO_TEST_CASE(qjson_carries_the_rules_of_a_recipe) {
  Scratch s;
  const std::string randn = (kData / "inputs" / "randn.npy").string();
  for (const char* engine : {"fast", "reference"}) {
    BOOST_TEST_CONTEXT(engine) {
      const std::string qj = (s / (std::string(engine) + "q4.json"));
      const Run q = qscheme_run({"quantize", "--recipe", "ggml-q4_0", "--engine", engine, "--input", randn,
                                 "--output", qj});
      BOOST_TEST_REQUIRE(q.status == 0, describe(q));
      BOOST_TEST(slurp(qj).find("\"rules\": ") != std::string::npos);
      const std::string y = (s / (std::string(engine) + "q4.npy"));
      const Run d = qscheme_run({"dequantize", "--engine", engine, "--input", qj, "--output", y});
      BOOST_TEST_REQUIRE(d.status == 0, describe(d));
      BOOST_TEST((npy_bits(y) == raw_bits(kData / "ggml-q4_0" / "randn.deq.f32")));
    }
  }

  const std::string tj = (s / "torch.json");
  const Run t = qscheme_run({"quantize", "--recipe", "torch-qint8", "--engine", "reference", "--scales", "0.1",
                             "--input", kCrafted, "--output", tj});
  BOOST_TEST_REQUIRE(t.status == 0, describe(t));
  const std::string ty = (s / "torch.npy");
  const Run td = qscheme_run({"dequantize", "--engine", "reference", "--input", tj, "--output", ty});
  BOOST_TEST_REQUIRE(td.status == 0, describe(td));
  BOOST_TEST((npy_bits(ty) == raw_bits(kData / "torch-qint8" / "crafted-per-tensor.deq.f32")));

  // ggml's f16 scale that overflowed to inf has no Q.json form: an error, nothing written.
  const std::string inf_json = (s / "inf.json");
  for (const char* engine : {"fast", "reference"}) {
    expect_user_error(qscheme_run({"quantize", "--recipe", "ggml-q8_0", "--engine", engine, "--input", kCrafted,
                                   "--output", inf_json}),
                      "invalid-argument");
    BOOST_TEST(!fs::exists(inf_json));
  }
}

// The fast engine refuses a recipe's request it does not run (ggml-q8_0 over given scales) with a
// typed error and writes nothing; a profile's recipe runs as that profile; an MX recipe gives the
// reference's bytes.
BOOST_AUTO_TEST_CASE(fast_engine_refuses_a_recipe_it_does_not_run) {
  Scratch s;
  const std::string out = (s / "x.bin");
  std::string halves = "0.5";
  for (int j = 1; j < 30; ++j) halves += ",0.5";  // crafted.npy is [30, 32]: a q8_0 scale per row
  const Run r = qscheme_run({"quantize", "--recipe", "ggml-q8_0", "--scales", halves, "--input", kCrafted, "--output", out});
  expect_user_error(r, "unsupported-profile");
  BOOST_TEST(r.err.find("fast engine") != std::string::npos, describe(r));
  BOOST_TEST(!fs::exists(out));
  const std::string a = (s / "a.bin");
  const std::string b = (s / "b.bin");
  const std::string randn = (kData / "inputs" / "randn.npy").string();
  BOOST_TEST(qscheme_run({"quantize", "--recipe", "burn", "--scheme", "q8_0", "--input", randn, "--output", a}).status == 0);
  BOOST_TEST(qscheme_run({"quantize", "--profile", "burn", "--scheme", "q8_0", "--input", randn, "--output", b}).status == 0);
  BOOST_TEST((bytes_of(a) == bytes_of(b)));
  for (const char* recipe : {"ocp-mx", "torchao-mx-even"}) {
    BOOST_TEST_CONTEXT(recipe) {
      const Run f = qscheme_run({"quantize", "--recipe", recipe, "--scheme", "mxfp4", "--input", randn, "--output", a});
      BOOST_TEST_REQUIRE(f.status == 0, describe(f));
      const Run r = qscheme_run({"quantize", "--recipe", recipe, "--scheme", "mxfp4", "--engine", "reference", "--input",
                                 randn, "--output", b});
      BOOST_TEST_REQUIRE(r.status == 0, describe(r));
      BOOST_TEST((bytes_of(a) == bytes_of(b)));
    }
  }
}

BOOST_AUTO_TEST_CASE(recipe_options_are_checked) {
  Scratch s;
  const std::string out = (s / "x.bin");
  expect_user_error(qscheme_run({"quantize", "--recipe", "nope", "--input", kCrafted, "--output", out}), "invalid-argument");
  expect_user_error(qscheme_run({"quantize", "--recipe", "ggml-q8_0", "--profile", "burn", "--engine", "reference",
                                 "--input", kCrafted, "--output", out}),
                    "invalid-argument");
  expect_user_error(qscheme_run({"quantize", "--recipe", "ggml-q8_0", "--scheme", "mxfp8", "--engine", "reference",
                                 "--input", kCrafted, "--output", out}),
                    "invalid-argument");
  expect_user_error(qscheme_run({"quantize", "--recipe", "ggml-q8_0", "--byte-format", "gguf", "--engine", "reference",
                                 "--input", kCrafted, "--output", out}),
                    "invalid-argument");
  // ggml's blocks hold no partial block: a row of 40 is refused.
  const std::string odd = (s / "odd.npy");
  auto npy = io::npy::serialize_f32(std::vector<std::uint64_t>{2, 40}, std::vector<float>(80, 1.0f));
  BOOST_TEST_REQUIRE(io::write_bytes(odd, *npy).ok());
  expect_user_error(qscheme_run({"quantize", "--recipe", "ggml-q8_0", "--engine", "reference", "--input", odd,
                                 "--output", out}),
                    "invalid-argument");
  BOOST_TEST(!fs::exists(out));
}

// --format chooses the file (json or bin, needed for `-`), --byte-format the layout of a .bin:
// ggml's blocks reach standard output, and a layout for Q.json, which holds Burn's, is refused.
BOOST_AUTO_TEST_CASE(byte_format_and_file_format_are_separate_options) {
  Scratch s;
  const Run out = qscheme_run({"quantize", "--recipe", "ggml-q8_0", "--engine", "reference", "--input", kCrafted,
                               "--output", "-", "--format", "bin"});
  BOOST_TEST_REQUIRE(out.status == 0, describe(out));
  const std::vector<std::uint8_t> blocks = bytes_of(kData / "ggml-q8_0" / "crafted.blocks");
  BOOST_TEST((std::vector<std::uint8_t>(out.out.begin(), out.out.end()) == blocks));
  const std::string qj = (s / "q.json");
  expect_user_error(qscheme_run({"quantize", "--recipe", "ggml-q4_0", "--byte-format", "ggml", "--engine", "reference",
                                 "--input", kCrafted, "--output", qj}),
                    "invalid-argument");
  BOOST_TEST(!fs::exists(qj));
  const std::string randn = (kData / "inputs" / "randn.npy").string();
  BOOST_TEST_REQUIRE(qscheme_run({"quantize", "--recipe", "ggml-q4_0", "--engine", "reference", "--input", randn,
                                  "--output", qj}).status == 0);
  expect_user_error(qscheme_run({"dequantize", "--byte-format", "ggml", "--engine", "reference", "--input", qj,
                                 "--output", (s / "y.npy")}),
                    "invalid-argument");
}

BOOST_AUTO_TEST_CASE(vectors_exports_a_recipe) {
  Scratch s;
  const std::string dir = (s / "v");
  const Run r = qscheme_run({"vectors", "--recipe", "ggml-q4_0", "--out", dir});
  BOOST_TEST_REQUIRE(r.status == 0, describe(r));
  const auto index = nlohmann::json::parse(slurp(dir + "/index.json"));
  BOOST_TEST(index["recipe"].get<std::string>() == "ggml-q4_0");
  BOOST_TEST_REQUIRE(!index["cases"].empty());
  for (const auto& c : index["cases"]) {
    BOOST_TEST(c["profiles"].size() == 1u);
    BOOST_TEST(c["profiles"].contains("ggml-q4_0"));
  }
}

// check --recipe: each peer's own output (ggml's blocks, microxcaling's values) is identical under
// its recipe; checked against the exact profile, the first line names the recipe. The recipe's
// scheme is the default.
BOOST_AUTO_TEST_CASE(check_names_the_recipe_of_a_peers_output) {
  Scratch s;
  for (const char* recipe : {"ggml-q8_0", "ggml-q8_0-x86", "ggml-q4_0"}) {
    BOOST_TEST_CONTEXT(recipe) {
      const std::string blocks = (kData / recipe / "crafted.blocks").string();
      const Run same = qscheme_run(
          {"check", "--recipe", recipe, "--input", kCrafted, "--candidate", blocks, "--candidate-kind", "bytes"});
      BOOST_TEST(same.status == 0, describe(same));
      BOOST_TEST(same.out.find("identical under recipe " + std::string(recipe) + ": ") == 0u, describe(same));
      const std::string scheme = std::string(recipe) == "ggml-q4_0" ? "q4f:packed-u32(0):block[32]=f16" : "q8_0";
      const Run exact = qscheme_run({"check", "--scheme", scheme, "--byte-format", "ggml", "--input", kCrafted,
                                     "--candidate", blocks, "--candidate-kind", "bytes"});
      BOOST_TEST(exact.status == 3, describe(exact));
      const std::string first_line = exact.out.substr(0, exact.out.find('\n'));
      BOOST_TEST(first_line.find("DIFFERS from recipe exact: ") == 0u, first_line);
      BOOST_TEST(first_line.find(recipe) != std::string::npos, first_line);
      BOOST_TEST(first_line.find("the candidate exactly") != std::string::npos, first_line);
    }
  }
  // ggml q8_0's f16 scale f16(f32(amax / 127)) is inf where amax / 127 rounds past 65504: rows 21
  // (f16-overflow), 22 (huge) and 26 (amax 2^100) (numpy: np.float16(np.float32(amax / 127))).
  // Each is a difference named with its block.
  const Run inf = qscheme_run({"check", "--scheme", "q8_0", "--byte-format", "ggml", "--input", kCrafted, "--candidate",
                               (kData / "ggml-q8_0" / "crafted.blocks").string(), "--candidate-kind", "bytes", "--json"});
  BOOST_TEST_REQUIRE(inf.status == 3, describe(inf));
  const auto j = nlohmann::json::parse(inf.out);
  BOOST_TEST(j["non_finite_scales"] == nlohmann::json::array({21, 22, 26}), inf.out);
  BOOST_TEST(j["recipe"] == "exact");
  BOOST_TEST(j["stage"] == 0);
  BOOST_TEST(j["diagnosis"][0]["recipe"] == "ggml-q8_0");

  // microxcaling outputs dequantized values only.
  const std::string values = (s / "mx.npy");
  std::vector<float> v;
  for (std::uint32_t b : raw_bits(kData / "microxcaling" / "crafted-e4m3.deq.f32")) v.push_back(std::bit_cast<float>(b));
  auto npy = io::npy::serialize_f32(std::vector<std::uint64_t>{30, 32}, v);
  BOOST_TEST_REQUIRE(io::write_bytes(values, *npy).ok());
  const Run mx = qscheme_run({"check", "--recipe", "microxcaling", "--input", kCrafted, "--candidate", values,
                              "--candidate-kind", "dequantized"});
  BOOST_TEST(mx.status == 0, describe(mx));
  BOOST_TEST(mx.out.find("identical under recipe microxcaling: 960 values match bit for bit\n") == 0u, describe(mx));
  const Run mx_exact = qscheme_run({"check", "--scheme", "mxfp8", "--input", kCrafted, "--candidate", values,
                                    "--candidate-kind", "dequantized"});
  BOOST_TEST(mx_exact.status == 3, describe(mx_exact));
  BOOST_TEST(mx_exact.out.find("DIFFERS from recipe exact: microxcaling reproduces the candidate exactly\n") == 0u,
             describe(mx_exact));
}

// --max-shown and --all choose how many differing elements and blocks are listed; --recipe and
// --profile are one choice; burn cannot judge an MX scheme.
BOOST_AUTO_TEST_CASE(check_lists_what_it_is_asked_to_and_refuses_what_it_cannot_judge) {
  const std::string blocks = (kData / "ggml-q8_0" / "crafted.blocks").string();
  const std::vector<std::string> base{"check",       "--scheme", "q8_0",         "--byte-format",    "ggml",
                                      "--input",     kCrafted,   "--candidate",  blocks,             "--candidate-kind",
                                      "bytes",       "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const Run r = qscheme_run(args);
    BOOST_TEST_REQUIRE(r.status == 3, describe(r));
    return nlohmann::json::parse(r.out);
  };
  const auto two = with({"--max-shown", "2"});
  BOOST_TEST(two["first"].size() == 2u);
  BOOST_TEST(two["blocks"].size() == 2u);
  const auto all = with({"--all"});
  BOOST_TEST(all["first"].size() == all["differing_elements"].get<std::size_t>());
  BOOST_TEST(all["blocks"].size() == all["differing_blocks"].get<std::size_t>());
  BOOST_TEST(all["differing_blocks"].get<std::size_t>() > 2u);
  const auto standard = with({});
  BOOST_TEST(standard["first"].size() == 8u);

  expect_user_error(qscheme_run({"check", "--recipe", "ggml-q8_0", "--profile", "exact", "--input", kCrafted,
                                 "--candidate", blocks, "--candidate-kind", "bytes"}),
                    "invalid-argument");
  const Run burn = qscheme_run({"check", "--profile", "burn", "--scheme", "mxfp8", "--input", kCrafted, "--candidate",
                                blocks, "--candidate-kind", "bytes"});
  expect_user_error(burn, "unsupported-profile");
  BOOST_TEST(burn.err.find("Burn has no ue8m0 scales") != std::string::npos, describe(burn));
}
