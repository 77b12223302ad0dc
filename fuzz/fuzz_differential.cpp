// fuzz_differential: a scheme, profile, calibration or given scales (and zero points), shape and f32 data from the input, through reference:: and fast:: (automatic target and one forced target);
// with a recipe picked by the target byte's high nibble, through both engines under that recipe's point too (when the fast engine runs it).
// Failure: any difference in error code, codes, stored scales, encoded bytes or dequantized bits between the engines, or a crash.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_tensor.h"
#include "reference/reference.hpp"
#include "scheme/layout.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"
#include "scheme/float_bits.hpp"

namespace {

// Tuning knobs.
// The reference is exact arithmetic (about 0.2 ms per element under ASan, so 4096 elements took
// about 0.9 s a run): keep tensors small so the fuzzer stays at a useful speed.
constexpr std::uint64_t kMaxElements = 1024;
// Also run fast on the target chosen by the tail's target byte (process-wide, restored after).
constexpr bool kForceTarget = true;
// Also check decode(encode(q)) == q in both engines.
constexpr bool kCheckRoundTrip = true;

// Flags byte of the tail (fuzz_tensor.h):
constexpr std::uint8_t kBurn = 1 << 0;          // profile burn (else exact)
constexpr std::uint8_t kAbsmean = 1 << 1;       // calibration absmean (else minmax)
constexpr std::uint8_t kGiven = 1 << 2;         // caller-supplied scales instead of calibration
constexpr std::uint8_t kNarrowData = 1 << 3;    // one payload byte per element: int8 / 4 (else raw f32)
constexpr std::uint8_t kGivenCountOff = 1 << 4; // one given block scale too many (size-mismatch path);
                                                // without kGiven: a global amax (QuantizeOptions::global_amax),
                                                // the data's own max |x| with kGlobalToggle, else from the payload
constexpr std::uint8_t kGlobalToggle = 1 << 5;  // global present iff the scheme is NOT two-level
constexpr std::uint8_t kNarrowScales = 1 << 6;  // one payload byte per given scale: (1 + lo/16) * 2^(hi-8)
constexpr std::uint8_t kExtraElement = 1 << 7;  // one data element too many (size-mismatch path)

class Payload {
 public:
  explicit Payload(std::span<const std::uint8_t> p) : p_(p) {}
  std::uint8_t byte() { return pos_ < p_.size() ? p_[pos_++] : 0; }
  float raw_float() {
    std::uint8_t b[4] = {byte(), byte(), byte(), byte()};
    float f;
    std::memcpy(&f, b, 4);
    return f;
  }
  float narrow_data() { return static_cast<float>(static_cast<std::int8_t>(byte())) * 0.25f; }
  float narrow_scale() {
    const std::uint8_t b = byte();
    return std::ldexp(1.0f + static_cast<float>(b & 15) / 16.0f, (b >> 4) - 8);
  }
  std::size_t left() const { return p_.size() - pos_; }

