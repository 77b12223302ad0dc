#include "tools/npy.hpp"

#include <bit>
#include <charconv>
#include <optional>
#include <string_view>

#include "scheme/checked.hpp"
#include "scheme/scheme.hpp"
#include "tools/file_io.hpp"

namespace qscheme::cli::npy {
namespace {

constexpr std::string_view kMagic{"\x93NUMPY", 6};

Status bad(std::string message) { return {ErrorCode::unsupported_npy, std::move(message)}; }

std::uint32_t le32(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
         static_cast<std::uint32_t>(b[at + 2]) << 16 | static_cast<std::uint32_t>(b[at + 3]) << 24;
}

int item_size(Dtype d) {
  switch (d) {
    case Dtype::f32:
    case Dtype::i32:
    case Dtype::u32: return 4;
    case Dtype::i8:
    case Dtype::u8: return 1;
  }
  return 1;
}

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// This is a small recursive-descent reader for exactly that subset: string keys, and values that
// are strings, True/False or tuples of non-negative integers.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view text) : t_(text) {}

  struct Fields {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<std::uint64_t>> shape;
  };

  Result<Fields> read() {
    Fields f;
    skip_ws();
    if (!eat('{')) return error("expected '{' at the start of the header dict");
    while (true) {
      skip_ws();
      if (eat('}')) break;
      auto key = string_literal();
      if (!key) return key.status();
      skip_ws();
      if (!eat(':')) return error("expected ':' after key '" + *key + "'");
      skip_ws();
      if (*key == "descr") {
        if (f.descr) return error("duplicate key 'descr'");
        auto v = string_literal();
        if (!v) return v.status();
        f.descr = *v;
      } else if (*key == "fortran_order") {
        if (f.fortran_order) return error("duplicate key 'fortran_order'");
        if (word("True")) f.fortran_order = true;
        else if (word("False")) f.fortran_order = false;
        else return error("'fortran_order' must be True or False");
      } else if (*key == "shape") {
        if (f.shape) return error("duplicate key 'shape'");
        auto v = tuple();
        if (!v) return v.status();
        f.shape = std::move(*v);
      } else {
        return error("unexpected key '" + *key + "' (a .npy header holds descr, fortran_order and shape)");
      }
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat('}')) break;
      return error("expected ',' or '}' in the header dict");
    }
    skip_ws();
    if (pos_ != t_.size()) return error("unexpected text after the header dict");
    if (!f.descr || !f.fortran_order || !f.shape) {
      return error("the header dict must hold 'descr', 'fortran_order' and 'shape'");
    }
    return f;
  }

 private:
  Status error(const std::string& what) const {
    return {ErrorCode::unsupported_npy, "malformed .npy header at offset " + std::to_string(pos_) + ": " + what,
            pos_};
  }
  void skip_ws() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r')) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < t_.size() && t_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    if (t_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  Result<std::string> string_literal() {
    if (pos_ >= t_.size() || (t_[pos_] != '\'' && t_[pos_] != '"')) return error("expected a quoted string");
    const char quote = t_[pos_++];
    const std::size_t start = pos_;
    while (pos_ < t_.size() && t_[pos_] != quote) {
      if (t_[pos_] == '\\') return error("escapes are not supported in header strings");
      ++pos_;
    }
    if (pos_ >= t_.size()) return error("unterminated string");
    std::string s(t_.substr(start, pos_ - start));
    ++pos_;
    return s;
  }
  Result<std::vector<std::uint64_t>> tuple() {
    if (!eat('(')) return error("'shape' must be a tuple such as (3, 4)");
    std::vector<std::uint64_t> dims;
    bool trailing_comma = false;
    while (true) {
      skip_ws();
      if (eat(')')) break;
      if (pos_ >= t_.size() || t_[pos_] < '0' || t_[pos_] > '9') return error("expected a non-negative integer in 'shape'");
      std::uint64_t v = 0;
      const char* first = t_.data() + pos_;
      const auto [ptr, ec] = std::from_chars(first, t_.data() + t_.size(), v);
      if (ec != std::errc()) return error("a 'shape' extent does not fit in 64 bits");
      pos_ += static_cast<std::size_t>(ptr - first);
      if (pos_ < t_.size() && t_[pos_] == 'L') ++pos_;  // Python 2 long suffix
      dims.push_back(v);
      if (dims.size() > kMaxRank) {
        return Status(ErrorCode::unsupported_npy,
                      "the array has more than " + std::to_string(kMaxRank) + " dimensions; qscheme reads rank 0 to " +
                          std::to_string(kMaxRank));
      }
      skip_ws();
      trailing_comma = eat(',');
      skip_ws();
      if (eat(')')) break;
      if (!trailing_comma) return error("expected ',' or ')' in 'shape'");
    }
    if (dims.size() == 1 && !trailing_comma) return error("'shape' (n) is not a tuple; write (n,)");
    return dims;
  }

  std::string_view t_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string_view descr(Dtype d) {
  switch (d) {
    case Dtype::f32: return "<f4";
    case Dtype::i32: return "<i4";
    case Dtype::i8: return "|i1";
    case Dtype::u8: return "|u1";
    case Dtype::u32: return "<u4";
  }
  return "?";
}

