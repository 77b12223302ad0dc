#include "io/qjson.hpp"

#include <fmt/core.h>

#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "reference/reference.hpp"
#include "reference/scales.hpp"
#include "reference/values.hpp"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"

namespace qscheme::io::qjson {
namespace {

// JSON with f32 numbers: nlohmann then parses numbers with strtof (correctly rounded to f32)
// and prints the shortest text that parses back to the same f32, so a scale survives the file
// bit for bit and reads as 0.1 rather than the double 0.10000000149011612.
using Json = nlohmann::basic_json<nlohmann::ordered_map, std::vector, std::string, bool, std::int64_t,
                                  std::uint64_t, float>;

constexpr std::string_view kKeys[] = {"scheme", "profile", "rules", "shape", "codes", "block_scales", "global_scale", "bytes"};

Status invalid(std::string message, std::size_t index = kNoIndex) {
  return {ErrorCode::invalid_argument, "Q.json: " + std::move(message), index};
}

std::string hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A JSON number as the f32 it denotes exactly, or nullopt (not a number, or an integer that
// f32 cannot hold exactly).
std::optional<float> exact_f32(const Json& j) {
  if (j.is_number_float()) return j.get<float>();
  if (j.is_number_unsigned()) {
    const std::uint64_t v = j.get<std::uint64_t>();
    const auto f = static_cast<float>(v);
    if (f < 18446744073709551616.0f && static_cast<std::uint64_t>(f) == v) return f;
    return std::nullopt;
  }
  if (j.is_number_integer()) {
    const std::int64_t v = j.get<std::int64_t>();
    const auto f = static_cast<float>(v);
    if (f >= -9223372036854775808.0f && f < 9223372036854775808.0f && static_cast<std::int64_t>(f) == v) return f;
    return std::nullopt;
  }
  return std::nullopt;
}

std::string number_text(float f) { return fmt::format("{}", f); }

// The sign bit of a scale dtype's pattern (0 for the unsigned ones).
std::uint32_t sign_bit(ScaleDtype d) {
  switch (d) {
    case ScaleDtype::f32: return 0x80000000u;
    case ScaleDtype::f16:
    case ScaleDtype::bf16: return 0x8000u;
    default: return 0;
  }
}

}  // namespace

Result<float> scale_to_float(ScaleDtype d, std::uint32_t bits) {
  auto v = reference::scale_value(d, bits);
  if (!v) return v.status();
  return v->f32;
}

Result<std::uint32_t> float_to_scale_bits(ScaleDtype d, float v) {
  const std::string name(to_string(d));
  if (!std::isfinite(v)) return Status(ErrorCode::corrupt_bytes, "a scale must be finite, got " + number_text(v));
  if (std::signbit(v)) {
    return Status(ErrorCode::corrupt_bytes, "a scale must not be negative or -0, got " + number_text(v));
  }
  // round_up lands on v itself exactly when v is on the dtype's grid.
  const std::uint32_t bits = reference::round_up_to_dtype(reference::to_rational(v), d);
  auto back = reference::scale_value(d, bits);
  if (!back || std::bit_cast<std::uint32_t>(back->f32) != std::bit_cast<std::uint32_t>(v)) {
    return Status(ErrorCode::corrupt_bytes, number_text(v) + " is not exactly a " + name + " value");
  }
  return bits;
}

Result<std::string> write(const QuantizedTensor& q) {
  auto bytes = reference::encode(q);
  if (!bytes) return bytes.status();
  const ScaleDtype d = q.scheme.scale_dtype();
  Json scales = Json::array();
  for (std::uint32_t bits : q.scale_bits) {
    // A signed scale (rules statistic=signed-max) is written with its sign; encode checked the
    // pattern against q's rules.
    const std::uint32_t sign = sign_bit(d);
    auto f = scale_to_float(d, bits & ~sign);
    if (!f) {
      return Status(ErrorCode::invalid_argument, "Q.json holds finite scales only: " + f.status().message() +
                                                     "; write the tensor's bytes (.bin) instead");
    }
    scales.push_back((bits & sign) ? -*f : *f);
  }
  Json global = nullptr;
  if (q.global_bits) {
    auto f = scale_to_float(ScaleDtype::f32, *q.global_bits);
    if (!f) return f.status();
    global = *f;
  }
  std::vector<std::pair<std::string_view, Json>> fields = {
      {"scheme", format_scheme(q.scheme)},
      {"profile", std::string(to_string(q.profile))},
  };
  if (q.rules) fields.emplace_back("rules", format_rules(*q.rules));
  const std::pair<std::string_view, Json> rest[] = {
      {"shape", q.shape},
      {"codes", q.codes},
      {"block_scales", std::move(scales)},
      {"global_scale", std::move(global)},
      {"bytes", hex(*bytes)},
  };
  for (const auto& f : rest) fields.push_back(f);
  std::string out = "{\n";
  for (std::size_t i = 0; i < std::size(fields); ++i) {
    out += " \"" + std::string(fields[i].first) + "\": " + fields[i].second.dump();
    out += i + 1 < std::size(fields) ? ",\n" : "\n";
  }
  out += "}\n";
  return out;
}

Result<QuantizedTensor> read(std::string_view text) {
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return invalid(std::string("not valid JSON: ") + e.what(), e.byte);
  } catch (const Json::out_of_range& e) {
    // The only out_of_range the parser raises: a number beyond f32's range.
    return Status(ErrorCode::corrupt_bytes, std::string("Q.json: a number is beyond f32's range: ") + e.what());
  } catch (const Json::exception& e) {
    return invalid(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) return invalid("the document must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      return invalid("unknown key \"" + key + "\"");
    }
  }
  for (std::string_view key : {"scheme", "shape", "codes", "block_scales", "global_scale"}) {
    if (!j.contains(key)) return invalid("missing key \"" + std::string(key) + "\"");
  }

