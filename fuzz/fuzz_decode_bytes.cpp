// fuzz_decode_bytes: arbitrary bytes with a scheme and shape from the input, to reference::decode and fast::decode; then encode and dequantize.
// The flags choose the layout (Burn's, or ggml's blocks) and the point read under (a profile, one of ggml's recipes, or nvidia-nvfp4's).
// Failure: the engines disagree (error code, decoded tensor, dequantized bits), an accepted input does not encode back to the same bytes, or a crash.
#include <optional>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_tensor.h"
#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/byte_format.hpp"
#include "scheme/layout.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"

namespace {

// Tuning knobs.
// Element cap for fitted inputs: the reference dequantizes with exact arithmetic.
constexpr std::uint64_t kMaxElements = 4096;
// Also decode with fast on the target chosen by the tail's target byte.
constexpr bool kForceTarget = true;

// Flags byte of the tail (fuzz_tensor.h):
constexpr std::uint8_t kBurn = 1 << 0;  // profile burn (else exact)
constexpr std::uint8_t kFit = 1 << 1;   // cut or zero-pad the payload to the layout's byte count
constexpr std::uint8_t kGgml = 1 << 2;    // ggml's blocks (scheme/byte_format.hpp) instead of Burn's layout
constexpr std::uint8_t kRecipe = 1 << 3;  // the point of kRecipes[(flags >> 4) % 4], not the profile
// The recipes whose points read wider patterns or other values than a profile's: ggml's (full-range
// codes, negative and infinite scales) and nvidia-nvfp4's (the f32 product of two levels).
constexpr const char* kRecipes[] = {"ggml-q8_0", "ggml-q8_0-x86", "ggml-q4_0", "nvidia-nvfp4"};

// fast::dequantize_from_bytes (both output policies) against reference decode + dequantize: the
// same error code (and index, for the decode errors), the same bits; under untouched_on_error a
// failure leaves every output float as it was.
void check_fused(const std::string& ctx, const qscheme::fuzz::TensorParams& p, const std::vector<std::uint8_t>& bytes,
                 qscheme::Profile profile, const qscheme::Result<qscheme::QuantizedTensor>& rd) {
  using namespace qscheme;
  const auto l = make_layout(p.scheme, p.shape);
  if (!l.ok() || l->elements > (1u << 20)) return;
  std::optional<Result<std::vector<float>>> want;
  if (rd.ok()) want = reference::dequantize(*rd);
  for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
    std::vector<float> out(static_cast<std::size_t>(l->elements), qscheme::f32_from_bits(0x7FC0DEADu));
    const Status st = fast::dequantize_from_bytes(p.scheme, p.shape, bytes.data(), bytes.size(), profile, out.data(),
                                                  out.size(), pol);
    const std::string what = pol == fast::OutputPolicy::single_pass ? "dequantize_from_bytes single-pass"
                                                                     : "dequantize_from_bytes";
    if (!rd.ok()) {
      fuzz::require_same_outcome(ctx, what.c_str(), rd, fuzz::Outcome{st});
      FUZZ_ASSERT_MSG(st.index() == rd.status().index(), ctx + "\n" + what + ": error index differs");
    } else {
      fuzz::require_same_outcome(ctx, what.c_str(), *want, fuzz::Outcome{st});
      if (st.ok()) fuzz::require_same_floats(ctx + "\n(" + what + ")", "reference", **want, "fused", out);
    }
    if (!st.ok() && pol == fast::OutputPolicy::untouched_on_error) {
      for (float v : out) FUZZ_ASSERT_MSG(qscheme::f32_bits(v) == 0x7FC0DEADu, ctx + "\n" + what + ": output written on error");
    }
  }
}

