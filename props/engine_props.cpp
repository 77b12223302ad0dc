// Properties of the engines: fast/ against reference/, byte round trips, error bounds, order,
// idempotence, calibration bounds, and the relation between the two profiles.
#include <algorithm>
#include <bit>
#include <rapidcheck/boost_test.h>

#include <boost/test/unit_test.hpp>
#include <cfloat>
#include <cmath>
#include <iostream>
#include <map>
#include <random>

#include "fast/bytes_plan.hpp"
#include "fast/fast.hpp"
#include "fast/log2f_thresholds.hpp"
#include "fast/output_dtype.hpp"
#include "oracle/edge_tensors.hpp"
#include "props/engine_support.h"
#include "props/generators.h"
#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/recipes.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"

using namespace qscheme;
using namespace qscheme::props;

namespace {

// Occasionally breaks a case so that the rejection paths are compared as well: a NaN or an
// infinity in x, a negative / NaN given scale, or several zero given scales (which of their
// blocks names the error depends on element order when blocks are N-D).
Case maybe_broken(Case c) {
  const int what = *rc::gen::inRange(0, 12);
  if (what == 0 && !c.x.empty()) {
    c.x[*rc::gen::inRange<std::size_t>(0, c.x.size())] = *rc::gen::element(NAN, INFINITY, -INFINITY);
  } else if (what == 1 && c.options.scales && !c.options.scales->block.empty()) {
    c.options.scales->block[*rc::gen::inRange<std::size_t>(0, c.options.scales->block.size())] =
        *rc::gen::element(-1.0f, NAN, INFINITY, -0.0f);
  } else if (what == 2 && c.options.scales && !c.options.scales->block.empty()) {
    for (float& s : c.options.scales->block) {
      if (*rc::gen::inRange(0, 2) == 0) s = 0.0f;
    }
  }
  return c;
}

void check_same_result(const Result<QuantizedTensor>& r, const Result<QuantizedTensor>& f) {
  RC_ASSERT(r.ok() == f.ok());
  if (!r.ok()) {
    RC_ASSERT(to_code(r.status().code()) == to_code(f.status().code()));
    RC_ASSERT(r.status().index() == f.status().index());
    RC_ASSERT(r.status().message() == f.status().message());
    return;
  }
  RC_ASSERT(r->codes == f->codes);
  RC_ASSERT(r->scale_bits == f->scale_bits);
  RC_ASSERT(r->global_bits == f->global_bits);
  RC_ASSERT(*r == *f);
}

// c's fused bytes (Burn's layout) under both output policies, held to the reference's result r:
// its encoded bytes, or its error with the output untouched under untouched_on_error.
void require_fused_bytes(const Case& c, const Layout& l, const Result<QuantizedTensor>& r) {
  const Result<std::vector<std::uint8_t>> want = r.ok() ? reference::encode(*r) : Result<std::vector<std::uint8_t>>(r.status());
  require_bytes_under_both_policies(
      l.total_bytes, want,
      [&](std::uint8_t* out, std::size_t n, fast::OutputPolicy pol) {
        return fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out, n, pol);
      },
      [](const std::vector<std::uint8_t>&, fast::OutputPolicy) {});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(engines)

RC_BOOST_PROP(fast_matches_reference_for_every_supported_scheme, ()) {
  const Case c = maybe_broken(*any_case());
  RC_CLASSIFY(c.options.scales.has_value(), "given scales");
  RC_CLASSIFY(c.options.profile == Profile::burn, "burn");
  RC_CLASSIFY(c.options.calibration == Calibration::absmean, "absmean");
  RC_CLASSIFY(c.scheme.two_level(), "two levels");
  RC_TAG(info(c.scheme.value).is_float ? "float kind" : "integer kind");
  RC_LOG() << c << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  const auto f = fast::quantize(c.scheme, c.shape, c.x, c.options);
  RC_TAG(r.ok() ? std::string("accepted") : std::string(to_code(r.status().code())));
  check_same_result(r, f);
  if (!r.ok()) return;
  const auto rb = reference::encode(*r);
  const auto fb = fast::encode(*f);
  RC_ASSERT(rb.ok());
  RC_ASSERT(fb.ok());
  RC_ASSERT(*rb == *fb);
  const auto rd = reference::dequantize(*r);
  const auto fd = fast::dequantize(*f);
  RC_ASSERT(rd.ok());
  RC_ASSERT(fd.ok());
  RC_ASSERT(same_f32_bits(*rd, *fd));
}

// The edge-case inputs every engine comparison iterates (oracle/edge_tensors.hpp), one drawn
// per case over drawn schemes, shapes and options: fast/ gives the reference's tensor or error,
// bytes and dequantized bits, and its fused path the same bytes.
RC_BOOST_PROP(fast_matches_reference_on_the_edge_inputs, ()) {
  Case c;
  c.scheme = *supported_scheme();
  c.shape = *rc::gen::suchThat(shape_for(c.scheme), [s = c.scheme](const std::vector<std::uint64_t>& sh) {
    return validate(s, sh).ok();
  });
  const Layout l = make_layout(c.scheme, c.shape).value();
  const auto inputs = oracle::edge_inputs(c.scheme, l, *rc::gen::arbitrary<std::uint32_t>());
  const auto& in = inputs[*rc::gen::inRange<std::size_t>(0, inputs.size())];
  c.x = in.x;
  c.options.profile = *rc::gen::element(Profile::exact, Profile::burn);
  c.options.calibration = in.scales ? Calibration::minmax : *rc::gen::element(Calibration::minmax, Calibration::absmean);
  c.options.scales = in.scales;
  RC_TAG(in.name);
  RC_LOG() << c << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  check_same_result(r, fast::quantize(c.scheme, c.shape, c.x, c.options));
  std::vector<std::uint8_t> out(l.total_bytes, 0xA5);
  const Status st = fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out.data(),
                                            out.size(), fast::OutputPolicy::untouched_on_error);
  RC_ASSERT(st.ok() == r.ok());
  if (!r.ok()) {
    RC_ASSERT(st.code() == r.status().code());
    RC_ASSERT(st.index() == r.status().index());
    RC_ASSERT(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xA5; }));
    return;
  }
  RC_ASSERT(out == reference::encode(*r).value());
  RC_ASSERT(same_f32_bits(fast::dequantize(*r).value(), reference::dequantize(*r).value()));
}

// Serialized tensors above the 2^15 elements below which a call stays on its thread, dequantized
// fused on 1-3 threads: each thread's share of the rows (one call of the kernel where rows follow
// each other in bytes and scales, unit by unit where they do not) gives the reference's values;
// a code no kind has, set in any row, or a block scale no dtype allows (an infinity, a NaN, a
// sign, ue8m0's 0xFF) gives the reference's error.
RC_BOOST_PROP(fused_dequantize_on_threads_gives_the_reference_values, ()) {
  static const std::vector<std::string> kSchemes = {"q8_0", "q4_0", "mxfp8", "mxfp4", "nvfp4", "q8s", "q8s:block[64]=bf16",
                                         "q4s:packed-u32(1):block[32]=f16", "e5m2:block[32]=ue8m0",
                                         "e4m3:block[16]=ue4m3:tensor=f32", "q8f:block[48]=f32"};
  const std::string text = *rc::gen::elementOf(kSchemes);
  const Scheme s = parse_scheme(text).value();
  const std::uint64_t L = *rc::gen::element<std::uint64_t>(512, 1000, 1024, 2048, 2080, 3000, 4096);
  const std::vector<std::uint64_t> shape{(32768 + L - 1) / L + *rc::gen::inRange<std::uint64_t>(0, 7), L};
  RC_PRE(validate(s, shape).ok());
  const Layout l = make_layout(s, shape).value();
  std::mt19937 rng(*rc::gen::arbitrary<std::uint32_t>());
  std::vector<float> x(l.elements);
  for (auto& v : x) v = std::normal_distribution<float>(0.0f, 4.0f)(rng);
  std::vector<std::uint8_t> bytes(l.total_bytes);
  RC_ASSERT(fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, bytes.data(), bytes.size()).ok());
  switch (*rc::gen::inRange(0, 6)) {
    case 0:
    case 1:
      bytes[*rc::gen::inRange<std::size_t>(0, l.value_bytes)] = *rc::gen::element<std::uint8_t>(0x80, 0xFF, 0x7F, 0x88, 0xF8);
      break;
    case 2: {
      // A scale's pattern (little-endian, as stored), taken as the block dtype's width allows.
      const std::size_t sb = info(s.scale_dtype()).bytes;
      const std::uint32_t pat = *rc::gen::element<std::uint32_t>(0x7C00, 0xFC00, 0x7E00, 0x8000, 0x7F80, 0xFF80, 0xFF,
                                                                 0x7F, 0x80, 0x7F800000, 0xFFC00000);
      const std::size_t at = l.value_bytes + sb * *rc::gen::inRange<std::size_t>(0, l.scale_bytes / sb);
      for (std::size_t i = 0; i < sb; ++i) bytes[at + i] = static_cast<std::uint8_t>(pat >> (8 * i));
      break;
    }
    default:
      break;
  }
  const auto q = reference::decode(s, shape, bytes);
  const auto want = q ? reference::dequantize(*q) : Result<std::vector<float>>(q.status());
  const unsigned th = *rc::gen::element(1u, 2u, 3u);
  RC_LOG() << text << " [" << shape[0] << ", " << L << "] threads " << th << " "
           << (want ? "valid" : want.status().to_string()) << "\n";
  struct OneThreadAfter {
    ~OneThreadAfter() { (void)fast::set_threads(1); }
  } reset;
  RC_ASSERT(fast::set_threads(th).ok());
  for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
    std::vector<float> got(l.elements, -1.0f);
    const Status st = fast::dequantize_from_bytes(s, shape, bytes.data(), bytes.size(), Profile::exact, got.data(),
                                                  got.size(), pol);
    RC_ASSERT(st.ok() == want.ok());
    if (!st.ok()) {
      RC_ASSERT(st.code() == want.status().code());
      RC_ASSERT(st.index() == want.status().index());
      if (pol == fast::OutputPolicy::untouched_on_error) {
        RC_ASSERT(std::all_of(got.begin(), got.end(), [](float v) { return v == -1.0f; }));
      }
      continue;
    }
    RC_ASSERT(same_f32_bits(got, *want));
  }
}

// Some elements set to the edges of the ue8m0 exponent rules (powers of two, an ulp either side,
// the half-up points of torchao-even, f32's largest values, up to 96 ulps below a power of two
// for log2f-floor), and some to -0, whose codes the
// zero-sign rules decide (onnx's e2m1 +0).
void set_rule_edges(std::vector<float>& x) {
  if (!x.empty() && *rc::gen::inRange(0, 2) == 0) {
    const int k = *rc::gen::inRange(0, 8);
    for (int i = 0; i < k; ++i) {
      const std::uint32_t base = *rc::gen::element(0x3F800000u, 0x3FC00000u, 0x3FE00000u, 0x3FF00000u, 0x7F700000u,
                                                   0x7F780000u, 0x00400000u, 0x00800000u);
      // An ulp either side, or up to 96 below: log2f-floor's thresholds lie 0 to 90 ulps below 2^n.
      const int ulps = *rc::gen::inRange(0, 4) == 0 ? *rc::gen::inRange(-96, 0) : *rc::gen::inRange(-1, 2);
      const std::uint32_t bits = base + static_cast<std::uint32_t>(ulps) +
                                 (base >= 0x00800000u && base < 0x7F000000u
                                      ? static_cast<std::uint32_t>(*rc::gen::inRange(-8, 8)) << 23
                                      : 0u);
      x[*rc::gen::inRange<std::size_t>(0, x.size())] = f32_from_bits(bits | (*rc::gen::arbitrary<bool>() ? 0x80000000u : 0u));
    }
  }
  for (int i = x.empty() ? 0 : *rc::gen::inRange(0, 3); i > 0; --i) {
    x[*rc::gen::inRange<std::size_t>(0, x.size())] = -0.0f;
  }
}

// A case of c.scheme under the recipe's options: a shape it accepts, hard-case data with some
// elements at the rules' edges.
void fill_recipe_case(Case& c, const Recipe& recipe) {
  c.shape = *rc::gen::suchThat(shape_for(c.scheme), [s = c.scheme](const std::vector<std::uint64_t>& sh) {
    return validate(s, sh).ok();
  });
  const Layout l = make_layout(c.scheme, c.shape).value();
  if (*rc::gen::inRange(0, 3) == 0) {
    // One of the edge-case inputs every engine comparison iterates (ties after scaling, the least
    // rounding boundary, scale boundaries, ...), as the recipe's calibration sees them.
    const auto inputs = oracle::edge_inputs(c.scheme, l, *rc::gen::arbitrary<std::uint32_t>());
    const auto& in = inputs[*rc::gen::inRange<std::size_t>(0, inputs.size())];
    RC_TAG(in.name);
    c.x = in.x;
  } else {
    c.x = *tensor_for(c.scheme, l);
    set_rule_edges(c.x);
  }
  c.options = recipe_options(recipe, {});
}

