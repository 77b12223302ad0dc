#include "scheme/binary.hpp"

#include <string>

namespace qscheme {
namespace {

// Byte 7's values from here on name a per-axis level, the axis in the low bits.
constexpr std::size_t kAxisRankFlag = 0x80;

Status bad(std::size_t at, const std::string& what) {
  return Status(ErrorCode::malformed_binary_scheme,
                "byte " + std::to_string(at) + ": " + what, at);
}

}  // namespace

std::vector<std::uint8_t> encode_scheme(const Scheme& s) {
  std::vector<std::uint8_t> out{
      kBinarySchemeVersion,
      static_cast<std::uint8_t>(s.value),
      static_cast<std::uint8_t>(s.store.kind),
      s.store.kind == StoreKind::native ? std::uint8_t{0} : s.store.dim,
      static_cast<std::uint8_t>(s.mode),
      static_cast<std::uint8_t>(s.tensor ? 1 + static_cast<int>(*s.tensor) : 0),
      static_cast<std::uint8_t>(s.has_inner_level() ? 1 + static_cast<int>(s.scale_dtype()) : 0),
      static_cast<std::uint8_t>(s.block ? s.block->size.rank() : s.axis ? kAxisRankFlag + s.axis->dim : 0),
  };
  if (s.block) {
    for (std::uint8_t e : s.block->size.extents()) out.push_back(e);
  }
  return out;
}

Result<std::pair<Scheme, std::size_t>> decode_scheme_prefix(std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return bad(0, "empty input, expected the version byte");
  if (bytes[0] != kBinarySchemeVersion) {
    return Status(ErrorCode::unsupported_binary_version,
                  "binary scheme version " + std::to_string(bytes[0]) + " is not readable; this build reads version " +
                      std::to_string(kBinarySchemeVersion),
                  0);
  }
  if (bytes.size() < 8) {
    return bad(bytes.size(), "truncated header: need 8 bytes, have " + std::to_string(bytes.size()));
  }
  Scheme s;
  if (bytes[1] >= kAllValues.size()) {
    return bad(1, "value " + std::to_string(bytes[1]) + " is not 0..8 (Burn's kinds) or 9..13 (the extension kinds)");
  }
  s.value = static_cast<Value>(bytes[1]);
  if (bytes[2] > 2) return bad(2, "store kind " + std::to_string(bytes[2]) + " is not 0..2");
  const auto kind = static_cast<StoreKind>(bytes[2]);
  if (bytes[3] >= kMaxRank || (kind == StoreKind::native && bytes[3] != 0)) {
    return bad(3, "store dim " + std::to_string(bytes[3]) + " is out of range (native takes 0, packed 0..7)");
  }
  s.store = Store{kind, bytes[3]};
  if (bytes[4] > 2) {
    return bad(4, "mode " + std::to_string(bytes[4]) + " is not 0 (sym), 1 (lookup) or 2 (affine, the extension)");
  }
  s.mode = static_cast<Mode>(bytes[4]);
  if (bytes[5] > kAllScaleDtypes.size()) return bad(5, "tensor level " + std::to_string(bytes[5]) + " is not 0..5");
  if (bytes[5] != 0) s.tensor = static_cast<ScaleDtype>(bytes[5] - 1);
  if (bytes[6] > kAllScaleDtypes.size()) return bad(6, "block level " + std::to_string(bytes[6]) + " is not 0..5");
  const std::size_t rank = bytes[7];
  if (bytes[6] == 0) {
    if (rank != 0) return bad(7, "block rank must be 0 when there is no block level");
    return std::pair{s, std::size_t{8}};
  }
  if (rank >= kAxisRankFlag && rank < kAxisRankFlag + kMaxRank) {
    s.axis = AxisLevel{static_cast<std::uint8_t>(rank - kAxisRankFlag), static_cast<ScaleDtype>(bytes[6] - 1)};
    return std::pair{s, std::size_t{8}};
  }
  if (rank == 0 || rank > kMaxBlockDims) {
    return bad(7, "block rank " + std::to_string(rank) + " is not 1..5, or 128..135 for a per-axis level");
  }
  if (bytes.size() < 8 + rank) return bad(bytes.size(), "truncated block extents");
  const auto extents = bytes.subspan(8, rank);
  if (rank > 1 && extents[0] == 1) return bad(8, "block extents are not canonical (leading 1)");
  s.block = BlockLevel{BlockSize::make(extents).value(), static_cast<ScaleDtype>(bytes[6] - 1)};
  return std::pair{s, 8 + rank};
}

Result<Scheme> decode_scheme(std::span<const std::uint8_t> bytes) {
  auto r = decode_scheme_prefix(bytes);
  if (!r) return r.status();
  if (r->second != bytes.size()) {
    return bad(r->second, std::to_string(bytes.size() - r->second) + " trailing bytes after the scheme");
  }
  return r->first;
}

}  // namespace qscheme