 private:
  std::span<const std::uint8_t> p_;
  std::size_t pos_ = 0;
};

std::string describe(const qscheme::fuzz::TensorParams& p, const qscheme::QuantizeOptions& o, std::size_t n,
                     const std::string& target) {
  using namespace qscheme;
  std::string s = "scheme " + format_scheme(p.scheme) + "  shape " + fuzz::shape_string(p.shape) + "  x.size " +
                  std::to_string(n) + "  profile " + std::string(to_string(o.profile)) + "  calibration " +
                  std::string(to_string(o.calibration)) + "  fast target " + target;
  if (o.rules) s += "\nrules " + format_rules(*o.rules);
  if (o.global_amax) s += "\nglobal amax " + fuzz::hex32(f32_bits(*o.global_amax));
  if (o.scales) {
    s += "\ngiven block scales (" + std::to_string(o.scales->block.size()) + "):";
    for (std::size_t i = 0; i < o.scales->block.size() && i < 8; ++i) {
      s += " " + fuzz::hex32(f32_bits(o.scales->block[i]));
    }
    if (o.scales->global) {
      s += "  global " + fuzz::hex32(f32_bits(*o.scales->global));
    }
    if (!o.scales->zero_points.empty()) {
      s += "\ngiven zero points (" + std::to_string(o.scales->zero_points.size()) + "):";
      for (std::size_t i = 0; i < o.scales->zero_points.size() && i < 8; ++i) {
        s += " " + std::to_string(o.scales->zero_points[i]);
      }
    }
  }
  return s;
}

// The fused bytes path (fast::quantize_to_bytes under both output policies, then
// fast::dequantize_from_bytes) against the reference's bytes and dequantized values.
void check_fused(const std::string& ctx, const qscheme::fuzz::TensorParams& p, std::span<const float> x,
                 const qscheme::QuantizeOptions& o, const qscheme::Result<std::vector<std::uint8_t>>& rb,
                 const qscheme::Result<std::vector<float>>& rdq) {
  using namespace qscheme;
  const auto l = make_layout(p.scheme, p.shape);
  const std::size_t total = l.ok() ? static_cast<std::size_t>(l->total_bytes) : 0;
  for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
    std::vector<std::uint8_t> out(total, 0xA5);
    const Status st = fast::quantize_to_bytes(p.scheme, p.shape, x.data(), x.size(), o, out.data(), out.size(), pol);
    const bool untouched = pol == fast::OutputPolicy::untouched_on_error;
    if (rb.ok() || !untouched || st.code() != ErrorCode::non_finite_input) {
      fuzz::require_fused_bytes(ctx, untouched ? "quantize_to_bytes" : "quantize_to_bytes single-pass", st, out, 0xA5,
                                untouched, rb);
    }
    if (!st.ok() || !rdq.ok()) continue;
    std::vector<float> d(static_cast<std::size_t>(l->elements));
    const Status ds = fast::dequantize_from_bytes(p.scheme, p.shape, out.data(), out.size(),
                                                  o.rules ? *o.rules : profile_rules(o.profile), ByteFormat::burn,
                                                  d.data(), d.size(), pol);
    FUZZ_ASSERT_MSG(ds.ok(), ctx + "\ndequantize_from_bytes: " + ds.to_string());
    fuzz::require_same_floats(ctx + "\n(dequantize_from_bytes)", "reference", *rdq, "fused", d);
  }
}

// ggml's blocks, where the scheme and shape have them: the fused quantize_to_bytes and
// dequantize_from_bytes in ByteFormat::ggml (both policies), encode and decode, against the
// reference's encode(q, ggml), decode and dequantize.
void check_ggml(const std::string& ctx, const qscheme::fuzz::TensorParams& p, std::span<const float> x,
                const qscheme::QuantizeOptions& o, const qscheme::Result<qscheme::QuantizedTensor>& rq,
                const qscheme::Result<qscheme::QuantizedTensor>& fq) {
  using namespace qscheme;
  const auto g = ggml_layout(p.scheme, p.shape);
  // A shape far beyond the data (the engines reject it by size) is not given an output of its
  // byte count: the harness would be the one to fail allocating it.
  if (!g.ok() || g->blocks > kMaxElements / kGgmlBlockCodes) return;
  const auto rb = rq.ok() ? reference::encode(*rq, ByteFormat::ggml) : Result<std::vector<std::uint8_t>>(rq.status());
  const Rules rules = o.rules ? *o.rules : profile_rules(o.profile);
  for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
    const bool untouched = pol == fast::OutputPolicy::untouched_on_error;
    std::vector<std::uint8_t> out(static_cast<std::size_t>(g->total_bytes), 0xA5);
    const Status st = fast::quantize_to_bytes(p.scheme, p.shape, x.data(), x.size(), o, ByteFormat::ggml, out.data(),
                                              out.size(), pol);
    fuzz::require_fused_bytes(ctx, untouched ? "quantize_to_bytes ggml" : "quantize_to_bytes ggml single-pass", st, out,
                              0xA5, untouched, rb);
    if (!st.ok()) continue;
    std::vector<float> d(static_cast<std::size_t>(g->blocks * kGgmlBlockCodes));
    const Status ds = fast::dequantize_from_bytes(p.scheme, p.shape, out.data(), out.size(), rules, ByteFormat::ggml,
                                                  d.data(), d.size(), pol);
    const auto rdq = reference::dequantize(*rq);
    if (fuzz::require_same_outcome(ctx, "dequantize_from_bytes ggml", rdq, fuzz::Outcome{ds})) {
      fuzz::require_same_floats(ctx + "\n(dequantize_from_bytes ggml)", "reference", *rdq, "fused", d);
    }
  }
  if (!rq.ok() || !fq.ok()) return;
  const auto fb = fast::encode(*fq, ByteFormat::ggml);
  if (!fuzz::require_same_outcome(ctx, "encode ggml", rb, fb)) return;
  fuzz::require_same_bytes(ctx + "\n(encode ggml)", "reference", *rb, "fast", *fb);
  const auto rd = reference::decode(p.scheme, p.shape, *rb, rules, ByteFormat::ggml);
  const auto fd = fast::decode(p.scheme, p.shape, *fb, rules, ByteFormat::ggml);
  if (fuzz::require_same_outcome(ctx, "decode ggml", rd, fd)) {
    fuzz::require_same_tensor(ctx + "\n(decode ggml)", "reference", *rd, "fast", *fd);
  }
}