// A recipe that names its schemes (the profiles, which take any, are the properties above), and
// one of them: "[...]" (any block) as a drawn extent.
std::pair<const Recipe*, Scheme> recipe_and_scheme() {
  // Profile onnx accepts any scheme but runs only on one level of given f32 scales: these.
  constexpr std::string_view kOnnxSchemes =
      "q8s:block[...]=f32; q8f:block[...]=f32; q4s:packed-u32(0):block[...]=f32; q2f:block[...]=f32; "
      "e4m3:block[...]=f32; e5m2:block[...]=f32; e2m1:packed-u32(0):block[...]=f32";
  std::vector<const Recipe*> named;
  for (const Recipe& r : recipes())
    if (r.schemes != "any" || r.name == "onnx") named.push_back(&r);
  const Recipe* r = *rc::gen::elementOf(named);
  std::vector<std::string> texts;
  std::string_view rest = r->name == "onnx" ? kOnnxSchemes : r->schemes;
  while (!rest.empty()) {
    const std::size_t semi = std::min(rest.find(';'), rest.size());
    std::string t(rest.substr(0, semi));
    rest.remove_prefix(std::min(semi + 1, rest.size()));
    while (!t.empty() && t.front() == ' ') t.erase(0, 1);
    if (const std::size_t dots = t.find("[...]"); dots != std::string::npos) {
      t.replace(dots, 5, "[" + std::to_string(*rc::gen::element(1, 8, 16, 32, 33)) + "]");
    }
    texts.push_back(t);
  }
  return {r, parse_scheme(*rc::gen::elementOf(texts)).value()};
}

// Both engines on case c of the recipe (x and shape filled): the same result, bytes and values, or
// the same error with the output untouched.
void check_recipe_case(Case c, const Recipe* recipe) {
  const Layout l = make_layout(c.scheme, c.shape).value();
  // A recipe of given scales (torch-qint8, onnx) gets them but now and then; the others now and
  // then (rejected).
  const bool given_source = recipe->rules.source == rule::Source::given_f32;
  if (*rc::gen::inRange(0, 6) == 0 ? !given_source : given_source) {
    c.options.scales = *given_scales_for(c.scheme, l);
  }
  c = maybe_broken(std::move(c));
  RC_TAG(std::string(recipe->name));
  RC_LOG() << "recipe " << recipe->name << ", " << c << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  const auto f = fast::quantize(c.scheme, c.shape, c.x, c.options);
  if (!f.ok() && f.status().message().find("does not run this point") != std::string::npos) {
    RC_ASSERT(f.status().code() == ErrorCode::unsupported_profile);
    RC_TAG("not run by the fast engine yet");
    return;
  }
  check_same_result(r, f);
  std::vector<std::uint8_t> out(l.total_bytes, 0xA5);
  const Status st = fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out.data(),
                                            out.size(), fast::OutputPolicy::untouched_on_error);
  RC_ASSERT(st.ok() == r.ok());
  if (!r.ok()) {
    RC_ASSERT(st.to_string() == r.status().to_string());
    RC_ASSERT(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xA5; }));
    return;
  }
  RC_ASSERT(out == reference::encode(*r).value());
  RC_ASSERT(fast::encode(*f).value() == out);
  RC_ASSERT(same_f32_bits(fast::dequantize(*f).value(), reference::dequantize(*r).value()));
  // A profile's recipe (onnx) sets the profile, not rules.
  const auto decoded = c.options.rules ? fast::decode(c.scheme, c.shape, out, *c.options.rules)
                                       : fast::decode(c.scheme, c.shape, out, c.options.profile);
  RC_ASSERT(decoded.value() == *r);
}

// Every recipe the fast engine runs: the reference's tensor or error, bytes and dequantized bits
// from quantize, the fused path and the stored tensor's dequantize; some block maxima set to the
// edges of the ue8m0 exponent rules (powers of two, an ulp either side, the half-up points of
// torchao-even, f32's largest values) and some elements -0. Profile onnx takes part on schemes of
// one level of f32 scales. A recipe it does not run yet is unsupported-profile.
RC_BOOST_PROP(fast_matches_reference_for_every_recipe_it_runs, ()) {
  const auto [recipe, scheme] = recipe_and_scheme();
  Case c;
  c.scheme = scheme;
  fill_recipe_case(c, *recipe);
  check_recipe_case(std::move(c), recipe);
}

// Every recipe on the ties after scaling: its codes' rounding boundaries at each block's scale,
// exactly and one f32 ulp either side, and on every fourth element the least boundary (where
// microxcaling's f32 addition rounds the value below 0.25 up). The property above draws this input
// in about one case in 60, too seldom for a rule that one f32 value per block decides.
RC_BOOST_PROP(fast_matches_reference_for_every_recipe_on_ties_after_scaling, ()) {
  const auto [recipe, scheme] = recipe_and_scheme();
  Case c;
  c.scheme = scheme;
  fill_recipe_case(c, *recipe);
  const Layout l = make_layout(c.scheme, c.shape).value();
  bool found = false;
  for (oracle::EdgeInput& in : oracle::edge_inputs(c.scheme, l, *rc::gen::arbitrary<std::uint32_t>())) {
    if (in.name != std::string_view("ties after scaling")) continue;
    c.x = std::move(in.x);
    found = true;
  }
  RC_ASSERT(found);  // a renamed input must not leave this property on fill_recipe_case's data
  check_recipe_case(std::move(c), recipe);
}

// The f32-step recipes on what the units stage takes from them: rows of several blocks of 16 or
// 32 with given f32 scales, each block quantized under its own operand, in both outputs. (The
// recipe property above draws such rows but seldom: most of its shapes hold one block per row.)
RC_BOOST_PROP(step_recipes_quantize_every_block_of_a_row_under_its_own_scale, ()) {
  const bool torch = *rc::gen::arbitrary<bool>();
  const int bw = *rc::gen::element(16, 32);
  Case c;
  const std::string kind = torch ? "q8f" : *rc::gen::element<std::string>("q8s", "q8f", "q4s:packed-u32(0)", "e4m3");
  c.scheme = parse_scheme(kind + ":block[" + std::to_string(bw) + "]=f32").value();
  c.shape = {*rc::gen::inRange<std::uint64_t>(1, 4),
             *rc::gen::inRange<std::uint64_t>(2 * static_cast<std::uint64_t>(bw), 6 * static_cast<std::uint64_t>(bw) + 6)};
  const Layout l = make_layout(c.scheme, c.shape).value();
  c.x = *tensor_for(c.scheme, l);
  if (torch) {
    c.options = recipe_options(*find_recipe("torch-qint8").value(), {});
  } else {
    c.options.profile = Profile::onnx;
  }
  c.options.scales = *given_scales_for(c.scheme, l);
  RC_TAG(torch ? "torch-qint8" : "onnx");
  RC_LOG() << c << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  check_same_result(r, fast::quantize(c.scheme, c.shape, c.x, c.options));
  for (fast::OutputPolicy policy : {fast::OutputPolicy::single_pass, fast::OutputPolicy::untouched_on_error}) {
    std::vector<std::uint8_t> out(l.total_bytes, 0xA5);
    const Status st =
        fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out.data(), out.size(), policy);
    RC_ASSERT(st.ok() == r.ok());
    if (r.ok()) RC_ASSERT(out == reference::encode(*r).value());
    if (!r.ok()) RC_ASSERT(st.to_string() == r.status().to_string());
  }
}

// The MX recipes on blocks the units stage declines (extents the vector length does not divide):
// the whole-tensor stage's scalar exponent rules (points.hpp's ExponentRule) against the
// reference, block maxima at the rules' edges. (The recipe property above draws such blocks in a
// fraction of its cases, shared with every other recipe.)
RC_BOOST_PROP(mx_recipes_match_the_reference_on_blocks_the_units_decline, ()) {
  static const std::vector<const Recipe*> mx = [] {
    std::vector<const Recipe*> v;
    for (const char* n :
         {"ocp-mx", "torchao-mx-floor", "torchao-mx-ceil", "torchao-mx-even", "torchao-mx-rceil", "microxcaling"}) {
      v.push_back(find_recipe(n).value());
    }
    return v;
  }();
  const Recipe* recipe = *rc::gen::elementOf(mx);
  Case c;
  // The recipes' own kinds and scale dtype on blocks of 1, 8, 24 or 33, or two dims.
  c.scheme = parse_scheme(*rc::gen::element<std::string>("e4m3", "e5m2", "e2m1") + ":block[" +
                          *rc::gen::element<std::string>("1", "8", "24", "33", "2,16") + "]=ue8m0")
                 .value();
  fill_recipe_case(c, *recipe);
  const Layout l = make_layout(c.scheme, c.shape).value();
  RC_TAG(std::string(recipe->name));
  RC_LOG() << "recipe " << recipe->name << ", " << c << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  const auto f = fast::quantize(c.scheme, c.shape, c.x, c.options);
  RC_CLASSIFY(!fast::detail::make_bytes_plan(c.scheme, l).fused, "whole-tensor stage");
  check_same_result(r, f);
  std::vector<std::uint8_t> out(l.total_bytes, 0xA5);
  const Status st = fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out.data(),
                                            out.size(), fast::OutputPolicy::untouched_on_error);
  RC_ASSERT(st.ok() == r.ok());
  if (r.ok()) RC_ASSERT(out == reference::encode(*r).value());
}

// The exponent rules on the units stage's blocks (the MX presets, whose rows the units take),
// every block's max |x| drawn at a rule's edge: a power of two or an ulp either side, torchao-even's
// half-up point, log2f-floor's threshold in its binade or the f32 below it. The kernel that
// applies a rule to a unit's blocks at once (kernels::exponent_scales) then meets each edge as
// the block maximum, where a rule one ulp off changes the scale.
RC_BOOST_PROP(exponent_rules_match_the_reference_at_their_edges_on_the_units_stage, ()) {
  static const std::vector<const Recipe*> mx = [] {
    std::vector<const Recipe*> v;
    for (const char* n : {"ocp-mx", "torchao-mx-ceil", "torchao-mx-even", "torchao-mx-rceil", "microxcaling"}) {
      v.push_back(find_recipe(n).value());
    }
    return v;
  }();
  const Recipe* recipe = *rc::gen::elementOf(mx);
  Case c;
  c.scheme = parse_scheme(*rc::gen::element<std::string>("mxfp8", "mxfp8-e5m2", "mxfp4")).value();
  c.shape = {*rc::gen::inRange<std::uint64_t>(1, 4), 32 * *rc::gen::inRange<std::uint64_t>(1, 9)};
  c.options = recipe_options(*recipe, {});
  const std::uint32_t* thr = fast::detail::log2f_thresholds();
  const Layout l = make_layout(c.scheme, c.shape).value();
  c.x.assign(l.elements, 0.0f);
  for (std::size_t b = 0; b < l.elements / 32; ++b) {
    const auto field = static_cast<std::uint32_t>(*rc::gen::inRange(100, 160));
    std::uint32_t top = field << 23;
    switch (*rc::gen::inRange(0, 4)) {
      case 0: top += static_cast<std::uint32_t>(*rc::gen::inRange(-1, 2)); break;  // 2^k and its neighbours
      case 1: top |= 0x7FFFFu + static_cast<std::uint32_t>(*rc::gen::inRange(0, 3)); break;  // half-up points
      default:
        if (thr[field] < 0x800000u) top |= thr[field] - static_cast<std::uint32_t>(*rc::gen::inRange(0, 2));
        break;
    }
    const float t = f32_from_bits(top);
    const std::size_t at = *rc::gen::inRange<std::size_t>(0, 32);
    for (std::size_t i = 0; i < 32; ++i) {
      const float u = static_cast<float>(*rc::gen::inRange(-99, 100)) / 100.0f;
      c.x[b * 32 + i] = i == at ? (*rc::gen::arbitrary<bool>() ? -t : t) : t * u;
    }
  }
  RC_TAG(std::string(recipe->name));
  RC_LOG() << "recipe " << recipe->name << ", " << c << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  RC_ASSERT(fast::detail::make_bytes_plan(c.scheme, l).fused);
  for (fast::OutputPolicy policy : {fast::OutputPolicy::single_pass, fast::OutputPolicy::untouched_on_error}) {
    std::vector<std::uint8_t> out(l.total_bytes, 0xA5);
    const Status st =
        fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out.data(), out.size(), policy);
    RC_ASSERT(st.ok() == r.ok());
    if (r.ok()) RC_ASSERT(out == reference::encode(*r).value());
    if (!r.ok()) RC_ASSERT(st.to_string() == r.status().to_string());
  }
}

