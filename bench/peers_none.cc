// The peers of a build without XNNPACK (bench/peers.hpp): none, and why.
#include "bench/peers.hpp"

namespace qscheme::bench {

const std::vector<Peer>& peers() {
  static const std::vector<Peer> p;
  return p;
}

std::string peers_absent_reason() {
  return "no peer rows: XNNPACK was not found when this build was configured (install libxnnpack-dev and "
         "libpthreadpool-dev, as tools/setup does, and configure again)";
}

Result<std::unique_ptr<PeerRun>> make_peer_run(const Peer& p, const PeerInput&) {
  return Status(ErrorCode::invalid_argument, std::string(p.name) + ": " + peers_absent_reason());
}

}  // namespace qscheme::bench
