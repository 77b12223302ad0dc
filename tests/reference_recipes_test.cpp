// Each engine of the engine table (oracle/engine.hpp) under each recipe against the recipe's
// golden data: the bytes, codes, scales and dequantized values the public implementation itself
// produced (or, where it cannot run here, a numpy transcription of its source), kept in
// tests/data/recipes/<recipe>/ with a README naming the producer, its commit and the command.
// Nothing here is computed by qscheme. The reference engine runs every recipe; another engine
// may refuse a recipe it does not run, with unsupported-profile, never with another answer.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/npy.hpp"
#include "oracle/engine.hpp"
#include "reference/reference.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"
#include "scheme/float_bits.hpp"

namespace fs = std::filesystem;
using namespace qscheme;
using Json = nlohmann::json;

namespace {

const fs::path kDir = QSCHEME_RECIPES_DIR;

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  BOOST_TEST_REQUIRE(f.good(), "missing golden file " << p);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t i) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}


// One tensor to quantize and the slice of each expected file that belongs to it.
struct Piece {
  std::vector<std::uint64_t> shape;
  std::vector<float> x;
  std::size_t element_offset = 0;  // into per-element files
  std::size_t scale_offset = 0;    // into per-block files
  std::size_t tensor_index = 0;    // into per-tensor files (the global)
};

std::vector<Piece> pieces(const Json& c, const io::npy::Array& input) {
  std::vector<Piece> out;
  if (!c.value("each_row", false)) {
    out.push_back({input.shape, input.f32});
    return out;
  }
  const std::uint64_t cols = input.shape.at(1);
  const std::uint64_t blocks_a_row = cols / 16;
  for (std::uint64_t r = 0; r < input.shape.at(0); ++r) {
    Piece p;
    p.shape = {1, cols};
    p.x.assign(input.f32.begin() + static_cast<std::ptrdiff_t>(r * cols),
               input.f32.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols));
    p.element_offset = r * cols;
    p.scale_offset = r * blocks_a_row;
    p.tensor_index = r;
    out.push_back(std::move(p));
  }
  return out;
}

// How one case's expectations compare with the reference under `options`: the number of
// quantities that differ (codes, scales, globals, bytes, values) and the first of them, or the
// error when quantize or decode fails.
struct Comparison {
  std::size_t compared = 0;
  std::size_t differing = 0;
  std::string first;
  std::optional<Status> error;
};

const oracle::Engine& reference_engine() { return *oracle::find_engine("reference").value(); }

// ggml's blocks: the engine's encode and fused quantize write them, its decode reads them back to
// the tensor, and its fused dequantize reads them to the implementation's values (when given).
void compare_ggml(const oracle::Engine& engine, const Scheme& scheme, const Piece& piece, const QuantizeOptions& options,
                  const QuantizedTensor& q, const std::vector<std::uint8_t>& want,
                  const std::vector<std::uint8_t>* want_values, Comparison& out,
                  const std::function<void(bool, const std::string&)>& differ) {
  const auto same_bytes = [&](const Result<std::vector<std::uint8_t>>& got, const std::string& what) {
    if (!got) {
      out.error = got.status();
      return;
    }
    for (std::size_t i = 0; i < want.size(); ++i) differ(i < got->size() && (*got)[i] == want[i], what + " " + std::to_string(i));
  };
  same_bytes(engine.encode_as(q, ByteFormat::ggml), "ggml byte");
  same_bytes(engine.quantize_bytes_as(scheme, piece.shape, piece.x, options, ByteFormat::ggml), "fused ggml byte");
  // The implementation's bytes decode to the same tensor.
  Result<QuantizedTensor> back = engine.decode_as(scheme, piece.shape, want, rules_of(q), ByteFormat::ggml);
  differ(back.ok() && *back == q, "decode of the ggml blocks");
  if (!want_values) return;
  std::vector<float> y(q.codes.size());
  const Status st = engine.dequantize_bytes_as(scheme, piece.shape, want, rules_of(q), ByteFormat::ggml, y);
  differ(st.ok(), "fused dequantize of the ggml blocks: " + st.to_string());
  for (std::size_t i = 0; st.ok() && i < y.size(); ++i) {
    differ(qscheme::f32_bits(y[i]) == le32(*want_values, piece.element_offset + i),
           "fused value " + std::to_string(piece.element_offset + i));
  }
}

