// The one dispatch table of the fast engine (kernels/dispatch.h): every per-target body is
// compiled once per Highway target here, exported once, and looked up through Get(); plus the
// target control and the streaming-store setting.
#include "fast/kernels/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/kernels/dispatch.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "fast/kernels/affine-inl.h"
#include "fast/kernels/check-inl.h"
#include "fast/kernels/dequant-inl.h"
#include "fast/kernels/dequant_unit-inl.h"
#include "fast/kernels/maxabs-inl.h"
#include "fast/kernels/minmax-inl.h"
#include "fast/kernels/narrow-inl.h"
#include "fast/kernels/pack-inl.h"
#include "fast/kernels/quantize-inl.h"
#include "fast/kernels/scales-inl.h"
#include "fast/kernels/steps-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_NOINLINE std::size_t LanesF32Impl() { return hn::Lanes(hn::ScalableTag<float>()); }
HWY_NOINLINE std::int64_t TargetImpl() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>

namespace qscheme::fast::kernels {

// Every entry point of Kernels and its per-target body, in the order of the struct.
#define QSCHEME_KERNELS(X)                                 \
  X(max_abs_bits, MaxAbsBitsImpl)                          \
  X(segment_max_abs_bits, SegmentMaxAbsBitsImpl)           \
  X(rows_segment_max_abs_bits, RowsSegmentMaxAbsBitsImpl)  \
  X(block_max_abs_bits, BlockMaxAbsBitsImpl)               \
  X(block_signed_max_bits, BlockSignedMaxBitsImpl)         \
  X(prepass_block_max_abs_bits, PrepassBlockMaxAbsBitsImpl) \
  X(scale_range, ScaleRangeImpl)                           \
  X(scales_from_max, ScalesFromMaxImpl)                    \
  X(blocks_within, BlocksWithinImpl)                       \
  X(exponent_scales, ExponentScalesImpl)                   \
  X(scales_from_bytes, ScalesFromBytesImpl)                \
  X(scale_values_from_bits, ScaleValuesFromBitsImpl)       \
  X(step_scales, StepScalesImpl)                           \
  X(te_scales, TeScalesImpl)                               \
  X(burn_scales, BurnScalesImpl)                           \
  X(quantize_exact_int, QuantizeExactIntImpl)              \
  X(quantize_exact_float, QuantizeExactFloatImpl)          \
  X(quantize_zero_scale, QuantizeZeroScaleImpl)            \
  X(quantize_burn_int, QuantizeBurnIntImpl)                \
  X(quantize_burn_float, QuantizeBurnFloatImpl)            \
  X(quantize_row, QuantizeRowImpl)                         \
  X(quantize_codes, QuantizeCodesImpl)                     \
  X(quantize_steps, QuantizeStepsImpl)                     \
  X(quantize_steps_ggml, QuantizeStepsGgmlImpl)            \
  X(codes_to_bytes, CodesToBytesImpl)                      \
  X(bytes_to_codes, BytesToCodesImpl)                      \
  X(pack_words, PackWordsImpl)                             \
  X(unpack_words, UnpackWordsImpl)                         \
  X(pack_row, PackRowImpl)                                 \
  X(pack_columns, PackColumnsImpl)                         \
  X(unpack_row, UnpackRowImpl)                             \
  X(unpack_columns, UnpackColumnsImpl)                     \
  X(first_invalid_code, FirstInvalidCodeImpl)              \
  X(first_bad_code, FirstBadCodeImpl)                      \
  X(dequant_exact_int, DequantExactIntImpl)                \
  X(dequant_exact_float, DequantExactFloatImpl)            \
  X(dequant_burn_int, DequantBurnIntImpl)                  \
  X(dequant_burn_float, DequantBurnFloatImpl)              \
  X(dequant_row, DequantRowImpl)                           \
  X(dequant_codes, DequantCodesImpl)                       \
  X(dequant_unit, DequantUnitImpl)                         \
  X(dequant_ggml, DequantGgmlImpl)                         \
  X(stream_copy, StreamCopyImpl)                           \
  X(min_max_keys, MinMaxKeysImpl)                          \
  X(segment_min_max_keys, SegmentMinMaxKeysImpl)          \
  X(quantize_affine, QuantizeAffineImpl)                   \
  X(dequant_affine, DequantAffineImpl)                     \
  X(narrow_f32, NarrowF32Impl)                             \
  X(lanes_f32, LanesF32Impl)                               \
  X(target, TargetImpl)

#define QSCHEME_EXPORT(member, impl) HWY_EXPORT(impl);
QSCHEME_KERNELS(QSCHEME_EXPORT)
#undef QSCHEME_EXPORT

namespace {

// Slots of a Highway dispatch table: one per compiled target, and slot 0, which chooses a target
// on its first call (Get() chooses before it reads a slot, so slot 0 is never handed out).
constexpr std::size_t kSlots = sizeof(HWY_DISPATCH_TABLE(MaxAbsBitsImpl)) / sizeof(HWY_DISPATCH_TABLE(MaxAbsBitsImpl)[0]);

// One Kernels per slot, read out of the dispatch tables once.
std::array<Kernels, kSlots> BuildTables() {
  std::array<Kernels, kSlots> t{};
  for (std::size_t i = 0; i < kSlots; ++i) {
#define QSCHEME_FILL(member, impl) t[i].member = HWY_DISPATCH_TABLE(impl)[i];
    QSCHEME_KERNELS(QSCHEME_FILL)
#undef QSCHEME_FILL
  }
  return t;
}

// Compiled targets the real CPU supports, computed before any forcing.
const std::vector<std::int64_t>& RealTargets() {
  static const std::vector<std::int64_t> kTargets = [] {
    std::vector<std::int64_t> out;
    // Lower bit values are better targets on x86 (AVX3 < AVX2 < SSE4 < SSSE3 < EMU128 < SCALAR).
    for (std::int64_t t = hwy::SupportedTargets() & HWY_TARGETS; t != 0; t &= t - 1) out.push_back(t & ~(t - 1));
    return out;
  }();
  return kTargets;
}

bool ForceTargetNoEnv(const std::string& name) {
  if (name.empty() || name == "auto") {
    hwy::SetSupportedTargetsForTest(0);
    return true;
  }
  for (std::int64_t t : RealTargets()) {
    if (name == hwy::TargetName(t)) {
      hwy::SetSupportedTargetsForTest(t);
      return true;
    }
  }
  return false;
}

// QSCHEME_TARGET when ForceTargetNoEnv refused it: written once, inside ApplyEnvOnce's call_once.
std::string& RejectedEnv() {
  static std::string name;
  return name;
}

// Applies QSCHEME_TARGET once, before the first dispatch.
void ApplyEnvOnce() {
  // Every dispatch passes here: an acquire load, not a pthread_once call, once it is done.
  static std::atomic<bool> done{false};
  if (done.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    (void)RealTargets();
    if (const char* env = std::getenv("QSCHEME_TARGET"); env && !ForceTargetNoEnv(env)) RejectedEnv() = env;
  });
  done.store(true, std::memory_order_release);
}

// Off unless QSCHEME_STREAM_BYTES (a byte count) says otherwise: which store wins depends on the
// machine (docs/PERFORMANCE.md, "Streaming stores").
std::size_t InitialStreamBytes() {
  const char* v = std::getenv("QSCHEME_STREAM_BYTES");
  if (v == nullptr || *v == '\0') return kNoStreaming;
  char* end = nullptr;
  errno = 0;
  const unsigned long long b = std::strtoull(v, &end, 10);
  if (errno != 0 || *end != '\0' || v[0] == '-') return kNoStreaming;
  return static_cast<std::size_t>(b);
}
std::atomic<std::size_t> g_stream_bytes{InitialStreamBytes()};

}  // namespace

