// The fast engine's driver: validation, geometry (rows x segments of the block grid), per-block
// scale arithmetic (scalar, exact), and the per-element passes through the dispatched kernels.
#include "fast/fast.hpp"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>

#include "fast/exact_scale.h"
#include "fast/kernels/dispatch.h"
#include "fast/kernels/scalar.h"
#include "fast/f32_steps.hpp"
#include "fast/plan.hpp"
#include "fast/points.hpp"
#include "fast/scales.hpp"
#include "fast/support/big_buffer.hpp"
#include "fast/support/extension_kinds.hpp"
#include "fast/support/lowest_code.hpp"
#include "fast/support/parallel.hpp"
#include "fast/support/run_rows.hpp"
#include "scheme/errors.hpp"
#include "scheme/fp_env.hpp"

namespace qscheme::fast {
namespace {

using detail::ExactSum;
using detail::Grid;
using detail::parallel_chunks;
using detail::Geo;
using detail::for_rows;
using detail::for_runs;

std::atomic<unsigned> g_threads{1};

int fmt_of(Value v) {
  switch (v) {
    case Value::e4m3: return scalar::kE4M3;
    case Value::e5m2: return scalar::kE5M2;
    default: return scalar::kE2M1;
  }
}

Status err(ErrorCode c, std::string msg, std::size_t idx = kNoIndex) { return Status(c, std::move(msg), idx); }

// ------------------------------------------------------------------------------- quantize

Status quantize_point(const Scheme& scheme, Shape shape, const float* x, std::size_t n, const QuantizeOptions& opt,
                      detail::ScalePick pick, std::int32_t* codes, std::uint32_t* scale_bits,
                      std::uint32_t* global_bits) {
  auto lr = layout_for_values(scheme, shape, n);
  if (!lr) return lr.status();
  const Layout& l = *lr;
  // Profile onnx: given f32 scales, f32 steps (fast/f32_steps.hpp).
  if (opt.profile == Profile::onnx) {
    QSCHEME_RETURN_IF_ERROR(detail::onnx_option_checks(scheme, l, opt));
    return detail::quantize_steps(detail::StepRecipe::onnx, scheme, l, x, *opt.scales, codes, scale_bits);
  }
  const kernels::Kernels& kf = kernels::Get();
  const bool two = scheme.two_level();
  const bool burn = opt.profile == Profile::burn;
  const bool absmean = opt.calibration == Calibration::absmean;
  const GivenScales* given = opt.scales ? &*opt.scales : nullptr;
  if (given) QSCHEME_RETURN_IF_ERROR(detail::check_given_scales(*given, l, two));
  if (!given && burn && absmean && two) {
    return errors::burn_absmean_two_level();
  }
  const Geo g(l);
  const std::uint64_t nb = l.scales;
  {
    // One pass when every block lies inside one row and its scale depends on its block alone
    // (one level, minmax, calibrated): calibrate a row, then quantize it while it is in cache.
    // Any anomaly (non-finite input, burn overflow) abandons this path for the general one
    // below, which reports errors in the documented order.
    bool row_blocks = scheme.block.has_value();
    for (std::size_t d = 0; d + 1 < g.R; ++d) row_blocks = row_blocks && g.block[d] == 1;
    if (row_blocks && !two && !given && !absmean && g.elements > 0 && pick == detail::ScalePick::profile) {
      const ValueInfo& vi = info(scheme.value);
      const ScaleDtype sd = scheme.scale_dtype();
      const Grid grid = detail::grid_of(sd);
      const double W = static_cast<double>(vi.hi - vi.lo);
      const int fmt = vi.is_float ? fmt_of(scheme.value) : 0;
      const int mode = (burn ? 2 : 0) + (vi.is_float ? 1 : 0);
      const bool asym = detail::asymmetric(vi.lo, vi.hi);
      std::atomic<bool> anomaly{false};
      // Every row has blocks of its own here (outer block extents 1): runs are single rows.
      for_runs(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t, std::uint64_t, std::uint64_t,
                            std::uint64_t b, std::uint64_t bw) {
        if (anomaly.load(std::memory_order_relaxed)) return;
        const std::uint64_t ns = (len + bw - 1) / bw;
        detail::LowestPlan plan{vi.lo, false};  // lowest_code.hpp
        bool saturated = false;                 // some tight block has W e < 2a
        std::uint32_t* bm = scale_bits + b;  // max |x| bits first, then the stored scale bits
        // Per-thread scratch (one piece's segments), reused across pieces.
        thread_local std::vector<double> ee;
        thread_local std::vector<float> eb, inv;
        thread_local std::vector<std::uint32_t> amax, tight, lowest;
        if (burn) eb.resize(ns);
        std::fill(bm, bm + ns, 0u);
        kf.segment_max_abs_bits(x + off, len, bw, bm);
        if (!burn) {
          // Exact profile: every segment's scale at once by the SIMD round-up (ScalesFromMax).
          amax.assign(bm, bm + ns);
          for (std::uint64_t k = 0; k < ns; ++k) {
            if (amax[k] >= 0x7F800000u) {
              anomaly = true;
              return;
            }
          }
          kernels::ScaleSpec sp = detail::scale_spec(sd, W, 1.0);
          sp.count_tight = asym;
          ee.resize(ns);
          inv.resize(ns);
          if (asym) {
            tight.resize(ns);
            lowest.resize(ns);
          }
          const kernels::ScaleFacts facts = kf.scales_from_max(amax.data(), ns, sp, bm, ee.data(), inv.data(),
                                                                   asym ? tight.data() : nullptr,
                                                                   asym ? lowest.data() : nullptr);
          plan = detail::lowest_plan_in_kernel(vi.lo, vi.hi, facts.tight);
          saturated = facts.below > 0;
        }
        for (std::uint64_t k = 0; burn && k < ns; ++k) {
          if (bm[k] >= 0x7F800000u) {
            anomaly = true;
            return;
          }
          float s;
          if (!detail::burn_scale(scalar::f32_from_bits(bm[k]), W, &s)) {
            anomaly = true;
            return;
          }
          const double st = detail::grid_round_up(s, grid);
          eb[k] = detail::burn_divisor(static_cast<float>(st));
          bm[k] = detail::scale_to_bits(st, sd);
        }
        kf.quantize_row(x + off, len, bw, burn ? nullptr : ee.data(), burn ? nullptr : inv.data(), 1.0,
                        burn ? eb.data() : nullptr, mode, plan.lo, vi.hi, fmt, codes + off, 1, 1, 0,
                        plan.put_back ? lowest.data() : nullptr);
        // The kernel put lo back where W e == 2a; a saturated block's lo is put back here.
        for (std::uint64_t k = 0; plan.put_back && saturated && k < ns; ++k) {
          if (tight[k]) {
            const std::uint64_t c0 = k * bw;
            detail::put_lowest(detail::lowest_fix(amax[k], ee[k], W, vi.lo), x + off + c0, std::min(bw, len - c0), vi.lo,
                               codes + off + c0);
          }
        }
      });
      if (!anomaly.load()) return {};
    }
  }
  // Calibration pass: max |x| bits per block (also finds non-finite input).
  std::vector<std::uint32_t> bmax(nb, 0);
  for_runs(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                        std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    kf.rows_segment_max_abs_bits(x + off, nrows, len, bw, &bmax[b], groups, gstride);
  });
  for (std::uint32_t m : bmax) {
    if (m >= 0x7F800000u) {
      std::size_t i = 0;
      while (std::isfinite(x[i])) ++i;
      return errors::non_finite_input(i);
    }
  }
  std::vector<ExactSum> sums;
  if (!given && absmean) {
    sums.resize(nb);
    // Exact sums per block; chunks aligned so that no block is shared between threads.
    for_rows(g, true, [&](std::uint64_t off, std::uint64_t len, std::uint64_t b) {
      for (std::uint64_t i = 0; i < len; ++i) sums[b + i / g.bw].add_abs(x[off + i]);
    });
  }
  const detail::ScaleRule rule = detail::scale_rule(scheme, opt, pick);
  detail::BlockScales sc;
  QSCHEME_RETURN_IF_ERROR(detail::block_scales(rule, kf, l, g, x, bmax, sums, given, scale_bits, global_bits, &sc));