Comparison compare_case(const fs::path& folder, const Json& c, const Scheme& scheme, const QuantizeOptions& options,
                        const oracle::Engine& engine = reference_engine()) {
  Comparison out;
  const auto differ = [&](bool equal, const std::string& what) {
    ++out.compared;
    if (equal) return;
    if (out.differing++ == 0) out.first = what;
  };
  Result<io::npy::Array> input = io::npy::read_file((kDir / "inputs" / c.at("input").get<std::string>()).string());
  if (!input) {
    out.error = input.status();
    return out;
  }
  const Json& expect = c.at("expect");
  const auto file = [&](const char* key) { return read_bytes(folder / expect.at(key).get<std::string>()); };
  for (const Piece& piece : pieces(c, *input)) {
    Result<QuantizedTensor> q = engine.quantize(scheme, piece.shape, piece.x, options);
    if (!q) {
      out.error = q.status();
      return out;
    }
    const std::size_t n = q->codes.size();
    if (expect.contains("codes_u8") || expect.contains("codes_i8")) {
      const bool is_signed = expect.contains("codes_i8");
      const std::vector<std::uint8_t> want = file(is_signed ? "codes_i8" : "codes_u8");
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint8_t byte = want.at(piece.element_offset + i);
        const std::int32_t w = is_signed ? static_cast<std::int8_t>(byte) : byte;
        differ(q->codes[i] == w, "code " + std::to_string(piece.element_offset + i) + ": " +
                                     std::to_string(q->codes[i]) + ", expected " + std::to_string(w));
      }
    }
    if (expect.contains("scales_u8")) {
      const std::vector<std::uint8_t> want = file("scales_u8");
      for (std::size_t j = 0; j < q->scale_bits.size(); ++j) {
        differ(q->scale_bits[j] == want.at(piece.scale_offset + j),
               "scale " + std::to_string(piece.scale_offset + j) + ": " + std::to_string(q->scale_bits[j]) +
                   ", expected " + std::to_string(want.at(piece.scale_offset + j)));
      }
    }
    if (expect.contains("global_f32")) {
      const std::uint32_t want = le32(file("global_f32"), piece.tensor_index);
      differ(q->global_bits == want, "global of tensor " + std::to_string(piece.tensor_index));
    }
    if (expect.contains("global_f32") && expect.contains("codes_u8") && expect.contains("scales_u8")) {
      // TE's NVFP4 bytes in Burn's layout (the nvfp4 preset): its codes two a byte, the even
      // element low (as TE packs them), its block scales, then the decode global. The fused path
      // writes them, and the engine reads them back to its own tensor.
      const std::vector<std::uint8_t> codes = file("codes_u8"), scales = file("scales_u8"), global = file("global_f32");
      std::vector<std::uint8_t> want;
      for (std::size_t i = 0; i + 1 < n; i += 2) {
        want.push_back(static_cast<std::uint8_t>(codes.at(piece.element_offset + i) |
                                                 codes.at(piece.element_offset + i + 1) << 4));
      }
      want.insert(want.end(), scales.begin() + static_cast<std::ptrdiff_t>(piece.scale_offset),
                  scales.begin() + static_cast<std::ptrdiff_t>(piece.scale_offset + q->scale_bits.size()));
      want.insert(want.end(), global.begin() + static_cast<std::ptrdiff_t>(4 * piece.tensor_index),
                  global.begin() + static_cast<std::ptrdiff_t>(4 * piece.tensor_index + 4));
      const Result<std::vector<std::uint8_t>> fused = engine.quantize_bytes(scheme, piece.shape, piece.x, options);
      differ(fused.ok() && *fused == want, "fused bytes of tensor " + std::to_string(piece.tensor_index));
      const Result<QuantizedTensor> back = engine.decode_as(scheme, piece.shape, want, rules_of(*q), ByteFormat::burn);
      differ(back.ok() && *back == *q, "decode of TE's bytes, tensor " + std::to_string(piece.tensor_index));
    }
    if (expect.contains("amax_f32")) {
      // The producer's own record of the tensor's max |x|: the input slice is the one it saw.
      float amax = 0.0f;
      for (float v : piece.x) amax = std::max(amax, std::abs(v));
      differ(qscheme::f32_bits(amax) == le32(file("amax_f32"), piece.tensor_index), "amax of tensor " + std::to_string(piece.tensor_index));
    }
    if (expect.contains("ggml_bytes")) {
      const std::vector<std::uint8_t> want = file("ggml_bytes");
      const std::optional<std::vector<std::uint8_t>> values =
          expect.contains("dequantized_f32") ? std::optional(file("dequantized_f32")) : std::nullopt;
      compare_ggml(engine, scheme, piece, options, *q, want, values ? &*values : nullptr, out, differ);
      if (out.error) return out;
    }
    if (expect.contains("dequantized_f32")) {
      const std::vector<std::uint8_t> want = file("dequantized_f32");
      Result<std::vector<float>> y = engine.dequantize(*q);
      if (!y) {
        out.error = y.status();
        return out;
      }
      for (std::size_t i = 0; i < n; ++i) {
        differ(qscheme::f32_bits((*y)[i]) == le32(want, piece.element_offset + i),
               "value " + std::to_string(piece.element_offset + i));
      }
    }
  }
  return out;
}

