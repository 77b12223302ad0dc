// The engines-agree sweep: every supported tuple of tuple_space(), on the shapes of shape_set()
// and the shapes that reach every branch of the fused bytes plan, with every edge-case input
// (oracle/edge_tensors.hpp), both profiles and both calibrations, on every compiled Highway
// target. For each case the reference is computed once; then, per target, the fast engine must
// give its QuantizedTensor (or its error code, index and message), its bytes, its decode and
// its dequantized bits; the fused paths its bytes under both output policies (the output
// untouched on error) and its floats under every profile; the bytes match an independent
// element-by-element packer and round-trip. The reference's own output is checked against the
// scheme: codes and scales it can hold, finite dequantized values, idempotent requantization.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "fast/bytes_plan.hpp"
#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "hwy/targets.h"
#include "oracle/edge_tensors.hpp"
#include "reference/reference.hpp"
#include "reference/values.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/recipes.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "tests/support/bytes_plan_shapes.hpp"
#include "tests/support/element_packer.hpp"
#include "tests/support/print_support.hpp"
#include "tests/support/sanitized.hpp"

namespace fast = qscheme::fast;
namespace ref = qscheme::reference;
using qscheme::Calibration;
using qscheme::Profile;
using qscheme::Result;
using qscheme::Status;
using Bytes = std::vector<std::uint8_t>;
using Shape = std::vector<std::uint64_t>;

