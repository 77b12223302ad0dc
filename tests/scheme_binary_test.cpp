// The versioned binary form of a scheme: exact inverse of encode, and a typed error naming the
// byte for every field out of range.
#include <boost/test/unit_test.hpp>

#include "scheme/ostream.hpp"
#include "scheme/binary.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"

using namespace qscheme;

BOOST_AUTO_TEST_CASE(encode_decode_round_trips_over_the_whole_tuple_space) {
  for (const Scheme& s : tuple_space()) {
    const auto bytes = encode_scheme(s);
    BOOST_TEST(bytes.size() <= kBinarySchemeMaxBytes);
    auto back = decode_scheme(bytes);
    BOOST_TEST_REQUIRE(back.ok(), format_scheme(s));
    BOOST_TEST((*back == s), format_scheme(s));
  }
}

BOOST_AUTO_TEST_CASE(layout_of_the_bytes_is_as_documented) {
  const auto bytes = encode_scheme(parse_scheme("nvfp4").value());
  const std::vector<std::uint8_t> expected{1, 8, 1, 0, 0, 1, 5, 1, 16};
  BOOST_TEST(bytes == expected, boost::test_tools::per_element());
  const auto plain = encode_scheme(parse_scheme("q8s").value());
  const std::vector<std::uint8_t> expected_plain{1, 1, 0, 0, 0, 0, 0, 0};
  BOOST_TEST(plain == expected_plain, boost::test_tools::per_element());
}

// Burn's kinds keep bytes 0..8; the extension kinds take 9..13, and round-trip over their space.
BOOST_AUTO_TEST_CASE(extension_kinds_take_the_bytes_after_burns) {
  const char* names[] = {"u8", "u4", "u2", "i16", "u16"};
  for (std::uint8_t i = 0; i < 5; ++i) {
    const auto bytes = encode_scheme(parse_scheme(names[i]).value());
    const std::vector<std::uint8_t> expected{1, static_cast<std::uint8_t>(9 + i), 0, 0, 0, 0, 0, 0};
    BOOST_TEST(bytes == expected, boost::test_tools::per_element());
  }
  BOOST_TEST(encode_scheme(parse_scheme("e2m1").value())[1] == 8u);
  for (const Scheme& s : extension_space()) {
    auto back = decode_scheme(encode_scheme(s));
    BOOST_TEST_REQUIRE(back.ok(), format_scheme(s));
    BOOST_TEST((*back == s), format_scheme(s));
  }
}

// Affine mode (the extension) is mode byte 2; 3 and up stay malformed.
BOOST_AUTO_TEST_CASE(affine_mode_is_byte_2) {
  const auto bytes = encode_scheme(parse_scheme("u8:affine:block[32]=f16").value());
  const std::vector<std::uint8_t> expected{1, 9, 0, 0, 2, 0, 2, 1, 32};
  BOOST_TEST(bytes == expected, boost::test_tools::per_element());
  auto back = decode_scheme(bytes);
  BOOST_TEST_REQUIRE(back.ok());
  BOOST_TEST((back->mode == Mode::affine));
}

// A per-axis level (the extension): byte 7 is 0x80 + the axis, no extents follow; 0x88 and up
// (an axis past kMaxRank) are malformed.
BOOST_AUTO_TEST_CASE(axis_level_is_byte_7_from_0x80) {
  const auto bytes = encode_scheme(parse_scheme("q8f:axis(1)=ue8m0").value());
  const std::vector<std::uint8_t> expected{1, 0, 0, 0, 0, 0, 4, 0x81};
  BOOST_TEST(bytes == expected, boost::test_tools::per_element());
  auto back = decode_scheme(bytes);
  BOOST_TEST_REQUIRE(back.ok());
  BOOST_TEST((*back == parse_scheme("q8f:axis(1)=ue8m0").value()));
  auto bad = decode_scheme(std::vector<std::uint8_t>{1, 0, 0, 0, 0, 0, 4, 0x88});
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST((bad.status().code() == ErrorCode::malformed_binary_scheme));
  BOOST_TEST(bad.status().index() == 7u);
}