  // Quantize pass.
  const ValueInfo& vi = info(scheme.value);
  const double W = rule.W;
  const int fmt = vi.is_float ? fmt_of(scheme.value) : 0;
  const int mode = (burn ? 2 : 0) + (vi.is_float ? 1 : 0);
  const detail::LowestPlan& plan = sc.plan;
  for_runs(g, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                         std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    kf.quantize_row(x + off, len, bw, sc.ee.empty() ? nullptr : sc.ee.data() + b,
                    sc.ei.empty() ? nullptr : sc.ei.data() + b, sc.g, sc.eb.empty() ? nullptr : sc.eb.data() + b, mode,
                    plan.lo, vi.hi, fmt, codes + off, nrows, groups, gstride,
                    plan.put_back ? sc.lowest.data() + b : nullptr);
    // The kernel put lo back where W e == 2a; a saturated block's lo is put back here. Segment k
    // of each of the run's rows lies in block b + k.
    for (std::uint64_t k = 0; plan.put_back && sc.saturated && k * bw < len; ++k) {
      if (!sc.tight[b + k]) continue;
      const std::uint64_t c0 = k * bw, n = std::min(bw, len - c0);
      const detail::LowestFix f = detail::lowest_fix(bmax[b + k], sc.ee[b + k], W, vi.lo);
      detail::for_run_rows(nrows, groups, gstride, len, [&](std::uint64_t r0) {
        detail::put_lowest(f, x + off + r0 + c0, n, vi.lo, codes + off + r0 + c0);
      });
    }
  });
  return {};
}

