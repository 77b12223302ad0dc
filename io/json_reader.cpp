#include "io/json_reader.hpp"

#include <algorithm>
#include <cstring>

namespace qscheme::io::json {

Source text_source(std::string_view text, std::size_t max_piece) {
  return [text, max_piece, at = std::size_t{0}](std::span<char> buffer) mutable -> Result<std::size_t> {
    const std::size_t n = std::min({max_piece, buffer.size(), text.size() - at});
    if (n) std::memcpy(buffer.data(), text.data() + at, n);
    at += n;
    return n;
  };
}

Reader::Reader(Source source, std::size_t chunk_bytes)
    : source_(std::move(source)), buffer_(std::max<std::size_t>(chunk_bytes, 16)) {}

Status Reader::error_at(std::uint64_t at, const std::string& what) const {
  if (!source_error_.ok()) return source_error_;  // the text could not be read: say that, not "invalid"
  return {ErrorCode::invalid_argument, "not valid JSON at byte " + std::to_string(at) + ": " + what,
          static_cast<std::size_t>(at)};
}

Status Reader::error(const std::string& what) const { return error_at(position(), what); }

bool Reader::refill() {
  if (eof_) return false;
  consumed_ += end_;
  pos_ = end_ = 0;
  auto n = source_(buffer_);
  if (!n) {
    source_error_ = n.status();
    eof_ = true;
    return false;
  }
  if (*n == 0 || *n > buffer_.size()) {
    eof_ = true;
    return false;
  }
  end_ = *n;
  return true;
}

int Reader::peek() {
  if (pos_ == end_ && !refill()) return -1;
  return static_cast<unsigned char>(buffer_[pos_]);
}

int Reader::get() {
  const int c = peek();
  if (c >= 0) ++pos_;
  return c;
}

void Reader::after_value() { expect_ = stack_.empty() ? Expect::nothing : Expect::comma_or_end; }

Result<Event> Reader::next() {
  if (!failed_.ok()) return failed_;
  if (done_) return Event::end;
  auto fail = [this](Status st) -> Result<Event> {
    failed_ = std::move(st);
    return failed_;
  };
  text_.clear();
  if (in_string_) {
    const Status st = read_string_piece(kMaxPiece);
    if (!st.ok()) return fail(st);
    if (!in_string_) after_value();
    return Event::string;
  }
  while (true) {
    int c = peek();
    while (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
      c = peek();
    }
    token_at_ = position();
    switch (expect_) {
      case Expect::nothing:
        if (c >= 0) return fail(error("text after the JSON value"));
        if (!source_error_.ok()) return fail(source_error_);
        done_ = true;
        return Event::end;
      case Expect::value_or_end:
        if (c == ']') {
          ++pos_;
          stack_.pop_back();
          after_value();
          return Event::end_array;
        }
        [[fallthrough]];
      case Expect::value: {
        if (c < 0) return fail(error(position() == 0 ? "the text is empty" : "the text ends where a value should start"));
        auto e = value_starting_with(c);
        if (!e) return fail(e.status());
        return e;
      }
      case Expect::key_or_end:
        if (c == '}') {
          ++pos_;
          stack_.pop_back();
          after_value();
          return Event::end_object;
        }
        [[fallthrough]];
      case Expect::key: {
        if (c != '"') return fail(error(c < 0 ? "the text ends inside an object" : "expected a key in double quotes"));
        ++pos_;
        const Status st = read_string_piece(kMaxToken + 1);
        if (!st.ok()) return fail(st);
        if (in_string_) return fail(error_at(token_at_, "a key longer than " + std::to_string(kMaxToken) + " bytes"));
        expect_ = Expect::colon;
        return Event::key;
      }
      case Expect::colon:
        if (c != ':') return fail(error("expected ':' after a key"));
        ++pos_;
        expect_ = Expect::value;
        continue;
      case Expect::comma_or_end: {
        const char open = stack_.back();
        const char close = open == '{' ? '}' : ']';
        if (c == ',') {
          ++pos_;
          expect_ = open == '{' ? Expect::key : Expect::value;
          continue;
        }
        if (c == close) {
          ++pos_;
          stack_.pop_back();
          after_value();
          return open == '{' ? Event::end_object : Event::end_array;
        }
        if (c < 0) return fail(error(open == '{' ? "the text ends inside an object" : "the text ends inside an array"));
        return fail(error(std::string("expected ',' or '") + close + "'"));
      }
    }
  }
}

Result<Event> Reader::value_starting_with(int c) {
  switch (c) {
    case '{':
    case '[':
      if (stack_.size() >= kMaxDepth) return error("arrays and objects nested deeper than " + std::to_string(kMaxDepth));
      ++pos_;
      stack_.push_back(static_cast<char>(c));
      expect_ = c == '{' ? Expect::key_or_end : Expect::value_or_end;
      return c == '{' ? Event::begin_object : Event::begin_array;
    case '"': {
      ++pos_;
      QSCHEME_RETURN_IF_ERROR(read_string_piece(kMaxPiece));
      if (!in_string_) after_value();
      return Event::string;
    }
    case 't': return read_literal("true", Event::true_literal);
    case 'f': return read_literal("false", Event::false_literal);
    case 'n': return read_literal("null", Event::null_literal);
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return read_number();
      return error("unexpected character '" + std::string(1, static_cast<char>(c)) + "' where a value should start");
  }
}

Result<Event> Reader::read_literal(std::string_view word, Event e) {
  for (char w : word) {
    if (get() != w) return error_at(token_at_, "expected '" + std::string(word) + "'");
  }
  after_value();
  return e;
}

bool Reader::read_number_in_buffer() {
  // JSON's number grammar over buffer_[pos_, end_); the characters after it must be in the
  // buffer too, else the token may go on in the next chunk.
  const char* const begin = buffer_.data() + pos_;
  const char* const end = buffer_.data() + end_;
  const char* p = begin;
  auto is_digit = [&](const char* q) { return q < end && *q >= '0' && *q <= '9'; };
  auto digits = [&]() {
    const char* start = p;
    while (is_digit(p)) ++p;
    return p > start;
  };
  if (p < end && *p == '-') ++p;
  if (p < end && *p == '0') {
    ++p;
  } else if (!digits()) {
    return false;  // the slow path says what is wrong, or finds the digits in the next chunk
  }
  bool integer = true;
  if (p < end && *p == '.') {
    ++p;
    integer = false;
    if (!digits()) return false;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    integer = false;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (!digits()) return false;
  }
  if (p == end || static_cast<std::size_t>(p - begin) > kMaxToken) return false;
  text_.assign(begin, p);
  integer_ = integer;
  pos_ += static_cast<std::size_t>(p - begin);
  after_value();
  return true;
}

Result<Event> Reader::read_number() {
  if (read_number_in_buffer()) return Event::number;
  integer_ = true;
  auto digit = [this] {
    const int c = peek();
    return c >= '0' && c <= '9';
  };
  auto take = [this]() -> Status {
    if (text_.size() >= kMaxToken) return error_at(token_at_, "a number longer than " + std::to_string(kMaxToken) + " characters");
    text_.push_back(static_cast<char>(get()));
    return {};
  };
  auto digits = [&]() -> Status {
    if (!digit()) return error("expected a digit");
    while (digit()) QSCHEME_RETURN_IF_ERROR(take());
    return {};
  };
  if (peek() == '-') QSCHEME_RETURN_IF_ERROR(take());
  if (peek() == '0') {
    QSCHEME_RETURN_IF_ERROR(take());  // no leading zeros: "01" stops after the 0 and fails as text after it
  } else {
    QSCHEME_RETURN_IF_ERROR(digits());
  }
  if (peek() == '.') {
    integer_ = false;
    QSCHEME_RETURN_IF_ERROR(take());
    QSCHEME_RETURN_IF_ERROR(digits());
  }
  if (peek() == 'e' || peek() == 'E') {
    integer_ = false;
    QSCHEME_RETURN_IF_ERROR(take());
    if (peek() == '+' || peek() == '-') QSCHEME_RETURN_IF_ERROR(take());
    QSCHEME_RETURN_IF_ERROR(digits());
  }
  after_value();
  return Event::number;
}

Status Reader::read_string_piece(std::size_t limit) {
  in_string_ = false;
  while (true) {
    if (pos_ == end_ && !refill()) return error("the text ends inside a string");
    // The common case in one tight loop: printable ASCII other than '"' and '\'.
    const std::size_t start = pos_;
    const std::size_t stop = std::min(end_, pos_ + (limit > text_.size() ? limit - text_.size() : 0));
    while (pos_ < stop) {
      const auto u = static_cast<unsigned char>(buffer_[pos_]);
      if (u < 0x20 || u == '"' || u == '\\' || u >= 0x80) break;
      ++pos_;
    }
    text_.append(buffer_.data() + start, pos_ - start);
    if (text_.size() >= limit) {
      in_string_ = true;
      return {};
    }
    if (pos_ == end_) continue;
    const auto u = static_cast<unsigned char>(buffer_[pos_]);
    ++pos_;
    if (u == '"') return {};
    if (u == '\\') {
      QSCHEME_RETURN_IF_ERROR(read_escape());
    } else if (u < 0x20) {
      return error_at(position() - 1, "a control character inside a string (write it as an escape)");
    } else {
      QSCHEME_RETURN_IF_ERROR(read_utf8(u));
    }
  }
}

Result<unsigned> Reader::read_hex4() {
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    const int c = get();
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0) return error("a \\u escape needs four hex digits");
    v = v << 4 | static_cast<unsigned>(d);
  }
  return v;
}