  QuantizedTensor q;
  // scheme
  if (!j["scheme"].is_string()) return invalid("\"scheme\" must be a string");
  auto scheme = parse_scheme(j["scheme"].get<std::string>());
  if (!scheme) return scheme.status();
  q.scheme = *scheme;
  // profile
  if (j.contains("profile")) {
    if (!j["profile"].is_string()) return invalid("\"profile\" must be \"exact\" or \"burn\"");
    auto p = profile_from_string(j["profile"].get<std::string>());
    if (!p) return invalid("\"profile\" must be \"exact\" or \"burn\", got \"" + j["profile"].get<std::string>() + "\"");
    q.profile = *p;
  }
  // rules: a point of the rule space other than a profile's (then "profile" is exact)
  if (j.contains("rules")) {
    if (!j["rules"].is_string()) return invalid("\"rules\" must be a string of field=choice pairs");
    auto r = parse_rules(j["rules"].get<std::string>());
    if (!r) return invalid("\"rules\": " + r.status().message());
    if (const std::optional<Profile> p = profile_of(*r)) {
      q.profile = *p;
    } else {
      q.rules = *r;
    }
  }
  // shape
  if (!j["shape"].is_array()) return invalid("\"shape\" must be an array of non-negative integers");
  if (j["shape"].size() > kMaxRank) {
    return Status(ErrorCode::rank_too_large, "Q.json: \"shape\" has " + std::to_string(j["shape"].size()) +
                                                 " extents; the supported rank is at most " + std::to_string(kMaxRank));
  }
  for (const Json& e : j["shape"]) {
    if (!e.is_number_unsigned()) return invalid("\"shape\" must be an array of non-negative integers");
    q.shape.push_back(e.get<std::uint64_t>());
  }
  auto layout = make_layout(q.scheme, q.shape);
  if (!layout) return layout.status();
  const Layout& l = *layout;
  // codes
  if (!j["codes"].is_array()) return invalid("\"codes\" must be an array of integers");
  if (j["codes"].size() != l.elements) {
    return Status(ErrorCode::size_mismatch, "Q.json: \"codes\" has " + std::to_string(j["codes"].size()) +
                                                " entries, the shape has " + std::to_string(l.elements) + " elements");
  }
  q.codes.reserve(l.elements);
  for (std::size_t i = 0; i < j["codes"].size(); ++i) {
    const Json& c = j["codes"][i];
    const bool integral = c.is_number_integer();  // signed or unsigned
    const bool fits = integral && (c.is_number_unsigned() ? c.get<std::uint64_t>() <= 0x7FFFFFFFu
                                                          : c.get<std::int64_t>() >= std::numeric_limits<std::int32_t>::min() &&
                                                                c.get<std::int64_t>() <= std::numeric_limits<std::int32_t>::max());
    if (!fits) return Status(ErrorCode::corrupt_bytes, "Q.json: codes[" + std::to_string(i) + "] is not a code", i);
    q.codes.push_back(static_cast<std::int32_t>(c.get<std::int64_t>()));
  }
  // block_scales
  if (!j["block_scales"].is_array()) return invalid("\"block_scales\" must be an array of numbers");
  if (j["block_scales"].size() != l.scales) {
    return Status(ErrorCode::size_mismatch, "Q.json: \"block_scales\" has " + std::to_string(j["block_scales"].size()) +
                                                " entries, the scheme and shape take " + std::to_string(l.scales));
  }
  const ScaleDtype d = q.scheme.scale_dtype();
  for (std::size_t i = 0; i < j["block_scales"].size(); ++i) {
    const auto f = exact_f32(j["block_scales"][i]);
    if (!f) {
      return Status(ErrorCode::corrupt_bytes,
                    "Q.json: block_scales[" + std::to_string(i) + "] is not a number with an exact f32 value", i);
    }
    // A negative scale is the pattern of its magnitude with the sign bit set, where the rules
    // produce signed scales (encode below checks that they do).
    const bool negative = std::signbit(*f) && q.rules && q.rules->statistic == rule::Statistic::signed_max;
    auto bits = float_to_scale_bits(d, negative ? -*f : *f);
    if (!bits) {
      return Status(ErrorCode::corrupt_bytes, "Q.json: block_scales[" + std::to_string(i) + "]: " + bits.status().message(), i);
    }
    q.scale_bits.push_back(*bits | (negative ? sign_bit(d) : 0u));
  }
  // global_scale
  const Json& g = j["global_scale"];
  if (q.scheme.two_level()) {
    if (g.is_null()) return invalid("\"global_scale\" must be a number for a two-level scheme");
    const auto f = exact_f32(g);
    if (!f) return Status(ErrorCode::corrupt_bytes, "Q.json: global_scale is not a number with an exact f32 value");
    auto bits = float_to_scale_bits(ScaleDtype::f32, *f);
    if (!bits) return Status(ErrorCode::corrupt_bytes, "Q.json: global_scale: " + bits.status().message());
    q.global_bits = *bits;
  } else if (!g.is_null()) {
    return invalid("\"global_scale\" must be null: only a two-level scheme has a global scale");
  }
  // Codes are checked by encode; bytes, when given, must be exactly the encoding.
  auto encoded = reference::encode(q);
  if (!encoded) return Status(encoded.status().code(), "Q.json: " + encoded.status().message(), encoded.status().index());
  if (j.contains("bytes")) {
    if (!j["bytes"].is_string()) return invalid("\"bytes\" must be a hex string");
    const std::string& h = j["bytes"].get_ref<const std::string&>();
    if (h.size() % 2 != 0) return invalid("\"bytes\" has an odd number of hex digits");
    std::vector<std::uint8_t> given(h.size() / 2);
    for (std::size_t i = 0; i < given.size(); ++i) {
      const int hi = hex_digit(h[2 * i]);
      const int lo = hex_digit(h[2 * i + 1]);
      if (hi < 0 || lo < 0) return invalid("\"bytes\" holds a non-hex character near offset " + std::to_string(2 * i), 2 * i);
      given[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    if (given.size() != encoded->size()) {
      return Status(ErrorCode::size_mismatch, "Q.json: \"bytes\" holds " + std::to_string(given.size()) +
                                                  " bytes, expected " + std::to_string(encoded->size()));
    }
    for (std::size_t i = 0; i < given.size(); ++i) {
      if (given[i] != (*encoded)[i]) {
        return Status(ErrorCode::corrupt_bytes,
                      "Q.json: \"bytes\" disagrees with codes and scales at byte " + std::to_string(i), i);
      }
    }
  }
  return q;
}

}  // namespace qscheme::io::qjson
