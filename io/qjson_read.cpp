// The Q.json reader: JSON events (json_reader.hpp) straight into Burn's serialized bytes. Codes
// and scales are placed as they are read once scheme and shape are known (the order the writer
// uses); a file that gives them earlier is read all the same, its numbers held until then.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>

#include "io/code_walk.hpp"
#include "io/file_io.hpp"
#include "io/huge_pages.hpp"
#include "io/qjson.hpp"
#include "io/scale_numbers.hpp"
#include "reference/pack.hpp"
#include "reference/reference.hpp"
#include "reference/values.hpp"
#include "scheme/checked.hpp"
#include "scheme/errors.hpp"
#include "scheme/layout.hpp"
#include "scheme/printable.hpp"
#include "scheme/rules.hpp"
#include "scheme/text.hpp"

namespace qscheme::io::qjson {
namespace {

using json::Event;

enum Field : unsigned { kScheme, kProfile, kRules, kShape, kCodes, kBlockScales, kGlobal, kZeroPoints, kBytes, kFields };
constexpr std::array<std::string_view, kFields> kKeys{"scheme", "profile",      "rules",       "shape", "codes",
                                                      "block_scales", "global_scale", "zero_points", "bytes"};

Status fail(ErrorCode code, const std::string& message, std::size_t index = kNoIndex) {
  return {code, "Q.json: " + message, index};
}
Status invalid(const std::string& message, std::size_t index = kNoIndex) {
  return fail(ErrorCode::invalid_argument, message, index);
}

// Whether a JSON number's magnitude is below 1 (it is not zero): from its first non-zero digit
// and its exponent, for telling an f32 underflow from an overflow.
bool below_one(std::string_view t) {
  std::size_t i = t[0] == '-' ? 1 : 0;
  long long exp10 = 0;
  bool found = false;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
    if (!found && t[i] != '0') {
      found = true;
      exp10 = -1;
    }
    if (found) ++exp10;
  }
  if (i < t.size() && t[i] == '.') {
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (!found) {
        --exp10;
        if (t[i] != '0') found = true;
      }
    }
  }
  long long e = 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    const bool neg = i < t.size() && t[i] == '-';
    if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
    for (; i < t.size(); ++i) e = std::min<long long>(e * 10 + (t[i] - '0'), 1'000'000'000);
    if (neg) e = -e;
  }
  return exp10 + e < 0;
}

// A JSON number as the f32 it denotes: integers must be exactly an f32 value, other numbers
// are rounded to nearest once (as strtof does, underflow included); none past f32's range.
std::optional<float> exact_f32(std::string_view t, bool integer) {
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (integer) {
    if (t[0] == '-') {
      std::int64_t v = 0;
      if (std::from_chars(first, last, v).ec == std::errc()) {
        const auto f = static_cast<float>(v);
        if (f >= -9223372036854775808.0f && static_cast<std::int64_t>(f) == v) return f;
        return std::nullopt;
      }
    } else {
      std::uint64_t v = 0;
      if (std::from_chars(first, last, v).ec == std::errc()) {
        const auto f = static_cast<float>(v);
        if (f < 18446744073709551616.0f && static_cast<std::uint64_t>(f) == v) return f;
        return std::nullopt;
      }
    }
    // Beyond 64 bits: read as any other number.
  }
  float f = 0;
  const auto r = std::from_chars(first, last, f);
  if (r.ec == std::errc()) return f;
  if (r.ec == std::errc::result_out_of_range && below_one(t)) return t[0] == '-' ? -0.0f : 0.0f;
  return std::nullopt;
}

// A code: an integer in i32's range written without fraction or exponent (`integer`: the
// JSON reader saw neither).
std::optional<std::int32_t> code_of(std::string_view t, bool integer) {
  if (!integer) return std::nullopt;
  const bool negative = t[0] == '-';
  if (t.size() - negative > 10) return std::nullopt;  // JSON has no leading zeros: > 10 digits is past i32
  std::int64_t v = 0;
  for (std::size_t i = negative; i < t.size(); ++i) v = v * 10 + (t[i] - '0');
  if (negative) v = -v;
  if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;
  return static_cast<std::int32_t>(v);
}

