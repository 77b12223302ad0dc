// fuzz_edge_seeds SCHEME DIM...: the edge-case inputs of oracle/edge_tensors.hpp for one scheme
// and shape, as fuzz_differential payloads for fuzz/make_seeds.py, one a line:
//   <name> TAB <1 if given scales follow the data, else 0> TAB <payload as hex>
// The payload is the data as little-endian f32, then the block scales and the global scale of a
// given-scales input (fuzz_differential's layout; make_seeds.py appends the parameter tail).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "oracle/edge_tensors.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"

int main(int argc, char** argv) {
  using namespace qscheme;
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_edge_seeds SCHEME DIM...\n");
    return 2;
  }
  const auto s = parse_scheme(argv[1]);
  std::vector<std::uint64_t> shape;
  for (int i = 2; i < argc; ++i) shape.push_back(std::strtoull(argv[i], nullptr, 10));
  const auto l = s.ok() ? make_layout(*s, shape) : Result<Layout>(s.status());
  if (!l.ok()) {
    std::fprintf(stderr, "error: %s\n", l.status().to_string().c_str());
    return 2;
  }
  for (const oracle::EdgeInput& in : oracle::edge_inputs(*s, *l, 1)) {
    std::vector<float> words = in.x;
    if (in.scales) {
      words.insert(words.end(), in.scales->block.begin(), in.scales->block.end());
      if (in.scales->global) words.push_back(*in.scales->global);
    }
    std::printf("%s\t%d\t", in.name.c_str(), in.scales ? 1 : 0);
    for (float w : words) {
      const std::uint32_t b = f32_bits(w);
      for (int k = 0; k < 4; ++k) std::printf("%02x", static_cast<unsigned>((b >> (8 * k)) & 0xFF));
    }
    std::printf("\n");
  }
  return 0;
}
