// `qscheme verify`: the main job. Runs the enumeration proof of the scheme model: every tuple of
// the finite space against every shape of the fixed set, checking that each pair is either
// supported with a self-consistent layout or rejected with a typed error, and that the text and
// binary forms round-trip. Then runs both engines (reference/ and fast/) on every supported tuple
// over the shapes of the set with built-in edge-case tensors, under both profiles, and reports
// their agreement (oracle/verify_engines.hpp). The extension space (qscheme's kinds beyond Burn)
// gets the same scheme checks, and on its small shapes a reference round trip and the fast
// engine's typed refusal. Exits 1 if any check fails or the engines disagree.
#include <fmt/core.h>

#include <map>
#include <memory>
#include <optional>

#include "fast/fast.hpp"
#include "reference/reference.hpp"
#include "scheme/binary.hpp"
#include "scheme/layout.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"
#include "tools/progress.hpp"
#include "tools/command.hpp"
#include "oracle/engine.hpp"
#include "tools/engine_options.hpp"
#include "oracle/verify_engines.hpp"

namespace qscheme::cli {
namespace {

struct Tally {
  std::uint64_t checked = 0;
  std::uint64_t failed = 0;
  std::vector<std::string> first_failures;

  void check(bool ok, const std::function<std::string()>& what) {
    ++checked;
    if (ok) return;
    ++failed;
    if (first_failures.size() < 10) first_failures.push_back(what());
  }
};

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

// What must hold of a layout whatever the scheme: the parts add up and nothing is lost.
bool layout_consistent(const Scheme& s, const Layout& l) {
  std::uint64_t scales = 1;
  for (std::size_t i = 0; i < l.shape.size(); ++i) {
    if (l.block[i] == 0 || l.blocks_per_dim[i] * l.block[i] < l.shape[i]) return false;
    scales *= l.blocks_per_dim[i];
  }
  if (s.has_inner_level() && scales != l.scales) return false;
  if (!s.has_inner_level() && l.scales != 1) return false;
  const std::uint64_t capacity = l.storage_elements * static_cast<std::uint64_t>(l.codes_per_storage_element);
  return capacity >= l.elements &&
         l.total_bytes == l.value_bytes + l.scale_bytes + l.global_bytes + l.zero_point_bytes &&
         l.zero_points == (s.affine() ? l.scales : 0u) &&
         l.value_bytes == l.storage_elements * static_cast<std::uint64_t>(l.storage_element_bytes) &&
         l.global_bytes == (s.two_level() ? 4u : 0u);
}

// What the enumeration proof found over one space of tuples.
struct SpaceSweep {
  std::map<std::string, int> tuple_rejections;
  std::map<std::string, int> pair_rejections;
  int supported = 0;
  std::uint64_t pairs_ok = 0;
  std::uint64_t pairs = 0;
};

// An extension tuple on a small supported shape: the reference quantizes with given scales (0.5,
// global 2; affine: zero points alternating between the kind's lo and its midpoint), its bytes
// decode to the same tensor and dequantize alike, and the fast engine gives the same tensor.
void check_extension_pair(const Scheme& s, const std::vector<std::uint64_t>& shape, const Layout& l, Tally& tally) {
  const std::string what = format_scheme(s) + " on " + shape_text(shape);
  std::vector<float> x(l.elements);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 11) - 3) * 0.75f;
  QuantizeOptions o;
  o.scales = GivenScales{std::vector<float>(l.scales, 0.5f), s.two_level() ? std::optional<float>(2.0f) : std::nullopt};
  if (s.affine()) {
    const ValueInfo& vi = info(s.value);
    for (std::uint64_t j = 0; j < l.scales; ++j) o.scales->zero_points.push_back(j % 2 ? vi.lo : (vi.lo + vi.hi) / 2);
  }
  auto q = reference::quantize(s, shape, x, o);
  tally.check(q.ok(), [&] { return "extension: reference quantize: " + what + ": " + q.status().to_string(); });
  if (!q) return;
  auto bytes = reference::encode(*q);
  auto back = bytes ? reference::decode(s, shape, *bytes) : Result<QuantizedTensor>(bytes.status());
  tally.check(back.ok() && back->codes == q->codes && back->scale_bits == q->scale_bits && back->global_bits == q->global_bits &&
                  back->zero_points == q->zero_points,
              [&] { return "extension: bytes round trip: " + what; });
  auto y = reference::dequantize(*q);
  auto y2 = back ? reference::dequantize(*back) : Result<std::vector<float>>(back.status());
  tally.check(y.ok() && y2.ok() && *y == *y2, [&] { return "extension: dequantize after decode: " + what; });
  auto f = fast::quantize(s, shape, x, o);
  tally.check(f.ok() && *f == *q, [&] { return "extension: the fast engine's tensor differs: " + what; });
}