// ggml's edges, block by block (elements grouped by block_of, so N-D and partial blocks too): all
// zeros of either sign (d = 0, ggml's id = 0); a block maximum about f16's overflow, where
// f16(f32(amax / M)) turns inf from 65520 M on; subnormal or tiny blocks (d and 1 / d, or
// x86's hi / amax, underflow or overflow: codes of an infinite or NaN product); ties after
// scaling (amax = M 2^k, so that d = 2^k and x = (n + 1/2) 2^k divides to a half, or an ulp
// beside it); +a and -a in one block (q4_0's signed max takes the first); d at a midpoint of
// f16's or bf16's grid (the stored pattern's ties).
void set_ggml_edges(std::vector<float>& x, const Layout& l, const Scheme& s) {
  if (x.empty()) return;
  const ValueInfo& vi = info(s.value);
  const float M = static_cast<float>(vi.hi - vi.lo) / 2.0f;
  std::vector<std::vector<std::size_t>> blocks(l.scales);
  for (std::size_t i = 0; i < x.size(); ++i) blocks[block_of(l, i)].push_back(i);
  const auto sign = [] { return *rc::gen::arbitrary<bool>() ? -1.0f : 1.0f; };
  for (const std::vector<std::size_t>& b : blocks) {
    if (b.empty()) continue;
    const std::size_t first = b[*rc::gen::inRange<std::size_t>(0, b.size())];
    switch (*rc::gen::inRange(0, 9)) {
      case 0:
        for (std::size_t i : b) x[i] = sign() * 0.0f;
        break;
      case 1: {
        const float at = std::fmin(*rc::gen::element(65504.0f, 65519.0f, 65520.0f, 65536.0f, 1e7f, 3e38f) * M, FLT_MAX);
        x[first] = sign() * std::fmin(std::nextafter(at, *rc::gen::element(0.0f, at, INFINITY)), FLT_MAX);
        break;
      }
      case 2:
        for (std::size_t i : b) {
          x[i] = f32_from_bits(*rc::gen::inRange<std::uint32_t>(0, 0x00800000u) | (*rc::gen::arbitrary<bool>() ? 0x80000000u : 0u));
        }
        if (*rc::gen::arbitrary<bool>()) x[first] = sign() * std::ldexp(1.0f, *rc::gen::inRange(-126, -118));
        break;
      case 3:
      case 4: {
        const int k = *rc::gen::inRange(-10, 10);
        for (std::size_t i : b) {
          const float half = (static_cast<float>(*rc::gen::inRange(vi.lo, vi.hi)) + 0.5f) * std::ldexp(1.0f, k);
          x[i] = std::nextafter(half, *rc::gen::element(half, 0.0f, INFINITY, -INFINITY));
        }
        x[first] = sign() * M * std::ldexp(1.0f, k);
        break;
      }
      case 5: {
        const float a = std::fabs(x[first]) + 1.0f;
        x[first] = a;
        x[b[*rc::gen::inRange<std::size_t>(0, b.size())]] = -a;
        break;
      }
      case 6: {
        // d = f32(amax / M) a midpoint of f16's grid (11 significant bits, or its subnormal
        // quantum 2^-24) or of bf16's (8 bits), or beside one: the stored pattern's tie.
        const int kind = *rc::gen::inRange(0, 3);  // f16 normal, f16 subnormal, bf16
        const int bits = kind == 2 ? 8 : 11;
        const float mid = kind == 1 ? std::ldexp(static_cast<float>(2 * *rc::gen::inRange(0, 1024) + 1), -25)
                                    : std::ldexp(static_cast<float>(2 * *rc::gen::inRange(1 << (bits - 1), 1 << bits) + 1),
                                                 (kind == 0 ? *rc::gen::inRange(-14, 16) : *rc::gen::inRange(-30, 20)) - bits);
        x[first] = sign() * M * std::nextafter(mid, *rc::gen::element(mid, mid, 0.0f, INFINITY));
        for (std::size_t i : b) {
          if (i != first) x[i] = std::fmin(std::fabs(x[i]), std::fabs(x[first])) * sign();
        }
        break;
      }
      default: break;  // the block as drawn
    }
  }
}

// ggml's three recipes on blocks at their edges (set_ggml_edges, with the rule edges and a NaN or
// infinity now and then): the reference's tensor or error from quantize, and its bytes in both
// formats from the fused path under both policies (ggml's blocks where the scheme and shape have
// them, else the reference's error: quantize's first); the blocks decoded by the fast engine to the
// reference's tensor and dequantized fused to its values, and again with a block's least code
// (-128, or -8 in a nibble) planted, read by the recipe's rules and by the exact profile's, whose
// symmetric kinds refuse it. The recipes' own schemes mostly, and others their points take: other
// integer kinds, f32 and bf16 scales, blocks the units decline.
RC_BOOST_PROP(fast_matches_reference_on_ggml_recipes_at_their_edges, ()) {
  const Recipe* recipe = *rc::gen::element(find_recipe("ggml-q8_0").value(), find_recipe("ggml-q8_0-x86").value(),
                                           find_recipe("ggml-q4_0").value());
  const bool q4_0 = recipe->name == "ggml-q4_0";
  Case c;
  c.scheme = parse_scheme(q4_0 ? *rc::gen::weightedOneOf<std::string>({{6, rc::gen::just<std::string>("q4f:packed-u32(0):block[32]=f16")},
                                                                       {2, rc::gen::just<std::string>("q4f:block[32]=f16")},
                                                                       {1, rc::gen::just<std::string>("q2f:block[32]=f16")},
                                                                       {1, rc::gen::just<std::string>("q4f:block[8]=bf16")},
                                                                       {1, rc::gen::just<std::string>("q4f:block[2,16]=f16")},
                                                                       {1, rc::gen::just<std::string>("q4f:packed-u32(0):block[32]=f32")}})
                               : *rc::gen::weightedOneOf<std::string>({{6, rc::gen::just<std::string>("q8s:block[32]=f16")},
                                                                       {2, rc::gen::just<std::string>("q8f:block[32]=f16")},
                                                                       {1, rc::gen::just<std::string>("q4s:packed-u32(0):block[32]=f16")},
                                                                       {1, rc::gen::just<std::string>("q4f:block[32]=f16")},
                                                                       {1, rc::gen::just<std::string>("q2f:packed-u32(0):block[16]=bf16")},
                                                                       {1, rc::gen::just<std::string>("q8s:block[32]=f32")},
                                                                       {1, rc::gen::just<std::string>("q8s:block[2,16]=f16")},
                                                                       {1, rc::gen::just<std::string>("q8s:block[24]=f16")}}))
                 .value();
  fill_recipe_case(c, *recipe);
  if (*rc::gen::inRange(0, 5) != 0) {
    // Rows whose length 32 divides: ggml's blocks; now and then rows of two units (a unit holds
    // 2048 columns), whose second unit starts inside the row.
    const std::uint64_t blocks = *rc::gen::inRange(0, 8) == 0 ? *rc::gen::inRange<std::uint64_t>(65, 72)
                                                             : *rc::gen::inRange<std::uint64_t>(1, 5);
    c.shape = {2 * *rc::gen::inRange<std::uint64_t>(1, 3), 32 * blocks};
    c.x = *tensor_for(c.scheme, make_layout(c.scheme, c.shape).value());
    set_rule_edges(c.x);
  }
  const Layout l = make_layout(c.scheme, c.shape).value();
  set_ggml_edges(c.x, l, c.scheme);
  c = maybe_broken(std::move(c));
  const Result<GgmlLayout> g = ggml_layout(c.scheme, c.shape);
  RC_TAG(std::string(recipe->name));
  RC_CLASSIFY(g.ok(), "ggml blocks");
  RC_CLASSIFY(fast::detail::make_bytes_plan(c.scheme, l).fused, "units");
  RC_LOG() << "recipe " << recipe->name << ", " << c << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  RC_TAG(r.ok() ? std::string("accepted") : std::string(to_code(r.status().code())));
  check_same_result(r, fast::quantize(c.scheme, c.shape, c.x, c.options));
  const Rules rules = *c.options.rules;
  for (const ByteFormat format : {ByteFormat::burn, ByteFormat::ggml}) {
    const std::size_t total = format == ByteFormat::burn ? l.total_bytes : g.ok() ? g->total_bytes : 0;
    const Result<std::vector<std::uint8_t>> want = r.ok() ? reference::encode(*r, format) : Result<std::vector<std::uint8_t>>(r.status());
    require_bytes_under_both_policies(
        total, want,
        [&](std::uint8_t* out, std::size_t n, fast::OutputPolicy pol) {
          return fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, format, out, n, pol);
        },
        [&](const std::vector<std::uint8_t>& out, fast::OutputPolicy pol) {
          // The bytes back: the fast engine's tensor and its fused values are the reference's.
          const auto rd = reference::decode(c.scheme, c.shape, out, rules, format);
          RC_ASSERT(fast::decode(c.scheme, c.shape, out, rules, format).value() == rd.value());
          std::vector<float> y(l.elements, 1.5f);
          RC_ASSERT(fast::dequantize_from_bytes(c.scheme, c.shape, out.data(), out.size(), rules, format, y.data(),
                                                y.size(), pol)
                        .ok());
          RC_ASSERT(same_f32_bits(y, reference::dequantize(*rd).value()));
          if (format != ByteFormat::ggml || out.empty()) return;
          // The least code a block can hold planted in one of ggml's blocks (0x80: -128; a zero
          // nibble: -8), which symmetric readings refuse: both engines agree on it.
          std::vector<std::uint8_t> bad = out;
          const std::uint64_t k = *rc::gen::inRange<std::uint64_t>(0, g->blocks);
          const std::uint64_t j = *rc::gen::inRange<std::uint64_t>(2, g->block_bytes);
          bad[k * g->block_bytes + j] = g->nibbles ? (*rc::gen::arbitrary<bool>() ? 0x08 : 0x80) : 0x80;
          // Read by the recipe's rules (ggml's full range) and by the exact profile's.
          for (const Rules& read : {rules, rules_of(QuantizeOptions{})}) {
            const auto rb = reference::decode(c.scheme, c.shape, bad, read, format);
            std::vector<float> yb(l.elements, 1.5f);
            const Status fb = fast::dequantize_from_bytes(c.scheme, c.shape, bad.data(), bad.size(), read, format,
                                                          yb.data(), yb.size(), pol);
            RC_TAG(rb.ok() ? std::string("least code allowed") : std::string("least code refused"));
            RC_ASSERT(fb.ok() == rb.ok());
            if (rb.ok()) {
              RC_ASSERT(same_f32_bits(yb, reference::dequantize(*rb).value()));
            } else {
              RC_ASSERT(fb.code() == rb.status().code());
              RC_ASSERT(fb.message() == rb.status().message());
            }
          }
        });
  }
}

// nvidia-nvfp4's edges, block by block (elements grouped by block_of, so N-D and partial blocks
// too). Now and then the tensor's max |x| is A = 448 2^m: then S = f32(448 M / A) = M 2^-m and
// f32(S f32(1 / M)) = 2^-m exactly (f32(M f32(1 / M)) = 1 for M = 6, 448, 57344), so a block
// whose max |x| is T 2^m has the unrounded block scale T itself: T a midpoint of e4m3's grid
// (normal, or subnormal: 2^-10 lies between 0 and the least subnormal) or an ulp beside one, the
// ue4m3 rounding's ties; or T on the grid, s = T, with elements whose t = f32(x r) is a midpoint
// of the element kind's grid (x searched beside mid / r), the codes' ties. Other blocks: all
// zeros of either sign (s = 0, r = f32 max), subnormals, or as drawn; and the whole tensor zero
// or subnormal now and then (S capped at f32 max).
void set_te_nvfp4_edges(std::vector<float>& x, const Layout& l, const Scheme& s) {
  if (x.empty()) return;
  const ValueInfo& vi = info(s.value);
  const float M = static_cast<float>(vi.hi - vi.lo) / 2.0f;
  const int mbits = s.value == Value::e4m3 ? 3 : s.value == Value::e5m2 ? 2 : 1;
  const int kmin = s.value == Value::e4m3 ? -6 : s.value == Value::e5m2 ? -14 : 0;  // least normal exponent
  const auto sign = [] { return *rc::gen::arbitrary<bool>() ? -1.0f : 1.0f; };
  const int whole = *rc::gen::inRange(0, 8);
  if (whole == 0) {
    for (float& v : x) v = sign() * 0.0f;
    return;
  }
  if (whole == 1) {
    for (float& v : x) v = f32_from_bits(*rc::gen::inRange<std::uint32_t>(0, 0x00800000u) | (*rc::gen::arbitrary<bool>() ? 0x80000000u : 0u));
    return;
  }
  if (whole > 4) return;  // the rule edges only
  std::vector<std::vector<std::size_t>> blocks(l.scales);
  for (std::size_t i = 0; i < x.size(); ++i) blocks[block_of(l, i)].push_back(i);
  const int m = *rc::gen::inRange(-100, 100);
  const float two_m = std::ldexp(1.0f, m);
  // A = 448 2^m: one block holds it (its T is 448), every other |x| stays below it.
  const std::size_t top_block = *rc::gen::inRange<std::size_t>(0, blocks.size());
  for (std::size_t j = 0; j < blocks.size(); ++j) {
    const std::vector<std::size_t>& b = blocks[j];
    if (b.empty()) continue;
    const std::size_t first = b[*rc::gen::inRange<std::size_t>(0, b.size())];
    const int what = j == top_block ? 2 : *rc::gen::inRange(0, 5);
    float T = 448.0f;
    if (what == 0) {
      for (std::size_t i : b) x[i] = sign() * 0.0f;
      continue;
    }
    if (what == 1) {
      // A midpoint of e4m3's grid: (2^4 + 2k + 1) 2^(e-4) between normals, (2k + 1) 2^-10 below.
      T = *rc::gen::arbitrary<bool>()
              ? std::ldexp(static_cast<float>(17 + 2 * *rc::gen::inRange(0, 8)), *rc::gen::inRange(-6, 9) - 4)
              : std::ldexp(static_cast<float>(2 * *rc::gen::inRange(0, 8) + 1), -10);
      T = std::fmin(T, 440.0f);
      const float at = std::nextafter(T, *rc::gen::element(T, T, 0.0f, INFINITY));
      for (std::size_t i : b) x[i] = std::fmin(std::fabs(x[i]) * two_m, at * two_m) * sign();
      x[first] = sign() * at * two_m;
      continue;
    }
    if (what == 2) {
      // T on e4m3's grid (448 for the top block), codes at the element kind's midpoints.
      if (j != top_block) T = std::ldexp(static_cast<float>(8 + *rc::gen::inRange(0, 8)), *rc::gen::inRange(-6, 9) - 3);
      T = std::fmin(T, 448.0f);
      const float g = 1.0f / (M * (1.0f / two_m));  // f32(1 / S), S = M 2^-m
      const float e = T * g;
      const float r = e == 0.0f ? FLT_MAX : std::fmin(1.0f / e, FLT_MAX);
      for (std::size_t i : b) {
        const int k = *rc::gen::inRange(std::max(kmin, -3), 2);
        const float mid = *rc::gen::inRange(0, 4) == 0
                              ? std::ldexp(static_cast<float>(2 * *rc::gen::inRange(0, 1 << mbits) + 1), kmin - mbits - 1)
                              : std::ldexp(static_cast<float>((2 << mbits) + 2 * *rc::gen::inRange(0, 1 << mbits) + 1),
                                           k - mbits - 1);
        float v = mid / r;
        for (int step = 0; step < 8 && v * r != mid; ++step) v = std::nextafter(v, v * r < mid ? INFINITY : 0.0f);
        if (*rc::gen::inRange(0, 4) == 0) v = std::nextafter(v, *rc::gen::element(0.0f, INFINITY));
        x[i] = sign() * std::fmin(v, T * two_m);
      }
      x[first] = sign() * T * two_m;
      continue;
    }
    if (what == 3) {
      for (std::size_t i : b) {
        x[i] = f32_from_bits(*rc::gen::inRange<std::uint32_t>(0, 0x00800000u) | (*rc::gen::arbitrary<bool>() ? 0x80000000u : 0u));
      }
      continue;
    }
    // As drawn, below A.
    for (std::size_t i : b) x[i] = std::fmin(std::fabs(x[i]), 447.0f * two_m) * sign();
  }
}

