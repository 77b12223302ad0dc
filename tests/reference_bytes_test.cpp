// reference::encode / reference::decode: Burn's serialized layout (spec burn-model.md §6-7, §10
// rows 15-20), the golden pack/bytes/blocks vectors, every corrupt-bytes rule, and round trips
// over every supported scheme of the tuple space on every shape of the shape set.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "reference/pack.hpp"
#include "reference/reference.hpp"
#include "scheme/errors.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"
#include "tests/support/scale_patterns.hpp"

#ifndef QSCHEME_GOLDEN_JSON
#error "QSCHEME_GOLDEN_JSON must name burn-golden.json"
#endif

using namespace qscheme;
using Bytes = std::vector<std::uint8_t>;
using qscheme::testing::ScalePatternValue;

namespace {

Scheme scheme_of(const std::string& text) {
  auto s = parse_scheme(text);
  BOOST_REQUIRE_MESSAGE(s.ok(), text << ": " << s.status().to_string());
  return *s;
}

Layout layout_of(const Scheme& s, const std::vector<std::uint64_t>& shape) {
  auto l = make_layout(s, shape);
  BOOST_REQUIRE_MESSAGE(l.ok(), format_scheme(s) << ": " << l.status().to_string());
  return *l;
}

// The pattern of dtype d holding exactly v (exhaustive search for the narrow dtypes).
std::uint32_t scale_bits_of(ScaleDtype d, double v) {
  if (d == ScaleDtype::f32) return qscheme::f32_bits(static_cast<float>(v));
  const std::uint32_t n = info(d).bytes == 1 ? 256 : 65536;
  for (std::uint32_t b = 0; b < n; ++b) {
    if (!qscheme::scale_problem(d, b) && ScalePatternValue(d, b) == v) return b;
  }
  BOOST_FAIL("no " << to_string(d) << " pattern holds " << v);
  return 0;
}

Bytes le_words(const std::vector<std::uint32_t>& words) {
  Bytes out;
  for (std::uint32_t w : words) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(w >> (8 * i)));
  }
  return out;
}

void put_f32(Bytes& out, float f) {
  const auto b = qscheme::f32_bits(f);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(b >> (8 * i)));
}

QuantizedTensor make_q(const Scheme& s, std::vector<std::uint64_t> shape, std::vector<std::int32_t> codes,
                       std::vector<std::uint32_t> scales, std::optional<std::uint32_t> global = std::nullopt) {
  QuantizedTensor q;
  q.scheme = s;
  q.shape = std::move(shape);
  q.codes = std::move(codes);
  q.scale_bits = std::move(scales);
  q.global_bits = global;
  return q;
}

constexpr std::uint32_t kOne = 0x3F800000u;  // 1.0f

// A tensor of the given scheme and shape with every scale 1 and the given codes.
QuantizedTensor unit_scales(const Scheme& s, std::vector<std::uint64_t> shape, std::vector<std::int32_t> codes) {
  const Layout l = layout_of(s, shape);
  const std::uint32_t one = scale_bits_of(s.scale_dtype(), 1.0);
  return make_q(s, std::move(shape), std::move(codes), std::vector<std::uint32_t>(l.scales, one),
                s.two_level() ? std::optional<std::uint32_t>(kOne) : std::nullopt);
}

Bytes encode_ok(const QuantizedTensor& q) {
  auto b = reference::encode(q);
  BOOST_REQUIRE_MESSAGE(b.ok(), format_scheme(q.scheme) << ": " << b.status().to_string());
  return *b;
}

void expect_error(const Status& st, ErrorCode code, std::size_t index = kNoIndex) {
  BOOST_TEST(to_code(st.code()) == to_code(code), st.to_string());
  if (index != kNoIndex) BOOST_TEST(st.index() == index, st.to_string());
}

