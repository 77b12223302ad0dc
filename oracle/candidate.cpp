#include "oracle/candidate.hpp"

#include <bit>
#include <cmath>
#include <string>
#include <utility>

#include "io/qjson.hpp"
#include "reference/reference.hpp"

namespace qscheme::oracle {

Result<Candidate> candidate_from_bytes(const Scheme& scheme, Shape shape, std::vector<std::uint8_t> bytes,
                                       const Rules& rules, ByteFormat format) {
  Candidate c;
  if (format == ByteFormat::burn) {
    c.kind = CandidateKind::bytes;
    c.bytes = std::move(bytes);
    return c;
  }
  auto q = reference::decode(scheme, shape, bytes, accepting_any_pattern(rules), ByteFormat::ggml);
  if (!q) return q.status();
  c.kind = CandidateKind::quantized;
  c.codes = std::move(q->codes);
  c.scale_bits = std::move(q->scale_bits);
  return c;
}

Result<std::uint32_t> candidate_scale_bits(ScaleDtype d, float v) {
  if (d == ScaleDtype::f32) return std::bit_cast<std::uint32_t>(v);
  const std::uint32_t sign = std::signbit(v) ? scale_sign_bit(d) : 0;
  const bool has_inf = d == ScaleDtype::f16 || d == ScaleDtype::bf16;
  const std::uint32_t nan = d == ScaleDtype::f16 ? 0x7E00u : d == ScaleDtype::bf16 ? 0x7FC0u : d == ScaleDtype::ue8m0 ? 0xFFu : 0x7Fu;
  if (std::isnan(v) || (std::isinf(v) && !has_inf)) return nan | sign;
  if (std::isinf(v)) return (d == ScaleDtype::f16 ? 0x7C00u : 0x7F80u) | sign;
  if (std::signbit(v) && sign == 0) {
    return Status(ErrorCode::corrupt_bytes, std::string(to_string(d)) + " scales have no sign, got " + std::to_string(v));
  }
  return io::qjson::float_to_scale_bits(d, std::fabs(v));
}

}  // namespace qscheme::oracle