// Given scales for nvidia-nvfp4's point: block scales on e4m3's grid, at its midpoints, zero of
// either sign, f32 subnormals or past 448; a global of 2^m / M, f32 max (448 g overflows), zero,
// -0, a subnormal or any finite value.
GivenScales te_nvfp4_given_scales(const Layout& l, const Scheme& s) {
  const ValueInfo& vi = info(s.value);
  const float M = static_cast<float>(vi.hi - vi.lo) / 2.0f;
  GivenScales g;
  for (std::uint64_t j = 0; j < l.scales; ++j) {
    switch (*rc::gen::inRange(0, 6)) {
      case 0: g.block.push_back(std::ldexp(static_cast<float>(8 + *rc::gen::inRange(0, 8)), *rc::gen::inRange(-9, 9) - 3)); break;
      case 1: g.block.push_back(std::ldexp(static_cast<float>(17 + 2 * *rc::gen::inRange(0, 8)), *rc::gen::inRange(-6, 9) - 4)); break;
      case 2: g.block.push_back(*rc::gen::element(0.0f, -0.0f)); break;
      case 3: g.block.push_back(f32_from_bits(*rc::gen::inRange<std::uint32_t>(1, 0x00800000u))); break;
      case 4: g.block.push_back(*rc::gen::element(448.0f, 464.0f, 465.0f, 1e30f, FLT_MAX)); break;
      default: g.block.push_back(std::fabs(*rc::gen::arbitrary<float>())); break;
    }
    if (!std::isfinite(g.block.back())) g.block.back() = 1.0f;
  }
  float global = 0;
  switch (*rc::gen::inRange(0, 5)) {
    case 0: global = std::ldexp(1.0f, *rc::gen::inRange(-100, 100)) / M; break;
    case 1: global = *rc::gen::element(FLT_MAX, 1e37f, 3e36f); break;
    case 2: global = *rc::gen::element(0.0f, -0.0f, 1e-40f); break;
    default: global = std::fabs(*rc::gen::arbitrary<float>()); break;
  }
  g.global = std::isfinite(global) ? global : 1.0f;
  return g;
}

// nvidia-nvfp4's point at its edges (set_te_nvfp4_edges; given scales now and then, a NaN or an
// infinity now and then): the reference's tensor or error from quantize and its bytes from the
// fused path under both policies; the stored bytes, and the same bytes with the global replaced
// (a product s g that overflows f32, a subnormal or zero one), decoded, dequantized and
// dequantized fused under the point to the reference's values or error. The recipe's scheme
// mostly, and others its point takes: other stores, element kinds and blocks the units decline.
RC_BOOST_PROP(fast_matches_reference_on_nvidia_nvfp4_at_its_edges, ()) {
  const Recipe& recipe = *find_recipe("nvidia-nvfp4").value();
  Case c;
  c.scheme = parse_scheme(*rc::gen::weightedOneOf<std::string>(
                              {{8, rc::gen::just<std::string>("nvfp4")},
                               {1, rc::gen::just<std::string>("e2m1:block[16]=ue4m3:tensor=f32")},
                               {1, rc::gen::just<std::string>("e2m1:packed-u32(0):block[16]=ue4m3:tensor=f32")},
                               {1, rc::gen::just<std::string>("e4m3:block[32]=ue4m3:tensor=f32")},
                               {1, rc::gen::just<std::string>("e5m2:block[16]=ue4m3:tensor=f32")},
                               {1, rc::gen::just<std::string>("e2m1:packed-native(0):block[2,8]=ue4m3:tensor=f32")},
                               {1, rc::gen::just<std::string>("e2m1:packed-native(0):block[24]=ue4m3:tensor=f32")}}))
                 .value();
  fill_recipe_case(c, recipe);
  if (*rc::gen::inRange(0, 5) != 0) {
    // Rows of whole blocks of 16, as TE quantizes them.
    c.shape = {2 * *rc::gen::inRange<std::uint64_t>(1, 3), 16 * *rc::gen::inRange<std::uint64_t>(1, 9)};
    c.x = *tensor_for(c.scheme, make_layout(c.scheme, c.shape).value());
    set_rule_edges(c.x);
  }
  const Layout l = make_layout(c.scheme, c.shape).value();
  set_te_nvfp4_edges(c.x, l, c.scheme);
  if (*rc::gen::inRange(0, 4) == 0) c.options.scales = te_nvfp4_given_scales(l, c.scheme);
  c = maybe_broken(std::move(c));
  RC_CLASSIFY(c.options.scales.has_value(), "given scales");
  RC_CLASSIFY(fast::detail::make_bytes_plan(c.scheme, l).fused, "units");
  RC_LOG() << c << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  RC_TAG(r.ok() ? std::string("accepted") : std::string(to_code(r.status().code())));
  check_same_result(r, fast::quantize(c.scheme, c.shape, c.x, c.options));
  require_fused_bytes(c, l, r);
  if (!r.ok()) return;
  const Rules& rules = recipe.rules;
  std::vector<std::uint8_t> bytes = reference::encode(*r).value();
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {
      const float g = f32_from_bits(*r->global_bits);
      const float patched = *rc::gen::element(FLT_MAX, 1e37f, 1e-40f, 0.0f, std::ldexp(g, *rc::gen::inRange(-30, 30)),
                                              std::nextafter(g, INFINITY));
      const std::uint32_t b = f32_bits(std::isfinite(patched) ? patched : FLT_MAX);
      for (int i = 0; i < 4; ++i) bytes[l.total_bytes - 4 + i] = static_cast<std::uint8_t>(b >> (8 * i));
    }
    const auto rd = reference::decode(c.scheme, c.shape, bytes, rules, ByteFormat::burn);
    const auto fd = fast::decode(c.scheme, c.shape, bytes, rules);
    RC_ASSERT(rd.ok());
    RC_ASSERT(fd.value() == *rd);
    const auto ry = reference::dequantize(*rd);
    const auto fy = fast::dequantize(*fd);
    RC_TAG(round == 0 ? "stored" : ry.ok() ? "patched global" : "patched global, product overflows");
    RC_ASSERT(ry.ok() == fy.ok());
    if (!ry.ok()) {
      RC_ASSERT(fy.status().to_string() == ry.status().to_string());
    } else {
      RC_ASSERT(same_f32_bits(*fy, *ry));
    }
    for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
      std::vector<float> y(l.elements, 1.5f);
      const Status st = fast::dequantize_from_bytes(c.scheme, c.shape, bytes.data(), bytes.size(), rules,
                                                    ByteFormat::burn, y.data(), y.size(), pol);
      RC_ASSERT(st.ok() == ry.ok());
      if (!st.ok()) {
        RC_ASSERT(st.to_string() == ry.status().to_string());
        if (pol == fast::OutputPolicy::untouched_on_error) {
          RC_ASSERT(std::all_of(y.begin(), y.end(), [](float v) { return v == 1.5f; }));
        }
        continue;
      }
      RC_ASSERT(same_f32_bits(y, *ry));
    }
  }
}

// A known global amax over drawn two-level schemes, shapes and inputs, under the exact profile or
// nvidia-nvfp4 (where it runs): the input's own max |x| (then the calibrated tensor), a power of
// two or an ulp beside it (blocks above it saturate; below it the codes need no clamp), 0, or an
// arbitrary value, now and then a bad one (NaN, negative, infinite) or beside given scales. Both
// engines give the same tensor or error, and the fused path the same bytes under both policies.
RC_BOOST_PROP(a_known_global_amax_quantizes_alike_in_both_engines, ()) {
  Case c;
  const bool te = *rc::gen::inRange(0, 3) == 0;
  if (te) {
    c.scheme = parse_scheme(*rc::gen::element<std::string>("nvfp4", "e2m1:block[16]=ue4m3:tensor=f32",
                                                           "e4m3:block[32]=ue4m3:tensor=f32",
                                                           "e2m1:packed-native(0):block[2,8]=ue4m3:tensor=f32"))
                   .value();
    fill_recipe_case(c, *find_recipe("nvidia-nvfp4").value());
  } else {
    c.scheme = *rc::gen::suchThat(supported_scheme(), [](const Scheme& s) { return s.two_level(); });
    c.shape = *rc::gen::suchThat(shape_for(c.scheme), [s = c.scheme](const std::vector<std::uint64_t>& sh) {
      return validate(s, sh).ok();
    });
    c.x = *tensor_for(c.scheme, make_layout(c.scheme, c.shape).value());
  }
  if (!te && *rc::gen::inRange(0, 3) == 0) {
    // Rows of several L1 units, where the units stage takes them.
    c.shape = {*rc::gen::inRange<std::uint64_t>(1, 5), 64 * *rc::gen::inRange<std::uint64_t>(1, 300)};
    if (!validate(c.scheme, c.shape).ok()) return;
    c.x = *tensor_for(c.scheme, make_layout(c.scheme, c.shape).value());
  }
  const Layout l = make_layout(c.scheme, c.shape).value();
  float top = 0;
  for (float v : c.x) top = std::isfinite(v) ? std::max(top, std::fabs(v)) : top;
  const int pick = *rc::gen::inRange(0, 8);
  const float amax = pick == 0   ? top
                     : pick == 1 ? std::ldexp(top, *rc::gen::inRange(-12, 13))
                     : pick == 2 ? std::nextafter(top, *rc::gen::element(0.0f, INFINITY))
                     : pick == 3 ? *rc::gen::element(0.0f, -0.0f, FLT_MAX, FLT_MIN, 1e-40f)
                     : pick == 4 ? *rc::gen::element(NAN, -1.0f, INFINITY)
                                 : std::fabs(*rc::gen::arbitrary<float>());
  c.options.global_amax = amax;
  if (*rc::gen::inRange(0, 10) == 0) c.options.profile = Profile::burn;
  if (*rc::gen::inRange(0, 10) == 0) c.options.scales = GivenScales{std::vector<float>(l.scales, 1.0f), 1.0f};
  RC_CLASSIFY(te, "nvidia-nvfp4");
  RC_CLASSIFY(fast::detail::make_bytes_plan(c.scheme, l).fused, "units");
  RC_LOG() << c << " global amax " << amax << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  RC_TAG(r.ok() ? std::string("accepted") : std::string(to_code(r.status().code())));
  check_same_result(r, fast::quantize(c.scheme, c.shape, c.x, c.options));
  if (r.ok() && pick == 0) {
    QuantizeOptions calibrated = c.options;
    calibrated.global_amax.reset();
    RC_ASSERT(reference::quantize(c.scheme, c.shape, c.x, calibrated).value() == *r);
  }
  require_fused_bytes(c, l, r);
}