Status decode_status(const Scheme& s, std::vector<std::uint64_t> shape, const Bytes& b) {
  return reference::decode(s, shape, b).status();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Golden vectors: ops pack, bytes and blocks of burn-golden.json.

BOOST_AUTO_TEST_CASE(golden_pack_bytes_blocks_vectors) {
  std::ifstream in(QSCHEME_GOLDEN_JSON);
  BOOST_REQUIRE_MESSAGE(in.good(), "cannot open golden vectors at " QSCHEME_GOLDEN_JSON);
  const nlohmann::json doc = nlohmann::json::parse(in);
  int packs = 0, bytes = 0, blocks = 0;
  for (const auto& v : doc.at("vectors")) {
    const std::string op = v.at("op");
    const std::string name = v.at("name");
    BOOST_TEST_CONTEXT("vector " << name) {
      if (op != "pack" && op != "bytes" && op != "blocks") continue;
      const Scheme s = scheme_of(v.at("scheme"));
      const auto shape = v.at("shape").get<std::vector<std::uint64_t>>();
      const Layout l = layout_of(s, shape);
      if (op == "blocks") {
        BOOST_TEST(l.blocks_per_dim == v.at("blocks_per_dim").get<std::vector<std::uint64_t>>(),
                   boost::test_tools::per_element());
        ++blocks;
      } else if (op == "pack") {
        const auto codes = v.at("codes").get<std::vector<std::int32_t>>();
        const auto words = v.at("words").get<std::vector<std::uint32_t>>();
        // The words Burn packs, whether or not every code is one the scheme produces (Burn's
        // own test puts -128 into a q8s word).
        const auto packed = reference::pack_codes(s, l, codes);
        BOOST_TEST(packed == words, boost::test_tools::per_element());
        BOOST_TEST(reference::unpack_codes(s, l, words) == codes, boost::test_tools::per_element());
        // Through encode: under the scheme when every code is valid, else under its full-range
        // sibling (same bits, so the same words).
        Scheme enc = s;
        bool all_valid = true;
        for (std::int32_t c : codes) all_valid = all_valid && !qscheme::code_problem(s.value, c);
        if (!all_valid) {
          enc.value = info(s.value).bits == 8 ? Value::q8f : info(s.value).bits == 4 ? Value::q4f : Value::q2f;
          auto st = reference::encode(unit_scales(s, shape, codes));
          expect_error(st.status(), ErrorCode::corrupt_bytes);
        }
        const QuantizedTensor q = unit_scales(enc, shape, codes);
        const Bytes b = encode_ok(q);
        const Bytes expect_values = le_words(words);
        BOOST_REQUIRE(b.size() == l.total_bytes);
        BOOST_TEST(Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(l.value_bytes)) == expect_values,
                   boost::test_tools::per_element());
        auto back = reference::decode(enc, shape, b);
        BOOST_REQUIRE(back.ok());
        BOOST_TEST((*back == q));
        ++packs;
      } else {
        const auto codes = v.at("codes").get<std::vector<std::int32_t>>();
        std::vector<std::uint32_t> scales;
        for (double x : v.at("block_scales")) scales.push_back(scale_bits_of(s.scale_dtype(), x));
        std::optional<std::uint32_t> global;
        if (!v.at("global_scale").is_null()) {
          global = qscheme::f32_bits(v.at("global_scale").get<float>());
        }
        const std::uint64_t length = v.at("byte_length");
        BOOST_TEST(l.total_bytes == length);
        // Burn's test stores -128 under Q8S; qscheme's q8s never produces it, so the scheme's
        // full-range sibling carries these codes, and q8s itself rejects them.
        Scheme enc = s;
        bool all_valid = true;
        for (std::int32_t c : codes) all_valid = all_valid && !qscheme::code_problem(s.value, c);
        if (!all_valid) {
          expect_error(reference::encode(make_q(s, shape, codes, scales, global)).status(), ErrorCode::corrupt_bytes);
          enc.value = Value::q8f;
        }
        const QuantizedTensor q = make_q(enc, shape, codes, scales, global);
        const Bytes b = encode_ok(q);
        BOOST_TEST(b.size() == length);
        auto back = reference::decode(enc, shape, b);
        BOOST_REQUIRE(back.ok());
        BOOST_TEST((*back == q));
        ++bytes;
      }
    }
  }
  BOOST_TEST(packs == 3);
  BOOST_TEST(bytes == 1);
  BOOST_TEST(blocks == 4);
}

// ---------------------------------------------------------------------------------------------
// Burn §10 rows 15-20.