namespace {

// The other targets run every kOtherTargetStride-th scheme on the bytes-plan shapes, where
// the fused kernels' vector loops run, and every kOtherTargetShapeSetStride-th on the shape set
// (the best target runs them all).
constexpr std::size_t kOtherTargetStride = 7;
constexpr std::size_t kOtherTargetShapeSetStride = 23;
// Above kReferenceMaxElements the exact engine is too slow for every case: there the reference
// runs on the "random" input of every scheme and on every input of every kBigStride-th scheme
// (shapes of the shape set); on the large bytes-plan shapes, the tensors the fused plans take
// hold the fused bytes to the fast engine's general path, quantize + encode.
constexpr std::uint64_t kReferenceMaxElements = 400;
constexpr std::size_t kBigStride = 33;
// On the bytes-plan shapes each scheme runs "random" and every kInputStride-th other input,
// starting at an offset that turns with the scheme, so every input meets every shape.
constexpr std::size_t kInputStride = 3;
// The three options the fused path leaves to the general one, on every kOptionsStride-th scheme
// of the bytes-plan shapes (the shape set runs them all).
constexpr std::size_t kOptionsStride = 5;
constexpr std::uint8_t kCanary = 0xA5;
constexpr std::uint32_t kCanaryFloat = 0x7FC0DEADu;

std::string StatusText(const Status& st) { return st.ok() ? std::string("ok") : st.to_string(); }

// One quantization and what the fast engine must give for it.
struct Case {
  Shape shape;
  qscheme::Layout layout;
  const qscheme::oracle::EdgeInput* input = nullptr;
  qscheme::QuantizeOptions options;
  bool by_reference = false;  // the expectations are the reference's (else the fast general path's)
  bool fused = false;         // the fused bytes plan takes this tensor
  bool from_shape_set = false;
  std::optional<Result<qscheme::QuantizedTensor>> q;
  std::optional<Result<Bytes>> bytes;
  std::optional<Result<std::vector<float>>> deq;  // dequantize(q)
  std::optional<Result<qscheme::QuantizedTensor>> decoded;  // decode(bytes)
  // dequantize(decode(bytes, p)) for p = exact, onnx, burn: what dequantize_from_bytes must give.
  std::vector<std::pair<Profile, Result<std::vector<float>>>> deq_from_bytes;
  std::string what;
};

// Where a case runs: printed as the context of a failed check only.
struct Where {
  std::int64_t target;
  const std::string& scheme;
  const Case& c;
};

std::ostream& operator<<(std::ostream& o, const Where& w) {
  return o << "target " << hwy::TargetName(w.target) << " scheme " << w.scheme << " shape rank " << w.c.shape.size()
           << " elements " << w.c.layout.elements << " " << w.c.what
           << (w.c.by_reference ? "" : " (against quantize + encode)");
}

// Boost.Test records every assertion it evaluates, and over the sweep's millions of comparisons
// that costs more than the engines do: each comparison is made plainly, and only when it fails
// is it made again through Boost.Test (printing both sides) in the case's context.
#define AGREE(w, cond)                                    \
  do {                                                    \
    if (!(cond)) BOOST_TEST_CONTEXT(w) { BOOST_TEST(cond); } \
  } while (0)
#define AGREE_MSG(w, cond, msg)                                  \
  do {                                                           \
    if (!(cond)) BOOST_TEST_CONTEXT(w) { BOOST_TEST(cond, msg); } \
  } while (0)
#define AGREE_ELEMENTS(w, a, b)                                                                 \
  do {                                                                                          \
    if (!((a) == (b))) BOOST_TEST_CONTEXT(w) { BOOST_TEST((a) == (b), boost::test_tools::per_element()); } \
  } while (0)
#define AGREE_REQUIRE(w, cond, msg)                                      \
  do {                                                                   \
    if (!(cond)) BOOST_TEST_CONTEXT(w) { BOOST_TEST_REQUIRE(cond, msg); } \
  } while (0)

void ExpectSameError(const Where& w, const Status& want, const Status& got) {
  AGREE_MSG(w, (want.code() == got.code()), want.to_string() << " vs " << got.to_string());
  AGREE(w, want.index() == got.index());
  AGREE(w, want.message() == got.message());
}

// The expectations of a case, computed once for every target.
void Expect(const qscheme::Scheme& s, Case& c) {
  const auto& x = c.input->x;
  if (c.by_reference) {
    c.q = ref::quantize(s, c.shape, x, c.options);
    c.bytes = c.q->ok() ? ref::encode(**c.q) : Result<Bytes>(c.q->status());
    if (c.q->ok()) c.deq = ref::dequantize(**c.q);
    if (c.bytes->ok()) {
      c.decoded = c.options.rules ? ref::decode(s, c.shape, **c.bytes, *c.options.rules, qscheme::ByteFormat::burn)
                                  : ref::decode(s, c.shape, **c.bytes, c.options.profile);
    }
  } else {
    c.q = fast::quantize(s, c.shape, x, c.options);
    c.bytes = c.q->ok() ? fast::encode(**c.q) : Result<Bytes>(c.q->status());
  }
  if (!c.bytes->ok() || c.options.profile != Profile::exact || c.options.calibration != Calibration::minmax ||
      c.options.rules) {
    return;
  }
  for (Profile p : {Profile::exact, Profile::onnx, Profile::burn}) {
    auto d = c.by_reference ? ref::decode(s, c.shape, **c.bytes, p) : fast::decode(s, c.shape, **c.bytes, p);
    if (!d.ok()) {
      c.deq_from_bytes.emplace_back(p, d.status());
      continue;
    }
    c.deq_from_bytes.emplace_back(p, c.by_reference ? ref::dequantize(*d) : fast::dequantize(*d));
  }
}

// What the reference gives must be a tensor the scheme can hold (the reference's own claims,
// on the "random" input): every code and scale valid, finite dequantized values, and under the
// exact profile the stored scales given back reproduce the same tensor.
void CheckReferenceOutput(const qscheme::Scheme& s, const Where& w) {
  const Case& c = w.c;
  const bool unsupported = c.options.profile == Profile::burn && c.options.calibration == Calibration::absmean &&
                           s.two_level() && !c.options.scales;
  if (unsupported) {
    AGREE(w, (c.q->status().code() == qscheme::ErrorCode::unsupported_profile));
    return;
  }
  // The points that have no calibration for the scheme (an unsigned kind in sym mode, onnx's
  // affine calibration of a kind other than u8, absmean in affine mode) refuse it.
  if (!c.q->ok() && c.q->status().code() == qscheme::ErrorCode::unsupported_profile &&
      (qscheme::info(s.value).extension || s.affine() || c.options.profile == Profile::onnx)) {
    return;
  }
  AGREE_REQUIRE(w, c.q->ok(), c.q->status().to_string());
  const auto& q = **c.q;
  AGREE_REQUIRE(w, q.codes.size() == c.layout.elements, "");
  for (std::int32_t code : q.codes) AGREE_REQUIRE(w, ref::is_valid_code(s.value, code), "code " << code);
  for (std::uint32_t b : q.scale_bits) AGREE_REQUIRE(w, ref::is_valid_scale(s.scale_dtype(), b), "scale " << b);
  AGREE_REQUIRE(w, c.deq->ok(), c.deq->status().to_string());
  for (float y : **c.deq) AGREE_REQUIRE(w, std::isfinite(y), "value " << y);
  if (c.options.profile != Profile::exact || c.options.scales) return;
  qscheme::QuantizeOptions again;
  qscheme::GivenScales g;
  for (std::uint32_t b : q.scale_bits) g.block.push_back(ref::scale_value(s.scale_dtype(), b)->f32);
  if (q.global_bits) g.global = qscheme::f32_from_bits(*q.global_bits);
  g.zero_points = q.zero_points;
  again.scales = g;
  const auto r = ref::quantize(s, c.shape, **c.deq, again);
  AGREE_REQUIRE(w, r.ok(), r.status().to_string());
  AGREE_REQUIRE(w, r->codes == q.codes, "requantized codes");
  AGREE_REQUIRE(w, r->scale_bits == q.scale_bits, "requantized scales");
}

// The QuantizedTensor path: quantize, encode, decode, dequantize; the bytes against the
// independent packer and their round trip.
void CheckTensorPath(const qscheme::Scheme& s, const Where& w) {
  const Case& c = w.c;
  const auto f = fast::quantize(s, c.shape, c.input->x, c.options);
  const auto& r = *c.q;
  AGREE_REQUIRE(w, r.ok() == f.ok(), "want " << StatusText(r.status()) << " got " << StatusText(f.status()));
  if (!r.ok()) {
    ExpectSameError(w, r.status(), f.status());
    return;
  }
  if (!(*r == *f)) {
    AGREE(w, (*r == *f));
    AGREE_ELEMENTS(w, r->codes, f->codes);
    AGREE_ELEMENTS(w, r->scale_bits, f->scale_bits);
    return;
  }
  const auto fb = fast::encode(*f);
  AGREE_REQUIRE(w, fb.ok(), fb.status().to_string());
  AGREE_REQUIRE(w, c.bytes->ok(), c.bytes->status().to_string());
  AGREE(w, (**c.bytes == *fb));
  AGREE(w, fb->size() == c.layout.total_bytes);
  AGREE(w, (*fb == qscheme::testing::PackedByElement(*f, c.layout)));
  const auto fd = c.options.rules ? fast::decode(s, c.shape, *fb, *c.options.rules)
                                  : fast::decode(s, c.shape, *fb, c.options.profile);
  AGREE_REQUIRE(w, fd.ok(), fd.status().to_string());
  AGREE(w, (*fd == *r));
  AGREE(w, (fast::encode(*fd).value() == *fb));
  AGREE_REQUIRE(w, c.decoded->ok(), c.decoded->status().to_string());
  AGREE(w, (**c.decoded == *r));
  const auto fdq = fast::dequantize(*f);
  AGREE_REQUIRE(w, c.deq->ok(), c.deq->status().to_string());
  AGREE_REQUIRE(w, fdq.ok(), fdq.status().to_string());
  AGREE_ELEMENTS(w, qscheme::f32_bits(**c.deq), qscheme::f32_bits(*fdq));
}

// The fused path: quantize_to_bytes under both output policies and from a misaligned input,
// dequantize_from_bytes under each profile.
void CheckFusedPath(const qscheme::Scheme& s, const Where& w) {
  const Case& c = w.c;
  const auto& x = c.input->x;
  const auto& want = *c.bytes;
  for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
    Bytes out(c.layout.total_bytes, kCanary);
    const auto st = fast::quantize_to_bytes(s, c.shape, x.data(), x.size(), c.options, out.data(), out.size(), pol);
    AGREE_REQUIRE(w, st.ok() == want.ok(), "got " << StatusText(st) << " want " << StatusText(want.status()));
    if (!st.ok()) {
      ExpectSameError(w, want.status(), st);
      if (pol == fast::OutputPolicy::untouched_on_error) {
        AGREE(w, std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == kCanary; }));
      }
      continue;
    }
    AGREE_ELEMENTS(w, out, *want);
  }
  if (!want.ok()) return;
  {
    // The same input from an address one float past a 64-byte boundary: loads are unaligned.
    std::vector<float> shifted(x.size() + 17);
    float* xs = shifted.data() + 1 + (16 - (reinterpret_cast<std::uintptr_t>(shifted.data()) / 4) % 16) % 16;
    std::copy(x.begin(), x.end(), xs);
    Bytes out(c.layout.total_bytes, kCanary);
    const auto st = fast::quantize_to_bytes(s, c.shape, xs, x.size(), c.options, out.data(), out.size(),
                                            fast::OutputPolicy::single_pass);
    AGREE_REQUIRE(w, st.ok(), st.to_string());
    AGREE_ELEMENTS(w, out, *want);
  }
  for (const auto& [prof, dwant] : c.deq_from_bytes) {
    std::vector<float> got(c.layout.elements, qscheme::f32_from_bits(kCanaryFloat));
    const auto st = fast::dequantize_from_bytes(s, c.shape, want->data(), want->size(), prof, got.data(), got.size());
    AGREE_REQUIRE(w, st.ok() == dwant.ok(), StatusText(st) << " vs " << StatusText(dwant.status()));
    if (!st.ok()) {
      AGREE(w, (st.code() == dwant.status().code()));
      continue;
    }
    AGREE_ELEMENTS(w, qscheme::f32_bits(got), qscheme::f32_bits(*dwant));
  }
}