// Zero given scales over sparse data: both engines name the first offending element in
// row-major order and its block. With N-D blocks that block is often not the lowest-numbered
// offending one (classified below), which is where the two rules differ.
RC_BOOST_PROP(zero_scale_errors_name_the_first_offending_element_in_both_engines, ()) {
  Case c = *any_case({.allow_given = false, .only_exact = true});
  const Layout l = make_layout(c.scheme, c.shape).value();
  RC_PRE(l.scales > 1 && l.elements > 0);
  GivenScales g;
  g.block.assign(l.scales, 1.0f);
  for (float& s : g.block) {
    if (*rc::gen::inRange(0, 2) == 0) s = 0.0f;
  }
  if (c.scheme.two_level()) g.global = 1.0f;
  c.options.scales = g;
  for (float& v : c.x) {
    if (*rc::gen::inRange(0, 4) != 0) v = 0.0f;
  }
  RC_LOG() << c << "\n";
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  const auto f = fast::quantize(c.scheme, c.shape, c.x, c.options);
  check_same_result(r, f);
  std::uint64_t lowest = l.scales;
  find_element(l, [&](std::uint64_t i, std::uint64_t b) {
    if (g.block[b] == 0.0f && c.x[i] != 0.0f) lowest = std::min(lowest, b);
    return false;
  });
  // ue8m0 has no zero: a given 0 rounds up to 2^-127 and quantizes.
  if (info(c.scheme.scale_dtype()).has_zero) RC_ASSERT(r.ok() == (lowest == l.scales));
  if (r.ok()) return;
  RC_ASSERT(r.status().code() == ErrorCode::zero_scale_nonzero_input);
  RC_CLASSIFY(r.status().index() != lowest, "first offending element not in the lowest offending block");
}

// The fused bytes path gives the reference's bytes and dequantized bits, or its error, under
// both output policies; under untouched_on_error a rejected input leaves `out` as it was.
// Affine mode with given scales and zero points (docs/SEMANTICS.md section 14), every integer
// kind, per tensor, per block or per axis: zero points in the kind's range quantize, survive
// their bytes, and decode back; one outside the range is invalid-scale naming its position, a
// count that is neither 0 nor one per scale is size-mismatch; a corrupt zero point byte is
// corrupt-bytes on decode. The fast engine gives the same bytes or the same error, its output
// untouched on error.
RC_BOOST_PROP(affine_zero_points_out_of_range_are_typed_errors, ()) {
  std::vector<Value> kinds;
  for (Value v : kAllValues) {
    if (!info(v).is_float) kinds.push_back(v);
  }
  const Value v = *rc::gen::elementOf(kinds);
  const ValueInfo& vi = info(v);
  const std::string level = *rc::gen::element(std::string(""), std::string(":block[4]=f32"), std::string(":axis(0)=f32"));
  const Scheme scheme = parse_scheme(std::string(vi.name) + ":affine" + level).value();
  const std::vector<std::uint64_t> shape{3, 4};
  const Layout l = make_layout(scheme, shape).value();
  std::vector<float> x(l.elements);
  for (float& e : x) e = *ordinary(0, 4);
  QuantizeOptions o;
  o.scales = GivenScales{std::vector<float>(l.scales, 0.5f), std::nullopt, {}};
  for (std::uint64_t j = 0; j < l.scales; ++j) o.scales->zero_points.push_back(*rc::gen::inRange(vi.lo, vi.hi + 1));
  const int mode = *rc::gen::inRange(0, 3);  // 0 in range, 1 one out of range, 2 a count off by one
  std::uint64_t bad = 0;
  if (mode == 1) {
    bad = *rc::gen::inRange<std::uint64_t>(0, l.scales);
    const std::int32_t past = *rc::gen::inRange(1, 1000);
    o.scales->zero_points[bad] = *rc::gen::arbitrary<bool>() ? vi.lo - past : vi.hi + past;
  } else if (mode == 2) {
    o.scales->zero_points.push_back(0);
  }
  RC_TAG(std::string(vi.name), mode);
  const auto r = reference::quantize(scheme, shape, x, o);
  if (mode == 1) {
    RC_ASSERT(r.status().code() == ErrorCode::invalid_scale);
    RC_ASSERT(r.status().index() == bad);
  } else if (mode == 2) {
    RC_ASSERT(r.status().code() == ErrorCode::size_mismatch);
  } else {
    RC_ASSERT(r.ok());
    RC_ASSERT(r->zero_points == o.scales->zero_points);
    for (std::int32_t c : r->codes) RC_ASSERT(c >= vi.lo && c <= vi.hi);
    std::vector<std::uint8_t> bytes = reference::encode(*r).value();
    RC_ASSERT(reference::decode(scheme, shape, bytes).value() == *r);
    // A zero point byte past the range (not every kind has one: u8's byte takes 0..255).
    const auto zb = static_cast<std::size_t>(l.zero_point_bytes / l.zero_points);
    if (zb == 1 && (vi.lo > -128 || vi.hi < 127) && !(vi.is_unsigned && vi.hi == 255)) {
      const std::size_t at = static_cast<std::size_t>(l.value_bytes + l.scale_bytes);
      bytes[at] = vi.is_unsigned ? static_cast<std::uint8_t>(vi.hi + 1) : static_cast<std::uint8_t>(vi.lo - 1);
      const auto d = reference::decode(scheme, shape, bytes);
      RC_ASSERT(d.status().code() == ErrorCode::corrupt_bytes);
    }
  }
  std::vector<std::uint8_t> out(l.total_bytes, 0xA5);
  const Status st = fast::quantize_to_bytes(scheme, shape, x.data(), x.size(), o, out.data(), out.size(),
                                            fast::OutputPolicy::untouched_on_error);
  RC_ASSERT(st.code() == r.status().code());
  RC_ASSERT(st.index() == r.status().index());
  RC_ASSERT(st.message() == r.status().message());
  if (st.ok()) {
    RC_ASSERT(out == reference::encode(*r).value());
  } else {
    RC_ASSERT(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xA5; }));
  }
}

// ---- qscheme's extension (docs/SEMANTICS.md sections 13-16): its kinds, affine mode and
// per-axis scales, which both engines run (the fast engine's extension stage, and its Burn
// stages for per-axis sym schemes over Burn's kinds).

namespace {

// A supported scheme of the extension: one of extension_space()'s, or a draw of the whole tuple
// model with an extension kind, affine mode or an axis level.
Scheme extension_scheme() {
  static const std::vector<Scheme> kSupported = [] {
    std::vector<Scheme> out;
    for (const Scheme& s : extension_space())
      if (validate_scheme(s).ok()) out.push_back(s);
    return out;
  }();
  return *rc::gen::weightedOneOf<Scheme>(
      {{3, rc::gen::elementOf(kSupported)},
       {1, rc::gen::suchThat(rc::gen::arbitrary<Scheme>(), [](const Scheme& s) {
          return validate_scheme(s).ok() && (info(s.value).extension || s.affine() || s.axis.has_value());
        })}});
}

// A zero point at an end of the kind's range, next to one, in its middle, or anywhere in it.
std::int32_t edge_zero_point(const ValueInfo& vi) {
  return *rc::gen::weightedOneOf<std::int32_t>(
      {{3, rc::gen::element(vi.lo, vi.hi)},
       {1, rc::gen::element(vi.lo + 1, vi.hi - 1, vi.lo + (vi.hi - vi.lo) / 2)},
       {1, rc::gen::inRange(vi.lo, vi.hi + 1)}});
}

// Per block: a least and a largest x that calibrate the affine scale to c = m 2^k and the zero
// point to lo + k0 (exact profile; onnx's f32 steps give the same c and zero point for u8), or
// with a least x of -(k0 + 1/2) c that puts the zero point on a tie; or a range a hair above W c
// (a largest x of W c and a tiny negative least one: its f64 sum is W c, the scale must still
// step up). The other elements at the half-integers (j + 1/2) c of the codes, exactly or an ulp
// either side.
std::vector<float> affine_ties(const Scheme& s, const Layout& l) {
  const ValueInfo& vi = info(s.value);
  const double W = static_cast<double>(vi.hi) - vi.lo;
  std::vector<float> x(l.elements);
  struct Block {
    double step = 0, below = 0;
    bool hair = false;
    std::uint64_t seen = 0;
  };
  std::vector<Block> blocks(l.scales);
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    Block& b = blocks[block_of(l, i)];
    if (b.step == 0.0) {
      b.step = std::ldexp(static_cast<double>(*rc::gen::element(1, 3, 5, 7)), *rc::gen::inRange(-12, 4));
      const int shape = *rc::gen::inRange(0, 6);
      b.hair = shape == 0;
      const auto k0 = static_cast<double>(*rc::gen::inRange<std::int64_t>(0, static_cast<std::int64_t>(W)));
      b.below = shape == 1 ? 0.0 : shape == 2 ? W : shape == 3 ? k0 + 0.5 : k0;
    }
    const std::uint64_t n = b.seen++;
    double v;
    if (n == 0) {
      v = b.hair ? -static_cast<double>(*rc::gen::element(FLT_TRUE_MIN, 1e-30f, 1e-20f)) : -b.below * b.step;
    } else if (n == 1) {
      v = b.hair ? W * b.step : (W - b.below) * b.step;
    } else {
      v = (static_cast<double>(*rc::gen::inRange<std::int64_t>(0, static_cast<std::int64_t>(W))) - std::floor(b.below) +
           0.5) * b.step;
    }
    float f = static_cast<float>(v);
    if (n >= 2) {
      const int off = *rc::gen::inRange(-1, 2);
      if (off != 0) f = std::nextafter(f, off > 0 ? INFINITY : -INFINITY);
    }
    x[i] = f;
  }
  return x;
}

// Options of the extension's points: exact, onnx or burn, or torch's point (recipes torch-qint8
// and torch-quint8, given scales only); calibrated (minmax or absmean) or with given scales (zero
// among them now and then), and for affine mode given zero points (none: zero points of 0) at
// the range's edges.
QuantizeOptions extension_options(const Scheme& s, const Layout& l) {
  QuantizeOptions o;
  o.profile = *rc::gen::element(Profile::exact, Profile::onnx, Profile::burn);
  o.calibration = *rc::gen::weightedOneOf<Calibration>({{3, rc::gen::just(Calibration::minmax)},
                                                       {1, rc::gen::just(Calibration::absmean)}});
  const Recipe& torch = *find_recipe("torch-qint8").value();
  const bool torch_point = validate_rules(torch.rules, s, Calibration::minmax, true).ok() && *rc::gen::inRange(0, 4) == 0;
  if (torch_point) o = recipe_options(torch, o);
  if (torch_point || *rc::gen::inRange(0, 2) == 0) {
    o.scales = *given_scales_for(s, l);
    if (s.affine() && *rc::gen::inRange(0, 4) != 0) {
      for (std::uint64_t j = 0; j < l.zero_points; ++j) o.scales->zero_points.push_back(edge_zero_point(info(s.value)));
    }
  }
  return o;
}

// Both engines on c: the same tensor or error (code, index, message), bytes, dequantized bits
// (f32, f16, bf16), and the fused paths' bytes and values under both output policies, the output
// untouched on error.
void check_engines_agree(const Case& c) {
  const Layout l = make_layout(c.scheme, c.shape).value();
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  RC_TAG(r.ok() ? std::string("accepted") : std::string(to_code(r.status().code())));
  check_same_result(r, fast::quantize(c.scheme, c.shape, c.x, c.options));
  const auto rb = r.ok() ? reference::encode(*r) : Result<std::vector<std::uint8_t>>(r.status());
  require_bytes_under_both_policies(
      l.total_bytes, rb,
      [&](std::uint8_t* out, std::size_t n, fast::OutputPolicy pol) {
        return fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out, n, pol);
      },
      [](const std::vector<std::uint8_t>&, fast::OutputPolicy) {});
  if (!r.ok()) return;
  RC_ASSERT(fast::encode(*r).value() == *rb);
  RC_ASSERT((r->rules ? fast::decode(c.scheme, c.shape, *rb, *r->rules) : fast::decode(c.scheme, c.shape, *rb, r->profile))
                .value() == *r);
  const auto ry = reference::dequantize(*r).value();
  RC_ASSERT(same_f32_bits(fast::dequantize(*r).value(), ry));
  const Profile reading = r->rules ? fast::reading_profile(*r->rules).value() : r->profile;
  for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
    std::vector<float> y(l.elements);
    RC_ASSERT(fast::dequantize_from_bytes(c.scheme, c.shape, rb->data(), rb->size(), reading, y.data(), y.size(), pol)
                  .ok());
    RC_ASSERT(same_f32_bits(y, ry));
  }
  for (OutputDtype d : {OutputDtype::f16, OutputDtype::bf16}) {
    RC_ASSERT(fast::dequantize_16(*r, d).value() == reference::dequantize_16(*r, d).value());
  }
}

// A case of scheme s: a shape it accepts, the generator's hard-case data with some zeros of
// either sign sprinkled in, the extension's options.
Case extension_case(const Scheme& s) {
  Case c;
  c.scheme = s;
  c.shape = *rc::gen::suchThat(shape_for(s), [s](const std::vector<std::uint64_t>& sh) { return validate(s, sh).ok(); });
  const Layout l = make_layout(s, c.shape).value();
  c.x = *tensor_for(s, l);
  for (int i = c.x.empty() ? 0 : *rc::gen::inRange(0, 4); i > 0; --i) {
    c.x[*rc::gen::inRange<std::size_t>(0, c.x.size())] = *rc::gen::element(0.0f, -0.0f);
  }
  c.options = extension_options(s, l);
  return c;
}

}  // namespace

