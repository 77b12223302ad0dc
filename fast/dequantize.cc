// The dequantize driver: i32 codes (dequantize, dequantize_into) or Burn's serialized bytes
// (dequantize_from_bytes) to f32. Bytes go unit by unit (bytes_plan.hpp): each L1-sized unit is
// unpacked to one-byte codes, checked and dequantized; what that path does not take (the burn
// profile, N-D blocks, ...), and every error, goes through decode and the i32 path, which give
// the same values and the documented error.
#include <atomic>
#include <cmath>
#include <cstring>

#include "fast/bytes_plan.hpp"
#include "fast/exact_scale.h"
#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/plan.hpp"
#include "fast/support/big_buffer.hpp"
#include "fast/ext_stage.hpp"
#include "fast/support/parallel.hpp"
#include "fast/support/unit_scratch.hpp"
#include "fast/tensor_checks.hpp"
#include "fast/value_codes.hpp"
#include "scheme/errors.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::fast {
namespace {

// out_private: out is fast::dequantize's own vector, discarded on error. The codes are then
// checked piece by piece just before each piece is converted (one read of them from memory
// instead of two); the error reported is the same first bad code. Only for the exact and onnx
// profiles, whose other checks all come before the codes'.
Status dequantize_impl(const QuantizedTensor& q, float* out, std::size_t n, bool out_private = false) {
  if (detail::extension_stage(q.scheme)) return detail::ext_dequantize(q, out, n);
  const Result<detail::Reading> r = detail::reading_of(q);
  if (!r) return r.status();
  const Layout& l = r->l;
  detail::BigBuffer<float> eb;
  float gs = 1.0f;
  const bool exact = r->profile != Profile::burn;  // onnx dequantizes as exact
  // A product's overflow comes after the codes' errors: they are checked first then.
  const bool late_codes = out_private && exact && !r->stored.f32_product && n == l.elements;
  QSCHEME_RETURN_IF_ERROR(detail::check_quantized(q, r->stored, l, &eb, &gs, !late_codes));
  QSCHEME_RETURN_IF_ERROR(detail::scale_product_overflow(r->stored, eb.data(), eb.size()));
  if (n != l.elements) return Status(ErrorCode::size_mismatch, "output has room for " + std::to_string(n) + " values");
  const detail::Geo g(l);
  const kernels::Kernels& kf = kernels::Get();
  const ValueInfo& vi = info(q.scheme.value);
  const int fmt = vi.is_float ? detail::mini_fmt(q.scheme.value) : 0;
  const std::int32_t* c = q.codes.data();
  const int mode = 2 + (vi.is_float ? 1 : 0);  // f32 lanes, as check_quantized explains
  const detail::CodeRange cr = detail::code_range(q.scheme.value, r->stored);
  std::atomic<std::uint64_t> first_bad{UINT64_MAX};
  detail::for_runs(g, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                         std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    if (late_codes) {
      bool any_bad = false;
      for (std::uint64_t gi = 0; gi < groups; ++gi) {
        const std::uint64_t at = off + gi * gstride;
        const std::size_t cnt = len * nrows, bad = kf.first_invalid_code(c + at, cnt, cr.lo, cr.hi, cr.nan_mask);
        if (bad != cnt) {
          any_bad = true;
          std::uint64_t cur = first_bad.load();
          while (at + bad < cur && !first_bad.compare_exchange_weak(cur, at + bad)) {
          }
        }
      }
      if (any_bad) return;
    }
    kf.dequant_row(c + off, len, bw, nullptr, eb.size() == 0 ? nullptr : eb.data() + b, gs, mode, fmt, out + off,
                        nrows, groups, gstride);
  });
  if (first_bad.load() != UINT64_MAX) return detail::bad_code(q, first_bad.load());
  return {};
}

// decode and the i32 path: the bytes path's fallback, which reports every error.
Status general_dequantize(const Scheme& scheme, Shape shape, const std::uint8_t* bytes, std::size_t len,
                          Profile profile, float* out, std::size_t n) {
  auto q = decode(scheme, shape, std::span<const std::uint8_t>(bytes, len), profile);
  if (!q) return q.status();
  return dequantize_impl(*q, out, n);
}

}  // namespace

Status dequantize_into(const QuantizedTensor& q, float* out, std::size_t n) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  return dequantize_impl(q, out, n);
}

Result<std::vector<float>> dequantize(const QuantizedTensor& q) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  auto lr = make_layout(q.scheme, q.shape);
  if (!lr) return lr.status();
  std::vector<float> out(q.codes.size() == lr->elements ? lr->elements : 0);
  QSCHEME_RETURN_IF_ERROR(dequantize_impl(q, out.data(), q.codes.size() == lr->elements ? lr->elements : 0, true));
  return out;
}