// The value of each hex digit, -1 for any other character.
constexpr std::array<std::int8_t, 256> kHexValue = [] {
  std::array<std::int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int c = 0; c < 10; ++c) t[static_cast<std::size_t>('0' + c)] = static_cast<std::int8_t>(c);
  for (int c = 0; c < 6; ++c) {
    t[static_cast<std::size_t>('a' + c)] = static_cast<std::int8_t>(10 + c);
    t[static_cast<std::size_t>('A' + c)] = static_cast<std::int8_t>(10 + c);
  }
  return t;
}();

void put_le(std::span<std::uint8_t> out, std::uint64_t at, std::uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[at + static_cast<std::uint64_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
}

class QjsonReader {
 public:
  // A text shorter than the reader's usual chunk gets a buffer of its own size: a small file is
  // not read through a 1 MiB allocation.
  QjsonReader(const json::Source& source, std::uint64_t text_size)
      : json_(source, text_size < json::Reader::kDefaultChunk ? static_cast<std::size_t>(text_size) + 1
                                                               : json::Reader::kDefaultChunk),
        text_size_(text_size) {}

  Result<Document> run() {
    auto e = next();
    if (!e) return e.status();
    if (*e != Event::begin_object) return invalid("the document must be a JSON object");
    while (true) {
      e = next();
      if (!e) return e.status();
      if (*e == Event::end_object) break;
      const std::string key(json_.text());
      const auto at = std::find(kKeys.begin(), kKeys.end(), key);
      if (at == kKeys.end()) return invalid("unknown key \"" + printable(key) + "\"", json_.offset());
      const auto field = static_cast<Field>(at - kKeys.begin());
      if (seen_[field]) {
        return invalid("duplicate key \"" + printable(key) + "\" in the document's object (each key may appear once)",
                       json_.offset());
      }
      seen_[field] = true;
      QSCHEME_RETURN_IF_ERROR(read_field(field));
    }
    e = next();
    if (!e) return e.status();
    QSCHEME_RETURN_IF_ERROR(finish());
    Document d;
    d.scheme = *scheme_;
    d.profile = profile_;
    if (rules_ && !profile_of(*rules_)) d.rules = rules_;
    d.shape = std::move(*shape_);
    d.bytes = std::move(bytes_);
    return d;
  }

 private:
  Result<Event> next() {
    auto e = json_.next();
    if (!e && e.status().code() == ErrorCode::invalid_argument) {
      return Status(ErrorCode::invalid_argument, "Q.json: " + e.status().message(), e.status().index());
    }
    return e;
  }

  Status read_field(Field f) {
    switch (f) {
      case kScheme: return read_scheme();
      case kProfile: return read_profile();
      case kRules: return read_rules();
      case kShape: return read_shape();
      case kCodes: return read_codes();
      case kBlockScales: return read_scales();
      case kGlobal: return read_global();
      case kZeroPoints: return read_zero_points();
      case kBytes: return read_bytes();
      case kFields: break;
    }
    return Status(ErrorCode::internal, "Q.json: unknown field");
  }

  // A short string value whole, or nullopt when the value is not a string.
  Result<std::optional<std::string>> short_string() {
    auto e = next();
    if (!e) return e.status();
    if (*e != Event::string) return std::optional<std::string>();
    std::string s(json_.text());
    while (json_.string_continues()) {
      if (s.size() > json::Reader::kMaxToken) return invalid("a string longer than " + std::to_string(json::Reader::kMaxToken) + " bytes");
      e = next();
      if (!e) return e.status();
      s += json_.text();
    }
    return std::optional<std::string>(std::move(s));
  }

  Status read_scheme() {
    auto s = short_string();
    if (!s) return s.status();
    if (!*s) return invalid("\"scheme\" must be a string");
    auto scheme = parse_scheme(**s);
    if (!scheme) return scheme.status();
    scheme_ = *scheme;
    scale_numbers_.emplace(scheme_->scale_dtype());
    return shape_ ? on_layout() : Status();
  }

  Status read_profile() {
    auto s = short_string();
    if (!s) return s.status();
    if (!*s) return invalid("\"profile\" must be \"exact\", \"burn\" or \"onnx\"");
    auto p = profile_from_string(**s);
    if (!p) return invalid("\"profile\" must be \"exact\", \"burn\" or \"onnx\", got \"" + printable(**s) + "\"");
    profile_ = *p;
    return {};
  }

  // The point of the rule space. Codes and scales are checked against it as they are read, so
  // it must come before them (the writer's order).
  Status read_rules() {
    if (seen_[kCodes] || seen_[kBlockScales]) {
      return invalid("\"rules\" must come before \"codes\" and \"block_scales\": they are checked against it",
                     json_.offset());
    }
    auto s = short_string();
    if (!s) return s.status();
    if (!*s) return invalid("\"rules\" must be a string of field=choice pairs (qscheme recipes --rules)");
    auto r = parse_rules(**s);
    if (!r) return invalid("\"rules\": " + r.status().message());
    rules_ = *r;
    return layout_ ? fill_code_fields() : Status();
  }

  // The rules the codes and scales follow: "rules", else the profile's. The profile's points
  // accept the same codes and scales (those of values.hpp), so "profile" may come at any place.
  Rules rules() const { return rules_ ? *rules_ : profile_rules(Profile::exact); }

  // The field of every code the rules accept (the codes a kind's bits can hold: [-128, 255]
  // for the 8-bit and narrower kinds, [-32768, 65535] with i16 and u16); kNoField for the others.
  Status fill_code_fields() {
    const Rules r = rules();
    const bool wide = info(scheme_->value).bits > 8;
    first_code_ = wide ? -32768 : -128;
    field_of_.assign(wide ? 98304 : 384, kNoField);
    for (std::size_t k = 0; k < field_of_.size(); ++k) {
      const auto c = static_cast<std::int32_t>(k) + first_code_;
      if (code_allowed(r, scheme_->value, c)) field_of_[k] = reference::field_of_code(*scheme_, c);
    }
    return {};
  }

  Status read_shape() {
    auto e = next();
    if (!e) return e.status();
    const std::string kind = "\"shape\" must be an array of non-negative integers";
    if (*e != Event::begin_array) return invalid(kind);
    std::vector<std::uint64_t> shape;
    while (true) {
      e = next();
      if (!e) return e.status();
      if (*e == Event::end_array) break;
      if (*e != Event::number) return invalid(kind);
      const std::string_view t = json_.text();
      if (t[0] == '-' || !json_.number_is_integer()) return invalid(kind);
      if (shape.size() == kMaxRank) {
        return fail(ErrorCode::rank_too_large, "\"shape\" has more than " + std::to_string(kMaxRank) +
                                                   " extents; the supported rank is at most " + std::to_string(kMaxRank));
      }
      std::uint64_t v = 0;
      const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
      if (r.ec != std::errc() || v > kMaxSize) {
        return fail(ErrorCode::shape_overflow, "shape[" + std::to_string(shape.size()) + "] = " + std::string(t) +
                                                   " is past 2^63 - 1; no tensor can have it");
      }
      shape.push_back(v);
    }
    shape_ = std::move(shape);
    return scheme_ ? on_layout() : Status();
  }

  // Scheme and shape are both known: the layout, the bytes, and whatever was read before.
  Status on_layout() {
    auto layout = make_layout(*scheme_, *shape_);
    if (!layout) return layout.status();
    layout_ = std::move(*layout);
    const Layout& l = *layout_;
    // Every code and scale takes at least two characters ("0,"), and a code or scale at most
    // four bytes: a complete text is at least half as long as its serialized bytes. Refusing
    // a larger shape here keeps a short text from allocating a huge tensor.
    if (l.total_bytes / 4 > text_size_ + 16) {
      return fail(ErrorCode::size_mismatch, "the shape's " + std::to_string(l.elements) + " codes and " +
                                                std::to_string(l.scales) + " scales cannot fit in a text of " +
                                                std::to_string(text_size_) + " bytes");
    }
    resize_on_huge_pages(bytes_, static_cast<std::size_t>(l.total_bytes));
    walk_.emplace(*scheme_, l);
    QSCHEME_RETURN_IF_ERROR(fill_code_fields());
    if (codes_done_) {
      for (std::int32_t c : pending_codes_) QSCHEME_RETURN_IF_ERROR(put_code(c));
      pending_codes_ = {};
      QSCHEME_RETURN_IF_ERROR(check_code_count());
    }
    if (scales_done_) {
      for (float f : pending_scales_) QSCHEME_RETURN_IF_ERROR(put_scale(f));
      pending_scales_ = {};
      QSCHEME_RETURN_IF_ERROR(check_scale_count());
    }
    if (global_) QSCHEME_RETURN_IF_ERROR(put_global());
    if (zero_points_) QSCHEME_RETURN_IF_ERROR(put_zero_points());
    return {};
  }

  Status put_code(std::int32_t c) {
    const std::uint64_t i = codes_++;
    if (i >= layout_->elements) return {};  // counted; the count is the error
    const std::int64_t k = static_cast<std::int64_t>(c) - first_code_;
    const std::uint32_t field =
        k < 0 || k >= static_cast<std::int64_t>(field_of_.size()) ? kNoField : field_of_[static_cast<std::size_t>(k)];
    if (field == kNoField) {
      const Status st = errors::bad_code(i, scheme_->value, c);
      return fail(st.code(), st.message(), st.index());
    }
    walk_->put(bytes_, field);
    walk_->next();
    return {};
  }

  Status check_code_count() const {
    if (codes_ == layout_->elements) return {};
    return fail(ErrorCode::size_mismatch, "\"codes\" has " + std::to_string(codes_) + " entries, the shape has " +
                                              std::to_string(layout_->elements) + " elements");
  }

  Status read_codes() {
    auto e = next();
    if (!e) return e.status();
    if (*e != Event::begin_array) return invalid("\"codes\" must be an array of integers");
    std::uint64_t i = 0;
    while (true) {
      e = next();
      if (!e) return e.status();
      if (*e == Event::end_array) break;
      const auto c = *e == Event::number ? code_of(json_.text(), json_.number_is_integer()) : std::nullopt;
      if (!c) return fail(ErrorCode::corrupt_bytes, "codes[" + std::to_string(i) + "] is not a code", i);
      if (layout_) {
        QSCHEME_RETURN_IF_ERROR(put_code(*c));
      } else {
        pending_codes_.push_back(*c);
      }
      ++i;
    }
    codes_done_ = true;
    return layout_ ? check_code_count() : Status();
  }

  Status scale_error(const std::string& what, std::uint64_t j, float f, ScaleDtype d) const {
    auto why = float_to_scale_bits(d, f);
    return fail(ErrorCode::corrupt_bytes, what + ": " + (why ? std::string("not a storable scale") : why.status().message()), j);
  }

  Status put_scale(float f) {
    const std::uint64_t j = scales_++;
    if (j >= layout_->scales) return {};
    // Under signed-scale rules a negative number (or -0) is its magnitude's pattern with the sign
    // bit set (scale_allowed decides which dtypes have one).
    const bool negative = std::signbit(f) && rules_ && rules_->statistic == rule::Statistic::signed_max;
    auto bits = scale_numbers_->pattern(negative ? -f : f);
    if (bits && negative) {
      *bits |= scale_sign_bit(scheme_->scale_dtype());
      if (!scale_allowed(*rules_, scheme_->scale_dtype(), *bits)) bits.reset();
    }
    if (!bits) return scale_error("block_scales[" + std::to_string(j) + "]", j, f, scheme_->scale_dtype());
    const int sb = info(scheme_->scale_dtype()).bytes;
    put_le(bytes_, layout_->value_bytes + j * static_cast<std::uint64_t>(sb), *bits, sb);
    return {};
  }

  Status check_scale_count() const {
    if (scales_ == layout_->scales) return {};
    return fail(ErrorCode::size_mismatch, "\"block_scales\" has " + std::to_string(scales_) +
                                              " entries, the scheme and shape take " + std::to_string(layout_->scales));
  }

  Status read_scales() {
    auto e = next();
    if (!e) return e.status();
    if (*e != Event::begin_array) return invalid("\"block_scales\" must be an array of numbers");
    std::uint64_t j = 0;
    while (true) {
      e = next();
      if (!e) return e.status();
      if (*e == Event::end_array) break;
      const auto f = *e == Event::number ? exact_f32(json_.text(), json_.number_is_integer()) : std::nullopt;
      if (!f) {
        return fail(ErrorCode::corrupt_bytes,
                    "block_scales[" + std::to_string(j) + "] is not a number with an exact f32 value", j);
      }
      if (layout_) {
        QSCHEME_RETURN_IF_ERROR(put_scale(*f));
      } else {
        pending_scales_.push_back(*f);
      }
      ++j;
    }
    scales_done_ = true;
    return layout_ ? check_scale_count() : Status();
  }

  // The global scale as read: null, a number, or something else (a string, a literal).
  struct Global {
    bool null = false;
    std::optional<float> value;
  };

  Status read_global() {
    auto e = next();
    if (!e) return e.status();
    Global g;
    if (*e == Event::null_literal) {
      g.null = true;
    } else if (*e == Event::number) {
      g.value = exact_f32(json_.text(), json_.number_is_integer());
    } else if (*e == Event::string) {
      while (json_.string_continues()) {
        e = next();
        if (!e) return e.status();
      }
    } else if (*e == Event::begin_array || *e == Event::begin_object) {
      if (scheme_ && scheme_->two_level()) return fail(ErrorCode::corrupt_bytes, "global_scale is not a number with an exact f32 value");
      return invalid("\"global_scale\" must be a number (two-level schemes) or null");
    }
    global_ = g;
    return layout_ ? put_global() : Status();
  }

  Status put_global() {
    const Global& g = *global_;
    if (!scheme_->two_level()) {
      if (!g.null) return invalid("\"global_scale\" must be null: only a two-level scheme has a global scale");
      global_done_ = true;
      return {};
    }
    if (g.null) return invalid("\"global_scale\" must be a number for a two-level scheme");
    if (!g.value) return fail(ErrorCode::corrupt_bytes, "global_scale is not a number with an exact f32 value");
    const auto bits = ScaleNumbers(ScaleDtype::f32).pattern(*g.value);
    if (!bits) {
      auto why = float_to_scale_bits(ScaleDtype::f32, *g.value);
      return fail(ErrorCode::corrupt_bytes, "global_scale: " + (why ? std::string("not a storable scale") : why.status().message()));
    }
    put_le(bytes_, layout_->value_bytes + layout_->scale_bytes, *bits, 4);
    global_done_ = true;
    return {};
  }

  // Affine mode's zero points: an array of integers (null or absent for the other modes).
  Status read_zero_points() {
    auto e = next();
    if (!e) return e.status();
    std::vector<std::int32_t> z;
    if (*e == Event::null_literal) {
      zero_points_ = std::optional<std::vector<std::int32_t>>();
      return layout_ ? put_zero_points() : Status();
    }
    const std::string kind = "\"zero_points\" must be an array of integers (affine mode) or null";
    if (*e != Event::begin_array) return invalid(kind);
    while (true) {
      e = next();
      if (!e) return e.status();
      if (*e == Event::end_array) break;
      const auto c = *e == Event::number ? code_of(json_.text(), json_.number_is_integer()) : std::nullopt;
      if (!c) return fail(ErrorCode::corrupt_bytes, "zero_points[" + std::to_string(z.size()) + "] is not an integer", z.size());
      z.push_back(*c);
      // A zero point per scale: more than the text could hold scales is a count error already.
      if (z.size() > text_size_) break;
    }
    zero_points_ = std::optional<std::vector<std::int32_t>>(std::move(z));
    return layout_ ? put_zero_points() : Status();
  }

  Status put_zero_points() {
    const std::optional<std::vector<std::int32_t>>& z = *zero_points_;
    if (!scheme_->affine()) {
      if (z) return invalid("\"zero_points\" must be null or absent: only an affine scheme has zero points");
      zero_points_done_ = true;
      return {};
    }
    if (!z) return invalid("\"zero_points\" must be an array for an affine scheme (one per scale)");
    if (z->size() != layout_->zero_points) {
      const Status st = errors::zero_point_count(z->size(), layout_->zero_points);
      return fail(st.code(), st.message());
    }
    const int zb = static_cast<int>(layout_->zero_point_bytes / std::max<std::uint64_t>(layout_->zero_points, 1));
    const std::uint64_t start = layout_->value_bytes + layout_->scale_bytes + layout_->global_bytes;
    const ValueInfo& vi = info(scheme_->value);
    for (std::size_t j = 0; j < z->size(); ++j) {
      const std::int32_t v = (*z)[j];
      if (v < vi.lo || v > vi.hi) {
        const Status st = errors::bad_zero_point(j, scheme_->value, v);
        return fail(st.code(), st.message(), st.index());
      }
      put_le(bytes_, start + j * static_cast<std::uint64_t>(zb), static_cast<std::uint32_t>(v) & ((1u << (8 * zb)) - 1), zb);
    }
    zero_points_done_ = true;
    return {};
  }

  bool zero_points_in_place() const { return zero_points_done_ || !scheme_->affine(); }

  Status read_bytes() {
    auto e = next();
    if (!e) return e.status();
    if (*e != Event::string) return invalid("\"bytes\" must be a hex string");
    // Compared as it is read when codes, scales, global and zero points are all in place (the
    // writer's order); otherwise kept until they are.
    compare_now_ = layout_ && codes_done_ && scales_done_ && global_done_ && zero_points_in_place();
    if (!compare_now_ && layout_) given_.reserve(bytes_.size());
    std::uint64_t digits = 0;
    int high = -1;
    std::array<std::uint8_t, 4096> decoded;
    while (true) {
      const std::string_view piece = json_.text();
      std::size_t k = 0;
      auto flush = [&] {
        const std::uint64_t at = given_count_;
        given_count_ += k;
        if (!compare_now_) {
          given_.insert(given_.end(), decoded.begin(), decoded.begin() + static_cast<std::ptrdiff_t>(k));
        } else if (!first_difference_ && at < bytes_.size()) {
          const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(k, bytes_.size() - at));
          const auto d = std::mismatch(decoded.begin(), decoded.begin() + static_cast<std::ptrdiff_t>(n),
                                       bytes_.begin() + static_cast<std::ptrdiff_t>(at));
          if (d.first != decoded.begin() + static_cast<std::ptrdiff_t>(n)) {
            first_difference_ = at + static_cast<std::uint64_t>(d.first - decoded.begin());
          }
        }
        k = 0;
      };
      for (char ch : piece) {
        const int d = kHexValue[static_cast<unsigned char>(ch)];
        if (d < 0) {
          return invalid("\"bytes\" holds a non-hex character near offset " + std::to_string(digits), digits);
        }
        ++digits;
        if (high < 0) {
          high = d;
          continue;
        }
        decoded[k++] = static_cast<std::uint8_t>(high << 4 | d);
        high = -1;
        if (k == decoded.size()) flush();
      }
      flush();
      if (!json_.string_continues()) break;
      e = next();
      if (!e) return e.status();
    }
    odd_digits_ = high >= 0;
    return compare_now_ ? check_given_bytes() : Status();
  }

  Status check_given_bytes() {
    if (odd_digits_) return invalid("\"bytes\" has an odd number of hex digits");
    if (given_count_ != bytes_.size()) {
      return fail(ErrorCode::size_mismatch, "\"bytes\" holds " + std::to_string(given_count_) + " bytes, expected " +
                                                std::to_string(bytes_.size()));
    }
    if (!compare_now_) {
      const auto d = std::mismatch(given_.begin(), given_.end(), bytes_.begin());
      if (d.first != given_.end()) first_difference_ = static_cast<std::uint64_t>(d.first - given_.begin());
    }
    if (first_difference_) {
      return fail(ErrorCode::corrupt_bytes,
                  "\"bytes\" disagrees with codes and scales at byte " + std::to_string(*first_difference_),
                  static_cast<std::size_t>(*first_difference_));
    }
    return {};
  }

  Status finish() {
    for (Field f : {kScheme, kShape, kCodes, kBlockScales, kGlobal}) {
      if (!seen_[f]) return invalid("missing key \"" + std::string(kKeys[f]) + "\"");
    }
    if (rules_) {
      // "rules" names the point; "profile", when given too, must name the same one.
      const Profile p = profile_of(*rules_).value_or(Profile::exact);
      if (seen_[kProfile] && profile_ != p) {
        return invalid("\"profile\" is \"" + std::string(to_string(profile_)) + "\" but \"rules\" is " +
                       (profile_of(*rules_) ? "the " + std::string(to_string(p)) + " profile's point"
                                            : std::string("no profile's point (then \"profile\" is \"exact\")")));
      }
      profile_ = p;
    }
    if (!layout_) return Status(ErrorCode::internal, "Q.json: scheme and shape read, but no layout");
    if (scheme_->affine() && !seen_[kZeroPoints]) {
      return invalid("missing key \"zero_points\": an affine scheme has one zero point per scale");
    }
    if (seen_[kBytes] && !compare_now_) return check_given_bytes();
    return {};
  }

  json::Reader json_;
  std::uint64_t text_size_;
  std::array<bool, kFields> seen_{};
  std::optional<Scheme> scheme_;
  Profile profile_ = Profile::exact;
  std::optional<Rules> rules_;
  std::optional<std::vector<std::uint64_t>> shape_;
  std::optional<Layout> layout_;
  std::optional<ScaleNumbers> scale_numbers_;
  std::optional<CodeWalk> walk_;
  static constexpr std::uint32_t kNoField = 0xFFFFFFFF;
  std::vector<std::uint32_t> field_of_;
  std::int32_t first_code_ = -128;
  std::vector<std::uint8_t> bytes_;
  // Codes and scales read before the layout was known.
  std::vector<std::int32_t> pending_codes_;
  std::vector<float> pending_scales_;
  bool codes_done_ = false;
  bool scales_done_ = false;
  std::uint64_t codes_ = 0;
  std::uint64_t scales_ = 0;
  std::optional<Global> global_;
  bool global_done_ = false;
  // "zero_points": read (null or an array), and written into the bytes.
  std::optional<std::optional<std::vector<std::int32_t>>> zero_points_;
  bool zero_points_done_ = false;
  // "bytes"
  bool compare_now_ = false;
  bool odd_digits_ = false;
  std::uint64_t given_count_ = 0;
  std::vector<std::uint8_t> given_;
  std::optional<std::uint64_t> first_difference_;
};

}  // namespace

