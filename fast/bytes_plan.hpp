// Geometry of the units stages (quantize_units.cc, dequantize.cc): which tensors they take, and
// how they split into independent units of work that stay in L1. A unit is a chunk of
// columns of one row (native store, or packed along the last axis), or of the nq rows whose codes
// share storage elements (packed along an outer axis).
#pragma once

#include <cstdint>
#include <string>

#include "fast/kernels/dispatch.h"
#include "scheme/layout.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::fast::detail {

struct BytesPlan {
  bool fused = false;  // false: the units stages decline it, the whole-tensor stages run
  std::string why;     // when !fused, the reason (for docs and tests)

  std::uint64_t rows = 0, L = 0;  // rows along the last axis, and their length
  std::uint64_t bw = 0;           // block extent along the last axis; 0 = one scale for the tensor
  std::uint64_t nbr = 1;          // blocks per row (1 when bw == 0)
  bool two = false;               // block scales under an f32 global
  ScaleDtype sd = ScaleDtype::f32;
  int sbytes = 4;
  kernels::CodeSpec code;
  kernels::ScaleSpec spec;  // wg and g still for one level; quantize sets them for two
  double W = 1, Dmax = 1;

  // Packing: fields of `bits` (8 for native), nq per storage element of ebytes bytes.
  int bits = 8, ebytes = 1;
  std::uint64_t nq = 1;
  bool vertical = false;  // packed along an outer axis: a unit spans nq rows
  std::uint64_t outer = 1, np = 1, S = 1, groups = 1;  // vertical: outer x np x (S rows of L)
  std::uint64_t row_bytes = 0;                          // horizontal: bytes per row

  std::uint64_t chunk = 0;         // columns per unit (a multiple of bw when bw <= 2048)
  std::uint64_t row_units = 0;     // rows (horizontal) or row groups (vertical)
  std::uint64_t units = 0;         // row_units * chunks per row

  // Unit u: rows[i] for i < count, columns [c0, c0 + len), first value byte at value_offset.
  struct Unit {
    std::uint64_t row[16];
    std::uint64_t count, c0, len, value_offset;
  };
  Unit unit(std::uint64_t u) const;

  // Units u, u + 1, ... in order, with no division per unit (finding unit u takes four, which
  // cost 6% of quantize q8_0 in L2): the drivers walk their range of units with one.
  class Walk {
   public:
    Walk(const BytesPlan& p, std::uint64_t u);
    const Unit& operator*() const { return cur_; }
    Walk& operator++();

   private:
    void fill();
    const BytesPlan* p_;
    std::uint64_t cpr_, cu_, ru_, b_ = 0, gi_ = 0, o_ = 0;
    Unit cur_;
  };
};

// quantize: true for the calibrating exact profile with minmax (the caller checks the options).
BytesPlan make_bytes_plan(const Scheme& s, const Layout& l);

}  // namespace qscheme::fast::detail