// The point options ask for (points.hpp), checked in the reference's order: layout, given
// scales, then the rules.
Result<detail::Point> resolve_point(const Scheme& scheme, Shape shape, std::size_t n, const QuantizeOptions& opt) {
  if (opt.rules && !profile_of(*opt.rules)) {
    auto lr = layout_for_values(scheme, shape, n);
    if (!lr) return lr.status();
    if (opt.scales) QSCHEME_RETURN_IF_ERROR(detail::check_given_scales(*opt.scales, *lr, scheme.two_level()));
  }
  return detail::point_of(scheme, opt);
}

Status quantize_impl(const Scheme& scheme, Shape shape, const float* x, std::size_t n, const QuantizeOptions& opt,
                     std::int32_t* codes, std::uint32_t* scale_bits, std::uint32_t* global_bits) {
  QSCHEME_RETURN_IF_ERROR(detail::extension_kind_check(scheme, shape));
  const Result<detail::Point> p = resolve_point(scheme, shape, n, opt);
  if (!p) return p.status();
  if (p->torch_codes) {
    auto lr = layout_for_values(scheme, shape, n);
    if (!lr) return lr.status();
    return detail::quantize_steps(detail::StepRecipe::torch, scheme, *lr, x, *opt.scales, codes, scale_bits);
  }
  return quantize_point(scheme, shape, x, n, p->options, p->pick, codes, scale_bits, global_bits);
}

// ------------------------------------------------------------------------------- checks

struct CodeRange {
  int lo, hi, nan_mask;
};
CodeRange code_range(Value v) {
  const ValueInfo& vi = info(v);
  if (!vi.is_float) return {vi.lo, vi.hi, 0};
  const int fmt = fmt_of(v);
  return {0, (1 << vi.bits) - 1, scalar::kMini[fmt].nan_mask};
}

// The corrupt-bytes error for code i of q.
Status bad_code(const QuantizedTensor& q, std::size_t i) { return errors::bad_code(i, q.scheme.value, q.codes[i]); }

// The profile q is read under: its own, or the one its point reads stored tensors as.
Result<Profile> reading_profile(const QuantizedTensor& q) {
  return q.rules ? detail::stored_profile(*q.rules) : Result<Profile>(q.profile);
}

