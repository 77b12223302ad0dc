// The plan of the QuantizedTensor drivers (quantize.cc, dequantize.cc): the tensor as rows along
// its last axis against the block grid (Geo), and the walks that hand the kernels whole runs of
// rows sharing their blocks (for_runs) or single rows (for_rows), split over threads in chunks
// that never change a byte of the result.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fast/support/parallel.hpp"
#include "scheme/layout.hpp"

namespace qscheme::fast::detail {

// Rows x segments view of a tensor against its block grid. A row is one line along the last
// axis; it crosses ceil(L / bw) blocks, consecutive in the block index.
struct Geo {
  std::size_t R = 1;
  std::vector<std::uint64_t> shape, block, bpd, bstride;
  std::uint64_t rows = 0, L = 0, bw = 1, elements = 0, nblocks = 1;

  explicit Geo(const Layout& l) {
    shape = l.shape;
    block = l.block;
    bpd = l.blocks_per_dim;
    if (shape.empty()) {  // a scalar is a [1] tensor
      shape = {1};
      block = {1};
      bpd = {1};
    }
    R = shape.size();
    elements = l.elements;
    L = shape[R - 1];
    rows = L ? elements / L : 0;
    bw = std::max<std::uint64_t>(block[R - 1], 1);
    bstride.assign(R, 1);
    for (std::size_t d = R - 1; d-- > 0;) bstride[d] = bstride[d + 1] * bpd[d + 1];
    nblocks = 1;
    for (auto b : bpd) nblocks *= b;
  }
  // Block index of the first segment of row r.
  std::uint64_t row_base(std::uint64_t r) const {
    std::uint64_t base = 0;
    for (std::size_t d = R - 1; d-- > 0;) {
      const std::uint64_t c = r % shape[d];
      r /= shape[d];
      base += (c / block[d]) * bstride[d];
    }
    return base;
  }
  // Rows per index of axis 0 times block[0]: a chunk of rows aligned to this never splits a block.
  std::uint64_t row_align() const { return R >= 2 ? (rows / shape[0]) * block[0] : 1; }
  // Number of elements of block j (partial blocks at the ends are smaller).
  std::uint64_t block_elements(std::uint64_t j) const {
    std::uint64_t n = 1;
    for (std::size_t d = R; d-- > 0;) {
      const std::uint64_t c = j % bpd[d];
      j /= bpd[d];
      n *= std::min(block[d], shape[d] - c * block[d]);
    }
    return n;
  }
};

// Geo::row_base of consecutive rows without a division per row: an odometer over the outer
// coordinates that tracks each one's place inside its block.
struct RowWalker {
  const Geo& g;
  std::vector<std::uint64_t> c, in;  // coordinate and offset inside the block, per outer dim
  std::uint64_t base;
  RowWalker(const Geo& geo, std::uint64_t r) : g(geo), c(geo.R, 0), in(geo.R, 0), base(geo.row_base(r)) {
    for (std::size_t d = g.R - 1; d-- > 0;) {
      c[d] = r % g.shape[d];
      r /= g.shape[d];
      in[d] = c[d] % g.block[d];
    }
  }
  void next() {
    for (std::size_t d = g.R - 1; d-- > 0;) {
      if (++c[d] < g.shape[d]) {
        if (++in[d] == g.block[d]) {
          in[d] = 0;
          base += g.bstride[d];
        }
        return;
      }
      // Wrap: back to block 0 of this dim, carry into the next outer one.
      base -= (c[d] - 1) / g.block[d] * g.bstride[d];
      c[d] = 0;
      in[d] = 0;
    }
  }
};

// Calls fn(x_offset, len, first_block) for every row (or, for a single row, for chunks of whole
// segments of it): the piece covers ceil(len / bw) consecutive blocks starting at first_block.
// In parallel by chunks of rows aligned to whole blocks when split_aligned (calibration).
template <class Fn>
void for_rows(const Geo& g, bool split_aligned, Fn fn) {
  if (g.elements == 0) return;
  if (g.rows == 1) {
    const std::uint64_t nseg = (g.L + g.bw - 1) / g.bw;
    parallel_chunks(nseg, 1, g.elements, [&](std::uint64_t sb, std::uint64_t se) {
      const std::uint64_t off = sb * g.bw;
      fn(off, std::min(se * g.bw, g.L) - off, sb);
    });
    return;
  }
  parallel_chunks(g.rows, split_aligned ? g.row_align() : 1, g.elements, [&](std::uint64_t rb, std::uint64_t re) {
    for (std::uint64_t r = rb; r < re; ++r) fn(r * g.L, g.L, g.row_base(r));
  });
}

// Calls fn(x_offset, len, nrows, groups, gstride, first_block, bw) over the tensor: `groups`
// groups, gstride elements apart, of nrows consecutive rows of len elements starting at x_offset,
// that all cross the same ceil(len / bw) blocks from first_block on (so kernels spread or reduce
// their scales once per run, not once per row). Groups > 1 when blocks also span axis R-3: the
// rows of one block along axes then form one run.
// When consecutive rows continue one another's block sequence -- one block for the whole tensor,
// or blocks only along the last axis that tile each row exactly or span it -- the tensor is walked instead
// as one long row in pieces of about kPiece elements (whole blocks each, unless there is one
// block; nrows = 1), so that short rows do not cost a kernel call each. Parallel as for_rows.
inline constexpr std::uint64_t kPiece = 8192;
template <class Fn>
void for_runs(const Geo& g, bool split_aligned, Fn fn) {
  if (g.elements == 0) return;
  const bool single = g.nblocks == 1;
  // Blocks tile the rows when each row holds whole blocks, or is one (partial) block itself.
  const std::uint64_t bw = std::min(g.bw, g.L);
  bool tiled = g.L % bw == 0;
  for (std::size_t d = 0; d + 1 < g.R; ++d) tiled = tiled && g.block[d] == 1;
  if (g.rows == 1) {
    for_rows(g, split_aligned, [&](std::uint64_t off, std::uint64_t len, std::uint64_t b) { fn(off, len, 1, 1, 0, b, g.bw); });
    return;
  }
  if (g.L < kPiece && (single || tiled)) {
    const std::uint64_t unit = single ? 1 : bw;  // elements per indivisible step
    const std::uint64_t per = std::max<std::uint64_t>(1, kPiece / unit);
    const std::uint64_t steps = g.elements / unit, pieces = (steps + per - 1) / per;
    // One block split into pieces: a calibration (split_aligned) must not share it between threads.
    parallel_chunks(pieces, single && split_aligned ? pieces : 1, g.elements, [&](std::uint64_t pb, std::uint64_t pe) {
      for (std::uint64_t p = pb; p < pe; ++p) {
        const std::uint64_t s0 = p * per, s1 = std::min(steps, s0 + per);
        fn(s0 * unit, (s1 - s0) * unit, 1, 1, 0, single ? 0 : s0, single ? g.elements : bw);
      }
    });
    return;
  }
  if (g.R >= 3 && g.block[g.R - 3] > 1) {
    // Chunks of whole blocks (row_align), walked a block row of axis R-3 at a time: its rows
    // split into runs of block[R-2] rows along axis R-2, each run in min(B3, left) groups.
    const std::uint64_t S = g.shape[g.R - 2], n3 = g.shape[g.R - 3];
    const std::uint64_t B2 = g.block[g.R - 2], B3 = g.block[g.R - 3];
    parallel_chunks(g.rows, g.row_align(), g.elements, [&](std::uint64_t rb, std::uint64_t re) {
      for (std::uint64_t r = rb; r < re;) {
        const std::uint64_t i3 = r / S % n3, groups = std::min(B3, n3 - i3);
        const std::uint64_t base = g.row_base(r);
        for (std::uint64_t i2 = 0, j = 0; i2 < S; i2 += B2, ++j) {
          fn((r + i2) * g.L, g.L, std::min(B2, S - i2), groups, S * g.L, base + j * g.bstride[g.R - 2], g.bw);
        }
        r += groups * S;
      }
    });
    return;
  }
  parallel_chunks(g.rows, split_aligned ? g.row_align() : 1, g.elements, [&](std::uint64_t rb, std::uint64_t re) {
    RowWalker w(g, rb);
    for (std::uint64_t r = rb; r < re;) {
      const std::uint64_t b = w.base;
      std::uint64_t k = 1;
      for (w.next(); r + k < re && w.base == b; w.next()) ++k;
      fn(r * g.L, g.L, k, 1, 0, b, g.bw);
      r += k;
    }
  });
}

}  // namespace qscheme::fast::detail
