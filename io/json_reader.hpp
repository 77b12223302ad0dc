// A JSON text read as a stream of events, in pieces of bounded size: the Q.json reader takes a
// file of hundreds of megabytes this way without holding the text, a document tree or a string
// of its hex bytes. Strict RFC 8259: one value with only whitespace around it, no comments,
// no trailing commas, numbers in JSON's grammar, strings of valid UTF-8 with valid escapes (a
// \u escape of a surrogate must be half of a pair). Every violation is invalid-argument with the
// byte offset in the message and as the index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::io::json {

// Where the text comes from: fills the front of `buffer` and returns how many bytes it put
// there, 0 at the end of the text.
using Source = std::function<Result<std::size_t>(std::span<char> buffer)>;

// A source over text in memory (which must outlive the reader), handing out at most `max_piece`
// bytes a call: a smaller piece lets a test feed the reader the way a slow pipe would.
Source text_source(std::string_view text, std::size_t max_piece = SIZE_MAX);

enum class Event : std::uint8_t {
  begin_object,
  end_object,
  begin_array,
  end_array,
  key,     // an object's key, whole (text())
  string,  // a piece of a string value (text()); more pieces follow while string_continues()
  number,  // text() is the number as written, in JSON's grammar
  true_literal,
  false_literal,
  null_literal,
  end,  // the value is complete and only whitespace followed it
};

class Reader {
 public:
  // Longest key and number text read; longer ones are errors (Q.json has neither).
  static constexpr std::size_t kMaxToken = 4096;
  // Longest piece of a string value delivered at once.
  static constexpr std::size_t kMaxPiece = 1 << 16;
  // Deepest nesting of arrays and objects.
  static constexpr std::size_t kMaxDepth = 256;

  static constexpr std::size_t kDefaultChunk = std::size_t{1} << 20;
  explicit Reader(Source source, std::size_t chunk_bytes = kDefaultChunk);

  // The next event. After an error or Event::end, further calls repeat it.
  Result<Event> next();
  // The key, the piece of a string or the number of the last event (decoded: escapes resolved).
  std::string_view text() const { return text_; }
  // After Event::string: whether more of the same string follows.
  bool string_continues() const { return in_string_; }
  // After Event::number: whether it has neither a fraction nor an exponent.
  bool number_is_integer() const { return integer_; }
  // Byte offset in the text where the last event's token starts.
  std::uint64_t offset() const { return token_at_; }

 private:
  enum class Expect : std::uint8_t { value, value_or_end, key_or_end, key, colon, comma_or_end, nothing };

  Status error(const std::string& what) const;
  Status error_at(std::uint64_t at, const std::string& what) const;
  // The next byte without consuming it; -1 at the end of the text (or on a source error, kept
  // in source_error_).
  int peek();
  int get();
  std::uint64_t position() const { return consumed_ + pos_; }
  bool refill();
  Result<Event> value_starting_with(int c);
  Result<Event> read_number();
  // Reads the number when it lies whole inside the buffer (the common case) and is valid;
  // false leaves everything as it was for read_number's character-by-character path.
  bool read_number_in_buffer();
  Result<Event> read_literal(std::string_view word, Event e);
  // Appends the string's characters to text_ until its end or until the piece is full.
  Status read_string_piece(std::size_t limit);
  Status read_escape();
  Status read_utf8(int lead);
  Result<unsigned> read_hex4();
  void after_value();

  Source source_;
  std::vector<char> buffer_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::uint64_t consumed_ = 0;  // bytes of the text before buffer_[0]
  bool eof_ = false;
  Status source_error_;

  std::vector<char> stack_;  // '{' or '[' per open container
  Expect expect_ = Expect::value;
  bool in_string_ = false;  // a string value was cut into pieces and continues
  bool integer_ = false;
  bool done_ = false;
  Status failed_;
  std::string text_;
  std::uint64_t token_at_ = 0;
};

}  // namespace qscheme::io::json