// Validates q against its scheme and shape and computes the scales DequantRow multiplies by: eb
// and g, out = f32(f32(eb[j] * value) * g). Exact and onnx profiles: eb = the stored scales, g =
// the global (1 for one level); burn: eb = Burn's f32 product g * s (0 replaced by 0.1), g = 1.
// check_codes = false leaves the codes to the caller (dequantize_impl checks them piece by piece).
Status check_quantized(const QuantizedTensor& q, Profile profile, const Layout& l, detail::BigBuffer<float>* eb,
                       float* g, bool check_codes = true) {
  const kernels::Kernels& kf = kernels::Get();
  if (q.codes.size() != l.elements) return errors::code_count(q.codes.size(), l.elements);
  if (q.scale_bits.size() != l.scales) return errors::scale_count(q.scale_bits.size(), l.scales);
  const bool two = q.scheme.two_level();
  if (q.global_bits.has_value() != two) return errors::global_presence(two);
  // The schemes fast/ runs have no zero points (extension_kinds.hpp): any is a count mismatch.
  if (q.zero_points.size() != l.zero_points) return errors::zero_point_count(q.zero_points.size(), l.zero_points);
  const ScaleDtype sd = q.scheme.scale_dtype();
  detail::BigBuffer<float> s(l.scales);  // every scale dtype's values are f32 values
  if (const std::size_t j = kf.scale_values_from_bits(q.scale_bits.data(), l.scales, static_cast<int>(sd), s.data());
      j != l.scales) {
    return errors::bad_scale(j, sd, q.scale_bits[j]);
  }
  double gv = 1.0;
  if (two && !detail::scale_from_bits(*q.global_bits, ScaleDtype::f32, &gv)) {
    return errors::bad_global(l.scales, *q.global_bits);
  }
  const CodeRange cr = code_range(q.scheme.value);
  const std::size_t bad =
      check_codes ? kf.first_invalid_code(q.codes.data(), q.codes.size(), cr.lo, cr.hi, cr.nan_mask) : q.codes.size();
  if (bad != q.codes.size()) return bad_code(q, bad);
  *g = 1.0f;
  if (profile != Profile::burn) {
    // exact and onnx dequantize alike: f32_rne(value * s * g), which is f32(f32(value * s) * g)
    // as the first product is exact (SEMANTICS-fast.md section 4): f32 lanes suffice.
    if (two) *g = static_cast<float>(gv);
  } else {
    const float gf = static_cast<float>(gv);
    for (std::size_t j = 0; j < l.scales; ++j) {
      const float e = two ? gf * s[j] : s[j];
      s[j] = e == 0 ? 0.1f : e;
    }
  }
  *eb = std::move(s);
  return {};
}

