#include "kit/kit.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "oracle/candidate.hpp"
#include "oracle/check.hpp"
#include "oracle/edge_tensors.hpp"
#include "reference/reference.hpp"
#include "scheme/checked.hpp"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"

namespace qscheme::kit {
namespace {

constexpr std::uint64_t kDefaultRows = 4, kDefaultCols = 256;

std::uint32_t get_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}

Finding failed_call(const char* kernel, int rc) {
  return {kernel, std::string("the ") + kernel + " kernel returned " + std::to_string(rc) +
                      " on an input the reference accepts (0 is success)"};
}

}  // namespace

Result<Target> make_target(const qscheme_kit_target& fns) {
  Target t;
  t.fns = fns;
  if (!fns.recipe) {
    return Status(ErrorCode::invalid_argument,
                  "qscheme_kit_target.recipe is NULL: name a recipe or profile (`qscheme recipes` lists them)");
  }
  auto r = find_recipe(fns.recipe);
  if (!r) return r.status();
  t.recipe = *r;
  auto s = recipe_scheme(*t.recipe, fns.scheme ? fns.scheme : "");
  if (!s) return s.status();
  t.scheme = *s;
  t.options = recipe_options(*t.recipe);
  t.format = t.recipe->format;
  if (!fns.quantize && !fns.dequantize && !fns.quantize_with_global_amax) {
    return Status(ErrorCode::invalid_argument,
                  "qscheme_kit_target has no kernel: set quantize, dequantize or quantize_with_global_amax");
  }
  if (fns.quantize_with_global_amax) {
    QuantizeOptions o = t.options;
    o.global_amax = 1.0f;
    if (const Status st = check_global_amax(t.scheme, rules_of(o), o); !st.ok()) {
      return Status(ErrorCode::invalid_argument, "qscheme_kit_target.quantize_with_global_amax under recipe " +
                                                     std::string(t.recipe->name) + " on " + format_scheme(t.scheme) +
                                                     ": " + st.message());
    }
  }
  if (fns.max_rows) t.max_rows = fns.max_rows;
  if (fns.max_cols) t.max_cols = fns.max_cols;
  if (t.format == ByteFormat::ggml) {
    t.block_cols = kGgmlBlockCodes;
  } else if (t.scheme.block) {
    t.block_cols = t.scheme.block->size.extents().back();
  }
  if (t.max_cols < t.block_cols) {
    return Status(ErrorCode::invalid_argument, "qscheme_kit_target.max_cols is " + std::to_string(t.max_cols) +
                                                   ", less than one block of " + format_scheme(t.scheme) + " (" +
                                                   std::to_string(t.block_cols) + " columns)");
  }
  // The largest case must have a layout: fail here, once, rather than skip every input.
  const std::uint64_t widest = t.max_cols / t.block_cols * t.block_cols;
  const std::uint64_t largest[] = {t.max_rows, widest};
  auto bytes = total_bytes(t.scheme, largest, t.format);
  if (!bytes) return bytes.status();
  return t;
}

std::optional<Case> make_case(const Target& t, std::span<const std::uint8_t> bytes) {
  // Missing header bytes read as 0, so that every input, the empty one first, is a case and
  // reaches the kernel (libFuzzer stops when no input gains coverage).
  std::uint8_t head[7] = {};
  if (!bytes.empty()) std::memcpy(head, bytes.data(), std::min(bytes.size(), sizeof head));
  const std::span<const std::uint8_t> data = bytes.size() >= sizeof head ? bytes : std::span<const std::uint8_t>(head);
  Case c;
  const std::uint64_t rows = 1 + data[0] % t.max_rows;
  const std::uint64_t cols = t.block_cols > 1 ? t.block_cols * (1 + data[1] % (t.max_cols / t.block_cols))
                                              : 1 + data[1] % t.max_cols;
  c.shape = {rows, cols};
  auto l = make_layout(t.scheme, c.shape);
  if (!l) return std::nullopt;
  std::vector<oracle::EdgeInput> inputs = oracle::edge_inputs(t.scheme, *l, get_le32(data.data() + 2));
  // The kit passes no scales, and what a kernel does with NaN or inf is its own contract.
  std::erase_if(inputs, [](const oracle::EdgeInput& in) { return !oracle::calibrated_and_finite(in); });
  if (inputs.empty()) return std::nullopt;
  oracle::EdgeInput& pick = inputs[data[6] % inputs.size()];
  c.name = std::move(pick.name);
  c.x = std::move(pick.x);
  for (std::size_t i = 7; i + 6 <= data.size(); i += 6) {
    const std::size_t at = (std::size_t{data[i]} | std::size_t{data[i + 1]} << 8) % c.x.size();
    float v;
    std::memcpy(&v, data.data() + i + 2, 4);
    if (!std::isfinite(v)) continue;
    c.x[at] = v;
    ++c.overwritten;
  }
  float top = 0;
  for (float v : c.x) top = std::max(top, std::fabs(v));
  const float share[] = {1.0f, 0.5f, 1.0f / 3.0f, 1.0f / 64.0f, 0.0f, 2.0f};
  c.global_amax = std::min(top * share[data[5] % std::size(share)], std::numeric_limits<float>::max());
  return c;
}

