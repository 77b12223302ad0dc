// Highway dynamic dispatch for the fused bytes-path kernels in fused-inl.h (declared in fused.h).
#include "fast/fused.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/fused.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "fast/fused-inl.h"

#if HWY_ONCE
#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "fast/kernels.h"

namespace qscheme::fast::kernels {

HWY_EXPORT(BlockMaxAbsBitsImpl);
HWY_EXPORT(PrepassBlockMaxAbsBitsImpl);
HWY_EXPORT(ScalesFromMaxImpl);
HWY_EXPORT(QuantizeCodesImpl);
HWY_EXPORT(PackRowImpl);
HWY_EXPORT(PackColumnsImpl);
HWY_EXPORT(UnpackRowImpl);
HWY_EXPORT(UnpackColumnsImpl);
HWY_EXPORT(FirstBadCodeImpl);
HWY_EXPORT(ScalesFromBytesImpl);
HWY_EXPORT(ScaleValuesFromBitsImpl);
HWY_EXPORT(DequantCodesImpl);
HWY_EXPORT(FusedLanesImpl);
HWY_EXPORT(StreamCopyImpl);

// Every entry point first applies QSCHEME_TARGET (kernels.cc), as the kernels of kernels.h do.
#define QSCHEME_FUSED_CALL(name) (ApplyTargetEnv(), HWY_DYNAMIC_DISPATCH(name))

std::uint32_t BlockMaxAbsBits(const float* x, std::size_t len, std::size_t bw, std::uint32_t* amax) {
  return QSCHEME_FUSED_CALL(BlockMaxAbsBitsImpl)(x, len, bw, amax);
}
std::uint32_t PrepassBlockMaxAbsBits(const float* x, std::size_t len, std::size_t bw, std::uint32_t* amax) {
  return QSCHEME_FUSED_CALL(PrepassBlockMaxAbsBitsImpl)(x, len, bw, amax);
}
ScaleFacts ScalesFromMax(const std::uint32_t* amax, std::size_t nb, const ScaleSpec& s, std::uint32_t* bits, double* e,
                         float* inv, std::uint32_t* tight, std::uint32_t* lowest) {
  return QSCHEME_FUSED_CALL(ScalesFromMaxImpl)(amax, nb, s, bits, e, inv, tight, lowest);
}
void QuantizeCodes(const float* x, std::size_t len, std::size_t start, std::size_t bw, const float* inv,
                   const double* e, bool any_far, const CodeSpec& c, std::uint8_t* codes, std::uint8_t* nibbles) {
  QSCHEME_FUSED_CALL(QuantizeCodesImpl)(x, len, start, bw, inv, e, any_far, c, codes, nibbles);
}
void PackRow(const std::uint8_t* codes, std::size_t len, int bits, std::size_t nq, int ebytes, std::uint8_t* out) {
  QSCHEME_FUSED_CALL(PackRowImpl)(codes, len, bits, nq, ebytes, out);
}
void PackColumns(const std::uint8_t* const* rows, std::size_t count, std::size_t len, int bits, int ebytes,
                 std::uint8_t* out) {
  QSCHEME_FUSED_CALL(PackColumnsImpl)(rows, count, len, bits, ebytes, out);
}
bool UnpackRow(const std::uint8_t* in, std::size_t len, int bits, std::size_t nq, int ebytes, std::uint8_t* codes) {
  return QSCHEME_FUSED_CALL(UnpackRowImpl)(in, len, bits, nq, ebytes, codes);
}
bool UnpackColumns(const std::uint8_t* in, std::size_t count, std::size_t len, int bits, int ebytes,
                   std::uint8_t* const* rows) {
  return QSCHEME_FUSED_CALL(UnpackColumnsImpl)(in, count, len, bits, ebytes, rows);
}
std::size_t FirstBadCode(const std::uint8_t* codes, std::size_t len, const CodeSpec& c) {
  return QSCHEME_FUSED_CALL(FirstBadCodeImpl)(codes, len, c);
}
std::size_t ScalesFromBytes(const std::uint8_t* in, std::size_t nb, int dt, float* value) {
  return QSCHEME_FUSED_CALL(ScalesFromBytesImpl)(in, nb, dt, value);
}
std::size_t ScaleValuesFromBits(const std::uint32_t* bits, std::size_t nb, int dt, float* value) {
  return QSCHEME_FUSED_CALL(ScaleValuesFromBitsImpl)(bits, nb, dt, value);
}
void DequantCodes(const std::uint8_t* codes, std::size_t len, std::size_t start, std::size_t bw, const float* s,
                  float g, const CodeSpec& c, float* out) {
  QSCHEME_FUSED_CALL(DequantCodesImpl)(codes, len, start, bw, s, g, c, out);
}
std::size_t FusedLanes() { return QSCHEME_FUSED_CALL(FusedLanesImpl)(); }
FusedKernels Fused() {
  ApplyTargetEnv();
  // The first entry of a dispatch table chooses the target and then calls; it is never cached.
  hwy::ChosenTarget& chosen = hwy::GetChosenTarget();
  if (!chosen.IsInitialized()) chosen.Update(hwy::SupportedTargets());
  FusedKernels k;
  k.block_max_abs_bits = HWY_DYNAMIC_DISPATCH(BlockMaxAbsBitsImpl);
  k.scales_from_max = HWY_DYNAMIC_DISPATCH(ScalesFromMaxImpl);
  k.quantize_codes = HWY_DYNAMIC_DISPATCH(QuantizeCodesImpl);
  k.pack_row = HWY_DYNAMIC_DISPATCH(PackRowImpl);
  k.pack_columns = HWY_DYNAMIC_DISPATCH(PackColumnsImpl);
  k.unpack_row = HWY_DYNAMIC_DISPATCH(UnpackRowImpl);
  k.unpack_columns = HWY_DYNAMIC_DISPATCH(UnpackColumnsImpl);
  k.first_bad_code = HWY_DYNAMIC_DISPATCH(FirstBadCodeImpl);
  k.dequant_codes = HWY_DYNAMIC_DISPATCH(DequantCodesImpl);
  k.stream_copy = HWY_DYNAMIC_DISPATCH(StreamCopyImpl);
  return k;
}
namespace {
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
std::size_t StreamBytes() { return g_stream_bytes.load(std::memory_order_relaxed); }
void SetStreamBytes(std::size_t bytes) { g_stream_bytes.store(bytes, std::memory_order_relaxed); }
StreamFence::~StreamFence() {
  if (on) hwy::FlushStream();
}
void StreamCopy(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  QSCHEME_FUSED_CALL(StreamCopyImpl)(dst, src, n);
}

}  // namespace qscheme::fast::kernels
#endif  // HWY_ONCE