// Corrupted bytes of a valid serialization: dequantize_from_bytes gives decode + dequantize's
// outcome, and under untouched_on_error a failure leaves every output float as it was.
void CheckCorruptBytes(const qscheme::Scheme& s, const Where& w, std::mt19937& rng) {
  const Case& c = w.c;
  for (int trial = 0; trial < 3; ++trial) {
    Bytes b = **c.bytes;
    for (int k = 0; k < 1 + trial; ++k) b[rng() % b.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    Status want_st;
    std::vector<float> want;
    const auto q = fast::decode(s, c.shape, b, Profile::exact);
    if (q) {
      auto d = fast::dequantize(*q);
      if (d) want = *d;
      else want_st = d.status();
    } else {
      want_st = q.status();
    }
    for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
      std::vector<float> got(c.layout.elements, qscheme::f32_from_bits(kCanaryFloat));
      const auto st =
          fast::dequantize_from_bytes(s, c.shape, b.data(), b.size(), Profile::exact, got.data(), got.size(), pol);
      AGREE_REQUIRE(w, st.ok() == want_st.ok(), StatusText(st) << " vs " << StatusText(want_st));
      if (!st.ok()) {
        ExpectSameError(w, want_st, st);
        if (pol == fast::OutputPolicy::untouched_on_error) {
          AGREE(w, std::all_of(got.begin(), got.end(), [](float v) { return qscheme::f32_bits(v) == kCanaryFloat; }));
        }
        continue;
      }
      AGREE_ELEMENTS(w, qscheme::f32_bits(got), qscheme::f32_bits(want));
    }
  }
}

// Case c (its expectations computed) again under a given global amax, by turn % 4: the input's own
// finite max |x|, which must give c's tensor; `below` times it (blocks saturate); 0; `above`
// times it. Its expectations computed.
Case UnderGlobalAmax(const qscheme::Scheme& s, const Case& c, std::size_t turn, float below, float above) {
  float top = 0;
  for (float v : c.input->x) top = std::isfinite(v) ? std::max(top, std::fabs(v)) : top;
  Case a;
  a.shape = c.shape;
  a.layout = c.layout;
  a.input = c.input;
  a.options = c.options;
  a.by_reference = c.by_reference;
  a.fused = c.fused;
  a.from_shape_set = c.from_shape_set;
  const float amax[] = {top, top * below, 0.0f, top * above};
  a.options.global_amax = amax[turn % 4];
  a.what = c.what + " global amax " + std::to_string(*a.options.global_amax);
  Expect(s, a);
  if (turn % 4 == 0 && c.q->ok()) {
    BOOST_TEST_CONTEXT(a.what) { BOOST_TEST((a.q->value() == c.q->value())); }
  }
  return a;
}

