#include "scheme/text.hpp"

#include <charconv>

#include "scheme/printable.hpp"
namespace qscheme {
namespace {

constexpr std::string_view kValueList =
    "q8f, q8s, q4f, q4s, q2f, q2s, e4m3, e5m2, e2m1, or the extension kinds u8, u4, u2, i16, u16";
constexpr std::string_view kDtypeList = "f32, f16, bf16, ue8m0 or ue4m3";
constexpr std::string_view kFieldList =
    "native, packed-native(D), packed-u32(D), sym, lookup, affine (the extension), tensor=DTYPE, "
    "block[N,...]=DTYPE or axis(D)=DTYPE (the extension)";

Status syntax_error(std::size_t pos, std::string_view expected, std::string_view found) {
  std::string msg = "at offset " + std::to_string(pos) + ": expected " + std::string(expected);
  if (found.empty()) {
    msg += ", found the end of the text";
  } else {
    // The user's text, escaped: a scheme string is typed at a terminal and echoed back here.
    msg += ", found '" + printable(found.substr(0, 24)) + (found.size() > 24 ? "...'" : "'");
  }
  return Status(ErrorCode::malformed_scheme, std::move(msg), pos);
}

std::optional<Value> value_from(std::string_view s) {
  for (Value v : kAllValues) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

std::optional<ScaleDtype> dtype_from(std::string_view s) {
  for (ScaleDtype d : kAllScaleDtypes) {
    if (to_string(d) == s) return d;
  }
  return std::nullopt;
}

// A cursor over one field of the text; `base` is the field's offset in the whole text so that
// errors report absolute positions.
struct Cursor {
  std::string_view text;
  std::size_t base;
  std::size_t pos = 0;

  bool eat(std::string_view lit) {
    if (text.substr(pos).starts_with(lit)) {
      pos += lit.size();
      return true;
    }
    return false;
  }
  std::string_view rest() const { return text.substr(pos); }
  std::size_t at() const { return base + pos; }
  bool done() const { return pos == text.size(); }

  // A decimal integer in [lo, hi]. Leading zeros and signs are not canonical and are refused.
  Result<unsigned> number(unsigned lo, unsigned hi, std::string_view what) {
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    const std::string_view digits = text.substr(start, pos - start);
    const std::string expected =
        std::string(what) + " (" + std::to_string(lo) + " to " + std::to_string(hi) + ")";
    if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) {
      pos = start;
      return syntax_error(base + start, expected, text.substr(start));
    }
    unsigned v = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || v < lo || v > hi) {
      pos = start;
      return syntax_error(base + start, expected, digits);
    }
    return v;
  }

