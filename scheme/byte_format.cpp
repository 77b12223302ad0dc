#include "scheme/byte_format.hpp"

#include <string>

#include "scheme/checked.hpp"
#include "scheme/layout.hpp"

namespace qscheme {

std::string_view to_string(ByteFormat f) { return f == ByteFormat::burn ? "burn" : "ggml"; }

std::optional<ByteFormat> byte_format_from_string(std::string_view s) {
  if (s == "burn") return ByteFormat::burn;
  if (s == "ggml") return ByteFormat::ggml;
  return std::nullopt;
}

Result<GgmlLayout> ggml_layout(const Scheme& s, Shape shape) {
  Result<Layout> l = make_layout(s, shape);
  if (!l) return l.status();
  const bool q8 = s.value == Value::q8s || s.value == Value::q8f;
  const bool q4 = s.value == Value::q4s || s.value == Value::q4f;
  const bool block32 = s.block && s.block->size.rank() == 1 && s.block->size[0] == kGgmlBlockCodes;
  if (!(q8 || q4) || !block32 || s.block->dtype != ScaleDtype::f16 || s.tensor || s.mode != Mode::sym) {
    return Status(ErrorCode::invalid_argument,
                  "the ggml format holds block_q8_0 (q8s or q8f:block[32]=f16) and block_q4_0 (q4s or "
                  "q4f:block[32]=f16) only; use format burn for this scheme");
  }
  const std::uint64_t inner = shape.empty() ? 1 : shape.back();
  if (shape.empty() || inner % kGgmlBlockCodes != 0) {
    return Status(ErrorCode::invalid_argument, "the ggml format has no partial blocks: the innermost dim (" +
                                                   std::to_string(inner) + ") must be a multiple of 32");
  }
  GgmlLayout g;
  g.nibbles = q4;
  g.blocks = l->elements / kGgmlBlockCodes;
  g.block_bytes = 2 + (q4 ? kGgmlBlockCodes / 2 : kGgmlBlockCodes);
  const std::optional<std::uint64_t> total = checked_mul(g.blocks, g.block_bytes);
  if (!total || *total > (std::uint64_t{1} << 63) - 1) {
    return Status(ErrorCode::shape_overflow, "the ggml byte count of this shape does not fit in 63 bits");
  }
  g.total_bytes = *total;
  return g;
}

Result<std::uint64_t> total_bytes(const Scheme& s, Shape shape, ByteFormat f) {
  if (f == ByteFormat::ggml) {
    auto g = ggml_layout(s, shape);  // make_layout's errors first
    if (!g) return g.status();
    return g->total_bytes;
  }
  auto l = make_layout(s, shape);
  if (!l) return l.status();
  return l->total_bytes;
}

}  // namespace qscheme