// Generated shapes, the generator's hard-case data, scales given (zero points at the range's
// edges) and calibrated, the exact, onnx and burn profiles, some inputs broken: the fast engine
// gives the reference's tensor or error, bytes and values on every path.
RC_BOOST_PROP(fast_equals_the_reference_on_extension_kinds_affine_mode_and_per_axis_scales, ()) {
  const Case c = maybe_broken(extension_case(extension_scheme()));
  RC_TAG(std::string(info(c.scheme.value).name) + (c.scheme.affine() ? " affine" : "") + (c.scheme.axis ? " axis" : ""));
  RC_CLASSIFY(c.options.scales.has_value(), "given scales");
  RC_CLASSIFY(c.options.rules.has_value(), "torch's point");
  RC_LOG() << c << "\n";
  check_engines_agree(c);
}

// Affine calibration where rounding is hardest: each block's min and max put its scale on a grid
// value and its zero point anywhere in the range (at both ends included), the other elements on
// the half-integers of the codes and an ulp either side; exact and onnx (u8) alike in both engines.
RC_BOOST_PROP(calibrated_affine_ties_after_scaling_round_alike_in_both_engines, ()) {
  Scheme s = extension_scheme();
  RC_PRE(s.affine());
  Case c = extension_case(s);
  c.x = affine_ties(s, make_layout(s, c.shape).value());
  c.options = QuantizeOptions{};
  c.options.profile = s.value == Value::u8 && s.scale_dtype() == ScaleDtype::f32 && *rc::gen::arbitrary<bool>()
                          ? Profile::onnx
                          : Profile::exact;
  RC_TAG(to_string(c.options.profile));
  RC_LOG() << c << "\n";
  check_engines_agree(c);
}

// Blocks of zeros (either sign) and constant blocks, affine mode, calibrated or given: a zero
// takes its block's zero point exactly, in both engines, whatever the scale.
RC_BOOST_PROP(zeros_of_either_sign_take_their_blocks_zero_point_in_both_engines, ()) {
  Scheme s = extension_scheme();
  RC_PRE(s.affine());
  Case c = extension_case(s);
  const Layout l = make_layout(s, c.shape).value();
  // The points that run affine mode: exact (calibrated or given), onnx (given, or u8 calibrated);
  // not torch's, whose zero scale gives a zero x the code lo.
  c.options.rules.reset();
  c.options.calibration = Calibration::minmax;
  c.options.profile = *rc::gen::element(Profile::exact, Profile::onnx);
  if (c.options.profile == Profile::onnx && (s.scale_dtype() != ScaleDtype::f32 ||
                                             (!c.options.scales && s.value != Value::u8))) {
    c.options.profile = Profile::exact;
  }
  const float constant = *ordinary(0, 30);
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    const std::uint64_t b = block_of(l, i);
    c.x[i] = b % 3 == 0 ? (*rc::gen::arbitrary<bool>() ? -0.0f : 0.0f) : b % 3 == 1 ? constant : c.x[i];
    if (*rc::gen::inRange(0, 8) == 0) c.x[i] = -0.0f;
  }
  RC_LOG() << c << "\n";
  check_engines_agree(c);
  const auto f = fast::quantize(c.scheme, c.shape, c.x, c.options);
  if (!f.ok()) return;
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    if (c.x[i] == 0.0f) RC_ASSERT(f->codes[i] == f->zero_points[block_of(l, i)]);
  }
}

// Tensors of many units (4,097 to 20,000 elements: the extension stage quantizes units of up to
// 2,048 elements, or one block, a unit at a time; given-scale units may start inside a block): a
// scale per tensor (given), per row, per column, per block along the rows; calibrated (affine ties
// or hard-case data) and given; both outputs, quantize_into's one pass against the reference.
RC_BOOST_PROP(tensors_of_many_units_quantize_as_in_the_reference, ()) {
  const std::uint64_t cols = *rc::gen::element<std::uint64_t>(64, 100, 1000, 4096, 5000);
  const std::uint64_t rows = (*rc::gen::inRange<std::uint64_t>(4097, 20001) + cols - 1) / cols;
  const std::string kind = *rc::gen::element(std::string("u8"), std::string("u4"), std::string("q8f"), std::string("u16"));
  const std::string level = *rc::gen::element(std::string(""), std::string(":axis(1)=f32"), std::string(":axis(1)=bf16"),
                                              std::string(":axis(0)=f32"), std::string(":block[32]=f16"));
  Case c;
  c.scheme = parse_scheme(kind + ":affine" + level).value();
  c.shape = {rows, cols};
  const Layout l = make_layout(c.scheme, c.shape).value();
  c.x = *rc::gen::arbitrary<bool>() ? affine_ties(c.scheme, l) : std::vector<float>(l.elements);
  if (c.x.size() == l.elements && std::all_of(c.x.begin(), c.x.end(), [](float v) { return v == 0.0f; })) {
    for (float& v : c.x) v = *ordinary(0, 8);
  }
  c.options.profile = kind == "u8" && level.find("f32") != std::string::npos && *rc::gen::arbitrary<bool>()
                          ? Profile::onnx
                          : Profile::exact;
  if (level.empty() || *rc::gen::inRange(0, 3) == 0) {
    GivenScales g;
    for (std::uint64_t j = 0; j < l.scales; ++j) {
      g.block.push_back(std::ldexp(1.0f + static_cast<float>(*rc::gen::inRange(0, 16)) / 16, *rc::gen::inRange(-8, 4)));
      g.zero_points.push_back(edge_zero_point(info(c.scheme.value)));
    }
    c.options.scales = g;
  } else if (c.options.profile == Profile::onnx && c.scheme.value != Value::u8) {
    c.options.profile = Profile::exact;
  }
  RC_TAG(kind + level, c.options.scales ? "given" : "calibrated");
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  check_same_result(r, fast::quantize(c.scheme, c.shape, c.x, c.options));
  if (!r.ok()) return;
  std::vector<std::uint8_t> out(l.total_bytes, 0xA5);
  RC_ASSERT(fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out.data(), out.size(),
                                    fast::OutputPolicy::single_pass)
                .ok());
  RC_ASSERT(out == reference::encode(*r).value());
}

RC_BOOST_PROP(fused_bytes_path_matches_the_reference, ()) {
  const Case c = *any_case();
  const Layout l = make_layout(c.scheme, c.shape).value();
  RC_CLASSIFY(fast::detail::make_bytes_plan(c.scheme, l).fused, "fused plan");
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  const auto rb = r.ok() ? reference::encode(*r) : Result<std::vector<std::uint8_t>>(r.status());
  require_bytes_under_both_policies(
      l.total_bytes, rb,
      [&](std::uint8_t* out, std::size_t n, fast::OutputPolicy pol) {
        return fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out, n, pol);
      },
      [&](const std::vector<std::uint8_t>& out, fast::OutputPolicy pol) {
        if (c.options.profile == Profile::burn) return;
        std::vector<float> d(l.elements);
        RC_ASSERT(fast::dequantize_from_bytes(c.scheme, c.shape, out.data(), out.size(), c.options.profile, d.data(),
                                              d.size(), pol)
                      .ok());
        RC_ASSERT(same_f32_bits(d, reference::dequantize(*r).value()));
      });
}

// The same on rows of many blocks: the fused kernels' whole-group loops (N blocks at a time, so
// 16 blocks of 32 on AVX-512 take 512 elements) only run on rows longer than any_case() draws;
// calibrated or given scales.
RC_BOOST_PROP(fused_bytes_path_matches_the_reference_on_rows_of_many_blocks, ()) {
  static const std::vector<Scheme> kFused = [] {
    std::vector<Scheme> out;
    for (const Scheme& s : supported_tuples()) {
      if (!s.block || s.block->size.rank() != 1 || s.block->size[0] % 16 != 0) continue;
      const std::vector<std::uint64_t> probe{8, std::uint64_t{4} * s.block->size[0]};
      const auto l = make_layout(s, probe);
      if (l.ok() && fast::detail::make_bytes_plan(s, *l).fused) out.push_back(s);
    }
    return out;
  }();
  RC_PRE(!kFused.empty());
  Case c;
  c.scheme = *rc::gen::elementOf(kFused);
  const std::uint64_t bw = c.scheme.block->size[0];
  const std::uint64_t rows = *rc::gen::element<std::uint64_t>(1, 2, 8);
  const std::uint64_t blocks = *rc::gen::inRange<std::uint64_t>(16, 40);
  const std::uint64_t tail = *rc::gen::element<std::uint64_t>(0, 0, 16, bw / 2 + 3);
  c.shape = {rows, blocks * bw + tail};
  const auto l = make_layout(c.scheme, c.shape);
  RC_PRE(l.ok());
  RC_CLASSIFY(c.scheme.two_level(), "two levels");
  c.x = *tensor_for(c.scheme, *l);
  c.options.profile = Profile::exact;
  // Given scales in half the cases: a zero one over non-zero input is the one error they add.
  if (*rc::gen::arbitrary<bool>()) c.options.scales = *given_scales_for(c.scheme, *l);
  RC_CLASSIFY(c.options.scales.has_value(), "given scales");
  const auto r = reference::quantize(c.scheme, c.shape, c.x, c.options);
  std::vector<std::uint8_t> out(l->total_bytes, 0xA5);
  const Status st = fast::quantize_to_bytes(c.scheme, c.shape, c.x.data(), c.x.size(), c.options, out.data(),
                                            out.size(), fast::OutputPolicy::single_pass);
  RC_ASSERT(st.ok() == r.ok());
  if (!r.ok()) {
    RC_ASSERT(c.options.scales.has_value());
    RC_ASSERT(st.to_string() == r.status().to_string());
    return;
  }
  RC_ASSERT(out == reference::encode(*r).value());
  std::vector<float> d(l->elements);
  RC_ASSERT(fast::dequantize_from_bytes(c.scheme, c.shape, out.data(), out.size(), c.options.profile, d.data(), d.size(),
                                        fast::OutputPolicy::single_pass)
                .ok());
  RC_ASSERT(same_f32_bits(d, reference::dequantize(*r).value()));
}

RC_BOOST_PROP(decode_inverts_encode, ()) {
  const Case c = *any_case();
  const auto q = fast::quantize(c.scheme, c.shape, c.x, c.options);
  RC_PRE(q.ok());
  const auto bytes = fast::encode(*q);
  RC_ASSERT(bytes.ok());
  const auto fq = fast::decode(c.scheme, c.shape, *bytes, c.options.profile);
  RC_ASSERT(fq.ok());
  RC_ASSERT(*fq == *q);
  const auto rq = reference::decode(c.scheme, c.shape, *bytes, c.options.profile);
  RC_ASSERT(rq.ok());
  RC_ASSERT(*rq == *q);
}

// Valid byte buffers: random valid codes and scale patterns serialized by the reference encoder;
// also raw random bytes, which both decoders must accept or reject alike.
RC_BOOST_PROP(encode_inverts_decode, ()) {
  const Scheme s = *supported_scheme();
  const auto shape = *rc::gen::suchThat(shape_for(s), [s](const std::vector<std::uint64_t>& sh) { return validate(s, sh).ok(); });
  const Layout l = make_layout(s, shape).value();
  std::vector<std::uint8_t> bytes;
  if (*rc::gen::inRange(0, 4) == 0) {
    bytes = *rc::gen::container<std::vector<std::uint8_t>>(l.total_bytes, rc::gen::arbitrary<std::uint8_t>());
  } else {
    QuantizedTensor q;
    q.scheme = s;
    q.shape = shape;
    const ValueInfo& vi = info(s.value);
    const auto code = rc::gen::suchThat(
        vi.is_float ? rc::gen::inRange<std::int32_t>(0, 1 << vi.bits) : rc::gen::inRange<std::int32_t>(vi.lo, vi.hi + 1),
        [v = s.value](std::int32_t c) { return reference::code_value(v, c).ok(); });
    q.codes = *rc::gen::container<std::vector<std::int32_t>>(l.elements, code);
    const ScaleDtype sd = s.scale_dtype();
    const int width = info(sd).bytes * 8;
    const auto scale = rc::gen::suchThat(
        rc::gen::map(rc::gen::arbitrary<std::uint32_t>(),
                     [width](std::uint32_t b) { return width == 32 ? b : (b & ((1u << width) - 1)); }),
        [sd](std::uint32_t b) { return reference::scale_value(sd, b).ok(); });
    q.scale_bits = *rc::gen::container<std::vector<std::uint32_t>>(l.scales, scale);
    if (s.two_level()) {
      q.global_bits = *rc::gen::suchThat(rc::gen::arbitrary<std::uint32_t>(), [](std::uint32_t b) {
        return reference::scale_value(ScaleDtype::f32, b).ok();
      });
    }
    const auto enc = reference::encode(q);
    RC_ASSERT(enc.ok());
    bytes = *enc;
  }
  const auto fq = fast::decode(s, shape, bytes);
  const auto rq = reference::decode(s, shape, bytes);
  RC_ASSERT(fq.ok() == rq.ok());
  RC_TAG(fq.ok() ? std::string("valid bytes") : std::string(to_code(fq.status().code())));
  if (!fq.ok()) {
    RC_ASSERT(fq.status().code() == rq.status().code());
    return;
  }
  RC_ASSERT(*fq == *rq);
  const auto fb = fast::encode(*fq);
  RC_ASSERT(fb.ok());
  RC_ASSERT(*fb == bytes);
  const auto rb = reference::encode(*fq);
  RC_ASSERT(rb.ok());
  RC_ASSERT(*rb == bytes);
}