Status Reader::read_escape() {
  const int c = get();
  switch (c) {
    case '"': text_.push_back('"'); return {};
    case '\\': text_.push_back('\\'); return {};
    case '/': text_.push_back('/'); return {};
    case 'b': text_.push_back('\b'); return {};
    case 'f': text_.push_back('\f'); return {};
    case 'n': text_.push_back('\n'); return {};
    case 'r': text_.push_back('\r'); return {};
    case 't': text_.push_back('\t'); return {};
    case 'u': break;
    case -1: return error("the text ends inside a string");
    default: return error_at(position() - 1, "an escape other than \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
  }
  auto hi = read_hex4();
  if (!hi) return hi.status();
  unsigned cp = *hi;
  if (cp >= 0xDC00 && cp <= 0xDFFF) return error("a \\u escape of a low surrogate without its high half");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (get() != '\\' || get() != 'u') return error("a \\u escape of a high surrogate without its low half");
    auto lo = read_hex4();
    if (!lo) return lo.status();
    if (*lo < 0xDC00 || *lo > 0xDFFF) return error("a \\u escape of a high surrogate without its low half");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (*lo - 0xDC00);
  }
  // UTF-8 of the code point.
  if (cp < 0x80) {
    text_.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    text_.push_back(static_cast<char>(0xC0 | cp >> 6));
    text_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    text_.push_back(static_cast<char>(0xE0 | cp >> 12));
    text_.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    text_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    text_.push_back(static_cast<char>(0xF0 | cp >> 18));
    text_.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
    text_.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    text_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return {};
}

Status Reader::read_utf8(int lead) {
  // The well-formed sequences of Unicode's table 3-7: no overlong forms, no surrogates, nothing
  // past U+10FFFF.
  int more = 0;
  int lo = 0x80;
  int hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    more = 1;
  } else if (lead == 0xE0) {
    more = 2;
    lo = 0xA0;
  } else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) {
    more = 2;
  } else if (lead == 0xED) {
    more = 2;
    hi = 0x9F;
  } else if (lead == 0xF0) {
    more = 3;
    lo = 0x90;
  } else if (lead >= 0xF1 && lead <= 0xF3) {
    more = 3;
  } else if (lead == 0xF4) {
    more = 3;
    hi = 0x8F;
  } else {
    return error_at(position() - 1, "a byte that does not start a UTF-8 character");
  }
  text_.push_back(static_cast<char>(lead));
  for (int i = 0; i < more; ++i) {
    const int c = get();
    if (c < lo || c > hi) return error_at(position() - (c < 0 ? 0 : 1), "a malformed UTF-8 character");
    text_.push_back(static_cast<char>(c));
    lo = 0x80;
    hi = 0xBF;
  }
  return {};
}

}  // namespace qscheme::io::json