struct GoldenCase {
  const Recipe* recipe;
  fs::path folder;
  Json json;
  Scheme scheme;
  QuantizeOptions options;  // the recipe's
};

std::vector<GoldenCase> golden_cases(const std::string& recipe_name) {
  std::vector<GoldenCase> out;
  const fs::path folder = kDir / recipe_name;
  const Json cases = Json::parse(read_bytes(folder / "cases.json"));
  BOOST_TEST_REQUIRE(cases.at("recipe").get<std::string>() == recipe_name);
  BOOST_TEST_REQUIRE(!cases.at("cases").empty());
  Result<const Recipe*> recipe = find_recipe(recipe_name);
  BOOST_TEST_REQUIRE(recipe.ok(), recipe.status().to_string());
  for (const Json& c : cases.at("cases")) {
    Result<Scheme> scheme = recipe_scheme(**recipe, c.at("scheme").get<std::string>());
    BOOST_TEST_REQUIRE(scheme.ok(), scheme.status().to_string());
    QuantizeOptions options = recipe_options(**recipe);
    if (c.contains("given_scales")) options.scales = GivenScales{c.at("given_scales").get<std::vector<float>>(), {}};
    if (c.contains("given_zero_points")) {
      BOOST_TEST_REQUIRE(options.scales.has_value());
      options.scales->zero_points = c.at("given_zero_points").get<std::vector<std::int32_t>>();
    }
    out.push_back({*recipe, folder, c, *scheme, options});
  }
  return out;
}

std::vector<std::string> recipe_folders() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    if (entry.is_directory() && entry.path().filename() != "inputs") out.push_back(entry.path().filename());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(golden)

// Every recipe but the three profiles has a folder, and every folder names a recipe.
BOOST_AUTO_TEST_CASE(every_recipe_has_golden_data) {
  std::vector<std::string> want;
  for (const Recipe& r : recipes()) {
    if (!profile_of(r.rules)) want.emplace_back(r.name);
  }
  std::sort(want.begin(), want.end());
  BOOST_TEST(recipe_folders() == want, boost::test_tools::per_element());
}

