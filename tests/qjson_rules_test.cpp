// Q.json under a point of the rule space (io/qjson.hpp, docs/QJSON.md "rules"): the streaming
// reader and writer accept the codes and scales a recipe's point produces and no others, keep
// the reader's strictness (duplicate keys, key order for "rules", a "profile" that names another
// point), and the writer refuses what JSON cannot hold. Texts and byte values are written out
// by hand: f16 0.5 is 0x3800, so -0.5 is 0xB800 and -0 is 0x8000.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "io/qjson.hpp"
#include "scheme/ostream.hpp"
#include "scheme/recipes.hpp"
#include "scheme/rules.hpp"
#include "scheme/text.hpp"

using namespace qscheme;
namespace qjson = qscheme::io::qjson;
namespace json = qscheme::io::json;

namespace {

Rules recipe_rules(std::string_view name) { return find_recipe(name).value()->rules; }

Result<qjson::Document> read(std::string_view text, std::size_t step = 1 << 20) {
  return qjson::read(io::json::text_source(text, step), text.size());
}

std::string zeros(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += i ? ",0" : "0";
  return out;
}

// A ggml q4_0 block: codes -8 and 7 then zeros, one signed f16 scale.
std::string q4_0_text(const std::string& rules_key, const std::string& scale) {
  return R"({"scheme": "q4f:packed-u32(0):block[32]=f16",)" + rules_key + R"( "shape": [32], "codes": [-8,7,)" +
         zeros(30) + R"(], "block_scales": [)" + scale + R"(], "global_scale": null})";
}

std::string rules_key(std::string_view recipe) {
  return R"( "rules": ")" + format_rules(recipe_rules(recipe)) + R"(",)";
}

std::string write(const Scheme& s, const Rules& r, std::vector<std::uint64_t> shape, std::span<const std::uint8_t> bytes,
                  Status* status, int* pieces = nullptr) {
  std::string out;
  *status = qjson::write(s, r, shape, bytes, [&](std::span<const std::uint8_t> p) {
    if (pieces) ++*pieces;
    out.append(reinterpret_cast<const char*>(p.data()), p.size());
    return Status();
  });
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(qjson_rules)

BOOST_AUTO_TEST_CASE(signed_scales_read_under_signed_scale_rules_only) {
  for (std::size_t step : {std::size_t{1}, std::size_t{7}, std::size_t{1} << 20}) {
    auto d = read(q4_0_text(rules_key("ggml-q4_0"), "-0.5"), step);
    BOOST_REQUIRE_MESSAGE(d.ok(), d.status().to_string());
    BOOST_TEST((d->profile == Profile::exact));
    BOOST_REQUIRE(d->rules.has_value());
    BOOST_TEST((*d->rules == recipe_rules("ggml-q4_0")));
    BOOST_REQUIRE(d->bytes.size() == 18u);  // 16 bytes of nibbles, then the f16 scale
    BOOST_TEST(d->bytes[16] == 0x00);
    BOOST_TEST(d->bytes[17] == 0xB8);
  }
  auto zero = read(q4_0_text(rules_key("ggml-q4_0"), "-0.0"));
  BOOST_REQUIRE_MESSAGE(zero.ok(), zero.status().to_string());
  BOOST_TEST(zero->bytes[17] == 0x80);
  BOOST_TEST(zero->bytes[16] == 0x00);
  // Without the rules a negative scale is no scale.
  BOOST_TEST(read(q4_0_text("", "-0.5")).status().code() == ErrorCode::corrupt_bytes);
  // Rules with unsigned scales (ggml q8_0's statistic is the magnitude) do not make it one.
  BOOST_TEST(read(q4_0_text(rules_key("ggml-q8_0"), "-0.5")).status().code() == ErrorCode::corrupt_bytes);
}

BOOST_AUTO_TEST_CASE(written_with_the_rules_and_read_back_unchanged) {
  auto d = read(q4_0_text(rules_key("ggml-q4_0"), "-0.5"));
  BOOST_REQUIRE_MESSAGE(d.ok(), d.status().to_string());
  Status st;
  const std::string text = write(d->scheme, *d->rules, d->shape, d->bytes, &st);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.to_string());
  BOOST_TEST(text.find("\"profile\": \"exact\",\n \"rules\": \"" + format_rules(recipe_rules("ggml-q4_0")) + "\"") !=
                 std::string::npos,
             text);
  BOOST_TEST(text.find("\"block_scales\": [-0.5]") != std::string::npos, text);
  auto back = read(text, 3);
  BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  BOOST_TEST((back->rules == d->rules));
  BOOST_TEST(back->bytes == d->bytes);
  // A profile's point is written as the profile, without "rules".
  const std::vector<std::uint8_t> exact_bytes(d->bytes.begin(), d->bytes.end() - 2);
  std::vector<std::uint8_t> b = exact_bytes;
  b.push_back(0x00);
  b.push_back(0x38);
  const std::string burn = write(d->scheme, profile_rules(Profile::burn), d->shape, b, &st);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.to_string());
  BOOST_TEST(burn.find("\"profile\": \"burn\",\n \"shape\"") != std::string::npos, burn);
  // The signed scale under the exact profile: the writer checks the bytes against the point.
  write(d->scheme, profile_rules(Profile::exact), d->shape, d->bytes, &st);
  BOOST_TEST(st.code() == ErrorCode::corrupt_bytes);
}

