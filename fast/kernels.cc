// Highway dynamic dispatch for the kernels in kernels-inl.h (declared in kernels.h).
#include "fast/kernels.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "fast/kernels-inl.h"

#if HWY_ONCE
namespace qscheme::fast::kernels {

HWY_EXPORT(MaxAbsBitsImpl);
HWY_EXPORT(SegmentMaxAbsBitsImpl);
HWY_EXPORT(RowsSegmentMaxAbsBitsImpl);
HWY_EXPORT(QuantizeExactIntImpl);
HWY_EXPORT(QuantizeExactFloatImpl);
HWY_EXPORT(QuantizeZeroScaleImpl);
HWY_EXPORT(QuantizeBurnIntImpl);
HWY_EXPORT(QuantizeBurnFloatImpl);
HWY_EXPORT(DequantExactIntImpl);
HWY_EXPORT(DequantExactFloatImpl);
HWY_EXPORT(DequantBurnIntImpl);
HWY_EXPORT(DequantBurnFloatImpl);
HWY_EXPORT(CodesToBytesImpl);
HWY_EXPORT(BytesToCodesImpl);
HWY_EXPORT(PackWordsImpl);
HWY_EXPORT(UnpackWordsImpl);
HWY_EXPORT(FirstInvalidCodeImpl);
HWY_EXPORT(TargetImpl);
HWY_EXPORT(QuantizeRowImpl);
HWY_EXPORT(DequantRowImpl);
HWY_EXPORT(LanesF32Impl);

namespace {

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

}  // namespace

std::uint32_t MaxAbsBits(const float* x, std::size_t n) {
  ApplyEnvOnce();
  return HWY_DYNAMIC_DISPATCH(MaxAbsBitsImpl)(x, n);
}
void SegmentMaxAbsBits(const float* x, std::size_t len, std::size_t w, std::uint32_t* acc) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(SegmentMaxAbsBitsImpl)(x, len, w, acc);
}
void RowsSegmentMaxAbsBits(const float* x, std::size_t rows, std::size_t L, std::size_t w, std::uint32_t* acc,
                           std::size_t groups, std::size_t gstride) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(RowsSegmentMaxAbsBitsImpl)(x, rows, L, w, acc, groups, gstride);
}
void QuantizeExactInt(const float* x, std::size_t n, double e, int lo, int hi, std::int32_t* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(QuantizeExactIntImpl)(x, n, e, lo, hi, out);
}
void QuantizeExactFloat(const float* x, std::size_t n, double e, int fmt, std::int32_t* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(QuantizeExactFloatImpl)(x, n, e, fmt, out);
}
void QuantizeZeroScale(const float* x, std::size_t n, int sign_code, std::int32_t* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(QuantizeZeroScaleImpl)(x, n, sign_code, out);
}
void QuantizeBurnInt(const float* x, std::size_t n, float e, int lo, int hi, std::int32_t* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(QuantizeBurnIntImpl)(x, n, e, lo, hi, out);
}
void QuantizeBurnFloat(const float* x, std::size_t n, float e, int fmt, std::int32_t* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(QuantizeBurnFloatImpl)(x, n, e, fmt, out);
}
void DequantExactInt(const std::int32_t* c, std::size_t n, double e, float* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(DequantExactIntImpl)(c, n, e, out);
}
void DequantExactFloat(const std::int32_t* c, std::size_t n, double e, int fmt, float* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(DequantExactFloatImpl)(c, n, e, fmt, out);
}
void DequantBurnInt(const std::int32_t* c, std::size_t n, float e, float* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(DequantBurnIntImpl)(c, n, e, out);
}
void DequantBurnFloat(const std::int32_t* c, std::size_t n, float e, int fmt, float* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(DequantBurnFloatImpl)(c, n, e, fmt, out);
}
void CodesToBytes(const std::int32_t* c, std::size_t n, std::uint8_t* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(CodesToBytesImpl)(c, n, out);
}
void BytesToCodes(const std::uint8_t* b, std::size_t n, bool is_signed, std::int32_t* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(BytesToCodesImpl)(b, n, is_signed, out);
}
void PackWords(const std::int32_t* codes, std::size_t inner, std::size_t count, std::size_t stride, int bits,
               std::uint32_t* out) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(PackWordsImpl)(codes, inner, count, stride, bits, out);
}
void UnpackWords(const std::uint32_t* words, std::size_t inner, std::size_t count, std::size_t stride, int bits,
                 bool is_signed, std::int32_t* codes) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(UnpackWordsImpl)(words, inner, count, stride, bits, is_signed, codes);
}
std::size_t FirstInvalidCode(const std::int32_t* c, std::size_t n, int lo, int hi, int nan_mask) {
  ApplyEnvOnce();
  return HWY_DYNAMIC_DISPATCH(FirstInvalidCodeImpl)(c, n, lo, hi, nan_mask);
}

void QuantizeRow(const float* x, std::size_t L, std::size_t bw, const double* ee, const float* ei, double g,
                 const float* eb, int mode, int lo, int hi, int fmt, std::int32_t* out, std::size_t rows,
                 std::size_t groups, std::size_t gstride, const std::uint32_t* lowest) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(QuantizeRowImpl)(x, L, bw, ee, ei, g, eb, mode, lo, hi, fmt, out, rows, groups, gstride, lowest);
}
void DequantRow(const std::int32_t* c, std::size_t L, std::size_t bw, const double* ee, const float* eb, float g,
                int mode, int fmt, float* out, std::size_t rows, std::size_t groups, std::size_t gstride) {
  ApplyEnvOnce();
  HWY_DYNAMIC_DISPATCH(DequantRowImpl)(c, L, bw, ee, eb, g, mode, fmt, out, rows, groups, gstride);
}

void ApplyTargetEnv() { ApplyEnvOnce(); }

std::string CurrentTarget() {
  ApplyEnvOnce();
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(TargetImpl)());
}

std::size_t LanesF32() {
  ApplyEnvOnce();
  return HWY_DYNAMIC_DISPATCH(LanesF32Impl)();
}

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

}  // namespace qscheme::fast::kernels
#endif  // HWY_ONCE
