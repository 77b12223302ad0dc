// User-supplied text (a scheme string, a file name, an option value) as it appears in an error
// message: whatever it holds, the message stays one line of text that a terminal shows as it
// is. A scheme string with ESC in it must not recolour the terminal of whoever reads the error,
// and a file name with a newline must not forge a second line.
#pragma once

#include <string>
#include <string_view>

namespace qscheme {

enum class Quotes : unsigned char {
  escape,  // ' " and \ become \' \" \\: the text sits between quotes of the message
  keep,    // a whole message, whose quotes and backslashes are its own
};

// Printable ASCII as it is; control bytes (NUL, ESC, newline, ...), DEL, and bytes that are not
// valid UTF-8 (stray continuation bytes, overlong forms, surrogates, truncated sequences) as
// \xNN; valid UTF-8 as it is, except the code points that steer a terminal or the reading
// order (C1 controls U+0080..U+009F, the bidirectional marks, embeddings, overrides and
// isolates, U+2028 and U+2029), which are \xNN byte by byte.
std::string printable(std::string_view text, Quotes quotes = Quotes::escape);

// printable(text) between single quotes: how a message names a user's string.
std::string quote(std::string_view text);

}  // namespace qscheme