BOOST_AUTO_TEST_CASE(prefix_decoding_reports_bytes_consumed) {
  auto bytes = encode_scheme(parse_scheme("q8s:block[2,3,5]=f16").value());
  const std::size_t n = bytes.size();
  bytes.push_back(0xAB);
  auto r = decode_scheme_prefix(bytes);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->second == n);
  auto whole = decode_scheme(bytes);
  BOOST_TEST_REQUIRE(!whole.ok());
  BOOST_TEST((whole.status().code() == ErrorCode::malformed_binary_scheme));
  BOOST_TEST(whole.status().index() == n);
}

namespace {

void expect_bad(std::vector<std::uint8_t> bytes, ErrorCode code, std::size_t index) {
  auto r = decode_scheme(bytes);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST((r.status().code() == code));
  BOOST_TEST(r.status().index() == index, r.status().message());
  BOOST_TEST(!r.status().message().empty());
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_field_out_of_range_is_a_typed_error) {
  expect_bad({}, ErrorCode::malformed_binary_scheme, 0);
  expect_bad({2, 1, 0, 0, 0, 0, 0, 0}, ErrorCode::unsupported_binary_version, 0);
  expect_bad({0, 1, 0, 0, 0, 0, 0, 0}, ErrorCode::unsupported_binary_version, 0);
  expect_bad({1, 1, 0, 0, 0, 0, 0}, ErrorCode::malformed_binary_scheme, 7);
  expect_bad({1, 14, 0, 0, 0, 0, 0, 0}, ErrorCode::malformed_binary_scheme, 1);
  expect_bad({1, 1, 3, 0, 0, 0, 0, 0}, ErrorCode::malformed_binary_scheme, 2);
  expect_bad({1, 1, 0, 1, 0, 0, 0, 0}, ErrorCode::malformed_binary_scheme, 3);  // native with a dim
  expect_bad({1, 1, 2, 8, 0, 0, 0, 0}, ErrorCode::malformed_binary_scheme, 3);
  expect_bad({1, 1, 0, 0, 3, 0, 0, 0}, ErrorCode::malformed_binary_scheme, 4);
  expect_bad({1, 1, 0, 0, 0, 6, 0, 0}, ErrorCode::malformed_binary_scheme, 5);
  expect_bad({1, 1, 0, 0, 0, 0, 6, 1, 4}, ErrorCode::malformed_binary_scheme, 6);
  expect_bad({1, 1, 0, 0, 0, 0, 0, 1}, ErrorCode::malformed_binary_scheme, 7);  // rank without block
  expect_bad({1, 1, 0, 0, 0, 0, 1, 0}, ErrorCode::malformed_binary_scheme, 7);  // block without rank
  expect_bad({1, 1, 0, 0, 0, 0, 1, 6, 1, 2, 3, 4, 5, 6}, ErrorCode::malformed_binary_scheme, 7);
  expect_bad({1, 1, 0, 0, 0, 0, 1, 2, 4}, ErrorCode::malformed_binary_scheme, 9);  // truncated extents
  expect_bad({1, 1, 0, 0, 0, 0, 1, 2, 1, 4}, ErrorCode::malformed_binary_scheme, 8);  // leading 1
}

BOOST_AUTO_TEST_CASE(every_valid_header_byte_combination_decodes_or_fails_cleanly) {
  // Walk all values of each header byte with the others fixed at a valid baseline: each decode
  // either succeeds and re-encodes to the same bytes, or is a typed error.
  const std::vector<std::uint8_t> base{1, 1, 2, 0, 0, 1, 2, 1, 32};
  for (std::size_t at = 0; at < base.size(); ++at) {
    for (int v = 0; v < 256; ++v) {
      auto bytes = base;
      bytes[at] = static_cast<std::uint8_t>(v);
      auto r = decode_scheme_prefix(bytes);
      if (r.ok()) {
        const auto again = encode_scheme(r->first);
        BOOST_TEST(std::equal(again.begin(), again.end(), bytes.begin()));
      } else {
        BOOST_TEST((r.status().code() == ErrorCode::malformed_binary_scheme ||
                    r.status().code() == ErrorCode::unsupported_binary_version));
      }
    }
  }
}