  Result<ScaleDtype> dtype() {
    const std::string_view word = rest();
    if (auto d = dtype_from(word)) {
      pos = text.size();
      return *d;
    }
    return syntax_error(at(), std::string("a scale dtype: ") + std::string(kDtypeList), word);
  }
};

Status parse_field(std::string_view field, std::size_t base, Scheme& s, bool& have_store,
                   bool& have_mode) {
  Cursor c{field, base};
  auto duplicate = [&](std::string_view what) {
    return syntax_error(base, "at most one " + std::string(what) + " field", field);
  };
  auto close = [&](std::string_view what) -> Status {
    if (!c.eat(")")) return syntax_error(c.at(), "')' to close " + std::string(what), c.rest());
    return {};
  };

  if (field == "native" || field == "sym" || field == "lookup" || field == "affine") {
    const bool is_store = field == "native";
    bool& have = is_store ? have_store : have_mode;
    if (have) return duplicate(is_store ? "store" : "mode");
    have = true;
    if (is_store) s.store = Store::native();
    else s.mode = field == "sym" ? Mode::sym : field == "lookup" ? Mode::lookup : Mode::affine;
    return {};
  }
  for (const auto& [prefix, kind] :
       {std::pair{std::string_view("packed-native("), StoreKind::packed_native},
        std::pair{std::string_view("packed-u32("), StoreKind::packed_u32}}) {
    if (!c.eat(prefix)) continue;
    if (have_store) return duplicate("store");
    have_store = true;
    auto dim = c.number(0, kMaxRank - 1, "a packed dimension counted from the innermost");
    if (!dim) return dim.status();
    QSCHEME_RETURN_IF_ERROR(close(prefix.substr(0, prefix.size() - 1)));
    if (!c.done()) return syntax_error(c.at(), "':' or the end of the scheme", c.rest());
    s.store = Store{kind, static_cast<std::uint8_t>(*dim)};
    return {};
  }
  if (c.eat("tensor=")) {
    if (s.tensor) return duplicate("tensor");
    auto d = c.dtype();
    if (!d) return d.status();
    s.tensor = *d;
    return {};
  }
  if (c.eat("axis(")) {
    if (s.axis || s.block) return duplicate("block or axis");
    auto dim = c.number(0, kMaxRank - 1, "an axis counted from the innermost");
    if (!dim) return dim.status();
    QSCHEME_RETURN_IF_ERROR(close("axis"));
    if (!c.eat("=")) return syntax_error(c.at(), "'=' and the axis' scale dtype", c.rest());
    auto d = c.dtype();
    if (!d) return d.status();
    s.axis = AxisLevel{static_cast<std::uint8_t>(*dim), *d};
    return {};
  }
  if (c.eat("block[")) {
    if (s.block || s.axis) return duplicate("block or axis");
    std::vector<std::uint8_t> extents;
    const std::size_t list_start = c.at();
    while (true) {
      auto n = c.number(0, 255, "a block extent");
      if (!n) return n.status();
      extents.push_back(static_cast<std::uint8_t>(*n));
      if (c.eat(",")) continue;
      if (c.eat("]")) break;
      return syntax_error(c.at(), "',' or ']' in the block extents", c.rest());
    }
    auto size = BlockSize::make(extents);
    if (!size) {
      return Status(ErrorCode::malformed_scheme,
                    "at offset " + std::to_string(list_start) + ": " + size.status().message(),
                    list_start);
    }
    if (!c.eat("=")) return syntax_error(c.at(), "'=' and the block's scale dtype", c.rest());
    auto d = c.dtype();
    if (!d) return d.status();
    s.block = BlockLevel{*size, *d};
    return {};
  }
  return syntax_error(base, std::string("a field: ") + std::string(kFieldList), field);
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets{
      {"nvfp4", "e2m1:packed-native(0):block[16]=ue4m3:tensor=f32",
       "NVIDIA NVFP4: e2m1 pairs, ue4m3 scale per 16, f32 tensor scale"},
      {"mxfp8", "e4m3:block[32]=ue8m0", "OCP MXFP8 (E4M3 elements)"},
      {"mxfp8-e5m2", "e5m2:block[32]=ue8m0", "OCP MXFP8 (E5M2 elements)"},
      {"mxfp4", "e2m1:packed-native(0):block[32]=ue8m0", "OCP MXFP4"},
      {"q8_0", "q8s:block[32]=f16", "ggml Q8_0 layout of scales (qscheme rounding)"},
      {"q4_0", "q4s:packed-u32(0):block[32]=f16", "ggml Q4_0-like: 4-bit symmetric, f16 per 32"},
  };
  return kPresets;
}

Result<Scheme> parse_scheme(std::string_view text) {
  for (const Preset& p : presets()) {
    if (text == p.name) return parse_scheme(p.expansion);
  }
  const std::size_t first_colon = text.find(':');
  const std::string_view head = text.substr(0, first_colon);
  Scheme s;
  if (auto v = value_from(head)) {
    s.value = *v;
  } else {
    return syntax_error(0, std::string("a value kind (") + std::string(kValueList) +
                               ") or a preset (nvfp4, mxfp8, mxfp8-e5m2, mxfp4, q8_0, q4_0)",
                        head);
  }
  bool have_store = false;
  bool have_mode = false;
  std::size_t pos = first_colon;
  while (pos != std::string_view::npos) {
    const std::size_t start = pos + 1;
    const std::size_t next = text.find(':', start);
    const std::string_view field = text.substr(start, next == std::string_view::npos ? next : next - start);
    if (field.empty()) return syntax_error(start, std::string("a field: ") + std::string(kFieldList), "");
    QSCHEME_RETURN_IF_ERROR(parse_field(field, start, s, have_store, have_mode));
    pos = next;
  }
  return s;
}

std::string format_scheme(const Scheme& s) {
  std::string out(to_string(s.value));
  switch (s.store.kind) {
    case StoreKind::native: break;
    case StoreKind::packed_native: out += ":packed-native(" + std::to_string(s.store.dim) + ")"; break;
    case StoreKind::packed_u32: out += ":packed-u32(" + std::to_string(s.store.dim) + ")"; break;
  }
  if (s.mode != Mode::sym) out += ":" + std::string(to_string(s.mode));
  if (s.block) {
    out += ":block[";
    const auto ext = s.block->size.extents();
    for (std::size_t i = 0; i < ext.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(ext[i]);
    }
    out += "]=";
    out += to_string(s.block->dtype);
  }
  if (s.axis) {
    out += ":axis(" + std::to_string(s.axis->dim) + ")=";
    out += to_string(s.axis->dtype);
  }
  if (s.tensor) {
    out += ":tensor=";
    out += to_string(*s.tensor);
  }
  return out;
}

}  // namespace qscheme
