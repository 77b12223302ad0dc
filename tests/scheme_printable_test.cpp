// printable(): how user strings appear in messages. Control bytes (NUL included, through a
// std::string that holds one), DEL, invalid UTF-8 and the code points that steer a terminal
// come out as \xNN; printable ASCII and other valid UTF-8 as they are; quotes and backslashes
// escaped unless the text is a whole message. parse_scheme's messages, which the C API passes
// on, use it.
#include <boost/test/unit_test.hpp>
#include <string>

#include "scheme/printable.hpp"
#include "scheme/text.hpp"

using namespace qscheme;
using namespace std::string_literals;

BOOST_AUTO_TEST_CASE(ascii) {
  BOOST_TEST(printable("q8s:block[32]=f16 ~!") == "q8s:block[32]=f16 ~!");
  BOOST_TEST(printable("\x1b[31mred") == "\\x1B[31mred");
  BOOST_TEST(printable("a\0b"s) == "a\\x00b");
  BOOST_TEST(printable("\t\n\r\x7f") == "\\x09\\x0A\\x0D\\x7F");
  BOOST_TEST(printable(R"(it's "x" \ y)") == R"(it\'s \"x\" \\ y)");
  BOOST_TEST(printable(R"(it's "x" \ y)", Quotes::keep) == R"(it's "x" \ y)");
  BOOST_TEST(printable("line\nbreak", Quotes::keep) == "line\\x0Abreak");
  BOOST_TEST(quote("a'b") == R"('a\'b')");
  BOOST_TEST(printable("") == "");
}

BOOST_AUTO_TEST_CASE(utf8) {
  // Valid: 2, 3 and 4 bytes, the first and last of each length.
  for (const std::string s : {"\xc3\xa9", "\xc2\xa0", "\xdf\xbf", "\xe0\xa0\x80", "\xe2\x82\xac", "\xef\xbf\xbf",
                              "\xf0\x90\x80\x80", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"}) {
    BOOST_TEST(printable("<" + s + ">") == "<" + s + ">");
  }
  // Invalid: stray continuation, lead bytes never used, overlong forms, surrogates, past
  // U+10FFFF, truncated (also at the end of the text).
  BOOST_TEST(printable("\x80") == "\\x80");
  BOOST_TEST(printable("\xff\xfe") == "\\xFF\\xFE");
  BOOST_TEST(printable("\xc0\x80") == "\\xC0\\x80");
  BOOST_TEST(printable("\xc1\xbf") == "\\xC1\\xBF");
  BOOST_TEST(printable("\xe0\x9f\xbf") == "\\xE0\\x9F\\xBF");
  BOOST_TEST(printable("\xf0\x8f\xbf\xbf") == "\\xF0\\x8F\\xBF\\xBF");
  BOOST_TEST(printable("\xed\xa0\x80") == "\\xED\\xA0\\x80");
  BOOST_TEST(printable("\xf4\x90\x80\x80") == "\\xF4\\x90\\x80\\x80");
  BOOST_TEST(printable("\xf5\x80\x80\x80") == "\\xF5\\x80\\x80\\x80");
  BOOST_TEST(printable("\xe2\x82z") == "\\xE2\\x82z");
  BOOST_TEST(printable("ok\xe2\x82") == "ok\\xE2\\x82");
  BOOST_TEST(printable("\xc3") == "\\xC3");
  // Valid but steering: C1 controls (CSI U+009B), bidirectional overrides and isolates, the
  // line and paragraph separators.
  BOOST_TEST(printable("\xc2\x9b" "31m") == "\\xC2\\x9B31m");
  BOOST_TEST(printable("\xc2\x85") == "\\xC2\\x85");
  BOOST_TEST(printable("\xe2\x80\xae") == "\\xE2\\x80\\xAE");
  BOOST_TEST(printable("\xe2\x81\xa6") == "\\xE2\\x81\\xA6");
  BOOST_TEST(printable("\xe2\x80\xa8") == "\\xE2\\x80\\xA8");
  BOOST_TEST(printable("\xd8\x9c") == "\\xD8\\x9C");
}

// What every byte value becomes on its own: nothing raw but printable ASCII.
BOOST_AUTO_TEST_CASE(every_single_byte) {
  for (int b = 0; b < 256; ++b) {
    const std::string out = printable(std::string(1, static_cast<char>(b)));
    for (char c : out) BOOST_TEST((c >= 0x20 && c < 0x7f), "byte " << b << " gave " << out);
  }
}

BOOST_AUTO_TEST_CASE(scheme_parse_errors_quote_the_text_escaped) {
  const auto esc = parse_scheme("\x1b[31mred");
  BOOST_REQUIRE(!esc.ok());
  BOOST_TEST(esc.status().message().find("found '\\x1B[31mred'") != std::string::npos, esc.status().message());
  const auto nul = parse_scheme("q8s:\0x"s);
  BOOST_REQUIRE(!nul.ok());
  BOOST_TEST(nul.status().message().find("found '\\x00x'") != std::string::npos, nul.status().message());
  const auto bad = parse_scheme("q8s:block[32]=\xff");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.status().message().find("found '\\xFF'") != std::string::npos, bad.status().message());
  for (const auto* r : {&esc, &nul, &bad}) {
    const std::string message = r->status().message();
    for (char c : message) BOOST_TEST((c >= 0x20 && c < 0x7f), message);
  }
}