// out_private: out is fast::dequantize's own vector, discarded on error. The codes are then
// checked piece by piece just before each piece is converted (one read of them from memory
// instead of two); the error reported is the same first bad code. Only for the exact and onnx
// profiles, whose other checks all come before the codes'.
Status dequantize_impl(const QuantizedTensor& q, float* out, std::size_t n, bool out_private = false) {
  QSCHEME_RETURN_IF_ERROR(detail::extension_kind_check(q.scheme, q.shape));
  auto lr = make_layout(q.scheme, q.shape);
  if (!lr) return lr.status();
  const Layout& l = *lr;
  const Result<Profile> profile = reading_profile(q);
  if (!profile) return profile.status();
  detail::BigBuffer<float> eb;
  float gs = 1.0f;
  const bool exact = *profile != Profile::burn;  // onnx dequantizes as exact
  const bool late_codes = out_private && exact && n == l.elements;
  QSCHEME_RETURN_IF_ERROR(check_quantized(q, *profile, l, &eb, &gs, !late_codes));
  for (std::size_t j = 0; !exact && j < eb.size(); ++j) {  // burn, two levels: as reference/scales.cpp
    if (std::isinf(eb[j])) {
      return errors::burn_scale_product_overflow(j);
    }
  }
  if (n != l.elements) return err(ErrorCode::size_mismatch, "output has room for " + std::to_string(n) + " values");
  const Geo g(l);
  const kernels::Kernels& kf = kernels::Get();
  const ValueInfo& vi = info(q.scheme.value);
  const int fmt = vi.is_float ? fmt_of(q.scheme.value) : 0;
  const std::int32_t* c = q.codes.data();
  const int mode = 2 + (vi.is_float ? 1 : 0);  // f32 lanes, as check_quantized explains
  const CodeRange cr = code_range(q.scheme.value);
  std::atomic<std::uint64_t> first_bad{UINT64_MAX};
  for_runs(g, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
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
  if (first_bad.load() != UINT64_MAX) return bad_code(q, first_bad.load());
  return {};
}

// ------------------------------------------------------------------------------- bytes

void put_le(std::uint8_t* p, std::uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint32_t get_le(const std::uint8_t* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

// Packed-axis view: outer x n_p x inner, groups of nq along n_p.
struct PackGeo {
  std::uint64_t outer = 1, np = 1, inner = 1, groups = 1;
  int nq = 1, bits = 8, ebytes = 1;
};
PackGeo pack_geo(const Layout& l, const Scheme& s) {
  PackGeo p;
  const int ax = l.packed_axis;
  for (int d = 0; d < ax; ++d) p.outer *= l.shape[d];
  p.np = l.shape[ax];
  for (std::size_t d = ax + 1; d < l.shape.size(); ++d) p.inner *= l.shape[d];
  p.nq = l.codes_per_storage_element;
  p.bits = info(s.value).bits;
  p.ebytes = l.storage_element_bytes;
  p.groups = (p.np + p.nq - 1) / p.nq;
  return p;
}

void encode_values(const QuantizedTensor& q, const Layout& l, std::uint8_t* out) {
  if (l.elements == 0) return;  // no values (and no storage elements)
  const kernels::Kernels& kf = kernels::Get();
  const std::int32_t* c = q.codes.data();
  if (l.packed_axis < 0) {
    parallel_chunks(l.elements, 1 << 16, l.elements, [&](std::uint64_t b, std::uint64_t e) { kf.codes_to_bytes(c + b, e - b, out + b); });
    return;
  }
  if (l.elements == 0) return;  // no words: memcpy from an empty vector's null data() is UB
  const PackGeo p = pack_geo(l, q.scheme);
  const std::uint32_t mask = (1u << p.bits) - 1;
  parallel_chunks(p.outer, 1, l.elements, [&](std::uint64_t ob, std::uint64_t oe) {
    std::vector<std::uint32_t> words(p.inner);
    for (std::uint64_t o = ob; o < oe; ++o) {
      for (std::uint64_t gi = 0; gi < p.groups; ++gi) {
        const std::uint64_t first = gi * p.nq;
        const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(p.nq, p.np - first));
        const std::int32_t* src = c + (o * p.np + first) * p.inner;
        std::uint8_t* dst = out + (o * p.groups + gi) * p.inner * p.ebytes;
        if (p.inner == 1) {
          std::uint32_t w = 0;
          for (std::size_t i = 0; i < count; ++i) w |= (static_cast<std::uint32_t>(src[i]) & mask) << (i * p.bits);
          put_le(dst, w, p.ebytes);
          continue;
        }
        kf.pack_words(src, p.inner, count, p.inner, p.bits, words.data());
        if (p.ebytes == 4) {
          std::memcpy(dst, words.data(), p.inner * 4);  // little-endian host (x86-64)
        } else {
          for (std::uint64_t j = 0; j < p.inner; ++j) dst[j] = static_cast<std::uint8_t>(words[j]);
        }
      }
    }
  });
}

// Unpacks the values; returns the byte offset of the first storage element (in storage order)
// holding a non-zero padding field, or kNoIndex (reference/bytes.cpp reports the same offset).
std::size_t decode_values(const Scheme& s, const Layout& l, const std::uint8_t* in, std::int32_t* c) {
  const ValueInfo& vi = info(s.value);
  const bool is_signed = !vi.is_float;
  if (l.elements == 0) return kNoIndex;
  const kernels::Kernels& kf = kernels::Get();
  if (l.packed_axis < 0) {
    kf.bytes_to_codes(in, l.elements, is_signed, c);
    return kNoIndex;
  }
  if (l.elements == 0) return kNoIndex;  // no words: memcpy into an empty vector's null data() is UB
  const PackGeo p = pack_geo(l, s);
  std::size_t bad = kNoIndex;
  std::vector<std::uint32_t> words(p.inner);
  for (std::uint64_t o = 0; o < p.outer; ++o) {
    for (std::uint64_t gi = 0; gi < p.groups; ++gi) {
      const std::uint64_t first = gi * p.nq;
      const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(p.nq, p.np - first));
      const std::uint8_t* src = in + (o * p.groups + gi) * p.inner * p.ebytes;
      std::int32_t* dst = c + (o * p.np + first) * p.inner;
      if (p.ebytes == 4) std::memcpy(words.data(), src, p.inner * 4);
      else for (std::uint64_t j = 0; j < p.inner; ++j) words[j] = src[j];
      if (count < static_cast<std::size_t>(p.nq)) {
        for (std::uint64_t j = 0; j < p.inner; ++j) {
          if ((words[j] >> (count * p.bits)) != 0 && bad == kNoIndex) {
            bad = ((o * p.groups + gi) * p.inner + j) * static_cast<std::uint64_t>(p.ebytes);
          }
        }
      }
      kf.unpack_words(words.data(), p.inner, count, p.inner, p.bits, is_signed, dst);
    }
  }
  return bad;
}

}  // namespace