const Kernels& Get() {
  ApplyEnvOnce();
  hwy::ChosenTarget& chosen = hwy::GetChosenTarget();
  if (!chosen.IsInitialized()) chosen.Update(hwy::SupportedTargets());
  static const std::array<Kernels, kSlots> tables = BuildTables();
  return tables[chosen.GetIndex()];
}

void ApplyTargetEnv() { ApplyEnvOnce(); }

std::string CurrentTarget() { return hwy::TargetName(Get().target()); }

std::vector<std::int64_t> AvailableTargetBits() {
  ApplyEnvOnce();
  return RealTargets();
}

std::vector<std::string> AvailableTargets() {
  std::vector<std::string> out;
  for (std::int64_t t : AvailableTargetBits()) out.emplace_back(hwy::TargetName(t));
  return out;
}

std::string RejectedEnvTarget() {
  ApplyEnvOnce();
  return RejectedEnv();
}

bool ForceTarget(const std::string& name) {
  ApplyEnvOnce();  // an explicit call overrides the environment, never the other way round
  return ForceTargetNoEnv(name);
}

std::size_t StreamBytes() { return g_stream_bytes.load(std::memory_order_relaxed); }
void SetStreamBytes(std::size_t bytes) { g_stream_bytes.store(bytes, std::memory_order_relaxed); }
StreamFence::~StreamFence() {
  if (on) hwy::FlushStream();
}

}  // namespace qscheme::fast::kernels
#endif  // HWY_ONCE
