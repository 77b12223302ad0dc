// io/json_reader.hpp: the events of valid JSON, in pieces of any size, and invalid-argument with
// the right offset for every violation of RFC 8259 the Q.json reader relies on being caught.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "io/json_reader.hpp"

using namespace qscheme;
using qscheme::io::json::Event;
using qscheme::io::json::Reader;

namespace {

// The events of text as "kind:text" strings (string pieces joined), or the error.
Result<std::vector<std::string>> events(std::string_view text, std::size_t step = 1 << 20, std::size_t chunk = 1 << 20) {
  Reader r(io::json::text_source(text, step), chunk);
  std::vector<std::string> out;
  std::string str;
  while (true) {
    auto e = r.next();
    if (!e) return e.status();
    switch (*e) {
      case Event::begin_object: out.push_back("{"); break;
      case Event::end_object: out.push_back("}"); break;
      case Event::begin_array: out.push_back("["); break;
      case Event::end_array: out.push_back("]"); break;
      case Event::key: out.push_back("key:" + std::string(r.text())); break;
      case Event::string:
        str += r.text();
        if (!r.string_continues()) {
          out.push_back("str:" + str);
          str.clear();
        }
        break;
      case Event::number: out.push_back("num:" + std::string(r.text())); break;
      case Event::true_literal: out.push_back("true"); break;
      case Event::false_literal: out.push_back("false"); break;
      case Event::null_literal: out.push_back("null"); break;
      case Event::end: return out;
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(valid_text_gives_its_events_in_pieces_of_any_size) {
  const std::string text =
      " {\"a\" : [1, -0, 2.5e-3, -12E+2, 0.0, true, false, null, {}, [], [[]]],\n\t\"b\\u00e9\\\"\" :"
      " \"x\\n\\/\\\\\\b\\f\\r\\t\\u20AC\\ud83d\\ude00\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\", \"\": {\"c\": \"\"}}\r\n";
  const std::vector<std::string> want{"{",        "key:a",    "[",     "num:1", "num:-0",   "num:2.5e-3", "num:-12E+2",
                                      "num:0.0",  "true",     "false", "null",  "{",        "}",          "[",
                                      "]",        "[",        "[",     "]",     "]",        "]",
                                      "key:b\xC3\xA9\"",
                                      "str:x\n/\\\b\f\r\t\xE2\x82\xAC\xF0\x9F\x98\x80\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80",
                                      "key:",     "{",        "key:c", "str:",  "}",        "}"};
  for (std::size_t step : {std::size_t{1}, std::size_t{2}, std::size_t{5}, text.size()}) {
    for (std::size_t chunk : {std::size_t{16}, std::size_t{1} << 20}) {
      auto got = events(text, step, chunk);
      BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
      BOOST_TEST(*got == want, boost::test_tools::per_element());
    }
  }
  for (const std::string scalar : {"0", "-1.5", "\"s\"", "true", "null", " [ ] "}) {
    BOOST_TEST(events(scalar).ok(), scalar);
  }
}

BOOST_AUTO_TEST_CASE(long_strings_arrive_in_bounded_pieces) {
  const std::string body(3 * Reader::kMaxPiece + 17, 'a');
  const std::string text = "[\"" + body + "\", 1]";  // outlives the reader, which holds a view of it
  Reader r(io::json::text_source(text, 1000), 4096);
  BOOST_TEST((*r.next() == Event::begin_array));
  std::string got;
  int pieces = 0;
  do {
    BOOST_REQUIRE((*r.next() == Event::string));
    BOOST_TEST(r.text().size() <= Reader::kMaxPiece);
    got += r.text();
    ++pieces;
  } while (r.string_continues());
  BOOST_TEST(got == body);
  BOOST_TEST(pieces >= 4);
  BOOST_TEST((*r.next() == Event::number));
  BOOST_TEST((*r.next() == Event::end_array));
  BOOST_TEST((*r.next() == Event::end));
  BOOST_TEST((*r.next() == Event::end));
}

BOOST_AUTO_TEST_CASE(every_violation_is_invalid_argument_at_its_offset) {
  struct Case {
    std::string text;
    std::size_t offset;
  };
  const std::vector<Case> cases{
      {"", 0},
      {"   ", 3},
      {"[1,]", 3},
      {"[,1]", 1},
      {"{\"a\":1,}", 7},
      {"{\"a\" 1}", 5},
      {"{1:2}", 1},
      {"{'a':1}", 1},
      {"[1 2]", 3},
      {"[01]", 2},
      {"[-]", 2},
      {"[1.]", 3},
      {"[.5]", 1},
      {"[1e]", 3},
      {"[+1]", 1},
      {"[NaN]", 1},
      {"[Infinity]", 1},
      {"[tru]", 1},
      {"[nul]", 1},
      {"[1] [2]", 4},
      {"[1] x", 4},
      {"[1", 2},
      {"{\"a\":1", 6},
      {"[\"abc", 5},
      {"[\"a\\x\"]", 4},
      {"[\"a\\u12G4\"]", 8},
      {"[\"a\\udc00\"]", 9},
      {"[\"a\\ud800\"]", 10},
      {"[\"a\\ud800\\u0041\"]", 15},
      {"[\"a\x01\"]", 3},
      {"[\"a\x80\"]", 3},
      {"[\"a\xC0\xAF\"]", 3},
      {"[\"a\xED\xA0\x80\"]", 4},
      {"[\"a\xF4\x90\x80\x80\"]", 4},
      {"[\"a\xE2\x82\"]", 5},
      {"// c\n[]", 0},
      {std::string("[1]\0", 4), 3},
  };
  for (const Case& c : cases) {
    for (std::size_t step : {std::size_t{1}, std::size_t{1} << 20}) {
      BOOST_TEST_CONTEXT(c.text << " in pieces of " << step) {
        auto got = events(c.text, step);
        BOOST_REQUIRE(!got.ok());
        BOOST_TEST((got.status().code() == ErrorCode::invalid_argument));
        BOOST_TEST(got.status().index() == c.offset, got.status().message());
        BOOST_TEST(got.status().message().starts_with("not valid JSON at byte " + std::to_string(c.offset) + ": "),
                   got.status().message());
      }
    }
  }
  // Nesting deeper than kMaxDepth, and a key or number longer than kMaxToken.
  BOOST_TEST(!events(std::string(Reader::kMaxDepth + 1, '[') + std::string(Reader::kMaxDepth + 1, ']')).ok());
  BOOST_TEST(events(std::string(Reader::kMaxDepth, '[') + std::string(Reader::kMaxDepth, ']')).ok());
  BOOST_TEST(!events("{\"" + std::string(Reader::kMaxToken + 1, 'k') + "\": 1}").ok());
  BOOST_TEST(!events("[1" + std::string(Reader::kMaxToken, '0') + "]").ok());
}

BOOST_AUTO_TEST_CASE(a_source_error_is_reported_as_itself) {
  int calls = 0;
  Reader r([&](std::span<char> b) -> Result<std::size_t> {
    if (calls++ == 0) {
      b[0] = '[';
      return std::size_t{1};
    }
    return Status(ErrorCode::io_error, "cannot read 'x': read error");
  });
  BOOST_TEST((*r.next() == Event::begin_array));
  const auto e = r.next();
  BOOST_REQUIRE(!e.ok());
  BOOST_TEST((e.status().code() == ErrorCode::io_error));
}