BOOST_AUTO_TEST_CASE(row15_pack_i8s_to_u32) {
  const Scheme s = scheme_of("q8f:packed-u32(0)");
  const Bytes b = encode_ok(unit_scales(s, {4}, {-128, 2, -3, 127}));
  const Bytes expect{0x80, 0x02, 0xFD, 0x7F, 0x00, 0x00, 0x80, 0x3F};  // 0x7FFD0280, then 1.0f
  BOOST_TEST(b == expect, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(row16_pack_padded) {
  const Scheme s = scheme_of("q8f:packed-u32(0)");
  const Bytes b = encode_ok(unit_scales(s, {5}, {-128, 2, -3, 127, 55}));
  Bytes expect = le_words({2147287680u, 55u});
  put_f32(expect, 1.0f);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(row17_unpack) {
  const Scheme s = scheme_of("q8f:packed-u32(0)");
  Bytes b = le_words({2147287680u});
  put_f32(b, 1.0f);
  auto q = reference::decode(s, std::vector<std::uint64_t>{4}, b);
  BOOST_REQUIRE(q.ok());
  BOOST_TEST(q->codes == (std::vector<std::int32_t>{-128, 2, -3, 127}), boost::test_tools::per_element());
  // Under q8s the same word holds -128, which q8s never produces.
  expect_error(decode_status(scheme_of("q8s:packed-u32(0)"), {4}, b), ErrorCode::corrupt_bytes, 0);
  Bytes b1 = le_words({55u});
  put_f32(b1, 1.0f);
  auto q1 = reference::decode(scheme_of("q8s:packed-u32(0)"), std::vector<std::uint64_t>{1}, b1);
  BOOST_REQUIRE(q1.ok());
  BOOST_TEST(q1->codes == std::vector<std::int32_t>{55}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(row18_unpack_q4_arange) {
  const std::vector<std::uint32_t> words{0,          286331136,  286331153,  572657937,  572662306,  857874978,
                                         858993459,  858993459,  1145324612, 1145324612, 1431655748, 1431655765,
                                         1717982549, 1717986918, 2003199590, 2004318071};
  std::vector<std::int32_t> codes;
  for (auto [value, count] : std::vector<std::pair<int, int>>{{0, 10}, {1, 18}, {2, 18}, {3, 18}, {4, 18},
                                                             {5, 18}, {6, 18}, {7, 10}}) {
    codes.insert(codes.end(), static_cast<std::size_t>(count), value);
  }
  Bytes b = le_words(words);
  put_f32(b, 0.5f);
  auto q = reference::decode(scheme_of("q4s:packed-u32(0)"), std::vector<std::uint64_t>{128}, b);
  BOOST_REQUIRE(q.ok());
  BOOST_TEST(q->codes == codes, boost::test_tools::per_element());
  BOOST_TEST(q->scale_bits == std::vector<std::uint32_t>{0x3F000000u}, boost::test_tools::per_element());
  BOOST_TEST(encode_ok(*q) == b, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(row19_per_tensor_native) {
  const Scheme s = scheme_of("q8s");
  const float scale = 0.03937008f;
  const QuantizedTensor q = make_q(s, {2, 3}, {0, 25, 51, 76, 102, 127}, {qscheme::f32_bits(scale)});
  Bytes expect{0, 25, 51, 76, 102, 127};
  put_f32(expect, scale);
  const Bytes b = encode_ok(q);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
  auto back = reference::decode(s, std::vector<std::uint64_t>{2, 3}, b);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST((*back == q));
  BOOST_TEST(qscheme::f32_from_bits(back->scale_bits.at(0)) == scale);
}

BOOST_AUTO_TEST_CASE(row20_two_level_14_bytes) {
  // Burn's test uses Q8S with -128; under qscheme that code needs q8f (q8s rejects it, see the
  // golden test above).
  const Scheme s = scheme_of("q8f:block[4]=ue4m3:tensor=f32");
  const QuantizedTensor q = make_q(s, {8}, {0, 25, 51, 76, 102, 127, -128, -1},
                                   {scale_bits_of(ScaleDtype::ue4m3, 0.5), scale_bits_of(ScaleDtype::ue4m3, 0.125)},
                                   qscheme::f32_bits(3.0f));
  BOOST_TEST(q.scale_bits == (std::vector<std::uint32_t>{0x30, 0x20}), boost::test_tools::per_element());
  const Bytes b = encode_ok(q);
  Bytes expect{0, 25, 51, 76, 102, 127, 0x80, 0xFF, 0x30, 0x20};
  put_f32(expect, 3.0f);
  BOOST_TEST(b.size() == 14u);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
  auto back = reference::decode(s, std::vector<std::uint64_t>{8}, b);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST((*back == q));
}

// ---------------------------------------------------------------------------------------------
// Packing geometry.

BOOST_AUTO_TEST_CASE(each_line_is_padded_on_its_own) {
  const Scheme s = scheme_of("q4s:packed-u32(0)");
  const Layout l = layout_of(s, {3, 3});
  BOOST_TEST(l.storage_elements == 3u);  // 3 * ceil(3/8), not ceil(9/8) = 2
  const Bytes b = encode_ok(unit_scales(s, {3, 3}, {1, 2, 3, -1, -2, -3, 7, -7, 0}));
  Bytes expect = le_words({0x321u, 0xDEFu, 0x097u});
  put_f32(expect, 1.0f);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
}

// Independent model of packing along an arbitrary axis: element at coordinates c lands in the
// storage element at c with c[axis] / nq, in field c[axis] % nq.
std::vector<std::uint32_t> model_pack(const std::vector<std::uint64_t>& shape, std::size_t axis, int bits,
                                      const std::vector<std::int32_t>& codes) {
  const std::uint64_t nq = 32 / static_cast<std::uint64_t>(bits);
  std::vector<std::uint64_t> sshape = shape;
  sshape[axis] = (shape[axis] + nq - 1) / nq;
  std::uint64_t n = 1;
  for (auto d : sshape) n *= d;
  std::vector<std::uint32_t> words(n, 0);
  std::vector<std::uint64_t> c(shape.size(), 0);
  for (std::size_t e = 0; e < codes.size(); ++e) {
    std::uint64_t rem = e;
    for (std::size_t i = shape.size(); i-- > 0;) {
      c[i] = rem % shape[i];
      rem /= shape[i];
    }
    std::uint64_t w = 0;
    for (std::size_t i = 0; i < shape.size(); ++i) w = w * sshape[i] + (i == axis ? c[i] / nq : c[i]);
    const std::uint32_t mask = bits == 32 ? ~0u : (1u << bits) - 1;
    words[w] |= (static_cast<std::uint32_t>(codes[e]) & mask) << ((c[axis] % nq) * static_cast<std::uint64_t>(bits));
  }
  return words;
}

BOOST_AUTO_TEST_CASE(packing_along_dim_1_and_2) {
  std::mt19937 rng(7);
  const std::vector<std::uint64_t> shape{3, 5, 4};
  for (const char* value : {"q8f", "q4f", "q2f"}) {
    for (int dim : {0, 1, 2}) {
      const Scheme s = scheme_of(std::string(value) + ":packed-u32(" + std::to_string(dim) + ")");
      const Layout l = layout_of(s, shape);
      BOOST_TEST(l.packed_axis == 2 - dim);
      const ValueInfo& vi = info(s.value);
      std::uniform_int_distribution<int> pick(vi.lo, vi.hi);
      std::vector<std::int32_t> codes(60);
      for (auto& c : codes) c = pick(rng);
      const auto words = model_pack(shape, static_cast<std::size_t>(2 - dim), vi.bits, codes);
      BOOST_TEST(words.size() == l.storage_elements);
      const Bytes b = encode_ok(unit_scales(s, shape, codes));
      const Bytes values(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(l.value_bytes));
      BOOST_TEST(values == le_words(words), boost::test_tools::per_element());
      auto back = reference::decode(s, shape, b);
      BOOST_REQUIRE(back.ok());
      BOOST_TEST(back->codes == codes, boost::test_tools::per_element());
    }
  }
  // A hand-checked case: q8 along dim 1 of [2,3,2]: each word gathers a column of 3 (+1 pad).
  const Scheme s = scheme_of("q8f:packed-u32(1)");
  const Bytes b = encode_ok(unit_scales(s, {2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  Bytes expect{1, 3, 5, 0, 2, 4, 6, 0, 7, 9, 11, 0, 8, 10, 12, 0};
  put_f32(expect, 1.0f);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(e2m1_pairs) {
  // packed-native: two codes a byte, even element in the low nibble, each line padded.
  const Scheme s = scheme_of("e2m1:packed-native(0)");
  Bytes b = encode_ok(unit_scales(s, {5}, {1, 2, 3, 4, 15}));
  Bytes expect{0x21, 0x43, 0x0F};
  put_f32(expect, 1.0f);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
  b = encode_ok(unit_scales(s, {2, 3}, {1, 2, 3, 9, 10, 11}));
  expect = {0x21, 0x03, 0xA9, 0x0B};
  put_f32(expect, 1.0f);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
  // Along dim 1 of [2,3]: pairs are (row 0, row 1) of each column.
  const Scheme s1 = scheme_of("e2m1:packed-native(1)");
  b = encode_ok(unit_scales(s1, {2, 3}, {1, 2, 3, 9, 10, 11}));
  expect = {0x91, 0xA2, 0xB3};
  put_f32(expect, 1.0f);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
  // Native e2m1: one code a byte, low nibble.
  b = encode_ok(unit_scales(scheme_of("e2m1"), {3}, {0x9, 0xF, 0x0}));
  expect = {0x09, 0x0F, 0x00};
  put_f32(expect, 1.0f);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
  // e2m1 in packed-u32: eight nibbles a word, low first.
  b = encode_ok(unit_scales(scheme_of("e2m1:packed-u32(0)"), {9}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  expect = le_words({0x87654321u, 0x9u});
  put_f32(expect, 1.0f);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(native_sub_byte_codes_are_sign_extended) {
  const Bytes b = encode_ok(unit_scales(scheme_of("q4f"), {3}, {-8, -1, 7}));
  Bytes expect{0xF8, 0xFF, 0x07};
  put_f32(expect, 1.0f);
  BOOST_TEST(b == expect, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(scale_dtypes_are_little_endian) {
  // f16 1.0 = 0x3C00, bf16 1.0 = 0x3F80, ue4m3 1.0 = 0x38, ue8m0 1.0 = 0x7F.
  const std::vector<std::pair<std::string, Bytes>> cases{
      {"q8s:tensor=f16", {0x00, 0x3C}},
      {"q8s:tensor=bf16", {0x80, 0x3F}},
      {"q8s:tensor=ue4m3", {0x38}},
      {"q8s:tensor=ue8m0", {0x7F}},
      {"q8s:block[2]=f16", {0x00, 0x3C, 0x00, 0x3C}},
  };
  for (const auto& [text, scale_bytes] : cases) {
    const Scheme s = scheme_of(text);
    const Bytes b = encode_ok(unit_scales(s, {4}, {1, 2, 3, 4}));
    Bytes expect{1, 2, 3, 4};
    expect.insert(expect.end(), scale_bytes.begin(), scale_bytes.end());
    BOOST_TEST_CONTEXT(text) { BOOST_TEST(b == expect, boost::test_tools::per_element()); }
  }
}

// ---------------------------------------------------------------------------------------------
// Every corrupt-bytes rule.

namespace {

// Bytes of a tensor of `n` elements under `text` with one element's code byte (native) replaced.
void expect_corrupt_code_byte(const std::string& text, std::uint8_t byte) {
  const Scheme s = scheme_of(text);
  Bytes b = encode_ok(unit_scales(s, {3}, {0, 0, 0}));
  b[1] = byte;
  BOOST_TEST_CONTEXT(text << " byte " << int(byte)) {
    expect_error(decode_status(s, {3}, b), ErrorCode::corrupt_bytes, 1);
  }
}

void expect_corrupt_word(const std::string& text, std::uint32_t word, std::size_t index) {
  const Scheme s = scheme_of(text);
  const Layout l = layout_of(s, {8});
  Bytes b = encode_ok(unit_scales(s, {8}, std::vector<std::int32_t>(8, 0)));
  for (int i = 0; i < 4; ++i) b[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(word >> (8 * i));
  BOOST_TEST_CONTEXT(text << " word " << word) {
    BOOST_REQUIRE(l.storage_element_bytes == 4);
    expect_error(decode_status(s, {8}, b), ErrorCode::corrupt_bytes, index);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(corrupt_integer_codes) {
  expect_corrupt_code_byte("q8s", 0x80);  // -128
  expect_corrupt_code_byte("q4s", 0xF8);  // -8
  expect_corrupt_code_byte("q2s", 0xFE);  // -2
  // Not a canonical sign extension of a sub-byte code.
  expect_corrupt_code_byte("q4f", 0x08);
  expect_corrupt_code_byte("q4f", 0xF0);
  expect_corrupt_code_byte("q4s", 0x7F);
  expect_corrupt_code_byte("q2f", 0x02);
  expect_corrupt_code_byte("q2f", 0xFD);
  // The f kinds take their full range.
  for (const auto& [text, byte] : std::vector<std::pair<std::string, std::uint8_t>>{
           {"q8f", 0x80}, {"q4f", 0xF8}, {"q4f", 0x07}, {"q2f", 0xFE}, {"q2f", 0x01}, {"q8s", 0x81}, {"q4s", 0xF9}, {"q2s", 0xFF}}) {
    const Scheme s = scheme_of(text);
    Bytes b = encode_ok(unit_scales(s, {3}, {0, 0, 0}));
    b[1] = byte;
    BOOST_TEST(reference::decode(s, std::vector<std::uint64_t>{3}, b).ok(), text << " " << int(byte));
  }
  // Packed: q4s field 8 (= -8), q2s field 2 (= -2), q8s field 0x80, at element 3.
  expect_corrupt_word("q4s:packed-u32(0)", 0x8000u, 3);
  expect_corrupt_word("q2s:packed-u32(0)", 0x80u, 3);
  expect_corrupt_word("q8s:packed-u32(0)", 0x80000000u, 3);
}

BOOST_AUTO_TEST_CASE(corrupt_float_codes) {
  expect_corrupt_code_byte("e4m3", 0x7F);
  expect_corrupt_code_byte("e4m3", 0xFF);
  for (std::uint8_t b : {0x7C, 0x7D, 0x7E, 0x7F, 0xFC, 0xFD, 0xFE, 0xFF}) expect_corrupt_code_byte("e5m2", b);
  expect_corrupt_code_byte("e2m1", 0x10);
  expect_corrupt_code_byte("e2m1", 0xF7);
  expect_corrupt_word("e4m3:packed-u32(0)", 0x7F000000u, 3);
  expect_corrupt_word("e5m2:packed-u32(0)", 0x7C00u, 1);
  // Valid neighbours decode.
  for (const auto& [text, byte] : std::vector<std::pair<std::string, std::uint8_t>>{
           {"e4m3", 0x7E}, {"e4m3", 0xFE}, {"e5m2", 0x7B}, {"e5m2", 0xFB}, {"e2m1", 0x0F}, {"e4m3", 0x80}}) {
    const Scheme s = scheme_of(text);
    Bytes b = encode_ok(unit_scales(s, {3}, {0, 0, 0}));
    b[1] = byte;
    BOOST_TEST(reference::decode(s, std::vector<std::uint64_t>{3}, b).ok(), text << " " << int(byte));
  }
}

BOOST_AUTO_TEST_CASE(non_zero_padding_is_corrupt) {
  // q4s [3]: one word, fields 3..7 are padding.
  const Scheme s = scheme_of("q4s:packed-u32(0)");
  Bytes b = encode_ok(unit_scales(s, {3}, {1, 2, 3}));
  b[1] |= 0x10;  // field 3
  expect_error(decode_status(s, {3}, b), ErrorCode::corrupt_bytes, 0);
  b = encode_ok(unit_scales(s, {3}, {1, 2, 3}));
  b[3] |= 0x80;  // field 7
  expect_error(decode_status(s, {3}, b), ErrorCode::corrupt_bytes, 0);
  // [2,3]: the second line's word starts at byte 4.
  b = encode_ok(unit_scales(s, {2, 3}, {1, 2, 3, 4, 5, 6}));
  b[6] = 0x01;
  expect_error(decode_status(s, {2, 3}, b), ErrorCode::corrupt_bytes, 4);
  // e2m1 pairs: [3] has a padding high nibble in byte 1.
  const Scheme e = scheme_of("e2m1:packed-native(0)");
  b = encode_ok(unit_scales(e, {3}, {1, 2, 3}));
  b[1] |= 0x50;
  expect_error(decode_status(e, {3}, b), ErrorCode::corrupt_bytes, 1);
  // q8 along dim 1 of [3,2]: fourth byte of each word is padding.
  const Scheme d1 = scheme_of("q8f:packed-u32(1)");
  b = encode_ok(unit_scales(d1, {3, 2}, {1, 2, 3, 4, 5, 6}));
  b[7] = 0x01;
  expect_error(decode_status(d1, {3, 2}, b), ErrorCode::corrupt_bytes, 4);
}

BOOST_AUTO_TEST_CASE(corrupt_scales) {
  struct Case {
    std::string scheme;
    std::uint32_t bits;
  };
  const std::vector<Case> bad{
      {"q8s", 0x7FC00000u},  {"q8s", 0x7F800000u},  {"q8s", 0xFF800000u}, {"q8s", 0xBF800000u},
      {"q8s", 0x80000000u},  {"q8s", 0xFFFFFFFFu},  {"q8s:tensor=f16", 0x7C00u}, {"q8s:tensor=f16", 0x7E00u},
      {"q8s:tensor=f16", 0x8000u}, {"q8s:tensor=f16", 0xBC00u}, {"q8s:tensor=bf16", 0x7F80u},
      {"q8s:tensor=bf16", 0x7FC0u}, {"q8s:tensor=bf16", 0x8000u}, {"q8s:tensor=bf16", 0xBF80u},
      {"q8s:tensor=ue4m3", 0x7Fu},  {"q8s:tensor=ue4m3", 0x80u},  {"q8s:tensor=ue4m3", 0xB8u},
      {"q8s:tensor=ue4m3", 0xFFu},  {"q8s:tensor=ue8m0", 0xFFu},
  };
  for (const Case& c : bad) {
    BOOST_TEST_CONTEXT(c.scheme << " scale " << c.bits) {
      const Scheme s = scheme_of(c.scheme);
      Bytes b = encode_ok(unit_scales(s, {2}, {0, 1}));
      const int sb = info(s.scale_dtype()).bytes;
      for (int i = 0; i < sb; ++i) b[2 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(c.bits >> (8 * i));
      expect_error(decode_status(s, {2}, b), ErrorCode::corrupt_bytes, 0);
      // encode rejects the same pattern in a QuantizedTensor.
      auto q = unit_scales(s, {2}, {0, 1});
      q.scale_bits[0] = c.bits;
      expect_error(reference::encode(q).status(), ErrorCode::corrupt_bytes, 0);
    }
  }
  // Zero and the extremes are storable.
  const std::vector<Case> good{{"q8s", 0u},          {"q8s", 0x7F7FFFFFu},   {"q8s", 1u},
                               {"q8s:tensor=f16", 0x7BFFu}, {"q8s:tensor=bf16", 0x7F7Fu}, {"q8s:tensor=ue4m3", 0x7Eu},
                               {"q8s:tensor=ue4m3", 0u},    {"q8s:tensor=ue8m0", 0u},     {"q8s:tensor=ue8m0", 0xFEu}};
  for (const Case& c : good) {
    const Scheme s = scheme_of(c.scheme);
    auto q = unit_scales(s, {2}, {0, 1});
    q.scale_bits[0] = c.bits;
    const Bytes b = encode_ok(q);
    auto back = reference::decode(s, std::vector<std::uint64_t>{2}, b);
    BOOST_TEST(back.ok(), c.scheme << " " << c.bits);
  }
  // Block scales: the index names the scale.
  const Scheme blk = scheme_of("q8s:block[2]=f16");
  Bytes b = encode_ok(unit_scales(blk, {6}, {0, 1, 2, 3, 4, 5}));
  b[6 + 2 * 2 + 1] = 0xFC;  // scale 2 -> 0xFC00 = -inf
  expect_error(decode_status(blk, {6}, b), ErrorCode::corrupt_bytes, 2);
}

BOOST_AUTO_TEST_CASE(corrupt_global) {
  const Scheme s = scheme_of("q8s:block[2]=ue4m3:tensor=f32");
  for (std::uint32_t g : {0x7FC00000u, 0x7F800000u, 0xFF800000u, 0xBF800000u, 0x80000000u}) {
    Bytes b = encode_ok(unit_scales(s, {2}, {0, 1}));
    for (int i = 0; i < 4; ++i) b[3 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(g >> (8 * i));
    BOOST_TEST_CONTEXT("global " << g) { expect_error(decode_status(s, {2}, b), ErrorCode::corrupt_bytes); }
  }
}

BOOST_AUTO_TEST_CASE(wrong_lengths) {
  for (const char* text : {"q8s", "q4s:packed-u32(0)", "e2m1:packed-native(0):block[4]=ue4m3:tensor=f32"}) {
    const Scheme s = scheme_of(text);
    const Bytes good = encode_ok(unit_scales(s, {7}, std::vector<std::int32_t>(7, 1)));
    for (std::size_t n = 0; n < good.size(); ++n) {
      const Bytes shorter(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
      const Status st = decode_status(s, {7}, shorter);
      expect_error(st, ErrorCode::size_mismatch);
      BOOST_TEST(st.message().find(std::to_string(good.size())) != std::string::npos, st.message());
      BOOST_TEST(st.message().find("got " + std::to_string(n)) != std::string::npos, st.message());
    }
    Bytes longer = good;
    longer.push_back(0);
    expect_error(decode_status(s, {7}, longer), ErrorCode::size_mismatch);
    longer.resize(good.size() * 3);
    expect_error(decode_status(s, {7}, longer), ErrorCode::size_mismatch);
  }
  // An empty span with a non-empty layout, and a scheme the shape rejects.
  expect_error(reference::decode(scheme_of("q8s"), std::vector<std::uint64_t>{4}, {}).status(), ErrorCode::size_mismatch);
  expect_error(reference::decode(scheme_of("q8s:packed-u32(1)"), std::vector<std::uint64_t>{4}, Bytes(8)).status(),
               ErrorCode::packing_dim_out_of_range);
}

BOOST_AUTO_TEST_CASE(invalid_quantized_tensors_are_rejected_by_encode) {
  const Scheme s = scheme_of("q8s:block[2]=f32");
  auto q = unit_scales(s, {4}, {1, 2, 3, 4});
  BOOST_TEST(reference::encode(q).ok());
  auto bad = q;
  bad.codes.pop_back();
  expect_error(reference::encode(bad).status(), ErrorCode::size_mismatch);
  bad = q;
  bad.codes.push_back(0);
  expect_error(reference::encode(bad).status(), ErrorCode::size_mismatch);
  bad = q;
  bad.scale_bits.push_back(kOne);
  expect_error(reference::encode(bad).status(), ErrorCode::size_mismatch);
  bad = q;
  bad.scale_bits.clear();
  expect_error(reference::encode(bad).status(), ErrorCode::size_mismatch);
  bad = q;
  bad.global_bits = kOne;
  expect_error(reference::encode(bad).status(), ErrorCode::size_mismatch);
  auto two = unit_scales(scheme_of("q8s:block[2]=f16:tensor=f32"), {4}, {1, 2, 3, 4});
  BOOST_TEST(reference::encode(two).ok());
  two.global_bits.reset();
  expect_error(reference::encode(two).status(), ErrorCode::size_mismatch);
  bad = q;
  bad.codes[2] = -128;
  expect_error(reference::encode(bad).status(), ErrorCode::corrupt_bytes, 2);
  bad = q;
  bad.codes[3] = 1000;
  expect_error(reference::encode(bad).status(), ErrorCode::corrupt_bytes, 3);
  for (const auto& [text, code] : std::vector<std::pair<std::string, std::int32_t>>{
           {"q4f", 8}, {"q4f", -9}, {"q2f", 2}, {"e4m3", 256}, {"e4m3", -1}, {"e4m3", 0x7F}, {"e5m2", 0x7C},
           {"e2m1", 16}, {"e2m1", -1}, {"q4s:packed-u32(0)", -8}, {"q2s", -2}}) {
    auto t = unit_scales(scheme_of(text), {2}, {0, 0});
    t.codes[1] = code;
    BOOST_TEST_CONTEXT(text << " code " << code) { expect_error(reference::encode(t).status(), ErrorCode::corrupt_bytes, 1); }
  }
  // Scale bits wider than the dtype.
  auto f16 = unit_scales(scheme_of("q8s:tensor=f16"), {2}, {0, 0});
  f16.scale_bits[0] = 0x13C00u;
  expect_error(reference::encode(f16).status(), ErrorCode::corrupt_bytes, 0);
  // A scheme or shape validate() rejects.
  auto lookup = q;
  lookup.scheme.mode = Mode::lookup;
  expect_error(reference::encode(lookup).status(), ErrorCode::lookup_table_missing);
  auto rank = unit_scales(scheme_of("q8s"), {1}, {0});
  rank.shape = std::vector<std::uint64_t>(9, 1);
  expect_error(reference::encode(rank).status(), ErrorCode::rank_too_large);
  auto huge = unit_scales(scheme_of("q8s"), {1}, {0});
  huge.shape = {1ull << 40, 1ull << 40};
  expect_error(reference::encode(huge).status(), ErrorCode::shape_overflow);
}

// ---------------------------------------------------------------------------------------------
// Round trips over the tuple space x shape set.

namespace {

std::int32_t random_code(Value v, std::mt19937_64& rng) {
  const ValueInfo& vi = info(v);
  while (true) {
    std::int32_t c;
    if (vi.is_float) c = static_cast<std::int32_t>(rng() % (1u << vi.bits));
    else c = vi.lo + static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(vi.hi - vi.lo + 1));
    if (!qscheme::code_problem(v, c)) return c;
  }
}

std::uint32_t random_scale(ScaleDtype d, std::mt19937_64& rng) {
  const int width = info(d).bytes * 8;
  while (true) {
    const auto bits = static_cast<std::uint32_t>(rng()) & (width == 32 ? ~0u : (1u << width) - 1);
    if (!qscheme::scale_problem(d, bits)) return bits;
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(round_trips_over_every_supported_scheme_and_shape) {
  std::mt19937_64 rng(20261202);
  std::uint64_t pairs = 0, mutations = 0, mutations_ok = 0, rejected = 0;
  for (const Scheme& s : tuple_space()) {
    if (!validate_scheme(s).ok()) continue;
    for (const auto& shape : shape_set()) {
      auto layout = make_layout(s, shape);
      if (!layout) {
        ++rejected;
        continue;
      }
      const Layout& l = *layout;
      for (int trial = 0; trial < 4; ++trial) {
        QuantizedTensor q;
        q.scheme = s;
        q.profile = trial % 2 ? Profile::burn : Profile::exact;
        q.shape = shape;
        q.codes.resize(l.elements);
        for (auto& c : q.codes) c = random_code(s.value, rng);
        q.scale_bits.resize(l.scales);
        for (auto& b : q.scale_bits) b = random_scale(s.scale_dtype(), rng);
        if (s.two_level()) q.global_bits = random_scale(ScaleDtype::f32, rng);
        auto bytes = reference::encode(q);
        BOOST_REQUIRE_MESSAGE(bytes.ok(), format_scheme(s) << ": " << bytes.status().to_string());
        BOOST_REQUIRE(bytes->size() == l.total_bytes);
        auto back = reference::decode(s, shape, *bytes, q.profile);
        BOOST_REQUIRE_MESSAGE(back.ok(), format_scheme(s) << ": " << back.status().to_string());
        BOOST_REQUIRE_MESSAGE(*back == q, format_scheme(s));
        // encode(decode(b)) == b for every b decode accepts; a rejected b is corrupt-bytes.
        if (!bytes->empty()) {
          Bytes m = *bytes;
          const std::size_t at = rng() % m.size();
          m[at] = static_cast<std::uint8_t>(m[at] ^ (1u << (rng() % 8)));
          ++mutations;
          auto dm = reference::decode(s, shape, m, q.profile);
          if (dm.ok()) {
            ++mutations_ok;
            auto again = reference::encode(*dm);
            BOOST_REQUIRE(again.ok());
            BOOST_REQUIRE_MESSAGE(*again == m, format_scheme(s) << " byte " << at);
          } else {
            BOOST_REQUIRE_MESSAGE(dm.status().code() == ErrorCode::corrupt_bytes, dm.status().to_string());
          }
        }
      }
      ++pairs;
    }
  }
  BOOST_TEST_MESSAGE(pairs << " scheme/shape pairs, " << rejected << " rejected by the shape, " << mutations
                           << " mutations of which " << mutations_ok << " decoded");
  BOOST_TEST(pairs + rejected == 1599u * shape_set().size());
  BOOST_TEST(pairs > 8000u);
  BOOST_TEST(mutations_ok > 0u);
  BOOST_TEST(mutations_ok < mutations);
}

// decode's validity rules agree with what the reference engine accepts as a stored pattern
// (values.hpp): every pattern of every narrow dtype and code width, and a sweep of f32 patterns.
BOOST_AUTO_TEST_CASE(validity_rules_agree_with_the_engine) {
  std::uint64_t checked = 0;
  for (ScaleDtype d : kAllScaleDtypes) {
    const std::uint64_t end = d == ScaleDtype::f32 ? (1ull << 32) : (1ull << (info(d).bytes * 8)) + 0x100;
    const std::uint64_t step = d == ScaleDtype::f32 ? 65521 : 1;
    for (std::uint64_t b = 0; b < end; b += step) {
      const auto bits = static_cast<std::uint32_t>(b);
      const bool ours = !qscheme::scale_problem(d, bits);
      const bool engine = reference::scale_value(d, bits).ok();
      if (ours != engine) BOOST_ERROR(to_string(d) << " pattern " << bits << ": decode " << ours << ", engine " << engine);
      ++checked;
    }
  }
  for (Value v : kAllValues) {
    for (std::int32_t c = -300; c <= 300; ++c) {
      const bool ours = !qscheme::code_problem(v, c);
      const bool engine = reference::code_value(v, c).ok();
      if (ours != engine) BOOST_ERROR(to_string(v) << " code " << c << ": decode " << ours << ", engine " << engine);
      ++checked;
    }
  }
  BOOST_TEST(checked > 200000u);
}