Status dequantize_from_bytes(const Scheme& scheme, Shape shape, const std::uint8_t* bytes, std::size_t len,
                             Profile profile, float* out, std::size_t n, OutputPolicy policy) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  auto lr = layout_for_bytes(scheme, shape, len);
  if (!lr) return lr.status();
  const Layout& l = *lr;
  if (n != l.elements) {
    return Status(ErrorCode::size_mismatch, "out has room for " + std::to_string(n) + " values, the shape has " +
                                                std::to_string(l.elements) + " elements");
  }
  if (detail::extension_stage(scheme)) return detail::ext_dequantize_bytes(scheme, shape, l, bytes, len, profile, out, n, policy);
  const detail::BytesPlan p = detail::make_bytes_plan(scheme, l);
  // Two levels only where value * s is exact in f32 (every scheme validate() admits).
  if (!p.fused || profile == Profile::burn || (p.two && !kernels::TwoLevelInF32(static_cast<int>(p.sd)))) {
    return general_dequantize(scheme, shape, bytes, len, profile, out, n);
  }
  const kernels::Kernels& kf = kernels::Get();
  // Scales (and the global) first, as decode checks them.
  // Up to 64 KiB of scale values in the thread's kept scratch: a new[] and delete[] of 8 KiB per
  // call (and the malloc_consolidate it set off) were about 3% of an in-cache q8_0 dequantize.
  const bool few_scales = l.scales <= (std::size_t{16} << 10);
  detail::UnitScratch kept_scales(few_scales ? l.scales * sizeof(float) : 0);
  detail::BigBuffer<float> big_scales;
  if (!few_scales) big_scales = detail::BigBuffer<float>(l.scales);
  float* const sv = few_scales ? reinterpret_cast<float*>(kept_scales.data()) : big_scales.data();
  if (kf.scales_from_bytes(bytes + l.value_bytes, l.scales, static_cast<int>(p.sd), sv) != l.scales) {
    return general_dequantize(scheme, shape, bytes, len, profile, out, n);
  }
  double g = 1;
  if (p.two) {
    std::uint32_t gb = 0;
    for (int i = 0; i < 4; ++i) gb |= static_cast<std::uint32_t>(bytes[l.value_bytes + l.scale_bytes + i]) << (8 * i);
    if (!detail::scale_from_bits(gb, ScaleDtype::f32, &g)) return general_dequantize(scheme, shape, bytes, len, profile, out, n);
  }

  // Points rows[i] at unit u's codes, one byte each: the serialized bytes themselves for a native
  // store, else unpacked into `codes`. With `check`, false when a code or padding field is not
  // valid.
  const bool native = p.bits == 8 && p.nq == 1;
  auto unpack = [&](const detail::BytesPlan::Unit& un, std::uint8_t* codes, const std::uint8_t** rows, bool check) {
    const std::uint8_t* src = bytes + un.value_offset;
    bool ok = true;
    if (native) {
      rows[0] = src;
    } else {
      std::uint8_t* w[16];
      for (std::uint64_t i = 0; i < un.count; ++i) rows[i] = w[i] = codes + i * p.chunk;
      ok = p.vertical ? kf.unpack_columns(src, un.count, un.len, p.bits, p.ebytes, w)
                      : kf.unpack_row(src, un.len, p.bits, p.nq, p.ebytes, w[0]);
    }
    for (std::uint64_t i = 0; check && ok && i < un.count; ++i) ok = kf.first_bad_code(rows[i], un.len, p.code) == un.len;
    return ok || !check;
  };

  // Units whose codes are their bytes or their bytes' nibbles in order (one row, storage elements
  // filled): kernels::dequant_unit reads, checks and dequantizes them in one pass.
  const bool direct_rows = !p.vertical && (p.bits == 8 || p.bits == 4);
  auto direct = [&](const detail::BytesPlan::Unit& un) { return direct_rows && un.len % p.nq == 0; };
  // A thread's unpacked codes of one unit (up to 16 rows), from its kept scratch
  // (support/unit_scratch.hpp); none for a native store, whose codes are the bytes, nor for values
  // where every unit is direct. Not zeroed (each unit writes what it reads): zeroing them was a
  // tenth of an in-cache q8_0 call.
  auto codes_bytes = [&](bool values) {
    const bool none = native || (values && direct_rows && p.L % p.nq == 0);
    return none ? std::size_t{0} : 16 * p.chunk;
  };
  std::atomic<bool> failed{false};
  if (policy == OutputPolicy::untouched_on_error) {
    detail::parallel_chunks(p.units, 1, l.elements, [&](std::uint64_t ub, std::uint64_t ue) {
      detail::UnitScratch codes(codes_bytes(false));
      const std::uint8_t* rows[16];
      detail::BytesPlan::Walk walk(p, ub);
      for (std::uint64_t u = ub; u < ue && !failed.load(std::memory_order_relaxed); ++u, ++walk) {
        if (!unpack(*walk, codes.data(), rows, true)) failed = true;
      }
    });
    if (failed.load()) return general_dequantize(scheme, shape, bytes, len, profile, out, n);
  }
  // An output of StreamBytes() or more (off by default, see kernels/dispatch.h) is written by streaming stores
  // from an L1-sized buffer (the kernels' stream_copy), which skip the read for ownership of 4 B per
  // element.
  const bool stream = l.elements * sizeof(float) >= kernels::StreamBytes();
  // Every unit direct, and each row continuing the one before it in bytes (whole storage elements)
  // and scales (whole blocks): a thread's units are then one call of the kernel, whose set-up
  // per call, made once per 2048-element unit, was about a tenth of an in-cache q8_0 dequantize.
  const bool one_call = !stream && direct_rows && p.L % p.nq == 0 && (p.bw == 0 || p.L % p.bw == 0);
  detail::parallel_chunks(p.units, 1, l.elements, [&](std::uint64_t ub, std::uint64_t ue) {
    if (one_call) {
      const detail::BytesPlan::Walk first(p, ub), last(p, ue - 1);
      const std::uint64_t r = (*first).row[0], c0 = (*first).c0;
      const std::uint64_t begin = r * p.L + c0, end = (*last).row[0] * p.L + (*last).c0 + (*last).len;
      const float* s = p.bw == 0 ? sv : sv + r * p.nbr + c0 / p.bw;
      if (!kf.dequant_unit(bytes + (*first).value_offset, end - begin, c0, p.bw, s, static_cast<float>(g), p.code,
                           out + begin)) {
        failed = true;
      }
      return;
    }
    // The codes, then the streamed values' buffer (not zeroed: written first).
    const std::size_t cb = detail::UnitScratch::rounded(codes_bytes(true));
    detail::UnitScratch scratch(cb + (stream ? p.chunk * sizeof(float) : 0));
    std::uint8_t* const codes = scratch.data();
    float* const buf = stream ? reinterpret_cast<float*>(scratch.data() + cb) : nullptr;
    const kernels::StreamFence fence{stream};
    const std::uint8_t* rows[16];
    const bool check = policy == OutputPolicy::single_pass;  // else checked by the pass above
    detail::BytesPlan::Walk walk(p, ub);
    for (std::uint64_t u = ub; u < ue; ++u, ++walk) {
      if (failed.load(std::memory_order_relaxed)) return;
      const detail::BytesPlan::Unit& un = *walk;
      if (direct(un)) {
        const std::uint64_t r = un.row[0];
        float* to = out + r * p.L + un.c0;
        float* dst = stream ? buf : to;
        const float* s = p.bw == 0 ? sv : sv + r * p.nbr + un.c0 / p.bw;
        // Under untouched_on_error the pass above checked these codes already.
        if (!kf.dequant_unit(bytes + un.value_offset, un.len, un.c0, p.bw, s, static_cast<float>(g), p.code, dst)) {
          failed = true;
          return;
        }
        if (stream) {
          kf.stream_copy(reinterpret_cast<std::uint8_t*>(to), reinterpret_cast<const std::uint8_t*>(dst),
                         un.len * sizeof(float));
        }
        continue;
      }
      if (!unpack(un, codes, rows, check)) {
        failed = true;
        return;
      }
      for (std::uint64_t i = 0; i < un.count; ++i) {
        const std::uint64_t r = un.row[i];
        float* to = out + r * p.L + un.c0;
        float* dst = stream ? buf : to;
        const float* s = p.bw == 0 ? sv : sv + r * p.nbr + un.c0 / p.bw;
        kf.dequant_codes(rows[i], un.len, un.c0, p.bw, s, static_cast<float>(g), p.code, dst);
        if (stream) {
          kf.stream_copy(reinterpret_cast<std::uint8_t*>(to), reinterpret_cast<const std::uint8_t*>(dst),
                              un.len * sizeof(float));
        }
      }
    }
  });
  // Only single_pass gets here with bad bytes; out is then unspecified (fast.hpp).
  if (failed.load()) return general_dequantize(scheme, shape, bytes, len, profile, out, n);
  return {};
}

}  // namespace qscheme::fast
