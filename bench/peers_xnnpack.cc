// The peers when XNNPACK is found (bench/peers.hpp): its convert operators, f32 -> qs8 with a
// given scale and qs8 -> f32, on pthreadpool with the engine's thread count. XNNPACK computes
// a code as round-to-nearest-even of x times 1/scale (the reciprocal rounded to f32) and clamps
// to [-127, 127] here, as qscheme's symmetric int8 does; qscheme divides exactly, so a few codes
// next to a tie may differ: the rows compare speed on the same work, not bytes.
#include <xnnpack.h>

#include <mutex>

#include "bench/peers.hpp"

namespace qscheme::bench {
namespace {

Status xnn_error(const char* what, xnn_status st) {
  return Status(ErrorCode::internal, std::string("XNNPACK ") + what + " failed (xnn_status " +
                                         std::to_string(static_cast<int>(st)) + ")");
}

// xnn_initialize detects the CPU and fills XNNPACK's kernel tables, once per process.
Status initialize() {
  static xnn_status st = xnn_status_success;
  static std::once_flag once;
  std::call_once(once, [] { st = xnn_initialize(nullptr); });
  return st == xnn_status_success ? Status() : xnn_error("xnn_initialize", st);
}

class XnnConvert final : public PeerRun {
 public:
  ~XnnConvert() override {
    if (op_) xnn_delete_operator(op_);
    if (pool_) pthreadpool_destroy(pool_);
  }
  Status init(const Peer& p, const PeerInput& in) {
    if (Status st = initialize(); !st.ok()) return st;
    if (in.threads > 1) {
      pool_ = pthreadpool_create(in.threads);
      if (!pool_) return Status(ErrorCode::internal, "pthreadpool_create failed");
    }
    quantize_ = p.direction == Direction::quantize;
    n_ = quantize_ ? in.x.size() : in.codes.size();
    // One row of n elements: XNNPACK splits a contiguous batch into tiles over its pool.
    const xnn_status st =
        quantize_ ? xnn_create_convert_nc_f32_qs8(1, 1, 1, in.scale, 0, -127, 127, 0, &op_)
                  : xnn_create_convert_nc_qs8_f32(1, 1, 1, in.scale, 0, 0, &op_);
    if (st != xnn_status_success) return xnn_error("create convert", st);
    x_ = in.x;
    codes_ = in.codes;
    if (quantize_) {
      q_out_.resize(n_);
    } else {
      dq_out_.resize(n_);
    }
    return Status();
  }
  // Setup (pointers and size) and run, as a caller with new buffers does per call.
  Status run() override {
    xnn_status st = quantize_ ? xnn_setup_convert_nc_f32_qs8(op_, n_, x_.data(), q_out_.data(), pool_)
                              : xnn_setup_convert_nc_qs8_f32(op_, n_, codes_.data(), dq_out_.data(), pool_);
    if (st != xnn_status_success) return xnn_error("setup convert", st);
    st = xnn_run_operator(op_, pool_);
    return st == xnn_status_success ? Status() : xnn_error("run convert", st);
  }

 private:
  xnn_operator_t op_ = nullptr;
  pthreadpool_t pool_ = nullptr;
  bool quantize_ = true;
  std::size_t n_ = 0;
  std::span<const float> x_;
  std::span<const std::int8_t> codes_;
  Buffer<std::int8_t> q_out_;
  Buffer<float> dq_out_;
};

}  // namespace

const std::vector<Peer>& peers() {
  static const std::vector<Peer> p{
      {"xnnpack convert f32->qs8", Direction::quantize, "quantize q8s given scale"},
      {"xnnpack convert qs8->f32", Direction::dequantize, "dequantize q8s"},
  };
  return p;
}

std::string peers_absent_reason() { return ""; }

Result<std::unique_ptr<PeerRun>> make_peer_run(const Peer& p, const PeerInput& in) {
  auto r = std::make_unique<XnnConvert>();
  if (Status st = r->init(p, in); !st.ok()) return st;
  return std::unique_ptr<PeerRun>(std::move(r));
}

}  // namespace qscheme::bench