BOOST_AUTO_TEST_CASE(codes_outside_the_profiles_range_read_under_rules_that_produce_them) {
  // ggml's x86 q8_0 path gives -128 for a non-finite product; q8s codes are -127..127 otherwise.
  const std::string body = R"( "shape": [32], "codes": [-128,)" + zeros(31) +
                           R"(], "block_scales": [1.0], "global_scale": null})";
  auto d = read(R"({"scheme": "q8_0",)" + rules_key("ggml-q8_0-x86") + body);
  BOOST_REQUIRE_MESSAGE(d.ok(), d.status().to_string());
  BOOST_TEST(d->bytes[0] == 0x80);
  auto plain = read(R"({"scheme": "q8_0",)" + body);
  BOOST_TEST(plain.status().code() == ErrorCode::corrupt_bytes);
  BOOST_TEST(plain.status().index() == 0u);
}

BOOST_AUTO_TEST_CASE(the_reader_stays_strict_about_rules) {
  const std::string rules = rules_key("ggml-q4_0");
  // Twice.
  auto twice = read(q4_0_text(rules + rules, "-0.5"));
  BOOST_TEST(twice.status().code() == ErrorCode::invalid_argument);
  BOOST_TEST(twice.status().message().find("duplicate key \"rules\"") != std::string::npos, twice.status().message());
  // After the codes it would come too late to check them.
  const std::string late = R"({"scheme": "q4f:packed-u32(0):block[32]=f16", "shape": [32], "codes": [-8,7,)" + zeros(30) +
                           R"(],)" + rules + R"( "block_scales": [-0.5], "global_scale": null})";
  auto l = read(late);
  BOOST_TEST(l.status().code() == ErrorCode::invalid_argument);
  BOOST_TEST(l.status().message().find("\"rules\" must come before") != std::string::npos, l.status().message());
  // A profile that names another point than the rules, before or after them.
  BOOST_TEST(read(q4_0_text(R"( "profile": "burn",)" + rules, "-0.5")).status().code() == ErrorCode::invalid_argument);
  BOOST_TEST(read(q4_0_text(rules + R"( "profile": "onnx",)", "-0.5")).status().code() == ErrorCode::invalid_argument);
  BOOST_TEST(read(q4_0_text(R"( "profile": "exact",)" + rules, "-0.5")).ok());
  // Rules that are a profile's point read as that profile.
  auto burn = read(q4_0_text(R"( "rules": ")" + format_rules(profile_rules(Profile::burn)) + R"(",)", "0.5"));
  BOOST_REQUIRE_MESSAGE(burn.ok(), burn.status().to_string());
  BOOST_TEST((burn->profile == Profile::burn));
  BOOST_TEST(!burn->rules.has_value());
  // Not a string, not rules, and a string longer than the reader's bound.
  BOOST_TEST(read(q4_0_text(R"( "rules": 3,)", "0.5")).status().code() == ErrorCode::invalid_argument);
  BOOST_TEST(read(q4_0_text(R"( "rules": "scale=sideways",)", "0.5")).status().code() == ErrorCode::invalid_argument);
  BOOST_TEST(read(q4_0_text(R"( "rules": ")" + std::string(9000, 'a') + R"(",)", "0.5"), 5).status().code() ==
             ErrorCode::invalid_argument);
}

BOOST_AUTO_TEST_CASE(an_infinite_scale_has_no_qjson_form) {
  // ggml q8_0 stores f16(amax / 127), inf past 65504: the bytes of such a block are valid under
  // its rules, and Q.json refuses them before anything reaches the sink.
  const Scheme s = parse_scheme("q8_0").value();
  std::vector<std::uint8_t> bytes(32, 0);
  bytes.push_back(0x00);
  bytes.push_back(0x7C);
  Status st;
  int pieces = 0;
  const std::string text = write(s, recipe_rules("ggml-q8_0"), std::vector<std::uint64_t>{32}, bytes, &st, &pieces);
  BOOST_TEST(st.code() == ErrorCode::invalid_argument);
  BOOST_TEST(st.message().find("infinite") != std::string::npos, st.message());
  BOOST_TEST(pieces == 0);
  BOOST_TEST(text.empty());
  // Under a profile the same bytes are corrupt.
  write(s, profile_rules(Profile::exact), std::vector<std::uint64_t>{32}, bytes, &st);
  BOOST_TEST(st.code() == ErrorCode::corrupt_bytes);
}

BOOST_AUTO_TEST_SUITE_END()