Result<Array> parse(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 10 || std::string_view(reinterpret_cast<const char*>(bytes.data()), 6) != kMagic) {
    return bad("not a .npy file: it does not start with the magic \\x93NUMPY");
  }
  const int major = bytes[6];
  const int minor = bytes[7];
  if (minor != 0 || major < 1 || major > 3) {
    return bad(".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
               " is not supported (1.0, 2.0 and 3.0 are)");
  }
  std::size_t header_start = 10;
  std::uint64_t header_len = static_cast<std::uint64_t>(bytes[8]) | static_cast<std::uint64_t>(bytes[9]) << 8;
  if (major >= 2) {
    if (bytes.size() < 12) return bad("truncated .npy header");
    header_start = 12;
    header_len = le32(bytes, 8);
  }
  if (header_len > bytes.size() - header_start) {
    return bad("truncated .npy header: it claims " + std::to_string(header_len) + " bytes, the file has " +
               std::to_string(bytes.size() - header_start) + " after the preamble");
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data()) + header_start, header_len);
  auto fields = HeaderReader(header).read();
  if (!fields) return fields.status();

  Array a;
  const std::string& d = *fields->descr;
  if (d == "<f4") a.dtype = Dtype::f32;
  else if (d == "<i4") a.dtype = Dtype::i32;
  else if (d == "|i1" || d == "<i1") a.dtype = Dtype::i8;
  else if (d == "|u1" || d == "<u1") a.dtype = Dtype::u8;
  else if (d == "<u4") a.dtype = Dtype::u32;
  else if (!d.empty() && d[0] == '>') {
    return bad("dtype '" + d + "' is big-endian; save the array as little-endian ('<f4', e.g. a.astype('<f4'))");
  } else {
    return bad("dtype '" + d + "' is not supported; use float32 ('<f4') for tensors, or '<i4', '|i1', '|u1', '<u4'");
  }
  if (*fields->fortran_order) {
    return bad("the array is in Fortran order; save it in C order (np.ascontiguousarray)");
  }
  a.shape = *fields->shape;
  std::optional<std::uint64_t> count = 1;
  for (std::uint64_t e : a.shape) count = count ? checked_mul(*count, e) : std::nullopt;
  const std::optional<std::uint64_t> data_bytes =
      count ? checked_mul(*count, static_cast<std::uint64_t>(item_size(a.dtype))) : std::nullopt;
  if (!data_bytes) return bad("the array's shape holds more elements than fit in 64 bits");
  const std::uint64_t available = bytes.size() - header_start - header_len;
  if (*data_bytes > available) {
    return bad("truncated .npy data: the shape needs " + std::to_string(*data_bytes) + " bytes, the file has " +
               std::to_string(available));
  }
  if (*data_bytes < available) {
    return bad(".npy data is longer than its shape: " + std::to_string(available - *data_bytes) + " trailing bytes");
  }
  const std::span<const std::uint8_t> data = bytes.subspan(header_start + header_len);
  const std::size_t n = static_cast<std::size_t>(*count);
  if (a.dtype == Dtype::f32) {
    a.f32.resize(n);
    for (std::size_t i = 0; i < n; ++i) a.f32[i] = std::bit_cast<float>(le32(data, 4 * i));
  } else {
    a.ints.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      switch (a.dtype) {
        case Dtype::i32: a.ints[i] = static_cast<std::int32_t>(le32(data, 4 * i)); break;
        case Dtype::u32: a.ints[i] = le32(data, 4 * i); break;
        case Dtype::i8: a.ints[i] = static_cast<std::int8_t>(data[i]); break;
        case Dtype::u8: a.ints[i] = data[i]; break;
        case Dtype::f32: break;
      }
    }
  }
  return a;
}

Result<Array> read_file(const std::string& path) {
  auto bytes = read_bytes(path);
  if (!bytes) return bytes.status();
  auto a = parse(*bytes);
  if (!a) return Status(a.status().code(), path + ": " + a.status().message(), a.status().index());
  return a;
}

Result<std::vector<std::uint8_t>> serialize_f32(std::span<const std::uint64_t> shape, std::span<const float> values) {
  if (shape.size() > kMaxRank) {
    return Status(ErrorCode::invalid_argument, "cannot write a rank-" + std::to_string(shape.size()) + " array");
  }
  std::optional<std::uint64_t> count = 1;
  for (std::uint64_t e : shape) count = count ? checked_mul(*count, e) : std::nullopt;
  if (!count || *count != values.size()) {
    return Status(ErrorCode::invalid_argument, "the shape does not match the " + std::to_string(values.size()) + " values");
  }
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces and a final newline so that the data starts on a 64-byte boundary.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<std::uint8_t> out(kMagic.begin(), kMagic.end());
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<std::uint8_t>(header.size()));
  out.push_back(static_cast<std::uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.reserve(out.size() + 4 * values.size());
  for (float v : values) {
    const auto b = std::bit_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(b >> (8 * i)));
  }
  return out;
}

}  // namespace qscheme::cli::npy
