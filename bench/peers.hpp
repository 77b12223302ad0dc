// Other libraries' operators timed beside qscheme's on the same input (peer rows of `qscheme
// bench` and the Google Benchmark binary). Each peer pairs with one row of kernels() that does
// the same work: the peer gets that row's input and given scale (quantize) or its int8 codes and
// scale (dequantize), so the two rows differ only in whose code runs.
//
// The peers are optional: CMake builds bench/peers_xnnpack.cc when it finds XNNPACK
// (libxnnpack-dev, which tools/setup installs) and bench/peers_none.cc otherwise, where the list
// is empty and absent_reason() says why.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/baseline.hpp"
#include "scheme/status.hpp"

namespace qscheme::bench {

struct Peer {
  const char* name;        // the row's name, e.g. "xnnpack convert f32->qs8"
  Direction direction;
  const char* qscheme_row;  // the row of kernels() it is compared with, on the same input
};

// What a peer runs on, taken from its qscheme row (KernelRun).
struct PeerInput {
  std::span<const float> x;            // quantize: the input
  std::span<const std::int8_t> codes;  // dequantize: the int8 codes qscheme's row decodes
  float scale = 0;                     // the per-tensor scale, given (quantize) or stored (dequantize)
  unsigned threads = 1;
};

class PeerRun {
 public:
  virtual ~PeerRun() = default;
  virtual Status run() = 0;  // one timed call
};

// The peer's input from its qscheme row's run: that row's input and given scale (quantize), or
// its int8 codes (Burn's bytes start with them for a per-tensor int8 scheme) and stored scale.
inline Result<PeerInput> peer_input(const KernelRun& q, Direction d, unsigned threads) {
  PeerInput in;
  in.threads = threads;
  if (d == Direction::quantize) {
    const auto& given = q.options().scales;
    if (!given || given->block.size() != 1 || given->global) {
      return Status(ErrorCode::invalid_argument, "a quantize peer needs a row with one given per-tensor scale");
    }
    in.x = q.input();
    in.scale = given->block[0];
    return in;
  }
  const QuantizedTensor& t = q.quantized();
  if (t.scale_bits.size() != 1 || t.global_bits || q.bytes().size() != t.codes.size() + sizeof(float)) {
    return Status(ErrorCode::invalid_argument, "a dequantize peer needs a row of int8 codes with one per-tensor scale");
  }
  in.codes = std::span<const std::int8_t>(reinterpret_cast<const std::int8_t*>(q.bytes().data()), t.codes.size());
  in.scale = std::bit_cast<float>(t.scale_bits[0]);
  return in;
}

// The peers this build has, in the order their rows are printed; empty without a peer library.
const std::vector<Peer>& peers();
// Why peers() is empty ("" when it is not), for the bench's header.
std::string peers_absent_reason();
// The peer's operator set up for `in` (untimed: library initialisation, operator creation).
Result<std::unique_ptr<PeerRun>> make_peer_run(const Peer& p, const PeerInput& in);

}  // namespace qscheme::bench
