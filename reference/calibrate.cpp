#include "reference/calibrate.hpp"

namespace qscheme::reference {

std::vector<std::uint64_t> block_of_elements(const Layout& l) {
  const std::size_t rank = l.shape.size();
  std::vector<std::uint64_t> out(l.elements, 0);
  if (l.elements == 0 || l.scales <= 1) return out;
  // Row-major strides of the block grid.
  std::vector<std::uint64_t> grid_stride(rank, 1);
  for (std::size_t i = rank; i-- > 1;) grid_stride[i - 1] = grid_stride[i] * l.blocks_per_dim[i];
  std::vector<std::uint64_t> coord(rank, 0);
  for (std::uint64_t n = 0; n < l.elements; ++n) {
    std::uint64_t b = 0;
    for (std::size_t i = 0; i < rank; ++i) b += (coord[i] / l.block[i]) * grid_stride[i];
    out[n] = b;
    for (std::size_t i = rank; i-- > 0;) {  // odometer step, innermost first
      if (++coord[i] < l.shape[i]) break;
      coord[i] = 0;
    }
  }
  return out;
}

std::vector<Quotient> calibrate(const Layout& l, std::span<const float> x,
                                std::span<const std::uint64_t> block_of, Calibration c) {
  const std::size_t blocks = static_cast<std::size_t>(l.scales);
  std::vector<Quotient> alpha(blocks);
  if (c == Calibration::minmax) {
    // For finite f32, |x| orders like its bit pattern with the sign bit cleared.
    std::vector<std::uint32_t> max_abs(blocks, 0);
    for (std::size_t n = 0; n < x.size(); ++n) {
      const std::uint32_t a = f32_bits(x[n]) & 0x7FFFFFFFu;
      std::uint32_t& m = max_abs[block_of[n]];
      if (a > m) m = a;
    }
    for (std::size_t b = 0; b < blocks; ++b) {
      const F32Parts p = split_f32(f32_from_bits(max_abs[b]));
      alpha[b] = {Integer(p.mant), Integer(1), p.exp2};
    }
    return alpha;
  }
  // Every f32 is an integer multiple of 2^-149, so the sums are exact integers in that unit.
  std::vector<Integer> sum(blocks);
  std::vector<std::uint64_t> count(blocks, 0);
  for (std::size_t n = 0; n < x.size(); ++n) {
    const F32Parts p = split_f32(x[n]);
    const std::size_t b = block_of[n];
    ++count[b];
    if (p.mant != 0) sum[b] += Integer(p.mant) << (p.exp2 + 149);
  }
  for (std::size_t b = 0; b < blocks; ++b) {
    if (count[b] == 0) continue;
    alpha[b] = {sum[b], Integer(count[b]), -149};
  }
  return alpha;
}

}  // namespace qscheme::reference
