#include "oracle/candidate.hpp"

#include <utility>

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

}  // namespace qscheme::oracle