SpaceSweep sweep_space(const std::vector<Scheme>& space, bool extension, Tally& tally, TerminalProgress& progress,
                       std::uint64_t& done, std::uint64_t total) {
  SpaceSweep r;
  for (const Scheme& s : space) {
    progress.update(done++, total);
    const std::string text = format_scheme(s);
    auto reparsed = parse_scheme(text);
    tally.check(reparsed.ok() && *reparsed == s, [&] { return "text round trip: " + text; });
    auto decoded = decode_scheme(encode_scheme(s));
    tally.check(decoded.ok() && *decoded == s, [&] { return "binary round trip: " + text; });

    const Status tuple_status = validate_scheme(s);
    if (tuple_status.ok()) ++r.supported;
    else ++r.tuple_rejections[std::string(to_code(tuple_status.code()))];

    for (const auto& shape : shape_set()) {
      ++r.pairs;
      const Status st = validate(s, shape);
      auto layout = make_layout(s, shape);
      tally.check(st.code() == layout.status().code(),
                  [&] { return "validate and make_layout disagree: " + text + " on " + shape_text(shape); });
      if (!tuple_status.ok()) {
        // A rejected tuple is rejected on every shape, for the same reason.
        tally.check(st.code() == tuple_status.code(),
                    [&] { return "tuple rejection not stable across shapes: " + text + " on " + shape_text(shape); });
        continue;
      }
      if (!st.ok()) {
        tally.check(!st.message().empty(), [&] { return "rejection without a message: " + text; });
        ++r.pair_rejections[std::string(to_code(st.code()))];
        continue;
      }
      ++r.pairs_ok;
      tally.check(layout.ok() && layout_consistent(s, *layout),
                  [&] { return "inconsistent layout: " + text + " on " + shape_text(shape); });
      // The engines on the small shapes (the large one adds time, not cases).
      if (extension && layout.ok() && layout->elements <= 64) check_extension_pair(s, shape, *layout, tally);
    }
  }
  return r;
}

void print_sweep(const char* name, std::size_t tuples, const SpaceSweep& r) {
  fmt::print("{:<14} {} tuples: {} supported, {} rejected\n", name, tuples, r.supported, tuples - r.supported);
  for (const auto& [code, n] : r.tuple_rejections) fmt::print("  rejected      {:>6}  {}\n", n, code);
  fmt::print("shape set      {} shapes; {} (tuple, shape) pairs: {} with a layout, {} rejected\n",
             shape_set().size(), r.pairs, r.pairs_ok, r.pairs - r.pairs_ok);
  for (const auto& [code, n] : r.pair_rejections) fmt::print("  supported tuple rejected on a shape {:>6}  {}\n", n, code);
}

int run_verify(bool engines_too) {
  Tally tally;
  TerminalProgress progress("verify", "tuples");
  const std::uint64_t total = tuple_space().size() + extension_space().size();
  std::uint64_t done = 0;
  const SpaceSweep burn = sweep_space(tuple_space(), false, tally, progress, done, total);
  const SpaceSweep ext = sweep_space(extension_space(), true, tally, progress, done, total);
  progress.done();
  print_sweep("scheme space", tuple_space().size(), burn);
  print_sweep("extension", extension_space().size(), ext);
  fmt::print("  extension tuples on shapes of at most 64 elements: reference with given scales, bytes round trip, "
             "the fast engine's tensor the same\n");
  fmt::print("checks         {} run, {} failed\n", tally.checked, tally.failed);
  for (const std::string& f : tally.first_failures) fmt::print("  FAILED: {}\n", f);
  std::uint64_t disagreements = 0;
  if (engines_too) {
    TerminalProgress engines_progress("verify: reference vs fast", "tuples");
    const oracle::EngineAgreement a = oracle::compare_engines(engines_progress.callback());
    engines_progress.done();
    disagreements = a.disagreements();
    fmt::print("engines        reference vs fast ({}): {} supported tuples, {} (tuple, shape) pairs, {} tensor runs\n",
               fast::current_target(), a.tuples, a.pairs, a.tensors);
    fmt::print("  {:<38} {:>21} {:>21}\n", "agreement", "exact", "burn");
    for (const oracle::AgreementRow& r : a.rows) {
      fmt::print("  {:<38} {:>10}/{:<10} {:>10}/{:<10}\n", r.what, r.agreed[0], r.checked[0], r.agreed[1], r.checked[1]);
    }
    fmt::print("  disagreements {}\n", disagreements);
    for (const std::string& d : a.first_disagreements) fmt::print("  DISAGREE: {}\n", d);
  }
  const bool ok = tally.failed == 0 && disagreements == 0;
  fmt::print("verify         {}\n", ok ? "ok" : "FAILED");
  return ok ? kExitOk : kExitInternal;
}

}  // namespace

void add_verify(CLI::App& root, std::vector<Command>& out) {
  CLI::App* app = root.add_subcommand(
      "verify", "The main job: check every tuple of the scheme space against every shape of the fixed set");
  struct Args {
    bool scheme_only = false;
    std::optional<std::string> threads;
  };
  auto args = std::make_shared<Args>();
  app->add_flag("--scheme-only", args->scheme_only, "skip the reference-vs-fast engine comparison");
  add_threads_option(*app, args->threads);
  out.push_back({app, [args] {
                   if (Status st = apply_threads(args->threads); !st.ok()) return report(st);
                   return run_verify(!args->scheme_only);
                 }});
}

}  // namespace qscheme::cli
