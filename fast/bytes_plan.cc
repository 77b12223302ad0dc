#include "fast/bytes_plan.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

#include "fast/exact_scale.h"
#include "fast/kernels/scalar.h"
#include "fast/support/lowest_code.hpp"

namespace qscheme::fast::detail {

namespace {
constexpr std::uint64_t kChunk = 2048;  // columns per unit: 8 KiB of f32, 16 rows of codes fit L1
}

BytesPlan make_bytes_plan(const Scheme& s, const Layout& l) {
  BytesPlan p;
  auto no = [&](const char* why) {
    p.fused = false;
    p.why = why;
    return p;
  };
  const std::size_t R = l.shape.size();
  if (R == 0) return no("a scalar");
  if (l.elements == 0) return no("an empty tensor");
  p.L = l.shape[R - 1];
  p.rows = l.elements / p.L;
  p.two = s.two_level();
  p.sd = s.scale_dtype();
  p.sbytes = info(p.sd).bytes;
  if (s.block) {
    for (std::size_t d = 0; d + 1 < R; ++d) {
      if (l.block[d] != 1) return no("an N-D block (the units take blocks along the last axis)");
    }
    p.bw = l.block[R - 1];
    p.nbr = (p.L + p.bw - 1) / p.bw;
    if (l.scales != p.rows * p.nbr) return no("unexpected scale count");
    const std::uint64_t lanes = kernels::Get().lanes_f32();
    if (p.bw % lanes != 0) return no("a block extent that is not a multiple of the vector length");
  } else {
    if (l.scales != 1) return no("unexpected scale count");
  }

  const ValueInfo& vi = info(s.value);
  p.W = static_cast<double>(vi.hi - vi.lo);
  p.code.lo = vi.lo;
  p.code.hi = vi.hi;
  if (vi.is_float) {
    p.code.fmt = s.value == Value::e4m3 ? scalar::kE4M3 : s.value == Value::e5m2 ? scalar::kE5M2 : scalar::kE2M1;
    p.code.nan_mask = scalar::kMini[p.code.fmt].nan_mask;
    p.code.lo = 0;
    p.code.hi = (1 << vi.bits) - 1;
  }
  p.spec = scale_spec(p.sd, p.W, 1.0);
  p.spec.count_tight = detail::asymmetric(p.code.lo, p.code.hi);
  p.Dmax = p.two ? p.spec.max : 1.0;

  if (l.packed_axis < 0) {
    p.bits = 8;
    p.row_bytes = p.L;
  } else {
    p.bits = vi.bits;
    p.nq = static_cast<std::uint64_t>(l.codes_per_storage_element);
    p.ebytes = l.storage_element_bytes;
    const int ax = l.packed_axis;
    if (static_cast<std::size_t>(ax) + 1 == R) {
      p.row_bytes = (p.L + p.nq - 1) / p.nq * static_cast<std::uint64_t>(p.ebytes);
    } else {
      p.vertical = true;
      for (int d = 0; d < ax; ++d) p.outer *= l.shape[d];
      p.np = l.shape[ax];
      for (std::size_t d = ax + 1; d + 1 < R; ++d) p.S *= l.shape[d];
      p.groups = (p.np + p.nq - 1) / p.nq;
    }
  }
  p.code.bits = p.bits;

  // Chunks hold whole blocks (and whole storage elements of a row) whenever blocks are small.
  const std::uint64_t unit_cols = std::lcm<std::uint64_t>(std::max<std::uint64_t>(p.bw, 1), 64);
  p.chunk = unit_cols <= kChunk ? unit_cols * (kChunk / unit_cols) : kChunk;
  p.row_units = p.vertical ? p.outer * p.groups * p.S : p.rows;
  p.units = p.row_units * ((p.L + p.chunk - 1) / p.chunk);
  p.fused = true;
  return p;
}

BytesPlan::Unit BytesPlan::unit(std::uint64_t u) const { return *Walk(*this, u); }

BytesPlan::Walk::Walk(const BytesPlan& p, std::uint64_t u) : p_(&p) {
  cpr_ = (p.L + p.chunk - 1) / p.chunk;
  ru_ = u / cpr_;
  cu_ = u % cpr_;
  if (p.vertical) {
    const std::uint64_t t = ru_ / p.S;
    b_ = ru_ % p.S;
    gi_ = t % p.groups;
    o_ = t / p.groups;
  }
  fill();
}

BytesPlan::Walk& BytesPlan::Walk::operator++() {
  if (++cu_ == cpr_) {
    cu_ = 0;
    ++ru_;
    if (p_->vertical && ++b_ == p_->S) {
      b_ = 0;
      if (++gi_ == p_->groups) {
        gi_ = 0;
        ++o_;
      }
    }
  }
  fill();
  return *this;
}

void BytesPlan::Walk::fill() {
  const BytesPlan& p = *p_;
  Unit& r = cur_;
  r.c0 = cu_ * p.chunk;
  r.len = std::min(p.chunk, p.L - std::min(p.L, r.c0));
  if (!p.vertical) {
    r.count = 1;
    r.row[0] = ru_;
    // nq is a power of two (8 * ebytes / bits) and chunk a multiple of it.
    r.value_offset = ru_ * p.row_bytes + (r.c0 >> std::countr_zero(p.nq)) * static_cast<std::uint64_t>(p.ebytes);
    return;
  }
  r.count = p.np > gi_ * p.nq ? std::min(p.nq, p.np - gi_ * p.nq) : 0;
  for (std::uint64_t i = 0; i < r.count; ++i) r.row[i] = (o_ * p.np + gi_ * p.nq + i) * p.S + b_;
  r.value_offset = ((o_ * p.groups + gi_) * p.S * p.L + b_ * p.L + r.c0) * static_cast<std::uint64_t>(p.ebytes);
}

}  // namespace qscheme::fast::detail
