// ext_quantize (ext_stage.hpp): the extension stage's quantize, for both outputs. The whole-tensor
// path reads the input for the scale step (ext_params.hpp), then computes every code against its
// block's parameters; the units path (ext_units.cc) does both a unit at a time while the unit
// is in cache, and leaves any error to the whole-tensor path, which reports it.
#include <string>

#include "fast/codec.hpp"
#include "fast/ext_params.hpp"
#include "fast/ext_stage.hpp"
#include "fast/ext_units.hpp"
#include "fast/kernels/dispatch.h"
#include "fast/plan.hpp"
#include "fast/support/big_buffer.hpp"
#include "fast/support/run_rows.hpp"
#include "scheme/errors.hpp"

namespace qscheme::fast::detail {
namespace {

// The codes of every element into out32 (i32) or out8 (one byte each: a native store of at most
// 8 bits, whose value bytes are the elements in order).
void whole_codes(const Layout& l, const float* x, const ExtParams& p, std::int32_t* out32, std::uint8_t* out8) {
  const kernels::Kernels& kf = kernels::Get();
  const Geo g(l);
  const std::int32_t* z = p.zero_points.empty() ? nullptr : p.zero_points.data();
  for_runs(g, false, [&](std::uint64_t off, std::uint64_t len, std::uint64_t nrows, std::uint64_t groups,
                         std::uint64_t gstride, std::uint64_t b, std::uint64_t bw) {
    for_run_rows(nrows, groups, gstride, len, [&](std::size_t r0) {
      const std::size_t o = off + r0;
      kf.quantize_affine(x + o, len, 0, bw, p.r.data() + b, p.e.empty() ? nullptr : p.e.data() + b,
                         z ? z + b : nullptr, p.spec, out32 ? out32 + o : nullptr, out8 ? out8 + o : nullptr);
    });
  });
}

Status whole(const Scheme& s, const Layout& l, const float* x, const Point& point, const ExtOutput& out) {
  const Result<ExtParams> p = ext_params(s, l, x, point);
  if (!p) return p.status();
  if (!out.bytes) {
    whole_codes(l, x, *p, out.codes, nullptr);
  } else if (direct_bytes(s, l)) {
    whole_codes(l, x, *p, nullptr, out.bytes);
  } else {
    BigBuffer<std::int32_t> codes(l.elements);
    whole_codes(l, x, *p, codes.data(), nullptr);
    write_values(s, l, codes.data(), out.bytes);
  }
  write_ext_params(s, l, *p, out);
  return {};
}

}  // namespace

Status ext_quantize(const Scheme& scheme, Shape shape, const float* x, std::size_t n, const QuantizeOptions& options,
                    OutputPolicy policy, const ExtOutput& out) {
  const Result<Layout> l = layout_for_values(scheme, shape, n);
  if (!l) return l.status();
  if (out.bytes && out.bytes_size != l->total_bytes) {
    return Status(ErrorCode::size_mismatch, "out has room for " + std::to_string(out.bytes_size) +
                                                " bytes; the layout needs " + std::to_string(l->total_bytes));
  }
  if (!out.bytes && scheme.affine() && l->zero_points != 0 && out.zero_points == nullptr) {
    return Status(ErrorCode::invalid_argument, "an affine scheme's quantize_into needs zero_points (one per scale)");
  }
  const Result<Point> point = ext_point(scheme, *l, options);
  if (!point) return point.status();
  // One pass where the units take the tensor (data errors then leave their output partly
  // written, as single_pass allows); the whole-tensor path otherwise, and for every error.
  if ((policy == OutputPolicy::single_pass || !out.bytes) && ext_units(scheme, *l, x, *point, out)) return {};
  return whole(scheme, *l, x, *point, out);
}

}  // namespace qscheme::fast::detail
