// The extension stage's dequantize (ext_stage.hpp): f32((q - z) * s) per element on the affine
// kernels, from a QuantizedTensor's i32 codes or straight from the bytes of a native store of at
// most 8 bits (one byte per element). Other stores, and every error, go through decode and the
// i32 path, which report it as the reference does.
#include <atomic>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "fast/codec.hpp"
#include "fast/exact_scale.h"
#include "fast/ext_stage.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/plan.hpp"
#include "fast/support/big_buffer.hpp"
#include "fast/support/run_rows.hpp"
#include "fast/tensor_checks.hpp"
#include "scheme/errors.hpp"

namespace qscheme::fast::detail {
namespace {

// out from the codes (c32, or the bytes c8) under scale values s, zero points z (or none) and the
// global g (1 for one level; two levels multiply in f64, rounded once). check(o, len): whether
// the codes of a row about to be written are valid (single_pass); false stops every row.
template <class Check>
bool dequantize_runs(const Layout& l, const std::int32_t* c32, const std::uint8_t* c8, bool c8_signed, const float* s,
                     const std::int32_t* z, double g, float* out, Check check) {
  const kernels::Kernels& kf = kernels::Get();
  const Geo geo(l);
  std::atomic<bool> failed{false};
  for_runs(geo, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                           std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    for_run_rows(nrows, groups, gstride, len, [&](std::size_t r0) {
      const std::size_t o = off + r0;
      if (failed.load(std::memory_order_relaxed) || !check(o, len)) {
        failed = true;
        return;
      }
      kf.dequant_affine(c32 ? c32 + o : nullptr, c8 ? c8 + o : nullptr, c8_signed, len, 0, bw, s + b,
                        z ? z + b : nullptr, g, out + o);
    });
  });
  return !failed.load();
}

}  // namespace

Status ext_dequantize(const QuantizedTensor& q, float* out, std::size_t n) {
  const Result<Reading> r = reading_of(q);
  if (!r) return r.status();
  const Layout& l = r->l;
  BigBuffer<float> eb;
  float gs = 1.0f;
  QSCHEME_RETURN_IF_ERROR(check_quantized(q, r->stored, l, &eb, &gs));
  QSCHEME_RETURN_IF_ERROR(scale_product_overflow(r->stored, eb.data(), eb.size()));
  if (n != l.elements) return Status(ErrorCode::size_mismatch, "output has room for " + std::to_string(n) + " values");
  dequantize_runs(l, q.codes.data(), nullptr, false, eb.data(), q.zero_points.empty() ? nullptr : q.zero_points.data(),
                  gs, out, [](std::size_t, std::size_t) { return true; });
  return {};
}

Status ext_dequantize_bytes(const Scheme& scheme, Shape shape, const Layout& l, const std::uint8_t* bytes,
                            std::size_t len, Profile profile, float* out, std::size_t n, OutputPolicy policy) {
  auto general = [&]() -> Status {
    auto q = decode(scheme, shape, std::span<const std::uint8_t>(bytes, len), profile);
    if (!q) return q.status();
    return ext_dequantize(*q, out, n);
  };
  const ValueInfo& vi = info(scheme.value);
  if (!direct_bytes(scheme, l) || l.elements == 0) return general();
  const kernels::Kernels& kf = kernels::Get();
  // Scales, the global and the zero points first, as decode reads them; anything wrong is the
  // general path's to report.
  BigBuffer<float> sv(l.scales);
  const ScaleDtype sd = scheme.scale_dtype();
  if (kf.scales_from_bytes(bytes + l.value_bytes, l.scales, static_cast<int>(sd), sv.data()) != l.scales) return general();
  double g = 1;
  if (scheme.two_level() && !scale_from_bits(get_le(bytes + l.value_bytes + l.scale_bytes, 4), ScaleDtype::f32, &g)) {
    return general();
  }
  if (profile == Profile::burn) {
    // Burn's f32 product g * s, a zero scale as 0.1 (check_quantized's eb); overflow is an error.
    for (std::size_t j = 0; j < l.scales; ++j) {
      const float e = scheme.two_level() ? static_cast<float>(g) * sv[j] : sv[j];
      if (std::isinf(e)) return general();
      sv[j] = e == 0 ? 0.1f : e;
    }
    g = 1;
  }
  std::vector<std::int32_t> zps(l.zero_points);
  read_zero_points(scheme, l, bytes, zps.data());
  for (std::int32_t z : zps) {
    if (z < vi.lo || z > vi.hi) return general();
  }
  // Every byte of u8 and q8f is a code; the other kinds' bytes are checked as the codes of a
  // native store (sign-extended from 8 bits against [lo, hi]: an unsigned kind's byte of 0x80 or
  // more reads negative, so it fails as it should).
  const bool every_byte = vi.bits == 8 && vi.hi - vi.lo == 255;
  kernels::CodeSpec cs;
  cs.lo = vi.lo;
  cs.hi = vi.hi;
  cs.bits = 8;
  auto codes_ok = [&](std::size_t o, std::size_t cnt) { return every_byte || kf.first_bad_code(bytes + o, cnt, cs) == cnt; };
  if (policy == OutputPolicy::untouched_on_error && !codes_ok(0, l.elements)) return general();
  const bool check = policy == OutputPolicy::single_pass && !every_byte;
  const bool ok = dequantize_runs(l, nullptr, bytes, !vi.is_unsigned, sv.data(), zps.empty() ? nullptr : zps.data(), g,
                                  out, [&](std::size_t o, std::size_t cnt) { return !check || codes_ok(o, cnt); });
  return ok ? Status() : general();
}

}  // namespace qscheme::fast::detail
