#include "scheme/scheme.hpp"

#include <string>

namespace qscheme {

Result<BlockSize> BlockSize::make(std::span<const std::uint8_t> extents) {
  if (extents.empty()) {
    return Result<BlockSize>(ErrorCode::malformed_scheme,
                             "a block needs at least one extent, e.g. block[32]");
  }
  // Leading unit extents carry no information once blocks are right-aligned to the tensor.
  std::size_t first = 0;
  while (first + 1 < extents.size() && extents[first] == 1) ++first;
  const std::size_t len = extents.size() - first;
  if (len > kMaxBlockDims) {
    return Result<BlockSize>(ErrorCode::malformed_scheme,
                             "a block has at most " + std::to_string(kMaxBlockDims) +
                                 " dimensions after leading 1s are dropped, got " +
                                 std::to_string(len));
  }
  BlockSize b;
  for (std::size_t i = 0; i < len; ++i) b.data_[i] = extents[first + i];
  b.len_ = static_cast<std::uint8_t>(len);
  return b;
}

BlockSize BlockSize::of(std::initializer_list<std::uint8_t> extents) {
  return BlockSize::make(std::span<const std::uint8_t>(extents.begin(), extents.size())).value();
}

const ValueInfo& info(Value v) {
  static constexpr std::array<ValueInfo, kAllValues.size()> kInfo{{
      {"q8f", 8, -128, 127, false, false, false},
      {"q8s", 8, -127, 127, false, false, false},
      {"q4f", 4, -8, 7, false, false, false},
      {"q4s", 4, -7, 7, false, false, false},
      {"q2f", 2, -2, 1, false, false, false},
      {"q2s", 2, -1, 1, false, false, false},
      {"e4m3", 8, -448, 448, true, false, false},
      {"e5m2", 8, -57344, 57344, true, false, false},
      {"e2m1", 4, -6, 6, true, false, false},
      {"u8", 8, 0, 255, false, true, true},
      {"u4", 4, 0, 15, false, true, true},
      {"u2", 2, 0, 3, false, true, true},
      {"i16", 16, -32768, 32767, false, false, true},
      {"u16", 16, 0, 65535, false, true, true},
  }};
  return kInfo[static_cast<std::size_t>(v)];
}

std::int32_t full_lo(Value v) { return info(v).is_unsigned ? 0 : -(1 << (info(v).bits - 1)); }
std::int32_t full_hi(Value v) {
  return info(v).is_unsigned ? (1 << info(v).bits) - 1 : (1 << (info(v).bits - 1)) - 1;
}

const ScaleDtypeInfo& info(ScaleDtype d) {
  static constexpr std::array<ScaleDtypeInfo, 5> kInfo{{
      {"f32", 4, true},
      {"f16", 2, true},
      {"bf16", 2, true},
      {"ue8m0", 1, false},
      {"ue4m3", 1, true},
  }};
  return kInfo[static_cast<std::size_t>(d)];
}

std::string_view to_string(Value v) { return info(v).name; }
std::string_view to_string(ScaleDtype d) { return info(d).name; }
std::string_view to_string(Mode m) {
  switch (m) {
    case Mode::sym: return "sym";
    case Mode::lookup: return "lookup";
    case Mode::affine: return "affine";
  }
  return "?";
}

bool has_native_pair_form(Value v) { return v == Value::e2m1; }

int store_bits(const Scheme& s) {
  switch (s.store.kind) {
    case StoreKind::native: return info(s.value).bits;
    case StoreKind::packed_native: return info(s.value).bits * (has_native_pair_form(s.value) ? 2 : 1);
    case StoreKind::packed_u32: return 32;
  }
  return info(s.value).bits;
}

int codes_per_storage_element(const Scheme& s) {
  if (s.store.kind == StoreKind::native) return 1;
  return store_bits(s) / info(s.value).bits;
}

}  // namespace qscheme