struct Counts {
  std::size_t schemes = 0, cases = 0, by_reference = 0, fused = 0, reference_checked = 0, corrupt = 0;
};

// The cases of scheme s (index si in tuple_space()), their expectations computed.
std::vector<Case> CasesOf(const qscheme::Scheme& s, std::size_t si,
                          std::vector<std::vector<qscheme::oracle::EdgeInput>>& inputs, const std::vector<Profile>& profiles) {
  std::vector<Case> cases;
  auto add_shape = [&](const Shape& shape, bool from_shape_set) {
    const auto l = qscheme::make_layout(s, shape);
    if (!l.ok()) return;
    const bool fused = fast::detail::make_bytes_plan(s, *l).fused;
    const bool small = l->elements <= kReferenceMaxElements;
    if (!small && !fused && !from_shape_set) return;
    // Large shapes of the shape set between the sampled schemes run the "random" input alone.
    const bool random_only = !small && from_shape_set && si % kBigStride != 0;
    inputs.push_back(qscheme::oracle::edge_inputs(
        s, *l, static_cast<std::uint32_t>(si),
        random_only ? qscheme::oracle::EdgeSet::every_size : qscheme::oracle::EdgeSet::all));
    for (std::size_t ii = 0; ii < inputs.back().size(); ++ii) {
      const auto& in = inputs.back()[ii];
      const bool random = ii == 0;
      if (!from_shape_set && !random && (ii + si) % kInputStride != 0) continue;
      const bool by_reference = small || (from_shape_set && (random || si % kBigStride == 0));
      if (!by_reference && (!fused || from_shape_set)) continue;
      // Every option on the shape set; on the bytes-plan shapes exact minmax, the other three
      // on the first input of every kOptionsStride-th scheme.
      const bool all_options = from_shape_set || (random && si % kOptionsStride == 0);
      for (Profile p : profiles) {
        for (Calibration cal : {Calibration::minmax, Calibration::absmean}) {
          if (in.scales && cal == Calibration::absmean) continue;
          if (!all_options && (p != Profile::exact || cal != Calibration::minmax)) continue;
          Case c;
          c.shape = shape;
          c.layout = *l;
          c.input = &in;
          c.options.profile = p;
          c.options.calibration = cal;
          c.options.scales = in.scales;
          c.by_reference = by_reference;
          c.fused = fused;
          c.from_shape_set = from_shape_set;
          c.what = in.name + " " + std::string(qscheme::to_string(p)) + " " + std::string(qscheme::to_string(cal));
          Expect(s, c);
          if (s.two_level() && p == Profile::exact && cal == Calibration::minmax && !in.scales) {
            cases.push_back(UnderGlobalAmax(s, c, ii + si, 0.375f, 4.0f));
          }
          cases.push_back(std::move(c));
        }
      }
    }
  };
  for (const auto& shape : qscheme::shape_set()) add_shape(shape, true);
  for (const auto& shape : qscheme::testing::BytesPlanShapes()) add_shape(shape, false);
  return cases;
}

// One case outside the sweep, checked on every path as the sweep checks its own.
void ExpectSame(const qscheme::Scheme& s, const Shape& shape, const std::vector<float>& x,
                const qscheme::QuantizeOptions& o) {
  const qscheme::oracle::EdgeInput in{"x", x, o.scales, false};
  const auto layout = qscheme::make_layout(s, shape);
  if (!layout.ok()) {
    // A rejected pair: the same error from every entry point.
    const auto r = ref::quantize(s, shape, x, o);
    const auto f = fast::quantize(s, shape, x, o);
    BOOST_TEST_REQUIRE(!r.ok());
    BOOST_TEST_REQUIRE(!f.ok());
    BOOST_TEST((r.status().code() == layout.status().code()));
    BOOST_TEST((r.status().code() == f.status().code()));
    BOOST_TEST(r.status().index() == f.status().index());
    BOOST_TEST(r.status().message() == f.status().message());
    return;
  }
  Case c;
  c.shape = shape;
  c.layout = *layout;
  c.input = &in;
  c.options = o;
  c.by_reference = true;
  c.what = "x";
  Expect(s, c);
  const std::string scheme = qscheme::format_scheme(s);
  const Where w{hwy::SupportedTargets() & -hwy::SupportedTargets(), scheme, c};
  CheckTensorPath(s, w);
  CheckFusedPath(s, w);
}