std::optional<Finding> run_case(const Target& t, const Case& c) {
  // The reference's tensor: also what a dequantize kernel reads. An input the recipe has no
  // output for (a scale that cannot be stored, say) is not the kernel's fault: skipped.
  auto q = reference::quantize(t.scheme, c.shape, c.x, t.options);
  if (!q) return std::nullopt;
  auto size = total_bytes(t.scheme, c.shape, t.format);
  if (!size) return Finding{"setup", size.status().to_string()};
  const std::uint64_t n = c.x.size();
  const std::uint64_t rows = c.shape[0], cols = c.shape[1];

  oracle::CheckRequest rq;
  rq.scheme = t.scheme;
  rq.shape = c.shape;
  rq.x = c.x;
  rq.options = t.options;
  rq.recipe = std::string(t.recipe->name);
  auto judge = [&](const char* kernel, const oracle::CheckRequest& request,
                   const oracle::Candidate& cand) -> std::optional<Finding> {
    auto report = oracle::check(request, cand);
    if (!report) return Finding{kernel, "qscheme check could not compare the output: " + report.status().to_string()};
    if (report->identical) return std::nullopt;
    return Finding{kernel, oracle::to_text(*report)};
  };
  // A quantize kernel's bytes, written over a recognisable fill (bytes it leaves unwritten show
  // as differences), against the request.
  auto judge_bytes = [&](const char* kernel, const oracle::CheckRequest& request,
                         auto&& call) -> std::optional<Finding> {
    std::vector<std::uint8_t> out(*size, 0xA5);
    const int rc = call(out.data(), out.size());
    if (rc != 0) return failed_call(kernel, rc);
    auto cand = oracle::candidate_from_bytes(t.scheme, c.shape, std::move(out), rules_of(t.options), t.format);
    if (!cand) {
      return Finding{kernel, "its bytes cannot be read as " + format_scheme(t.scheme) + ": " + cand.status().to_string()};
    }
    return judge(kernel, request, *cand);
  };

  if (t.fns.quantize) {
    auto f = judge_bytes("quantize", rq, [&](std::uint8_t* out, std::size_t size) {
      return t.fns.quantize(c.x.data(), rows, cols, out, size);
    });
    if (f) return f;
  }
  if (t.fns.quantize_with_global_amax) {
    // Against the reference under the same amax; an amax it has no output for is skipped.
    oracle::CheckRequest with = rq;
    with.options.global_amax = c.global_amax;
    if (reference::quantize(t.scheme, c.shape, c.x, with.options)) {
      auto f = judge_bytes("quantize_with_global_amax", with, [&](std::uint8_t* out, std::size_t size) {
        return t.fns.quantize_with_global_amax(c.x.data(), rows, cols, c.global_amax, out, size);
      });
      if (f) return f;
    }
  }
  if (t.fns.dequantize) {
    auto bytes = reference::encode(*q, t.format);
    if (!bytes) return Finding{"setup", bytes.status().to_string()};
    oracle::Candidate cand;
    cand.kind = oracle::CandidateKind::dequantized;
    cand.values.assign(n, std::numeric_limits<float>::quiet_NaN());
    const int rc = t.fns.dequantize(bytes->data(), bytes->size(), rows, cols, cand.values.data());
    if (rc != 0) return failed_call("dequantize", rc);
    if (auto f = judge("dequantize", rq, cand)) return f;
  }
  return std::nullopt;
}

std::string describe(const Case& c) {
  constexpr std::size_t kShown = 256;
  std::string s = "input: shape [" + std::to_string(c.shape[0]) + ", " + std::to_string(c.shape[1]) +
                  "], edge-case tensor '" + c.name + "' with " + std::to_string(c.overwritten) +
                  " element(s) set by the fuzzer, global amax " + std::to_string(c.global_amax) + "; values (%a):";
  char buf[32];
  for (std::size_t i = 0; i < c.x.size() && i < kShown; ++i) {
    std::snprintf(buf, sizeof buf, "%s%a", i % 8 ? " " : "\n  ", static_cast<double>(c.x[i]));
    s += buf;
  }
  if (c.x.size() > kShown) s += "\n  ... " + std::to_string(c.x.size() - kShown) + " more (replay the saved input)";
  return s + "\n";
}

}  // namespace qscheme::kit
