#include "io/npy.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <charconv>
#include <optional>
#include <string_view>

#include "scheme/checked.hpp"
#include "scheme/printable.hpp"
#include "scheme/scheme.hpp"
#include "io/file_io.hpp"
#include "io/huge_pages.hpp"

namespace qscheme::io::npy {

static_assert(std::endian::native == std::endian::little, "f32 data is read and written with host byte order");

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
      if (!eat(':')) return error("expected ':' after key " + quote(*key));
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
        return error("unexpected key " + quote(*key) + " (a .npy header holds descr, fortran_order and shape)");
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
      if (ec == std::errc::result_out_of_range || (ec == std::errc() && v > kMaxSize)) {
        // The rule of every shape (scheme/checked.hpp), not a header defect.
        return Status(ErrorCode::shape_overflow, "a 'shape' extent of " +
                                                     std::string(first, static_cast<std::size_t>(ptr - first)) +
                                                     " is past 2^63 - 1; no tensor can have it");
      }
      if (ec != std::errc()) return error("expected a non-negative integer in 'shape'");
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

namespace {

// What a file's preamble and header say, checked against the file's size `total`: the dtype,
// the shape, and where the data lies. `prefix` holds the file's first bytes, at least the
// preamble and the header when the file has them (parse passes the whole file).
struct Header {
  Dtype dtype = Dtype::f32;
  std::vector<std::uint64_t> shape;
  std::size_t count = 0;
  std::uint64_t data_offset = 0;
};

// The preamble's length (10 or 12) and the header's length, or an error; `prefix` must hold at
// least the first 12 bytes of the file, or all of it when shorter.
Result<std::pair<std::size_t, std::uint64_t>> preamble(std::span<const std::uint8_t> prefix, std::uint64_t total) {
  if (total < 10 || prefix.size() < 10 || std::string_view(reinterpret_cast<const char*>(prefix.data()), 6) != kMagic) {
    return bad("not a .npy file: it does not start with the magic \\x93NUMPY");
  }
  const int major = prefix[6];
  const int minor = prefix[7];
  if (minor != 0 || major < 1 || major > 3) {
    return bad(".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
               " is not supported (1.0, 2.0 and 3.0 are)");
  }
  std::size_t header_start = 10;
  std::uint64_t header_len = static_cast<std::uint64_t>(prefix[8]) | static_cast<std::uint64_t>(prefix[9]) << 8;
  if (major >= 2) {
    if (total < 12 || prefix.size() < 12) return bad("truncated .npy header");
    header_start = 12;
    header_len = le32(prefix, 8);
  }
  if (header_len > total - header_start) {
    return bad("truncated .npy header: it claims " + std::to_string(header_len) + " bytes, the file has " +
               std::to_string(total - header_start) + " after the preamble");
  }
  return std::pair<std::size_t, std::uint64_t>{header_start, header_len};
}

Result<Header> parse_header(std::span<const std::uint8_t> prefix, std::uint64_t total) {
  auto pre = preamble(prefix, total);
  if (!pre) return pre.status();
  const auto [header_start, header_len] = *pre;
  if (prefix.size() - header_start < header_len) return Status(ErrorCode::internal, "npy: header not read");
  const std::string_view header(reinterpret_cast<const char*>(prefix.data()) + header_start, header_len);
  auto fields = HeaderReader(header).read();
  if (!fields) return fields.status();

  Header h;
  const std::string& d = *fields->descr;
  if (d == "<f4") h.dtype = Dtype::f32;
  else if (d == "<i4") h.dtype = Dtype::i32;
  else if (d == "|i1" || d == "<i1") h.dtype = Dtype::i8;
  else if (d == "|u1" || d == "<u1") h.dtype = Dtype::u8;
  else if (d == "<u4") h.dtype = Dtype::u32;
  else if (!d.empty() && d[0] == '>') {
    return bad("dtype " + quote(d) + " is big-endian; save the array as little-endian ('<f4', e.g. a.astype('<f4'))");
  } else {
    return bad("dtype " + quote(d) + " is not supported; use float32 ('<f4') for tensors, or '<i4', '|i1', '|u1', '<u4'");
  }
  if (*fields->fortran_order) {
    return bad("the array is in Fortran order; save it in C order (np.ascontiguousarray)");
  }
  h.shape = *fields->shape;
  std::optional<std::uint64_t> count = 1;
  for (std::uint64_t e : h.shape) count = count && *count <= kMaxSize ? checked_mul(*count, e) : std::nullopt;
  const std::optional<std::uint64_t> data_bytes =
      count ? checked_mul(*count, static_cast<std::uint64_t>(item_size(h.dtype))) : std::nullopt;
  if (!data_bytes || *data_bytes > kMaxSize) {
    return Status(ErrorCode::shape_overflow, "the array's shape holds more elements or bytes than fit in 63 bits");
  }
  const std::uint64_t available = total - header_start - header_len;
  if (*data_bytes > available) {
    return bad("truncated .npy data: the shape needs " + std::to_string(*data_bytes) + " bytes, the file has " +
               std::to_string(available));
  }
  if (*data_bytes < available) {
    return bad(".npy data is longer than its shape: " + std::to_string(available - *data_bytes) + " trailing bytes");
  }
  h.count = static_cast<std::size_t>(*count);
  h.data_offset = header_start + header_len;
  return h;
}

// The values of data (exactly the header's count of items) into a.
void convert(const Header& h, std::span<const std::uint8_t> data, Array& a) {
  a.dtype = h.dtype;
  a.shape = h.shape;
  const std::size_t n = h.count;
  if (a.dtype == Dtype::f32) {
    a.f32.resize(n);
    if (n) std::memcpy(a.f32.data(), data.data(), 4 * n);  // little-endian host (static_assert above)
    return;
  }
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

Status with_path(const std::string& path, const Status& st) {
  return Status(st.code(), printable(path) + ": " + st.message(), st.index());
}

}  // namespace

Result<Array> parse(std::span<const std::uint8_t> bytes) {
  auto h = parse_header(bytes, bytes.size());
  if (!h) return h.status();
  Array a;
  convert(*h, bytes.subspan(static_cast<std::size_t>(h->data_offset)), a);
  return a;
}

Result<Array> read_file(const std::string& path) {
  // The header first, then a float32 tensor's data read straight into its vector: one copy of a
  // large tensor in memory instead of two (its file bytes and its values).
  auto file = open_for_read(path);
  if (!file) return file.status();
  if (!file->size()) {  // a pipe or a device: read it whole, then parse
    auto bytes = file->read_all();
    if (!bytes) return bytes.status();
    auto a = parse(*bytes);
    if (!a) return with_path(path, a.status());
    return a;
  }
  const std::uint64_t total = *file->size();
  std::vector<std::uint8_t> prefix(static_cast<std::size_t>(std::min<std::uint64_t>(total, 12)));
  if (!file->read(prefix.data(), prefix.size())) return file->error();
  auto pre = preamble(prefix, total);
  if (!pre) return with_path(path, pre.status());
  const std::size_t have = prefix.size();
  const auto header_end = static_cast<std::size_t>(pre->first + pre->second);  // <= total: checked
  prefix.resize(header_end);
  if (header_end > have && !file->read(prefix.data() + have, header_end - have)) return file->error();
  if (!file->seek(header_end)) return file->error();
  auto h = parse_header(prefix, total);
  if (!h) return with_path(path, h.status());
  Array a;
  if (h->dtype == Dtype::f32) {
    a.dtype = h->dtype;
    a.shape = h->shape;
    resize_on_huge_pages(a.f32, h->count);
    if (!file->read(reinterpret_cast<std::uint8_t*>(a.f32.data()), 4 * h->count)) return file->error();
  } else {
    std::vector<std::uint8_t> data(static_cast<std::size_t>(total - h->data_offset));
    if (!file->read(data.data(), data.size())) return file->error();
    convert(*h, data, a);
  }
  if (!file->at_end()) return Status(ErrorCode::io_error, "cannot read " + quote(path) + ": it changed while being read");
  return a;
}

namespace {

// The header alone (magic to newline) of a version-1.0 C-order file of `descr`, which the writers
// write before the values without copying them.
Result<std::vector<std::uint8_t>> header_of(std::string_view descr, std::span<const std::uint64_t> shape,
                                            std::size_t values) {
  if (shape.size() > kMaxRank) {
    return Status(ErrorCode::invalid_argument, "cannot write a rank-" + std::to_string(shape.size()) + " array");
  }
  for (std::uint64_t e : shape) {
    if (e > kMaxSize) return Status(ErrorCode::shape_overflow, "cannot write an extent of " + std::to_string(e));
  }
  std::optional<std::uint64_t> count = 1;
  for (std::uint64_t e : shape) count = count ? checked_mul(*count, e) : std::nullopt;
  if (!count || *count != values) {
    return Status(ErrorCode::invalid_argument, "the shape does not match the " + std::to_string(values) + " values");
  }
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
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
  return out;
}

}  // namespace

Result<std::vector<std::uint8_t>> serialize_f32(std::span<const std::uint64_t> shape, std::span<const float> values) {
  auto out = header_of("<f4", shape, values.size());
  if (!out) return out.status();
  const std::size_t at = out->size();
  out->resize(at + 4 * values.size());
  if (!values.empty()) std::memcpy(out->data() + at, values.data(), 4 * values.size());  // little-endian host
  return out;
}

Status write_f32_file(const std::string& path, std::span<const std::uint64_t> shape, std::span<const float> values) {
  auto header = header_of("<f4", shape, values.size());
  if (!header) return header.status();
  return write_bytes(path, {std::span<const std::uint8_t>(*header),
                            std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(values.data()),
                                                          4 * values.size())});
}

Status write_16_file(const std::string& path, std::string_view descr, std::span<const std::uint64_t> shape,
                     std::span<const std::uint16_t> bits) {
  if (descr != "<f2" && descr != "<u2") {
    return Status(ErrorCode::invalid_argument, "write_16_file writes '<f2' or '<u2', not '" + std::string(descr) + "'");
  }
  auto header = header_of(descr, shape, bits.size());
  if (!header) return header.status();
  return write_bytes(path, {std::span<const std::uint8_t>(*header),
                            std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bits.data()),
                                                          2 * bits.size())});  // little-endian host
}

}  // namespace qscheme::io::npy