// Each engine reproduces each implementation whose recipe it runs: the reference engine every
// one, the fast engine the MX recipes', torch's (affine mode and u8 included), ggml's and
// TransformerEngine's NVFP4 at least; a recipe it does not run it refuses with unsupported-profile.
BOOST_AUTO_TEST_CASE(each_engine_reproduces_each_implementation_bit_for_bit) {
  for (const oracle::Engine& engine : oracle::engines()) {
    const bool spec = engine.name == "reference";
    std::size_t ran = 0, ggml = 0, te = 0;
    for (const std::string& recipe : recipe_folders()) {
      for (const GoldenCase& g : golden_cases(recipe)) {
        const Comparison cmp = compare_case(g.folder, g.json, g.scheme, g.options, engine);
        BOOST_TEST_CONTEXT(engine.name << " / " << recipe << " / " << g.json.at("name").get<std::string>()) {
          if (!spec && cmp.error && cmp.error->message().find("does not run this point") != std::string::npos) {
            BOOST_TEST((cmp.error->code() == ErrorCode::unsupported_profile));
            BOOST_TEST(!recipe.starts_with("ggml"), "ggml's recipes run on every engine");
            BOOST_TEST(recipe != "nvidia-nvfp4", "nvidia-nvfp4 runs on every engine");
            continue;
          }
          ++ran;
          ggml += recipe.starts_with("ggml") ? 1 : 0;
          te += recipe == "nvidia-nvfp4" ? 1 : 0;
          BOOST_TEST(!cmp.error.has_value(), (cmp.error ? cmp.error->to_string() : ""));
          BOOST_TEST(cmp.compared > 0u, "the case compares nothing");
          BOOST_TEST(cmp.differing == 0u, cmp.differing << " of " << cmp.compared << " differ, first " << cmp.first);
        }
      }
    }
    BOOST_TEST_MESSAGE(ran << " golden cases run by the " << engine.name << " engine, " << ggml << " of them ggml's");
    BOOST_TEST(ran >= 36u);  // the MX recipes' (5 x 6) and ggml's (3 x 2) at least
    BOOST_TEST(ggml == 6u);
    BOOST_TEST(te == 3u);
  }
}

// The rules no input can tell from the exact profile's, with the reason. Each must stay
// indistinguishable on the golden data (a stale entry fails the test below).
struct Unobservable {
  std::string_view recipe;
  std::string_view field;
  std::string_view why;
};
constexpr Unobservable kUnobservable[] = {
    {"ggml-q8_0-x86", "arithmetic",
     "its codes use 127 / amax, not d; and f16(f32(amax / 127)) = f16(amax / 127) for every f32 amax: a / 127 is "
     "a binary fraction of period 7 (2^7 = 1 mod 127), while a double rounding needs 12 equal bits in a row"},
    {"torch-qint8", "source", "given-f32 only decides which requests are accepted (scales must be given)"},
};