// Every supported tuple of `space` (the `si`-th of it, counted from 1, runs when si % stride is
// 0) against the reference, as the cases of CasesOf, on every target.
Counts Sweep(const std::vector<qscheme::Scheme>& space, std::size_t stride, const std::vector<Profile>& profiles) {
  Counts n;
  const auto targets = fast::kernels::AvailableTargetBits();
  std::size_t si = 0;
  for (const auto& s : space) {
    ++si;
    if (!qscheme::validate_scheme(s).ok()) continue;
    ++n.schemes;
    if (si % stride != 0) continue;
    hwy::SetSupportedTargetsForTest(0);  // expectations (and inputs) from the best target
    std::vector<std::vector<qscheme::oracle::EdgeInput>> inputs;
    inputs.reserve(qscheme::shape_set().size() + qscheme::testing::BytesPlanShapes().size());
    const std::vector<Case> cases = CasesOf(s, si, inputs, profiles);
    const std::string scheme = qscheme::format_scheme(s);
    for (std::int64_t t : targets) {
      const bool other = t != targets.front();
      if (other && si % kOtherTargetStride != 0 && si % kOtherTargetShapeSetStride != 0) continue;
      hwy::SetSupportedTargetsForTest(t);
      std::mt19937 rng(static_cast<std::uint32_t>(si));
      for (const Case& c : cases) {
        if (other && si % (c.from_shape_set ? kOtherTargetShapeSetStride : kOtherTargetStride) != 0) continue;
        const Where w{t, scheme, c};
        if (c.by_reference) CheckTensorPath(s, w);
        CheckFusedPath(s, w);
        if (t == targets.front()) {
          ++n.cases;
          n.by_reference += c.by_reference;
          n.fused += c.fused;
        }
        if (c.input->name == "random" && c.bytes->ok() && !c.bytes->value().empty() &&
            c.options.profile == Profile::exact && c.options.calibration == Calibration::minmax) {
          CheckCorruptBytes(s, w, rng);
          n.corrupt += t == targets.front();
        }
        if (t == targets.front() && c.by_reference && c.input->name == "random" && !c.options.scales) {
          CheckReferenceOutput(s, w);
          ++n.reference_checked;
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  BOOST_TEST_MESSAGE(n.schemes << " supported tuples; " << n.cases << " cases, " << n.by_reference
                               << " against the reference, " << n.fused << " on fused plans, "
                               << n.reference_checked << " reference outputs checked, " << n.corrupt
                               << " corrupted serializations");
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fast_equals_reference_for_every_supported_tuple_shape_and_edge_input_on_every_target) {
  const Counts n = Sweep(qscheme::tuple_space(), qscheme::testing::SanitizerStride(4), {Profile::exact, Profile::burn});
  BOOST_TEST(n.schemes == 1599u);
  BOOST_TEST(n.by_reference > (qscheme::testing::kSanitized ? 100000u : 500000u));
  BOOST_TEST(n.fused > (qscheme::testing::kSanitized ? 40000u : 250000u));
  BOOST_TEST(n.reference_checked > (qscheme::testing::kSanitized ? 8000u : 40000u));
}

// The extension space (qscheme's extension kinds, affine mode, per-axis scales) the same way,
// under the onnx profile too (given scales, and affine u8's calibration).
BOOST_AUTO_TEST_CASE(fast_equals_reference_for_every_supported_extension_tuple_shape_and_edge_input_on_every_target) {
  const Counts n = Sweep(qscheme::extension_space(), qscheme::testing::SanitizerStride(4),
                         {Profile::exact, Profile::burn, Profile::onnx});
  BOOST_TEST(n.schemes == 335u);
  BOOST_TEST(n.by_reference > (qscheme::testing::kSanitized ? 30000u : 200000u));
  BOOST_TEST(n.reference_checked > (qscheme::testing::kSanitized ? 2000u : 10000u));
}

// The schemes a recipe names that the sweep below runs: its scheme texts, "[...]" as 32-element
// blocks; none for the recipes that take any scheme (the profiles, swept above).
std::vector<qscheme::Scheme> RecipeSchemes(const qscheme::Recipe& r) {
  std::vector<qscheme::Scheme> out;
  std::string_view rest = r.schemes;
  while (!rest.empty()) {
    const std::size_t semi = std::min(rest.find(';'), rest.size());
    std::string text(rest.substr(0, semi));
    rest.remove_prefix(std::min(semi + 1, rest.size()));
    while (!text.empty() && text.front() == ' ') text.erase(0, 1);
    if (text == "any") continue;
    if (const std::size_t dots = text.find("[...]"); dots != std::string::npos) text.replace(dots, 5, "[32]");
    out.push_back(qscheme::parse_scheme(text).value());
  }
  return out;
}

// Inputs at the edges of the ue8m0 exponent rules, one per block value: max |x| at a power of
// two, one ulp below and above it, at torchao-even's half-up point and an ulp either side, at
// f32's largest values (where torchao-even carries into inf), among the subnormals, and at
// log2f-floor's thresholds below 2^8 and 2^100 (the least max |x| whose f32 log2 rounds up, and
// the f32 below it).
std::vector<qscheme::oracle::EdgeInput> ExponentEdges(const qscheme::Layout& l) {
  const std::vector<std::uint32_t> tops{0x3F800000u, 0x3F7FFFFFu, 0x3F800001u, 0x40400000u, 0x3FF00000u,
                                        0x3FEFFFFFu, 0x3FF00001u, 0x3FE00000u, 0x3FDFFFFFu, 0x7F7FFFFFu,
                                        0x7F780000u, 0x7F77FFFFu, 0x7F700000u, 0x00400000u, 0x00000001u,
                                        0x007FFFFFu, 0x00800000u, 0x0C000000u, 0x0BFFFFFFu, 0x42E00000u,
                                        0x437FFFFEu, 0x437FFFFDu, 0x717FFFD4u, 0x717FFFD3u};
  std::vector<qscheme::oracle::EdgeInput> out;
  for (std::size_t k = 0; k < tops.size(); ++k) {
    std::vector<float> x(l.elements);
    for (std::size_t i = 0; i < x.size(); ++i) {
      // Each element a fraction of one of the tops, its sign alternating; every 7th is a top.
      const float top = qscheme::f32_from_bits(tops[(k + i / 32) % tops.size()]);
      const float v = i % 7 == 0 ? top : top * (static_cast<float>(i % 13) / 13.0f);
      x[i] = i % 2 ? -v : v;
    }
    out.push_back({"exponent edge " + std::to_string(k), std::move(x), std::nullopt, false});
  }
  return out;
}

// Every recipe the fast engine runs gives the reference's tensor, bytes and error on every edge
// input, shape and target; a recipe it does not run yet is unsupported-profile, never an answer.
BOOST_AUTO_TEST_CASE(fast_equals_reference_for_every_recipe_it_runs) {
  const auto targets = fast::kernels::AvailableTargetBits();
  std::size_t ran = 0, cases = 0, quantized = 0;
  std::vector<std::string> not_yet;
  for (const qscheme::Recipe& r : qscheme::recipes()) {
    bool runs = false;
    for (const qscheme::Scheme& s : RecipeSchemes(r)) {
      const std::string scheme = qscheme::format_scheme(s);
      std::vector<Shape> shapes = qscheme::shape_set();
      for (const auto& shape : qscheme::testing::BytesPlanShapes()) shapes.push_back(shape);
      for (std::size_t hi = 0; hi < shapes.size(); ++hi) {
        const Shape& shape = shapes[hi];
        const auto l = qscheme::make_layout(s, shape);
        if (!l.ok()) continue;
        std::vector<qscheme::oracle::EdgeInput> inputs = qscheme::oracle::edge_inputs(s, *l, 7, qscheme::oracle::EdgeSet::all);
        for (auto& e : ExponentEdges(*l)) inputs.push_back(std::move(e));
        const bool small = l->elements <= kReferenceMaxElements;
        for (std::size_t ii = 0; ii < inputs.size(); ++ii) {
          if (!small && ii != 0 && (ii + hi) % (kInputStride * qscheme::testing::SanitizerStride(4)) != 0) continue;
          if (small && ii % qscheme::testing::SanitizerStride(3) != 0) continue;
          Case c;
          c.shape = shape;
          c.layout = *l;
          c.input = &inputs[ii];
          c.options = qscheme::recipe_options(r, {});
          c.options.scales = inputs[ii].scales;
          c.by_reference = true;
          c.what = std::string(r.name) + " " + inputs[ii].name;
          hwy::SetSupportedTargetsForTest(0);
          const auto probe = fast::quantize(s, shape, inputs[ii].x, c.options);
          if (!probe.ok() && probe.status().message().find("does not run this point") != std::string::npos) {
            BOOST_TEST((probe.status().code() == qscheme::ErrorCode::unsupported_profile));
            continue;
          }
          Expect(s, c);
          ++cases;
          if (c.q->ok()) {
            runs = true;
            ++quantized;
          }
          std::vector<Case> runs_of{c};
          if (s.two_level() && !inputs[ii].scales) {
            // nvidia-nvfp4's known amax too.
            runs_of.push_back(UnderGlobalAmax(s, c, ii + hi, 1.0f / 3.0f, 3.0f));
            ++cases;
          }
          for (const Case& rc : runs_of) {
            for (std::int64_t t : targets) {
              if (t != targets.front() && (ii + hi) % kOtherTargetStride != 0) continue;
              hwy::SetSupportedTargetsForTest(t);
              const Where w{t, scheme, rc};
              CheckTensorPath(s, w);
              CheckFusedPath(s, w);
            }
          }
        }
      }
    }
    if (RecipeSchemes(r).empty()) continue;
    if (runs) {
      ++ran;
    } else {
      not_yet.emplace_back(r.name);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  std::string left;
  for (const auto& n : not_yet) left += " " + n;
  BOOST_TEST_MESSAGE(ran << " recipes run in the fast engine over " << cases << " cases (" << quantized
                         << " quantized, the rest rejected alike); not yet:" << left);
  BOOST_TEST(ran >= 12u);  // every recipe that names its schemes
}

BOOST_AUTO_TEST_CASE(rejections_match_the_reference_in_code_index_and_message) {
  auto S = [](const char* t) { return qscheme::parse_scheme(t).value(); };
  const std::vector<std::uint64_t> shape{2, 8};
  std::vector<float> x(16, 0.5f);
  std::vector<float> nan = x;
  nan[5] = NAN;
  nan[3] = -INFINITY;
  std::vector<float> big = x;
  big[7] = FLT_MAX;
  struct Case {
    const char* scheme;
    const std::vector<float>* x;
    qscheme::Profile prof;
    qscheme::Calibration cal;
    std::optional<qscheme::GivenScales> given;
  };
  using GS = qscheme::GivenScales;
  const qscheme::Profile E = qscheme::Profile::exact, B = qscheme::Profile::burn;
  const qscheme::Calibration MM = qscheme::Calibration::minmax, AM = qscheme::Calibration::absmean;
  const std::vector<Case> cases{
      {"q8s:block[8]=f32", &nan, E, MM, std::nullopt},
      {"q8s:block[8]=f32", &nan, E, MM, GS{{1.0f}, std::nullopt}},
      {"q8s:block[8]=f32", &nan, E, MM, GS{{1.0f, -1.0f}, std::nullopt}},
      {"q8s:block[8]=f32", &nan, E, MM, GS{{1.0f, 1.0f}, 1.0f}},
      {"q8s:block[8]=ue4m3:tensor=f32", &nan, B, AM, std::nullopt},
      {"q8s:block[8]=ue4m3:tensor=f32", &x, B, AM, GS{{1.0f, 1.0f}, NAN}},
      {"q8s:block[8]=ue4m3:tensor=f32", &nan, B, AM, GS{{1.0f, 1.0f}, 1.0f}},
      {"q8s:block[8]=ue4m3:tensor=f32", &x, B, MM, GS{{448.0f, 1.0f}, FLT_MAX}},
      {"q8s", &big, B, MM, std::nullopt},
      {"q8s", &big, E, MM, std::nullopt},
      {"q8s:block[8]=f32", &x, E, MM, GS{{0.0f, 0.0f}, std::nullopt}},
      {"q8s:block[8]=f32", &x, B, MM, GS{{0.0f, 0.0f}, std::nullopt}},
      {"e2m1:block[8]=ue8m0", &x, E, MM, GS{{0.0f, 0.0f}, std::nullopt}},
      {"q4s:packed-native(0)", &x, E, MM, std::nullopt},
  };
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      qscheme::QuantizeOptions o;
      o.profile = c.prof;
      o.calibration = c.cal;
      o.scales = c.given;
      BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " case " << i << " " << c.scheme) {
        const auto r = ref::quantize(S(c.scheme), shape, *c.x, o);
        const auto f = fast::quantize(S(c.scheme), shape, *c.x, o);
        BOOST_TEST_REQUIRE(r.ok() == f.ok(), r.status().to_string() << " vs " << f.status().to_string());
        if (!r.ok()) {
          BOOST_TEST((r.status().code() == f.status().code()), r.status().to_string() << " vs " << f.status().to_string());
          BOOST_TEST(r.status().index() == f.status().index());
          BOOST_TEST(r.status().message() == f.status().message());
        } else {
          BOOST_TEST((*r == *f));
        }
      }
    }
    // Dequantize: a corrupt scale and a corrupt code together; then each alone.
    auto q = fast::quantize(S("q8s:block[8]=f16"), shape, x).value();
    for (int variant = 0; variant < 3; ++variant) {
      auto c = q;
      if (variant != 1) c.codes[9] = -128;
      if (variant != 2) c.scale_bits[1] = 0x7C00;  // f16 inf
      const auto r = ref::dequantize(c);
      const auto f = fast::dequantize(c);
      BOOST_TEST_REQUIRE(!r.ok());
      BOOST_TEST_REQUIRE(!f.ok());
      BOOST_TEST((r.status().code() == f.status().code()));
      BOOST_TEST(r.status().index() == f.status().index(), "variant " << variant);
      BOOST_TEST(r.status().message() == f.status().message(), "variant " << variant);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Three rejections whose error depends on which rule an engine follows:
// a zero given scale over N-D blocks, where the first offending element in row-major order lies
// in a later block than the first offending block; encode of a tensor with both a bad scale and
// a bad code (scales are checked first, as in dequantize); encode of a one-level tensor carrying
// a global scale (size-mismatch, as in dequantize).
// A global amax where it does not apply, or that is no max |x|, and where it meets the other
// checks (given scales that are themselves wrong, non-finite input): the reference's error, from
// every entry point of the fast engine.
BOOST_AUTO_TEST_CASE(global_amax_rejections_match_the_reference) {
  auto S = [](const char* t) { return qscheme::parse_scheme(t).value(); };
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  auto with = [](qscheme::QuantizeOptions o, float amax) {
    o.global_amax = amax;
    return o;
  };
  qscheme::QuantizeOptions burn, absmean, given, bad_given;
  burn.profile = Profile::burn;
  absmean.calibration = Calibration::absmean;
  given.scales = qscheme::GivenScales{{1, 1}, 1.0f};
  bad_given.scales = qscheme::GivenScales{{1}, 1.0f};
  const char* two = "q8s:block[4]=ue4m3:tensor=f32";
  ExpectSame(S("q8s:block[4]=f16"), {8}, x, with({}, 4));
  ExpectSame(S(two), {8}, x, with(given, 4));
  ExpectSame(S(two), {8}, x, with(bad_given, 4));
  ExpectSame(S(two), {8}, x, with(burn, 4));
  ExpectSame(S(two), {8}, x, with(absmean, 4));
  qscheme::QuantizeOptions burn_absmean = burn;
  burn_absmean.calibration = Calibration::absmean;
  ExpectSame(S(two), {8}, x, with(burn_absmean, 4));  // the profile's own refusal first
  ExpectSame(S(two), {8}, x, with({}, -1));
  ExpectSame(S(two), {8}, x, with({}, std::nanf("")));
  ExpectSame(S(two), {8}, x, with({}, INFINITY));
  ExpectSame(S(two), {3}, x, with({}, 4));  // the layout's error first
  ExpectSame(S(two), {8}, {1, 2, NAN, 4, 5, 6, 7, 8}, with({}, 4));
  ExpectSame(S("i16:block[4]=f16:tensor=f32"), {8}, x, with({}, 4));  // an extension kind
  ExpectSame(S("u8:affine:block[4]=f16:tensor=f32"), {8}, x, with({}, 4));
  qscheme::QuantizeOptions te = qscheme::recipe_options(**qscheme::find_recipe("nvidia-nvfp4"), {});
  std::vector<float> big(64);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) - 20.5f;
  ExpectSame(S("nvfp4"), {64}, big, with(te, 10));
  ExpectSame(S("nvfp4"), {64}, big, with(te, 0));
  ExpectSame(S("nvfp4"), {4, 16}, big, with({}, 1e-30f));
}

BOOST_AUTO_TEST_CASE(engines_agree_on_rejections_they_once_disagreed_on) {
  auto S = [](const char* t) { return qscheme::parse_scheme(t).value(); };
  auto same = [](const qscheme::Status& r, const qscheme::Status& f) {
    BOOST_TEST(!r.ok());
    BOOST_TEST((r.code() == f.code()), r.to_string() << " vs " << f.to_string());
    BOOST_TEST(r.index() == f.index());
    BOOST_TEST(r.message() == f.message());
  };
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    BOOST_TEST_CONTEXT("target " << hwy::TargetName(t)) {
      // Blocks [2, 2] of a [4, 4] tensor: element 2 (row 0) lies in block 1, element 4 (row 1) in
      // block 0. Both blocks are given a zero scale.
      const std::vector<std::uint64_t> shape{4, 4};
      std::vector<float> x(16, 0.0f);
      x[2] = 1.0f;
      x[4] = 1.0f;
      for (const char* scheme : {"q8s:block[2,2]=f32", "e4m3:block[2,2]=f32", "q4s:block[2,2]=f16"}) {
        qscheme::QuantizeOptions o;
        o.scales = qscheme::GivenScales{{0.0f, 0.0f, 1.0f, 1.0f}, std::nullopt};
        const auto r = ref::quantize(S(scheme), shape, x, o);
        same(r.status(), fast::quantize(S(scheme), shape, x, o).status());
        BOOST_TEST(r.status().index() == 1u);
        BOOST_TEST(r.status().message().find("element 2") != std::string::npos, r.status().message());
      }
      const std::vector<std::uint64_t> flat{16};
      std::vector<float> y(16, 1.0f);
      auto q = fast::quantize(S("q8s:block[8]=f16"), flat, y).value();
      auto both = q;
      both.codes[3] = -128;
      both.scale_bits[1] = 0x7C00;
      same(ref::encode(both).status(), fast::encode(both).status());
      BOOST_TEST(fast::encode(both).status().index() == 1u);
      auto global = q;
      global.global_bits = 0x3F800000u;
      same(ref::encode(global).status(), fast::encode(global).status());
      BOOST_TEST((fast::encode(global).status().code() == qscheme::ErrorCode::size_mismatch));
      same(ref::dequantize(global).status(), fast::dequantize(global).status());
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

BOOST_AUTO_TEST_CASE(blocks_spanning_two_outer_axes_match_the_reference) {
  // fast/ walks the rows of one block along axes as one run (groups of rows a stride
  // apart): ranks 3-5, partial blocks on every axis, blocks along axes before R-3 too, 1 and 2
  // threads.
  struct Case {
    std::vector<std::uint64_t> shape;
    const char* block;
  };
  const Case cases[] = {{{3, 17, 9}, "2,3,5"}, {{3, 5, 7, 11}, "2,3,4"}, {{3, 5, 7, 11}, "2,2,3,4"},
                        {{2, 3, 4, 5, 6}, "2,2,2,2,3"}, {{5, 4, 33, 2}, "3,4,4,1"}, {{7, 2, 40}, "4,1,16"},
                        {{4, 9, 40, 25}, "2,3,5"}};  // the last one above the threads threshold (2^15)
  const char* kinds[] = {"q8f:block[{}]=f16", "e4m3:block[{}]=ue8m0:tensor=f32", "q4s:packed-u32(1):block[{}]=bf16",
                         "e2m1:block[{}]=ue4m3"};
  for (const auto& c : cases) {
    std::uint64_t n = 1;
    for (auto d : c.shape) n *= d;
    std::mt19937 rng(11);
    std::vector<float> x(n);
    for (auto& v : x) v = std::normal_distribution<float>(0.0f, 2.0f)(rng);
    for (const char* k : kinds) {
      std::string text = k;
      text.replace(text.find("{}"), 2, c.block);
      const auto s = qscheme::parse_scheme(text);
      BOOST_TEST_REQUIRE(s.ok(), text);
      for (unsigned th : {1u, 2u}) {
        BOOST_REQUIRE(fast::set_threads(th).ok());
        for (auto cal : {qscheme::Calibration::minmax, qscheme::Calibration::absmean}) {
          for (auto prof : {qscheme::Profile::exact, qscheme::Profile::burn}) {
            qscheme::QuantizeOptions o;
            o.calibration = cal;
            o.profile = prof;
            BOOST_TEST_CONTEXT(text << " shape rank " << c.shape.size() << " threads " << th << " "
                                    << qscheme::to_string(cal) << " " << qscheme::to_string(prof)) {
              ExpectSame(*s, c.shape, x, o);
            }
          }
        }
      }
      BOOST_REQUIRE(fast::set_threads(1).ok());
    }
  }
}

// The extension kinds and affine mode (over Burn's kinds too) run on every fast entry point:
// the reference's tensor, bytes, values and errors, given scales and zero points included.
BOOST_AUTO_TEST_CASE(the_fast_engine_runs_the_extension_kinds_and_affine_mode) {
  const Shape shape{4};
  const std::vector<float> x{0.5f, 1.0f, 2.0f, 3.0f};
  qscheme::QuantizeOptions o;
  o.scales = qscheme::GivenScales{{0.5f, 1.0f}, std::nullopt};
  ExpectSame(qscheme::parse_scheme("u8:block[2]=f32").value(), shape, x, o);
  o.profile = Profile::onnx;
  ExpectSame(qscheme::parse_scheme("u8:block[2]=f32").value(), shape, x, o);
  qscheme::QuantizeOptions a;
  a.scales = qscheme::GivenScales{{0.5f, 1.0f}, std::nullopt, {3, -4}};
  ExpectSame(qscheme::parse_scheme("q8f:affine:block[2]=f32").value(), shape, x, a);
  // The scheme's own errors come first, as in the reference.
  ExpectSame(qscheme::parse_scheme("u8:packed-native(0)").value(), shape, x, o);
}