// Valid bytes with one field that is no code of the kind (q8s's -128, q4s's -8, an e4m3 or e5m2
// NaN pattern, a native q4s byte outside [-7, 7]) planted at any element, on rows of one to many
// blocks: dequantize_from_bytes reports what decode reports (code, index, message) under both
// output policies, so the fused pass that checks and dequantizes a unit at once
// (kernels::dequant_unit) meets the bad field in its whole steps and in its buffered tail alike.
RC_BOOST_PROP(dequantize_from_bytes_finds_a_bad_field_anywhere_as_decode_does, ()) {
  const Scheme s = parse_scheme(*rc::gen::element<std::string>(
                                    "q8_0", "q4_0", "mxfp8", "mxfp8-e5m2", "q8s:block[16]=f16",
                                    "q4s:packed-u32(0):block[16]=f16", "q4s:block[32]=bf16", "q8s:packed-u32(0):block[32]=ue8m0"))
                       .value();
  const std::uint64_t bw = s.block->size[0];
  const std::uint64_t cols = bw * *rc::gen::inRange<std::uint64_t>(1, 80) + *rc::gen::element<std::uint64_t>(0, 0, 8, bw / 2);
  const std::vector<std::uint64_t> shape{*rc::gen::inRange<std::uint64_t>(1, 4), cols};
  const Layout l = make_layout(s, shape).value();
  std::mt19937 rng(*rc::gen::arbitrary<std::uint32_t>());
  std::normal_distribution<float> nd;
  std::vector<float> x(l.elements);
  for (float& v : x) v = nd(rng);
  QuantizedTensor q = fast::quantize(s, shape, x, QuantizeOptions{}).value();
  // Where element i's field lies: the bits in which the bytes of codes 0 and 1 there differ.
  const std::uint64_t i = *rc::gen::inRange<std::uint64_t>(0, l.elements);
  q.codes[i] = 0;
  std::vector<std::uint8_t> bytes = reference::encode(q).value();
  q.codes[i] = 1;
  const std::vector<std::uint8_t> other = reference::encode(q).value();
  std::size_t at = 0;
  while (bytes[at] == other[at]) ++at;
  const int shift = std::countr_zero(static_cast<unsigned>(bytes[at] ^ other[at]));
  const ValueInfo& vi = info(s.value);
  const int width = l.packed_axis < 0 ? 8 : vi.bits;
  std::vector<int> bad;
  for (int f = 0; f < (1 << width); ++f) {
    const int code = vi.is_float || f < (1 << (width - 1)) ? f : f - (1 << width);
    if (!reference::code_value(s.value, code).ok() || (!vi.is_float && (code < vi.lo || code > vi.hi))) bad.push_back(f);
  }
  RC_PRE(!bad.empty());
  const int f = *rc::gen::elementOf(bad);
  bytes[at] = static_cast<std::uint8_t>((bytes[at] & ~(((1 << width) - 1) << shift)) | (f << shift));
  const auto r = reference::decode(s, shape, bytes);
  RC_ASSERT(!r.ok());
  RC_TAG(std::string(to_code(r.status().code())));
  for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
    std::vector<float> y(l.elements);
    const Status st = fast::dequantize_from_bytes(s, shape, bytes.data(), bytes.size(), Profile::exact, y.data(),
                                                  y.size(), pol);
    RC_ASSERT(st.code() == r.status().code());
    RC_ASSERT(st.index() == r.status().index());
    RC_ASSERT(st.message() == r.status().message());
  }
}

// Exact profile: an integer code is round(x / e) unless clipped, so |x - c e| <= e/2; a float
// code's value is the grid value nearest to |x| / e (half an ulp of the format at that
// magnitude) unless |x| / e reaches the format's max; a clipped value lands on the range end; a
// float code keeps the sign of x; dequantize is f32_rne(value(c) * e).
RC_BOOST_PROP(codes_are_within_half_a_unit_and_clipped_values_land_on_the_range_end, ()) {
  const Case c = *any_case({.allow_given = true, .only_exact = true});
  const auto q = fast::quantize(c.scheme, c.shape, c.x, c.options);
  RC_PRE(q.ok());
  const auto deq = fast::dequantize(*q);
  RC_ASSERT(deq.ok());
  const Layout l = make_layout(c.scheme, c.shape).value();
  const auto e = effective_scales(*q);
  const ValueInfo& vi = info(c.scheme.value);
  const auto& grid = grid_values(c.scheme.value);
  const Rational vmax = vi.hi, vmin = vi.lo;
  bool clipped = false;
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    const Rational& s = e[block_of(l, i)];
    const Rational X = reference::to_rational(c.x[i]);
    const Rational v = code_rational(c.scheme.value, q->codes[i]);
    // dequantize: one rounding of the exact product (value <= 8 bits, e <= 35 bits: exact in f64).
    const double prod = static_cast<double>(v) * static_cast<double>(s);
    const float expect = static_cast<float>(code_negative(c.scheme.value, q->codes[i]) && prod == 0 ? -0.0 : prod);
    RC_ASSERT(qscheme::f32_bits((*deq)[i]) == qscheme::f32_bits(expect));
    if (s == 0) {
      RC_ASSERT(v == 0);
      continue;
    }
    if (!vi.is_float) {
      const Rational t = X / s;
      if (t > vmax + Rational(1, 2)) {
        clipped = true;
        RC_ASSERT(q->codes[i] == vi.hi);
      } else if (t < vmin - Rational(1, 2)) {
        clipped = true;
        RC_ASSERT(q->codes[i] == vi.lo);
      } else {
        RC_ASSERT(2 * abs_r(X - v * s) <= s);
      }
    } else {
      RC_ASSERT(code_negative(c.scheme.value, q->codes[i]) == std::signbit(c.x[i]));
      const Rational y = abs_r(X) / s, a = abs_r(v);
      if (y >= vmax) {
        clipped = y > vmax;
        RC_ASSERT(a == vmax);
        continue;
      }
      const auto it = std::find(grid.begin(), grid.end(), static_cast<double>(a));
      RC_ASSERT(it != grid.end());
      if (y > a) {
        RC_ASSERT(it + 1 != grid.end());
        RC_ASSERT(2 * (y - a) <= Rational(*(it + 1)) - a);
      } else if (y < a) {
        RC_ASSERT(it != grid.begin());
        RC_ASSERT(2 * (a - y) <= a - Rational(*(it - 1)));
      }
    }
  }
  RC_CLASSIFY(clipped, "clipped");
}

// Exact ties at any scale: with a per-tensor f32 scale e = m 2^k (m odd, up to 15 bits, so 1/e is
// not exact) and x = (j + 1/2) e, the code is the even one of j and j + 1.
RC_BOOST_PROP(exact_integer_ties_round_to_even_at_any_scale, ()) {
  Scheme s;
  s.value = *rc::gen::element(Value::q8f, Value::q8s, Value::q4f, Value::q4s, Value::q2f, Value::q2s);
  s.tensor = ScaleDtype::f32;
  const ValueInfo& vi = info(s.value);
  const int m = 2 * *rc::gen::inRange(0, 1 << 14) + 1;
  const float e = std::ldexp(static_cast<float>(m), *rc::gen::inRange(-10, 11));
  const auto js = *rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(rc::gen::inRange(vi.lo, vi.hi)));
  std::vector<float> x;
  for (int j : js) x.push_back(static_cast<float>((j + 0.5) * static_cast<double>(e)));  // exact: <= 24 bits
  const std::vector<std::uint64_t> shape{x.size()};
  QuantizeOptions o;
  o.scales = GivenScales{{e}, std::nullopt};
  const auto q = fast::quantize(s, shape, x, o);
  RC_ASSERT(q.ok());
  for (std::size_t i = 0; i < js.size(); ++i) {
    const int even = (js[i] % 2 == 0) ? js[i] : js[i] + 1;
    RC_ASSERT(q->codes[i] == even);
  }
}

// A calibrated scale e >= 2 max|x| / W puts every x/e at or above lo + 1/2, and exactly there
// only when e = 2a / W and x = -a: that tie must round to lo (even), while the fast engine clamps
// the other blocks' codes at lo + 1 (ScaleFacts::tight, lowest_code.hpp). Blocks (or the whole tensor) whose
// minimum is -a with 2a / W a power of two on the scale grid, one level and two.
RC_BOOST_PROP(a_calibrated_block_minimum_on_the_lowest_tie_takes_the_lowest_code, ()) {
  Scheme s;
  s.value = *rc::gen::element(Value::q8f, Value::q4f, Value::q2f);
  const ValueInfo& vi = info(s.value);
  const double W = vi.hi - vi.lo;
  const int how = *rc::gen::element(0, 1, 2);  // per tensor, blocks, blocks under a global
  // Two levels: block dtypes whose max Dmax leaves g = 2a / (W Dmax) a normal f32.
  const ScaleDtype bd = how == 2 ? *rc::gen::element(ScaleDtype::f16, ScaleDtype::ue4m3)
                                 : *rc::gen::element(ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16,
                                                     ScaleDtype::ue8m0, ScaleDtype::ue4m3);
  const std::uint64_t bw = *rc::gen::element<std::uint64_t>(4, 8, 16, 32);
  if (how == 0) s.tensor = bd == ScaleDtype::ue4m3 ? ScaleDtype::f32 : bd;
  if (how >= 1) s.block = BlockLevel{BlockSize::of({static_cast<std::uint8_t>(bw)}), bd};
  if (how == 2) s.tensor = ScaleDtype::f32;
  // Up to 40 blocks, so that one tight block is rare enough for the clamp at -hi (lowest_code.hpp).
  const std::uint64_t L = bw * *rc::gen::inRange<std::uint64_t>(1, 11), rows = *rc::gen::inRange<std::uint64_t>(1, 5);
  const std::vector<std::uint64_t> shape{rows, L};
  // The tight block gets the largest |x| (so that, with two levels, g = 2a / (W Dmax) is the power
  // of two 2^k and the block scale Dmax); the other values lie below it.
  const double Dmax = how == 2 ? (bd == ScaleDtype::f16 ? 65504.0 : 448.0) : 1.0;
  // a in [2^-3, 2^7), so that one level's scale 2a / W = 2^k >= 2^-9 is on every grid.
  const int k = *rc::gen::inRange(-3, 7) - std::ilogb(W * Dmax / 2);
  const float a = static_cast<float>(std::ldexp(W * Dmax / 2, k));  // exact: <= 8 + 11 significant bits
  std::mt19937 rng(*rc::gen::arbitrary<std::uint32_t>());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(rows * L);
  for (float& v : x) v = u(rng) * a * 0.9f;
  const std::uint64_t tb = *rc::gen::inRange<std::uint64_t>(0, rows * (L / bw));  // the tight block
  const std::uint64_t at = (tb / (L / bw)) * L + (tb % (L / bw)) * bw + *rc::gen::inRange<std::uint64_t>(0, bw);
  x[at] = -a;
  RC_TAG(how);
  const auto r = reference::quantize(s, shape, x, {});
  RC_PRE(r.ok());
  RC_ASSERT(r->codes[at] == vi.lo);
  const auto f = fast::quantize(s, shape, x, {});
  RC_ASSERT(f.ok());
  RC_ASSERT(f->codes == r->codes);
  const Layout l = make_layout(s, shape).value();
  std::vector<std::uint8_t> out(l.total_bytes);
  for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
    RC_ASSERT(fast::quantize_to_bytes(s, shape, x.data(), x.size(), {}, out.data(), out.size(), pol).ok());
    RC_ASSERT(out == reference::encode(*r).value());
  }
}

