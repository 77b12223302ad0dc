#include "oracle/stats.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>

#include "fast/fast.hpp"
#include "reference/reference.hpp"
#include "reference/values.hpp"
#include "scheme/layout.hpp"
#include "scheme/printable.hpp"
#include "scheme/text.hpp"

namespace qscheme::oracle {
namespace {

// Whether each code is one of the kind's two extremes (the largest magnitude each side), by
// code; integer kinds by value, float kinds by bit pattern.
struct Extremes {
  explicit Extremes(Value v) : vi_(info(v)) {
    if (!vi_.is_float) return;
    table_.assign(std::size_t{1} << vi_.bits, false);
    for (std::int32_t c = 0; c < (1 << vi_.bits); ++c) {
      const auto e = reference::code_value(v, c);
      table_[c] = e.ok() && std::fabs(static_cast<double>(e->f32)) == vi_.hi;
    }
  }
  bool operator()(std::int32_t c) const {
    if (!vi_.is_float) return c == vi_.lo || c == vi_.hi;
    return c >= 0 && static_cast<std::size_t>(c) < table_.size() && table_[c];
  }

 private:
  const ValueInfo& vi_;
  std::vector<bool> table_;
};

Result<SchemeStats> one(const std::string& name, Shape shape, std::span<const float> x, const QuantizeOptions& options) {
  auto scheme = parse_scheme(name);
  if (!scheme) return scheme.status();
  auto layout = make_layout(*scheme, shape);
  if (!layout) return layout.status();
  auto q = fast::quantize(*scheme, shape, x, options);
  if (!q) return q.status();
  auto y = fast::dequantize(*q);
  if (!y) return y.status();
  SchemeStats s;
  s.name = name;
  s.scheme = format_scheme(*scheme);
  s.elements = layout->elements;
  s.blocks = layout->scales;
  s.bytes = layout->total_bytes;
  s.bits_per_element = s.elements ? static_cast<double>(s.bytes) * 8 / static_cast<double>(s.elements) : 0.0;
  const Extremes extreme(scheme->value);
  long double signal = 0, noise = 0;
  std::uint64_t saturated = 0;
  std::vector<bool> nonzero(layout->scales, false);
  find_element(*layout, [&](std::uint64_t i, std::uint64_t b) {
    const double xi = x[i], yi = (*y)[i];
    const double d = xi - yi;
    s.max_abs_error = std::max(s.max_abs_error, std::fabs(d));
    signal += static_cast<long double>(xi) * xi;
    noise += static_cast<long double>(d) * d;
    if (extreme(q->codes[i]) && std::fabs(xi) > std::fabs(yi)) ++saturated;
    if (yi != 0.0) nonzero[b] = true;
    return false;
  });
  if (s.elements) {
    s.rmse = static_cast<double>(std::sqrt(noise / static_cast<long double>(s.elements)));
    s.saturated = static_cast<double>(saturated) / static_cast<double>(s.elements);
  }
  if (noise == 0) {
    s.sqnr_db = std::numeric_limits<double>::infinity();
  } else {
    s.sqnr_db = signal == 0 ? -std::numeric_limits<double>::infinity()
                            : static_cast<double>(10 * std::log10(signal / noise));
  }
  if (s.blocks) {
    s.zero_blocks = static_cast<double>(std::count(nonzero.begin(), nonzero.end(), false)) / static_cast<double>(s.blocks);
  }
  s.dequantized = std::move(*y);
  return s;
}

// JSON has no infinity: an infinite SQNR is written as null.
nlohmann::ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::vector<std::string> split_schemes(std::string_view list) {
  std::vector<std::string> out;
  while (true) {
    const std::size_t cut = list.find(';');
    std::string_view item = list.substr(0, cut);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (cut == std::string_view::npos) return out;
    list.remove_prefix(cut + 1);
  }
}

Result<std::vector<SchemeStats>> scheme_stats(std::span<const std::string> schemes, Shape shape,
                                              std::span<const float> x, const QuantizeOptions& options) {
  if (schemes.empty()) return Status(ErrorCode::invalid_argument, "no scheme was given (e.g. 'q8_0;q4_0;nvfp4')");
  std::vector<SchemeStats> out;
  for (const std::string& name : schemes) {
    auto s = one(name, shape, x, options);
    if (!s) return Status(s.status().code(), "scheme " + quote(name) + ": " + s.status().message(), s.status().index());
    out.push_back(std::move(*s));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SchemeStats& a, const SchemeStats& b) { return a.bits_per_element < b.bits_per_element; });
  return out;
}

std::string stats_json(std::span<const SchemeStats> stats) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const SchemeStats& s : stats) {
    nlohmann::ordered_json r;
    r["name"] = s.name;
    r["scheme"] = s.scheme;
    r["elements"] = s.elements;
    r["blocks"] = s.blocks;
    r["bytes"] = s.bytes;
    r["bits_per_element"] = s.bits_per_element;
    r["max_abs_error"] = s.max_abs_error;
    r["rmse"] = s.rmse;
    r["sqnr_db"] = finite_or_null(s.sqnr_db);
    r["saturated"] = s.saturated;
    r["zero_blocks"] = s.zero_blocks;
    rows.push_back(std::move(r));
  }
  return rows.dump(2) + "\n";
}

std::string stats_text(std::span<const SchemeStats> stats) {
  std::string out = fmt::format("{:<12} {:>9} {:>13} {:>13} {:>9} {:>10} {:>11}  {}\n", "scheme", "bits/elem", "max abs err",
                                "rmse", "sqnr dB", "saturated", "zero blocks", "canonical");
  for (const SchemeStats& s : stats) {
    out += fmt::format("{:<12} {:>9.4f} {:>13.6g} {:>13.6g} {:>9.2f} {:>9.4f}% {:>10.4f}%  {}\n", s.name,
                       s.bits_per_element, s.max_abs_error, s.rmse, s.sqnr_db, 100 * s.saturated, 100 * s.zero_blocks,
                       s.scheme);
  }
  return out;
}

}  // namespace qscheme::oracle