// Runs fast on the current target and compares everything with the reference's results.
void compare_fast(const std::string& ctx, const qscheme::fuzz::TensorParams& p, std::span<const float> x,
                  const qscheme::QuantizeOptions& o, const qscheme::Result<qscheme::QuantizedTensor>& rq) {
  using namespace qscheme;
  const auto fq = fast::quantize(p.scheme, p.shape, x, o);
  FUZZ_TRACE("trace: %s -> %s\n", ctx.c_str(), rq.ok() ? "ok" : rq.status().to_string().c_str());
  if (!fuzz::require_same_outcome(ctx, "quantize", rq, fq)) {
    check_ggml(ctx, p, x, o, rq, fq);  // its fused path's errors
    return;
  }
  fuzz::require_same_tensor(ctx, "reference", *rq, "fast", *fq);

  const auto rb = reference::encode(*rq);
  const auto fb = fast::encode(*fq);
  if (fuzz::require_same_outcome(ctx, "encode", rb, fb)) {
    fuzz::require_same_bytes(ctx, "reference", *rb, "fast", *fb);
    if (kCheckRoundTrip) {
      const auto rd = rq->rules ? reference::decode(p.scheme, p.shape, *rb, *rq->rules, ByteFormat::burn)
                                : reference::decode(p.scheme, p.shape, *rb, rq->profile);
      const auto fd = fq->rules ? fast::decode(p.scheme, p.shape, *fb, *fq->rules)
                                : fast::decode(p.scheme, p.shape, *fb, fq->profile);
      FUZZ_ASSERT_MSG(rd.ok() && fd.ok(), ctx + "\ndecode of encoded bytes failed: reference " +
                                              rd.status().to_string() + " | fast " + fd.status().to_string());
      fuzz::require_same_tensor(ctx + "\n(reference decode(encode(q)) vs q)", "decoded", *rd, "quantized", *rq);
      fuzz::require_same_tensor(ctx + "\n(fast decode(encode(q)) vs q)", "decoded", *fd, "quantized", *fq);
    }
  }
  const auto rdq = reference::dequantize(*rq);
  const auto fdq = fast::dequantize(*fq);
  if (fuzz::require_same_outcome(ctx, "dequantize", rdq, fdq)) {
    fuzz::require_same_floats(ctx, "reference", *rdq, "fast", *fdq);
  }
  check_fused(ctx, p, x, o, rb, rdq);
  check_ggml(ctx, p, x, o, rq, fq);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace qscheme;
  std::span<const std::uint8_t> payload_bytes;
  const auto params = fuzz::read_tensor_params(data, size, &payload_bytes);
  if (!params) return 0;
  const auto& p = *params;
  Payload payload(payload_bytes);

  // Data: exactly the element count when it is small, otherwise whatever the payload holds
  // (the engines must then reject the shape or the size without allocating for it).
  std::vector<float> x;
  const bool narrow = p.flags & kNarrowData;
  std::size_t n = 0;
  if (p.elements && *p.elements <= kMaxElements) {
    n = static_cast<std::size_t>(*p.elements) + ((p.flags & kExtraElement) ? 1 : 0);
  } else {
    n = narrow ? payload.left() : payload.left() / 4;
    if (n > kMaxElements) n = kMaxElements;
  }
  x.reserve(n);
  for (std::size_t i = 0; i < n; ++i) x.push_back(narrow ? payload.narrow_data() : payload.raw_float());

  QuantizeOptions o;
  o.profile = (p.flags & kBurn) ? Profile::burn : Profile::exact;
  o.calibration = (p.flags & kAbsmean) ? Calibration::absmean : Calibration::minmax;
  // Over qscheme's extension kinds and in affine mode, burn with absmean (a refusal either way)
  // stands for profile onnx: its given scales and affine u8's calibration.
  const bool extension = info(p.scheme.value).extension || p.scheme.affine();
  if (extension && (p.flags & kBurn) && (p.flags & kAbsmean)) {
    o.profile = Profile::onnx;
    o.calibration = Calibration::minmax;
  }
  if (p.flags & kGiven) {
    const auto layout = make_layout(p.scheme, p.shape);
    std::uint64_t count = layout.ok() ? layout->scales : 1;
    if (count > kMaxElements) count = kMaxElements;
    count += (p.flags & kGivenCountOff) ? 1 : 0;
    const bool narrow_scales = p.flags & kNarrowScales;
    GivenScales g;
    for (std::uint64_t i = 0; i < count; ++i) {
      g.block.push_back(narrow_scales ? payload.narrow_scale() : payload.raw_float());
    }
    if (p.scheme.two_level() != static_cast<bool>(p.flags & kGlobalToggle)) {
      g.global = narrow_scales ? payload.narrow_scale() : payload.raw_float();
    }
    if (p.scheme.affine() && layout.ok()) {
      // Zero points (affine mode), one payload byte each spread over the kind's range (0 its
      // least, 255 its largest); 0x7F is one past the range (invalid-scale).
      const ValueInfo& vi = info(p.scheme.value);
      const std::uint64_t zc = std::min<std::uint64_t>(layout->zero_points, kMaxElements);
      for (std::uint64_t j = 0; j < zc && payload.left() > 0; ++j) {
        const std::uint8_t b = payload.byte();
        g.zero_points.push_back(b == 0x7F ? vi.hi + 1
                                          : vi.lo + static_cast<std::int32_t>((static_cast<std::int64_t>(b) * (vi.hi - vi.lo)) / 255));
      }
    }
    o.scales = std::move(g);
  } else if (p.flags & kGivenCountOff) {
    float top = 0;
    for (float v : x) top = std::isfinite(v) ? std::max(top, std::fabs(v)) : top;
    o.global_amax = (p.flags & kGlobalToggle)    ? top
                    : (p.flags & kNarrowScales) ? payload.narrow_scale()
                                                : payload.raw_float();
  }

  // Target byte high nibble k > 0: recipes()[(k - 1) % count] instead of the profile, when it
  // takes the scheme and the fast engine runs its point.
  if (const std::uint8_t k = p.target >> 4; k != 0) {
    const Recipe& r = recipes()[(k - 1) % recipes().size()];
    if (!recipe_accepts(r, p.scheme)) return 0;
    o = recipe_options(r, o);
    const auto probe = fast::quantize(p.scheme, p.shape, x, o);
    if (!probe.ok() && probe.status().code() == ErrorCode::unsupported_profile &&
        probe.status().message().find("does not run this point") != std::string::npos) {
      return 0;
    }
  }

  const auto rq = reference::quantize(p.scheme, p.shape, x, o);
  compare_fast(describe(p, o, x.size(), "auto"), p, x, o, rq);

  if (kForceTarget && p.target != 0) {
    const auto targets = fast::available_targets();
    if (!targets.empty()) {
      const std::string& t = targets[(p.target - 1) % targets.size()];
      FUZZ_ASSERT_MSG(fast::set_target(t), "set_target(" + t + ") refused a listed target");
      compare_fast(describe(p, o, x.size(), t), p, x, o, rq);
      FUZZ_ASSERT(fast::set_target("auto"));
    }
  }
  return 0;
}