Result<Document> read(const json::Source& source, std::uint64_t text_size) {
  return QjsonReader(source, text_size).run();
}

Result<Document> read_file(const std::string& path) {
  auto file = open_for_read(path);
  if (!file) return file.status();
  auto with_path = [&](Result<Document> d) -> Result<Document> {
    if (d || d.status().code() == ErrorCode::io_error) return d;
    return Status(d.status().code(), printable(path) + ": " + d.status().message(), d.status().index());
  };
  if (!file->size()) {  // a pipe or a device: its whole text, then the text in memory
    auto text = file->read_all();
    if (!text) return text.status();
    const std::string_view view(reinterpret_cast<const char*>(text->data()), text->size());
    return with_path(read(json::text_source(view), text->size()));
  }
  const std::uint64_t size = *file->size();
  std::uint64_t left = size;
  ReadFile& f = *file;
  json::Source source = [&f, &left](std::span<char> buffer) -> Result<std::size_t> {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
    if (!f.read(reinterpret_cast<std::uint8_t*>(buffer.data()), n)) return f.error();
    left -= n;
    return n;
  };
  auto d = with_path(read(source, size));
  if (d && !f.at_end()) return Status(ErrorCode::io_error, "cannot read " + quote(path) + ": it grew while being read");
  return d;
}

}  // namespace qscheme::io::qjson