void check(const std::string& ctx, const qscheme::fuzz::TensorParams& p, const std::vector<std::uint8_t>& bytes,
           qscheme::Profile profile) {
  using namespace qscheme;
  const auto rd = reference::decode(p.scheme, p.shape, bytes, profile);
  const auto fd = fast::decode(p.scheme, p.shape, bytes, profile);
  FUZZ_TRACE("trace: %s -> %s\n", ctx.c_str(), rd.ok() ? "ok" : rd.status().to_string().c_str());
  check_fused(ctx, p, bytes, profile, rd);
  if (!fuzz::require_same_outcome(ctx, "decode", rd, fd)) {
    FUZZ_ASSERT_MSG(rd.status().index() == fd.status().index(),
                    ctx + "\ndecode: error index reference " + std::to_string(rd.status().index()) + " | fast " +
                        std::to_string(fd.status().index()));
    return;
  }
  fuzz::require_same_tensor(ctx, "reference", *rd, "fast", *fd);

  const auto re = reference::encode(*rd);
  const auto fe = fast::encode(*fd);
  FUZZ_ASSERT_MSG(re.ok() && fe.ok(), ctx + "\nencode of a decoded tensor failed: reference " +
                                          re.status().to_string() + " | fast " + fe.status().to_string());
  fuzz::require_same_bytes(ctx + "\n(reference encode(decode(b)) vs b)", "encoded", *re, "input", bytes);
  fuzz::require_same_bytes(ctx + "\n(fast encode(decode(b)) vs b)", "encoded", *fe, "input", bytes);

  const auto rq = reference::dequantize(*rd);
  const auto fq = fast::dequantize(*fd);
  if (fuzz::require_same_outcome(ctx, "dequantize", rq, fq)) {
    fuzz::require_same_floats(ctx, "reference", *rq, "fast", *fq);
  }
}