RC_BOOST_PROP(two_level_near_ties_follow_the_exact_product_s_times_g, ()) {
  // With two levels e = s_j * g has up to 35 significant bits and is no f32 value. Values next to
  // a rounding boundary B * e (an integer's half, or a midpoint of the e4m3 grid) must be decided
  // against that exact product, as the reference does, not against an f32 rounding of it.
  const bool mini = *rc::gen::arbitrary<bool>();
  Scheme s;
  s.value = mini ? Value::e4m3 : *rc::gen::element(Value::q8f, Value::q8s, Value::q4f, Value::q4s);
  s.block = BlockLevel{BlockSize::of({4}), *rc::gen::element(ScaleDtype::f16, ScaleDtype::ue4m3)};
  s.tensor = ScaleDtype::f32;
  const ValueInfo& vi = info(s.value);
  const float g = std::ldexp(static_cast<float>((1 << 23) + *rc::gen::inRange(0, 1 << 23)), *rc::gen::inRange(-40, -20));
  const std::size_t nb = *rc::gen::inRange<std::size_t>(1, 9);
  std::vector<float> sj, x;
  for (std::size_t j = 0; j < nb; ++j) {
    // A value on the block dtype's grid: 11 (f16) or 4 (ue4m3) significant bits.
    const float v = s.block->dtype == ScaleDtype::f16
                        ? std::ldexp(static_cast<float>(1024 + *rc::gen::inRange(0, 1024)), *rc::gen::inRange(-12, 3))
                        : std::ldexp(static_cast<float>(8 + *rc::gen::inRange(0, 8)), *rc::gen::inRange(-8, 3));
    sj.push_back(v);
    const double e = static_cast<double>(v) * g;  // exact
    for (int i = 0; i < 4; ++i) {
      double b;
      if (mini) {  // a midpoint of two neighbouring e4m3 values 2^E (1 + n/8), below the max 448
        const int E = *rc::gen::inRange(-6, 8), n = *rc::gen::inRange(0, E == 7 ? 6 : 8);
        b = std::ldexp(1.0 + (2 * n + 1) / 16.0, E);
      } else {
        b = *rc::gen::inRange(vi.lo, vi.hi) + 0.5;
      }
      const float xr = static_cast<float>(b * e * (*rc::gen::arbitrary<bool>() ? -1 : 1));
      x.push_back(std::nextafter(xr, *rc::gen::element(-INFINITY, 0.0f, INFINITY)));
    }
  }
  QuantizeOptions o;
  o.scales = GivenScales{sj, g};
  const std::vector<std::uint64_t> shape{nb, 4};
  check_same_result(reference::quantize(s, shape, x, o), fast::quantize(s, shape, x, o));
}

RC_BOOST_PROP(quantize_is_idempotent_on_its_own_output, ()) {
  const Case c = *any_case();
  const auto q = fast::quantize(c.scheme, c.shape, c.x, c.options);
  RC_PRE(q.ok());
  const auto y = fast::dequantize(*q);
  RC_ASSERT(y.ok());
  for (float v : *y) RC_PRE(std::isfinite(v));
  QuantizeOptions o = c.options;
  o.scales = stored_as_given(*q);
  const auto q2 = fast::quantize(c.scheme, c.shape, *y, o);
  RC_ASSERT(q2.ok());
  RC_ASSERT(q2->scale_bits == q->scale_bits);
  RC_ASSERT(q2->global_bits == q->global_bits);
  RC_ASSERT(q2->codes == q->codes);
}

// Within a block (one scale), x <= y implies value(code(x)) <= value(code(y)).
RC_BOOST_PROP(quantize_is_monotonic, ()) {
  const Case c = *any_case();
  const auto q = fast::quantize(c.scheme, c.shape, c.x, c.options);
  RC_PRE(q.ok());
  const Layout l = make_layout(c.scheme, c.shape).value();
  std::map<std::uint64_t, std::vector<std::pair<float, double>>> blocks;
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    blocks[block_of(l, i)].emplace_back(c.x[i], static_cast<double>(code_rational(c.scheme.value, q->codes[i])));
  }
  for (auto& [b, v] : blocks) {
    std::sort(v.begin(), v.end(), [](const auto& p, const auto& r) { return p.first < r.first; });
    for (std::size_t i = 1; i < v.size(); ++i) RC_ASSERT(v[i - 1].second <= v[i].second);
  }
}

// Exact profile, calibrated: the effective scale of a block (s_j, or s_j * g) is never below the
// calibrated value 2 alpha / W (alpha = max |x|, or the mean |x| over the block's actual
// elements), unless the stored scale saturated at its dtype's max.
RC_BOOST_PROP(scales_are_never_below_the_calibrated_value, ()) {
  const Case c = *any_case({.allow_given = false, .only_exact = true});
  const auto q = fast::quantize(c.scheme, c.shape, c.x, c.options);
  RC_PRE(q.ok());
  const Layout l = make_layout(c.scheme, c.shape).value();
  const auto e = effective_scales(*q);
  const ValueInfo& vi = info(c.scheme.value);
  const Rational W = vi.hi - vi.lo;
  std::vector<Rational> alpha(l.scales);  // zeros; a filled copy of Rational(0) trips gcc 12's -Wmaybe-uninitialized inside Boost
  std::vector<std::uint64_t> count(l.scales, 0);
  const bool absmean = c.options.calibration == Calibration::absmean;
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    const auto b = block_of(l, i);
    const Rational a = abs_r(reference::to_rational(c.x[i]));
    if (absmean) alpha[b] += a;
    else if (a > alpha[b]) alpha[b] = a;
    ++count[b];
  }
  const ScaleDtype sd = c.scheme.scale_dtype();
  const auto max_bits = [&] {
    // The largest finite pattern of the dtype.
    switch (sd) {
      case ScaleDtype::f32: return 0x7F7FFFFFu;
      case ScaleDtype::f16: return 0x7BFFu;
      case ScaleDtype::bf16: return 0x7F7Fu;
      case ScaleDtype::ue8m0: return 0xFEu;
      default: return 0x7Eu;
    }
  }();
  bool saturated = false;
  for (std::uint64_t j = 0; j < l.scales; ++j) {
    if (count[j] == 0) continue;
    const Rational target = absmean ? Rational(2 * alpha[j] / (W * count[j])) : Rational(2 * alpha[j] / W);
    if (q->scale_bits[j] == max_bits) {
      saturated = true;
      continue;
    }
    RC_ASSERT(e[j] >= target);
  }
  RC_CLASSIFY(saturated, "saturated");
}

RC_BOOST_PROP(two_level_scales_fit_their_dtype, ()) {
  static const std::vector<Scheme> two = [] {
    std::vector<Scheme> out;
    for (const Scheme& s : supported_tuples())
      if (s.two_level()) out.push_back(s);
    return out;
  }();
  Case c;
  c.scheme = *rc::gen::elementOf(two);
  c.shape = *rc::gen::suchThat(shape_for(c.scheme), [s = c.scheme](const std::vector<std::uint64_t>& sh) {
    return validate(s, sh).ok();
  });
  const Layout l = make_layout(c.scheme, c.shape).value();
  c.x = *tensor_for(c.scheme, l);
  c.options = *options_for(c.scheme, l, false);
  const auto q = fast::quantize(c.scheme, c.shape, c.x, c.options);
  RC_PRE(q.ok());
  RC_ASSERT(q->global_bits.has_value());
  const float g = qscheme::f32_from_bits(*q->global_bits);
  RC_ASSERT(std::isfinite(g));
  RC_ASSERT(g >= FLT_MIN);  // the global is a normal f32 (at least 2^-126)
  const int width = info(c.scheme.scale_dtype()).bytes * 8;
  for (auto b : q->scale_bits) {
    RC_ASSERT(width == 32 || (b >> width) == 0);
    RC_ASSERT(reference::scale_value(c.scheme.scale_dtype(), b).ok());
  }
}

// Given one-level scales (so both profiles use the same stored scale e): wherever x / e is an
// f32 (Burn's f32 division does not round) and is not a rounding tie, burn and exact give the
// same code; where the codes agree, so do the dequantized values (both are one rounding of
// value * e).
RC_BOOST_PROP(profiles_agree_where_no_tie_and_no_f32_rounding_intervenes, ()) {
  Case c = *any_case({.allow_given = false});
  RC_PRE(!c.scheme.two_level());
  const Layout l = make_layout(c.scheme, c.shape).value();
  c.options.calibration = Calibration::minmax;
  c.options.scales = *given_scales_for(c.scheme, l);
  c.options.profile = Profile::exact;
  const auto qe = fast::quantize(c.scheme, c.shape, c.x, c.options);
  c.options.profile = Profile::burn;
  const auto qb = fast::quantize(c.scheme, c.shape, c.x, c.options);
  RC_PRE(qe.ok() && qb.ok());
  RC_ASSERT(qe->scale_bits == qb->scale_bits);
  const auto de = fast::dequantize(*qe), db = fast::dequantize(*qb);
  RC_ASSERT(de.ok() && db.ok());
  const auto e = effective_scales(*qe);
  const ValueInfo& vi = info(c.scheme.value);
  std::uint64_t checked = 0;
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    const Rational& s = e[block_of(l, i)];
    if (s == 0) continue;  // burn divides by 0.1 there
    const Rational t = reference::to_rational(c.x[i]) / s;
    const float tf = static_cast<float>(static_cast<double>(t));
    if (!std::isfinite(tf) || reference::to_rational(tf) != t) continue;  // f32 division rounds
    if (!vi.is_float) {
      const Rational tt = 2 * t;  // a tie: 2t an odd integer
      if (denominator(tt) == 1 && numerator(tt) % 2 != 0) continue;
    }
    ++checked;
    RC_ASSERT(qe->codes[i] == qb->codes[i]);
  }
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    if (qe->codes[i] == qb->codes[i] && e[block_of(l, i)] != 0) {
      RC_ASSERT(qscheme::f32_bits((*de)[i]) == qscheme::f32_bits((*db)[i]));
    }
  }
  RC_CLASSIFY(checked > 0, "elements compared");
}

// Where burn and exact store the same scales, their codes differ only as the burn rules allow: one
// step apart (burn's f32 quotient and ties away from zero against the exact quotient and ties to
// even), never more; and they do differ, on random data and on the generator's hard cases, so the
// burn profile is not silently the exact one. The rates are printed for docs/SEMANTICS.md.
namespace {

// Steps between two codes of one kind along the value line: integers by value; minifloats
// (sign-magnitude patterns) by magnitude index, +0 and -0 being one point.
std::int64_t code_steps(const ValueInfo& vi, std::int32_t a, std::int32_t b) {
  if (!vi.is_float) return std::abs(static_cast<std::int64_t>(a) - b);
  const std::int32_t sign = 1 << (vi.bits - 1);
  auto ordinal = [&](std::int32_t c) -> std::int64_t { return (c & sign) ? -(c & (sign - 1)) : c; };
  return std::abs(ordinal(a) - ordinal(b));
}

struct Differences {
  std::uint64_t tensors = 0, tensors_differ = 0, elements = 0, elements_differ = 0, scales = 0, scales_differ = 0,
                far = 0;
  void add(const Scheme& s, const QuantizedTensor& qe, const QuantizedTensor& qb) {
    ++tensors;
    const bool same_scales = qe.scale_bits == qb.scale_bits && qe.global_bits == qb.global_bits;
    std::uint64_t d = 0;
    for (std::size_t i = 0; i < qe.codes.size(); ++i) {
      if (qe.codes[i] == qb.codes[i]) continue;
      ++d;
      if (same_scales && code_steps(info(s.value), qe.codes[i], qb.codes[i]) > 1) ++far;
    }
    for (std::size_t j = 0; j < qe.scale_bits.size(); ++j) scales_differ += qe.scale_bits[j] != qb.scale_bits[j];
    scales_differ += qe.global_bits != qb.global_bits;
    scales += qe.scale_bits.size();
    elements += qe.codes.size();
    elements_differ += d;
    tensors_differ += (d || !same_scales);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(burn_and_exact_codes_differ_by_at_most_one_step_where_their_scales_agree) {
  // Plain random data: x ~ N(0, 1) in f32, shape [2, 3, 40] (every tuple's block fits), minmax.
  std::mt19937 rng(20261202);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::vector<std::uint64_t> shape{2, 3, 40};
  Differences random;
  for (const Scheme& s : supported_tuples()) {
    if (!validate(s, shape).ok()) continue;
    std::vector<float> x(240);
    for (auto& v : x) v = nd(rng);
    QuantizeOptions o;
    o.profile = Profile::exact;
    const auto qe = fast::quantize(s, shape, x, o);
    o.profile = Profile::burn;
    const auto qb = fast::quantize(s, shape, x, o);
    BOOST_REQUIRE(qe.ok() && qb.ok());
    random.add(s, *qe, *qb);
  }
  std::cout << "burn vs exact, N(0,1) data, minmax, every supported tuple on [2,3,40]: " << random.tensors_differ
            << " of " << random.tensors << " tensors differ; codes differ at " << random.elements_differ << " of "
            << random.elements << " elements (" << 100.0 * random.elements_differ / random.elements
            << "%); stored scales differ at " << random.scales_differ << " of " << random.scales << "\n";
  BOOST_TEST(random.far == 0u);
  BOOST_TEST(random.tensors_differ > 0u);

  // The generator's hard cases (ties, ulp neighbours, subnormals, ...), 2000 fixed draws.
  Differences hard;
  const auto gen = any_case({.allow_given = true});
  for (int k = 0; k < 2000; ++k) {
    Case c = gen(rc::Random(static_cast<std::uint64_t>(k) * 7919u + 1u), 50).value();
    c.options.profile = Profile::exact;
    const auto qe = fast::quantize(c.scheme, c.shape, c.x, c.options);
    c.options.profile = Profile::burn;
    const auto qb = fast::quantize(c.scheme, c.shape, c.x, c.options);
    if (!qe.ok() || !qb.ok()) continue;
    hard.add(c.scheme, *qe, *qb);
  }
  std::cout << "burn vs exact, generator hard cases: " << hard.tensors_differ << " of " << hard.tensors
            << " tensors differ; codes differ at " << hard.elements_differ << " of " << hard.elements << " elements ("
            << (hard.elements ? 100.0 * hard.elements_differ / hard.elements : 0.0) << "%)\n";
  BOOST_TEST(hard.far == 0u);
  BOOST_TEST(hard.tensors_differ > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
