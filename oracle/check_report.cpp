// The check report as JSON (docs/ORACLE.md lists the keys) and as text for people. The first
// line of the text says whether the candidate is identical under the checked recipe, and if not
// which point reproduces it.
#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "oracle/check.hpp"

namespace qscheme::oracle {
namespace {

std::string_view kind_name(CandidateKind k) {
  switch (k) {
    case CandidateKind::quantized: return "quantized";
    case CandidateKind::bytes: return "bytes";
    case CandidateKind::dequantized: return "dequantized";
  }
  return "?";
}

nlohmann::json num(float f) {
  if (std::isfinite(f)) return static_cast<double>(f);
  return std::isnan(f) ? "nan" : (f > 0 ? "inf" : "-inf");
}

nlohmann::ordered_json point_json(const Diagnosis& d) {
  nlohmann::ordered_json j;
  j["variant"] = d.name;
  j["description"] = d.description;
  j["recipe"] = d.point.recipe;
  j["changes"] = nlohmann::json::array();
  const auto fields = rule_fields();
  for (const RuleChange& c : d.point.changes) {
    if (c.field == fields.size()) {
      j["changes"].push_back({{"field", "packing"}, {"from", "normal"}, {"to", "reversed"}});
    } else {
      j["changes"].push_back({{"field", fields[c.field].name},
                              {"from", fields[c.field].choices[c.from].name},
                              {"to", fields[c.field].choices[c.to].name}});
    }
  }
  j["rules"] = format_rules(d.point.rules);
  j["packing_reversed"] = d.point.packing_reversed;
  return j;
}

std::string block_list(const std::vector<std::uint64_t>& blocks, std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < blocks.size() && i < shown; ++i) out += (i ? ", " : "") + std::to_string(blocks[i]);
  if (blocks.size() > shown) out += fmt::format(" and {} more", blocks.size() - shown);
  return out;
}

std::string names(const std::vector<Diagnosis>& ds) {
  std::string out;
  for (std::size_t i = 0; i < ds.size(); ++i) out += (i ? (i + 1 == ds.size() ? " and " : ", ") : "") + ds[i].name;
  return out;
}

// The verdict of the search, one line.
std::string verdict(const CheckReport& r) {
  if (!r.diagnosis.empty()) {
    return fmt::format("{} {} the candidate exactly", names(r.diagnosis), r.diagnosis.size() > 1 ? "reproduce" : "reproduces");
  }
  std::string out = "no recipe with up to two rules changed reproduces the candidate";
  if (r.closest) {
    const std::uint64_t missed = r.closest_elements + r.closest_scales;
    out += fmt::format("; closest: {}, reproduces all but {} {} in block{} {}", r.closest->name, missed,
                       r.closest_elements ? "element(s)" : "scale(s)", r.closest_blocks.size() == 1 ? "" : "s",
                       block_list(r.closest_blocks, 8));
    if (r.closest_elements && r.closest_scales) out += fmt::format(" ({} of them scales)", r.closest_scales);
  }
  if (r.search_capped) out += fmt::format(" (the search stopped at its budget after {} points)", r.points_tried);
  return out;
}

}  // namespace

std::string to_json(const CheckReport& r) {
  nlohmann::ordered_json j;
  j["result"] = r.identical ? "identical" : "differs";
  j["candidate_kind"] = kind_name(r.kind);
  j["recipe"] = r.checked_against;
  j["rules"] = r.rules;
  j["elements"] = r.elements;
  j["differing_elements"] = r.differing_elements;
  j["scales"] = r.scales;
  j["differing_scales"] = r.differing_scales;
  j["scales_compared"] = r.scales_compared;
  if (r.kind == CandidateKind::bytes) {
    j["bytes"] = r.bytes;
    j["differing_bytes"] = r.differing_bytes;
  }
  if (r.kind != CandidateKind::dequantized) {
    j["codes_with_scale_difference"] = r.codes_with_scale_difference;
    j["codes_under_same_scale"] = r.codes_under_same_scale;
    j["differing_values"] = r.differing_values;
    j["differing_values_capped"] = r.values_capped;
  }
  j["zero_signs_equal"] = r.zero_signs_equal;
  j["non_finite_scales"] = r.non_finite_scales;
  j["non_finite_global"] = r.non_finite_global;
  j["differing_blocks"] = r.differing_blocks;
  j["first"] = nlohmann::json::array();
  for (const Difference& d : r.first) {
    nlohmann::ordered_json e;
    e["index"] = d.index;
    e["input"] = num(d.input);
    e["expected_code"] = d.expected_code;
    e["found_code"] = d.found_code ? nlohmann::json(*d.found_code) : nlohmann::json(nullptr);
    e["block"] = d.block;
    e["scale"] = num(d.scale);
    e["expected_value"] = num(d.expected_value);
    e["found_value"] = d.found_value ? num(*d.found_value) : nlohmann::json(nullptr);
    j["first"].push_back(e);
  }
  j["blocks"] = nlohmann::json::array();
  for (const BlockDifference& b : r.blocks) {
    nlohmann::ordered_json e;
    e["block"] = b.block;
    e["differing_elements"] = b.elements;
    if (r.kind != CandidateKind::dequantized) e["differing_values"] = b.values;
    e["scale_differs"] = b.scale_differs;
    e["expected_scale"] = b.expected_scale ? num(*b.expected_scale) : nlohmann::json(nullptr);
    e["found_scale"] = b.found_scale ? num(*b.found_scale) : nlohmann::json(nullptr);
    e["diagnosis"] = b.diagnosis;
    j["blocks"].push_back(e);
  }
  j["diagnosis"] = nlohmann::json::array();
  for (const Diagnosis& d : r.diagnosis) j["diagnosis"].push_back(point_json(d));
  j["stage"] = r.stage;
  if (r.closest) {
    nlohmann::ordered_json c = point_json(*r.closest);
    c["differing_elements"] = r.closest_elements;
    c["differing_scales"] = r.closest_scales;
    c["blocks"] = r.closest_blocks;
    j["closest"] = c;
  } else {
    j["closest"] = nullptr;
  }
  j["search"] = {{"points", r.points_tried}, {"capped", r.search_capped}};
  return j.dump(1) + "\n";
}