// ------------------------------------------------------------------------------- public

Status quantize_into(const Scheme& scheme, Shape shape, const float* x, std::size_t n, const QuantizeOptions& options,
                     std::int32_t* codes, std::uint32_t* scale_bits, std::uint32_t* global_bits) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  return quantize_impl(scheme, shape, x, n, options, codes, scale_bits, global_bits);
}

Result<QuantizedTensor> quantize(const Scheme& scheme, Shape shape, std::span<const float> x,
                                 const QuantizeOptions& options) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  auto lr = make_layout(scheme, shape);
  if (!lr) return lr.status();
  QuantizedTensor q;
  q.scheme = scheme;
  // A point that is a profile's is that profile, as in reference::quantize.
  q.profile = options.profile;
  if (options.rules) {
    if (const std::optional<Profile> p = profile_of(*options.rules)) {
      q.profile = *p;
    } else {
      q.profile = Profile::exact;
      q.rules = options.rules;
    }
  }
  q.shape.assign(shape.begin(), shape.end());
  if (x.size() == lr->elements) {
    q.codes.resize(lr->elements);
    q.scale_bits.resize(lr->scales);
  }
  std::uint32_t gb = 0;
  QSCHEME_RETURN_IF_ERROR(
      quantize_impl(scheme, shape, x.data(), x.size(), options, q.codes.data(), q.scale_bits.data(), &gb));
  if (scheme.two_level()) q.global_bits = gb;
  return q;
}

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

Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  QSCHEME_RETURN_IF_ERROR(detail::extension_kind_check(q.scheme, q.shape));
  auto lr = make_layout(q.scheme, q.shape);
  if (!lr) return lr.status();
  const Layout& l = *lr;
  const Result<Profile> profile = reading_profile(q);
  if (!profile) return profile.status();
  detail::BigBuffer<float> eb;
  float gs = 1.0f;
  QSCHEME_RETURN_IF_ERROR(check_quantized(q, *profile, l, &eb, &gs));
  std::vector<std::uint8_t> out(l.total_bytes);
  encode_values(q, l, out.data());
  const int sb = info(q.scheme.scale_dtype()).bytes;
  std::uint8_t* p = out.data() + l.value_bytes;
  for (std::size_t j = 0; j < l.scales; ++j) put_le(p + j * sb, q.scale_bits[j], sb);
  if (q.global_bits) put_le(out.data() + l.value_bytes + l.scale_bytes, *q.global_bits, 4);
  return out;
}

Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes, Profile profile) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  QSCHEME_RETURN_IF_ERROR(detail::extension_kind_check(scheme, shape));
  auto lr = layout_for_bytes(scheme, shape, bytes.size());
  if (!lr) return lr.status();
  const Layout& l = *lr;
  QuantizedTensor q;
  q.scheme = scheme;
  q.profile = profile;
  q.shape.assign(shape.begin(), shape.end());
  // Checks in the reference's order (reference/bytes.cpp), each reporting the first offender:
  // padding (byte offset of its storage element), a native sub-byte code that is no sign
  // extension (element), a code the kind cannot produce (element), a scale (scale index), the
  // global (no index).
  q.codes.resize(l.elements);
  const std::size_t bad_pad = decode_values(scheme, l, bytes.data(), q.codes.data());
  if (bad_pad != kNoIndex) {
    return errors::nonzero_padding(bad_pad / static_cast<std::uint64_t>(l.storage_element_bytes), bad_pad);
  }
  const kernels::Kernels& kf = kernels::Get();
  const ValueInfo& vi = info(scheme.value);
  if (scheme.store.kind == StoreKind::native && vi.bits < 8) {
    const int lo = vi.is_float ? 0 : -(1 << (vi.bits - 1));
    const int hi = vi.is_float ? (1 << vi.bits) - 1 : (1 << (vi.bits - 1)) - 1;
    const std::size_t bad = kf.first_invalid_code(q.codes.data(), q.codes.size(), lo, hi, 0);
    if (bad != q.codes.size()) {
      return errors::bad_native_byte(bad, scheme.value, bytes[bad]);
    }
  }
  const CodeRange cr = code_range(scheme.value);
  const std::size_t bad = kf.first_invalid_code(q.codes.data(), q.codes.size(), cr.lo, cr.hi, cr.nan_mask);
  if (bad != q.codes.size()) {
    return errors::bad_code(bad, scheme.value, q.codes[bad]);
  }
  const ScaleDtype sd = scheme.scale_dtype();
  const int sb = info(sd).bytes;
  q.scale_bits.resize(l.scales);
  const std::uint8_t* p = bytes.data() + l.value_bytes;
  for (std::size_t j = 0; j < l.scales; ++j) {
    q.scale_bits[j] = get_le(p + j * sb, sb);
    double v;
    if (!detail::scale_from_bits(q.scale_bits[j], sd, &v)) {
      return errors::bad_scale(j, sd, q.scale_bits[j]);
    }
  }
  if (scheme.two_level()) {
    const std::uint32_t gb = get_le(bytes.data() + l.value_bytes + l.scale_bytes, 4);
    double v;
    if (!detail::scale_from_bits(gb, ScaleDtype::f32, &v)) {
      return errors::bad_global(l.scales, gb);
    }
    q.global_bits = gb;
  }
  return q;
}