// Bytes of either format read under a point: reference::decode and fast::decode under it,
// encode back to the bytes, dequantize, and fast::dequantize_from_bytes under it (both policies)
// against the reference's values or error. The fast engine may refuse a point it does not read
// (a minifloat kind under saturation none, infinite scales on two levels) with
// unsupported-profile, never answer otherwise.
void check_rules(const std::string& ctx, const qscheme::fuzz::TensorParams& p, const std::vector<std::uint8_t>& bytes,
                 const qscheme::Rules& rules, qscheme::ByteFormat format) {
  using namespace qscheme;
  const auto rd = reference::decode(p.scheme, p.shape, bytes, rules, format);
  const auto fd = fast::decode(p.scheme, p.shape, bytes, rules, format);
  FUZZ_TRACE("trace: %s -> %s\n", ctx.c_str(), rd.ok() ? "ok" : rd.status().to_string().c_str());
  if (!fd.ok() && fd.status().code() == ErrorCode::unsupported_profile &&
      fd.status().message().find("does not run this point") != std::string::npos) {
    const bool unread = (info(p.scheme.value).is_float && rules.saturation == rule::Saturation::none) ||
                        (p.scheme.two_level() && rules.scale_overflow == rule::ScaleOverflow::infinity);
    FUZZ_ASSERT_MSG(unread, ctx + "\ndecode: the fast engine refused a point it reads: " + fd.status().to_string());
    return;
  }
  const auto l = make_layout(p.scheme, p.shape);
  if (l.ok() && l->elements <= (1u << 20)) {
    std::optional<Result<std::vector<float>>> want;
    if (rd.ok()) want = reference::dequantize(*rd);
    for (auto pol : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
      std::vector<float> out(static_cast<std::size_t>(l->elements), qscheme::f32_from_bits(0x7FC0DEADu));
      const Status st = fast::dequantize_from_bytes(p.scheme, p.shape, bytes.data(), bytes.size(), rules, format,
                                                    out.data(), out.size(), pol);
      const std::string what = std::string("dequantize_from_bytes under the point") +
                               (pol == fast::OutputPolicy::single_pass ? " single-pass" : "");
      if (!rd.ok()) {
        fuzz::require_same_outcome(ctx, what.c_str(), rd, fuzz::Outcome{st});
      } else {
        fuzz::require_same_outcome(ctx, what.c_str(), *want, fuzz::Outcome{st});
        if (st.ok()) fuzz::require_same_floats(ctx + "\n(" + what + ")", "reference", **want, "fused", out);
      }
      if (!st.ok() && pol == fast::OutputPolicy::untouched_on_error) {
        for (float v : out) FUZZ_ASSERT_MSG(qscheme::f32_bits(v) == 0x7FC0DEADu, ctx + "\n" + what + ": output written on error");
      }
    }
  }
  if (!fuzz::require_same_outcome(ctx, "decode under the point", rd, fd)) return;
  fuzz::require_same_tensor(ctx, "reference", *rd, "fast", *fd);
  const auto re = reference::encode(*rd, format);
  const auto fe = fast::encode(*fd, format);
  FUZZ_ASSERT_MSG(re.ok() && fe.ok(), ctx + "\nencode of a decoded tensor failed: reference " +
                                          re.status().to_string() + " | fast " + fe.status().to_string());
  fuzz::require_same_bytes(ctx + "\n(reference encode(decode(b)) vs b)", "encoded", *re, "input", bytes);
  fuzz::require_same_bytes(ctx + "\n(fast encode(decode(b)) vs b)", "encoded", *fe, "input", bytes);
  const auto rq = reference::dequantize(*rd);
  const auto fq = fast::dequantize(*fd);
  if (fuzz::require_same_outcome(ctx, "dequantize", rq, fq)) fuzz::require_same_floats(ctx, "reference", *rq, "fast", *fq);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace qscheme;
  std::span<const std::uint8_t> payload;
  const auto params = fuzz::read_tensor_params(data, size, &payload);
  if (!params) return 0;
  const auto& p = *params;
  const Profile profile = (p.flags & kBurn) ? Profile::burn : Profile::exact;
  const ByteFormat format = (p.flags & kGgml) ? ByteFormat::ggml : ByteFormat::burn;
  const int recipe = (p.flags & kRecipe) ? 1 + (p.flags >> 4) % 4 : 0;
  const Rules rules = recipe ? find_recipe(kRecipes[recipe - 1]).value()->rules : profile_rules(profile);

  // A copy in its own allocation, so ASan sees any read past its end.
  std::vector<std::uint8_t> bytes(payload.begin(), payload.end());
  if (p.flags & kFit) {
    const auto layout = make_layout(p.scheme, p.shape);
    if (layout.ok() && layout->elements <= kMaxElements) {
      const auto g = ggml_layout(p.scheme, p.shape);
      bytes.resize(static_cast<std::size_t>(format == ByteFormat::ggml && g.ok() ? g->total_bytes : layout->total_bytes));
    }
  }
  // Inputs that are neither fitted nor small enough are left as they are: the engines must reject
  // them by length before doing per-element work.
  if (p.elements && *p.elements > kMaxElements) {
    const auto layout = make_layout(p.scheme, p.shape);
    if (layout.ok() && layout->total_bytes == bytes.size()) return 0;  // too costly for the reference
  }

  // A profile over Burn's layout: its own entry points too.
  const bool profile_burn = format == ByteFormat::burn && recipe == 0;
  const std::string ctx = "scheme " + format_scheme(p.scheme) + "  shape " + fuzz::shape_string(p.shape) +
                          "  bytes " + std::to_string(bytes.size()) + "  format " + std::string(to_string(format)) +
                          "  rules " + (recipe ? kRecipes[recipe - 1] : std::string(to_string(profile)));
  auto run = [&](const std::string& c) {
    if (profile_burn) check(c, p, bytes, profile);
    check_rules(c, p, bytes, rules, format);
  };
  run(ctx + "  fast target auto");

  if (kForceTarget && p.target != 0) {
    const auto targets = fast::available_targets();
    if (!targets.empty()) {
      const std::string& t = targets[(p.target - 1) % targets.size()];
      FUZZ_ASSERT_MSG(fast::set_target(t), "set_target(" + t + ") refused a listed target");
      run(ctx + "  fast target " + t);
      FUZZ_ASSERT(fast::set_target("auto"));
    }
  }
  return 0;
}