std::string to_text(const CheckReport& r) {
  std::string out;
  const bool values = r.kind == CandidateKind::dequantized;
  const std::string zeros = r.zero_signs_equal ? " (an integer kind: +0 and -0 count as the same value)" : "";
  if (r.identical) {
    if (values) {
      out += fmt::format("identical under recipe {}: {} values match bit for bit{}\n", r.checked_against, r.elements, zeros);
    } else if (r.scales_compared) {
      out += fmt::format("identical under recipe {}: {} elements and {} scale(s) match bit for bit\n", r.checked_against,
                         r.elements, r.scales);
    } else {
      out += fmt::format("identical under recipe {}: {} codes match bit for bit (no scales given)\n", r.checked_against,
                         r.elements);
    }
    return out;
  }
  out += fmt::format("DIFFERS from recipe {}: {}\n", r.checked_against, verdict(r));
  if (values) {
    out += fmt::format("  values: {} of {} differ{}\n", r.differing_elements, r.elements, zeros);
  } else {
    out += fmt::format("  codes: {} of {} differ ({} in blocks whose scale differs, {} under the same scale); dequantized "
                       "values: {} differ{}\n",
                       r.differing_elements, r.elements, r.codes_with_scale_difference, r.codes_under_same_scale,
                       r.differing_values, r.values_capped ? " (in the first 4096 blocks that differ)" : "");
    if (r.scales_compared) out += fmt::format("  scales: {} of {} differ\n", r.differing_scales, r.scales);
  }
  if (r.kind == CandidateKind::bytes) out += fmt::format("  bytes: {} of {} differ\n", r.differing_bytes, r.bytes);
  if (!r.non_finite_scales.empty()) {
    out += fmt::format("  the candidate's scale is inf or NaN in block{} {}\n", r.non_finite_scales.size() == 1 ? "" : "s",
                       block_list(r.non_finite_scales, 8));
  }
  if (r.non_finite_global) out += "  the candidate's global scale is inf or NaN\n";
  if (!r.first.empty()) {
    out += fmt::format("  first differences ({} of {}):\n", r.first.size(), r.differing_elements);
    out += fmt::format("  {:>8} {:>14} {:>9} {:>9} {:>6} {:>14} {:>14} {:>14}\n", "index", "input", "expected", "found",
                       "block", "scale", "deq expected", "deq found");
    for (const Difference& d : r.first) {
      out += fmt::format("  {:>8} {:>14.8g} {:>9} {:>9} {:>6} {:>14.8g} {:>14.8g} {:>14}\n", d.index, d.input,
                         values ? "-" : std::to_string(d.expected_code), d.found_code ? std::to_string(*d.found_code) : "-",
                         d.block, d.scale, d.expected_value, d.found_value ? fmt::format("{:.8g}", *d.found_value) : "-");
    }
  }
  if (!r.blocks.empty()) {
    out += fmt::format("  blocks that differ ({} of {}):\n", r.blocks.size(), r.differing_blocks);
    out += fmt::format("  {:>8} {:>9} {:>14} {:>14}  {}\n", "block", "elements", "scale", "found scale", "diagnosis");
    for (const BlockDifference& b : r.blocks) {
      out += fmt::format("  {:>8} {:>9} {:>14} {:>14}  {}\n", b.block, b.elements,
                         b.expected_scale ? fmt::format("{:.8g}", *b.expected_scale) : "-",
                         b.found_scale ? fmt::format("{:.8g}", *b.found_scale) : "-", b.diagnosis);
    }
  }
  for (const Diagnosis& d : r.diagnosis) {
    out += fmt::format("diagnosis: {}: {} (reproduces the candidate exactly)\n", d.name, d.description);
  }
  if (r.diagnosis.empty()) out += "diagnosis: " + verdict(r) + "\n";
  return out;
}

}  // namespace qscheme::oracle