Result<Profile> reading_profile(const Rules& rules) { return detail::stored_profile(rules); }

Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               const Rules& rules) {
  const Result<Profile> p = detail::stored_profile(rules);
  if (!p) return p.status();
  Result<QuantizedTensor> q = decode(scheme, shape, bytes, *p);
  if (q && !profile_of(rules)) q->rules = rules;
  return q;
}

Status set_threads(unsigned n) {
  if (n > kMaxThreads) {
    return Status(ErrorCode::invalid_argument,
                  "a thread count of " + std::to_string(n) + " is above the maximum of " + std::to_string(kMaxThreads) +
                      "; use 1 to " + std::to_string(kMaxThreads) + ", or 0 for one per hardware thread (at most " +
                      std::to_string(kMaxThreads) + ")");
  }
  if (n == 0) n = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  g_threads.store(n);
  return {};
}
unsigned threads() { return g_threads.load(); }

void release_scratch() noexcept { detail::release_kept(); }

std::string current_target() { return kernels::CurrentTarget(); }
std::vector<std::string> available_targets() { return kernels::AvailableTargets(); }
bool set_target(const std::string& name) { return kernels::ForceTarget(name); }
Status target_env_status() {
  const std::string bad = kernels::RejectedEnvTarget();
  if (bad.empty()) return {};
  std::string list;
  for (const auto& t : available_targets()) list += (list.empty() ? "" : ", ") + t;
  return Status(ErrorCode::invalid_argument, "QSCHEME_TARGET=" + bad +
                                                  " names no Highway target this build and CPU support, so it was not applied (the "
                                                 "kernels run on " + current_target() + "); set it to one of " +
                                                 list + ", or unset it");
}

}  // namespace qscheme::fast