// Each rule a recipe sets away from the exact profile is pinned by its golden data: with that one
// field put back, the reference no longer reproduces the implementation (or the point is not
// accepted on its own: a rule that needs another, such as ggml's codes from the unrounded scale
// for its infinite f16 scale). A rule the data did not pin would be a guess.
BOOST_AUTO_TEST_CASE(golden_data_pins_every_rule_of_each_recipe) {
  const Rules exact = profile_rules(Profile::exact);
  const auto fields = rule_fields();
  for (const std::string& recipe : recipe_folders()) {
    const std::vector<GoldenCase> cases = golden_cases(recipe);
    const Rules rules = cases.front().recipe->rules;
    for (std::size_t f = 0; f < fields.size(); ++f) {
      if (field_value(rules, f) == field_value(exact, f)) continue;
      Rules changed = rules;
      set_field_value(changed, f, field_value(exact, f));
      std::size_t accepted = 0;
      std::size_t differing = 0;
      for (const GoldenCase& g : cases) {
        QuantizeOptions o = g.options;
        o.rules = changed;
        if (!validate_rules(changed, g.scheme, o.calibration, o.scales.has_value()).ok()) continue;
        ++accepted;
        const Comparison cmp = compare_case(g.folder, g.json, g.scheme, o);
        if (cmp.error || cmp.differing > 0) ++differing;
      }
      const bool unobservable = std::any_of(std::begin(kUnobservable), std::end(kUnobservable), [&](const Unobservable& u) {
        return u.recipe == recipe && u.field == fields[f].name;
      });
      BOOST_TEST_CONTEXT(recipe << ", " << fields[f].name << " put back to " << fields[f].choices[field_value(exact, f)].name) {
        if (unobservable) {
          BOOST_TEST((accepted > 0 && differing == 0), "listed as unobservable, but the data tells it apart");
        } else {
          BOOST_TEST((accepted == 0 || differing > 0), "the golden data does not tell this rule from the exact profile's");
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ggml's blocks as input: every malformed buffer is a typed error naming what is wrong.
BOOST_AUTO_TEST_SUITE(ggml_bytes)

const Rules& recipe_rules(std::string_view name) { return find_recipe(name).value()->rules; }

BOOST_AUTO_TEST_CASE(layout_rejects_what_ggml_cannot_hold) {
  const Scheme q8_0 = parse_scheme("q8_0").value();
  const std::vector<std::uint64_t> partial{2, 40};
  BOOST_TEST((ggml_layout(q8_0, partial).status().code() == ErrorCode::invalid_argument));
  BOOST_TEST((ggml_layout(parse_scheme("mxfp8").value(), std::vector<std::uint64_t>{32}).status().code() ==
              ErrorCode::invalid_argument));
  BOOST_TEST((ggml_layout(parse_scheme("q8s:block[32]=f32").value(), std::vector<std::uint64_t>{32}).status().code() ==
              ErrorCode::invalid_argument));
  // 2^58 blocks of 34 bytes do not fit in 63 bits.
  const std::vector<std::uint64_t> huge{std::uint64_t{1} << 58, 32};
  BOOST_TEST((ggml_layout(q8_0, huge).status().code() == ErrorCode::shape_overflow));
  const auto g = ggml_layout(parse_scheme("q4_0").value(), std::vector<std::uint64_t>{3, 64});
  BOOST_TEST_REQUIRE(g.ok());
  BOOST_TEST(g->blocks == 6u);
  BOOST_TEST(g->total_bytes == 6u * 18u);
}

BOOST_AUTO_TEST_CASE(decode_checks_length_scales_and_codes_under_the_rules) {
  const Scheme q8_0 = parse_scheme("q8_0").value();
  const std::vector<std::uint64_t> shape{32};
  std::vector<std::uint8_t> block(34, 0);
  block[0] = 0x00;
  block[1] = 0x3C;  // f16 1.0
  const Rules exact = profile_rules(Profile::exact);
  BOOST_TEST(reference::decode(q8_0, shape, block, exact, ByteFormat::ggml).ok());
  // Length.
  std::vector<std::uint8_t> short_block(block.begin(), block.end() - 1);
  BOOST_TEST((reference::decode(q8_0, shape, short_block, exact, ByteFormat::ggml).status().code() ==
              ErrorCode::size_mismatch));
  // -128 is no q8s code under the exact profile's saturation, and is one under ggml's (none).
  std::vector<std::uint8_t> minus128 = block;
  minus128[2 + 5] = 0x80;
  const auto bad = reference::decode(q8_0, shape, minus128, exact, ByteFormat::ggml);
  BOOST_TEST((bad.status().code() == ErrorCode::corrupt_bytes));
  BOOST_TEST(bad.status().index() == 5u);
  BOOST_TEST(reference::decode(q8_0, shape, minus128, recipe_rules("ggml-q8_0"), ByteFormat::ggml).ok());
  // An infinite f16 scale: ggml's overflow, corrupt under the exact profile.
  std::vector<std::uint8_t> inf = block;
  inf[0] = 0x00;
  inf[1] = 0x7C;
  BOOST_TEST((reference::decode(q8_0, shape, inf, exact, ByteFormat::ggml).status().code() == ErrorCode::corrupt_bytes));
  const auto q = reference::decode(q8_0, shape, inf, recipe_rules("ggml-q8_0"), ByteFormat::ggml);
  BOOST_TEST_REQUIRE(q.ok());
  const auto y = reference::dequantize(*q);
  BOOST_TEST_REQUIRE(y.ok());
  BOOST_TEST(qscheme::f32_bits((*y)[0]) == 0xFFC00000u);  // 0 * inf: x86's default NaN, as ggml's dequantize gives
  // A NaN f16 scale is corrupt under every rule.
  std::vector<std::uint8_t> nan = block;
  nan[0] = 0x01;
  nan[1] = 0x7C;
  BOOST_TEST((reference::decode(q8_0, shape, nan, recipe_rules("ggml-q8_0"), ByteFormat::ggml).status().code() ==
              ErrorCode::corrupt_bytes));
  // A negative scale is ggml q4_0's signed scale, corrupt elsewhere.
  const Scheme q4 = parse_scheme("q4f:packed-u32(0):block[32]=f16").value();
  std::vector<std::uint8_t> neg(18, 0x88);
  neg[0] = 0x00;
  neg[1] = 0xBC;  // f16 -1.0
  BOOST_TEST((reference::decode(q4, shape, neg, exact, ByteFormat::ggml).status().code() == ErrorCode::corrupt_bytes));
  const auto q4t = reference::decode(q4, shape, neg, recipe_rules("ggml-q4_0"), ByteFormat::ggml);
  BOOST_TEST_REQUIRE(q4t.ok());
  BOOST_TEST(q4t->codes[0] == 0);
  BOOST_TEST(q4t->codes[16] == 0);
  // q4s codes have no -8: nibble 0 is corrupt for the q4_0 preset under the exact profile.
  std::vector<std::uint8_t> zero_nibble(18, 0x88);
  zero_nibble[1] = 0x3C;
  zero_nibble[2 + 3] = 0x80;  // element 3: nibble 0
  const auto z = reference::decode(parse_scheme("q4_0").value(), shape, zero_nibble, exact, ByteFormat::ggml);
  BOOST_TEST((z.status().code() == ErrorCode::corrupt_bytes));
  BOOST_TEST(z.status().index() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()

// Requests a point does not define get unsupported-profile, with the reason.
BOOST_AUTO_TEST_SUITE(rule_errors)

BOOST_AUTO_TEST_CASE(torchao_even_scale_that_overflows_to_nan_is_an_error) {
  // (2 - 2^-4) * 2^127 carries into f32's inf exponent when e4m3's 3 mantissa bits are rounded.
  std::vector<float> x(32, 1.0f);
  x[7] = 3.3e38f;
  QuantizeOptions o = recipe_options(*find_recipe("torchao-mx-even").value());
  const auto q = reference::quantize(parse_scheme("mxfp8").value(), std::vector<std::uint64_t>{32}, x, o);
  BOOST_TEST((q.status().code() == ErrorCode::unsupported_profile));
  BOOST_TEST(q.status().message().find("NaN") != std::string::npos);
  x[7] = 3.2e38f;  // below the carry
  BOOST_TEST(reference::quantize(parse_scheme("mxfp8").value(), std::vector<std::uint64_t>{32}, x, o).ok());
}

BOOST_AUTO_TEST_CASE(points_that_do_not_define_a_request_are_refused) {
  const std::vector<float> x(32, 1.0f);
  const std::vector<std::uint64_t> shape{32};
  const auto refused = [&](std::string_view recipe, std::string_view scheme, QuantizeOptions o = {}) {
    QuantizeOptions ro = recipe_options(*find_recipe(recipe).value(), o);
    const auto q = reference::quantize(parse_scheme(scheme).value(), shape, x, ro);
    return q.status().code() == ErrorCode::unsupported_profile && !q.status().message().empty();
  };
  BOOST_TEST(refused("torch-qint8", "q8f"));  // no scales given
  BOOST_TEST(refused("ocp-mx", "q8_0"));      // an exponent rule without ue8m0
  QuantizeOptions absmean;
  absmean.calibration = Calibration::absmean;
  BOOST_TEST(refused("ocp-mx", "mxfp8", absmean));
  BOOST_TEST(refused("ggml-q4_0", "q8f:block[32]=f16"));  // upper-only past 4 bits
  BOOST_TEST(refused("ggml-q4_0", "q4s:block[32]=f16"));  // signed-max needs lo = -(hi + 1)
  QuantizeOptions given;
  given.scales = GivenScales{{1.0f}, {}};
  BOOST_TEST(refused("ggml-q8_0-x86", "q8_0", given));  // 127 / amax needs calibration
  // The text form names unknown fields and choices.
  BOOST_TEST((parse_rules("quotient=fast").status().code() == ErrorCode::invalid_argument));
  BOOST_TEST((parse_rules("speed=high").status().code() == ErrorCode::invalid_argument));
  BOOST_TEST((parse_rules("ties=half-away,ties=half-even").status().code() == ErrorCode::invalid_argument));
  for (const Recipe& r : recipes()) BOOST_TEST((parse_rules(format_rules(r.rules)).value() == r.rules));
  BOOST_TEST((find_recipe("ggml").status().code() == ErrorCode::invalid_argument));
  BOOST_TEST(find_recipe("ggml").status().message().find("ggml-q8_0") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
