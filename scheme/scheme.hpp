// The scheme tuple, exactly as Burn/CubeCL's QuantScheme defines it: value, store, mode and up
// to two scale levels. This header holds the data model and the facts derived from it; text
// syntax lives in text.hpp, binary form in binary.hpp, the support rules in validate.hpp and the
// size arithmetic in layout.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "scheme/status.hpp"

namespace qscheme {

// Logical type of one quantized element. The first nine are Burn's QuantValue, with Burn's
// meaning and binary bytes (0..8); the rest are qscheme's extension beyond Burn: ONNX's
// unsigned and 16-bit integer types, with ONNX's ranges (docs/SEMANTICS.md section 12).
enum class Value : std::uint8_t { q8f, q8s, q4f, q4s, q2f, q2s, e4m3, e5m2, e2m1, u8, u4, u2, i16, u16 };
inline constexpr std::array kBurnValues{Value::q8f,  Value::q8s,  Value::q4f,
                                        Value::q4s,  Value::q2f,  Value::q2s,
                                        Value::e4m3, Value::e5m2, Value::e2m1};
inline constexpr std::array kExtensionValues{Value::u8, Value::u4, Value::u2, Value::i16, Value::u16};
inline constexpr std::array kAllValues{Value::q8f,  Value::q8s,  Value::q4f, Value::q4s, Value::q2f,
                                       Value::q2s,  Value::e4m3, Value::e5m2, Value::e2m1, Value::u8,
                                       Value::u4,   Value::u2,   Value::i16,  Value::u16};

enum class StoreKind : std::uint8_t { native, packed_native, packed_u32 };

// Physical storage. `dim` counts from the innermost dimension (0 = last axis) and only means
// something for the packed kinds; it is 0 for native.
struct Store {
  StoreKind kind = StoreKind::native;
  std::uint8_t dim = 0;

  static constexpr Store native() { return {StoreKind::native, 0}; }
  static constexpr Store packed_native(std::uint8_t d) { return {StoreKind::packed_native, d}; }
  static constexpr Store packed_u32(std::uint8_t d) { return {StoreKind::packed_u32, d}; }
  friend constexpr bool operator==(const Store&, const Store&) = default;
};

// sym and lookup are Burn's QuantMode; affine (a zero point per scale, the value kind's own
// integer) is qscheme's extension (docs/SEMANTICS.md section 14).
enum class Mode : std::uint8_t { sym, lookup, affine };

enum class ScaleDtype : std::uint8_t { f32, f16, bf16, ue8m0, ue4m3 };
inline constexpr std::array kAllScaleDtypes{ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16,
                                            ScaleDtype::ue8m0, ScaleDtype::ue4m3};

// Highest tensor rank qscheme accepts.
inline constexpr std::size_t kMaxRank = 8;
// Most block dimensions a scheme can carry (Burn's BlockSize::MAX_DIMS).
inline constexpr std::size_t kMaxBlockDims = 5;

// An N-D block, extents outermost first, in canonical form: leading unit extents dropped, at
// least one extent kept ([1,32] is [32], [1,1] is [1]). Right-aligned against a tensor's dims.
class BlockSize {
 public:
  // Canonicalises `extents`. Fails (malformed-scheme) on an empty list or more than
  // kMaxBlockDims extents after the leading ones are dropped. Zero extents are representable so
  // that validate() can reject them with their own code.
  static Result<BlockSize> make(std::span<const std::uint8_t> extents);
  // Convenience for literals; precondition: the list is valid.
  static BlockSize of(std::initializer_list<std::uint8_t> extents);

  std::span<const std::uint8_t> extents() const { return {data_.data(), len_}; }
  std::size_t rank() const { return len_; }
  std::uint8_t operator[](std::size_t i) const { return data_[i]; }
  friend constexpr bool operator==(const BlockSize&, const BlockSize&) = default;

 private:
  std::array<std::uint8_t, kMaxBlockDims> data_{};
  std::uint8_t len_ = 0;
};

struct BlockLevel {
  BlockSize size;
  ScaleDtype dtype = ScaleDtype::f32;
  friend bool operator==(const BlockLevel&, const BlockLevel&) = default;
};

// Per-axis scales (qscheme's extension): one scale per index of one axis, whatever its extent.
// `dim` counts from the innermost dimension, as a packed store's does (0 = the last axis).
struct AxisLevel {
  std::uint8_t dim = 0;
  ScaleDtype dtype = ScaleDtype::f32;
  friend bool operator==(const AxisLevel&, const AxisLevel&) = default;
};

// The tuple. `tensor` and `block` are stored as written: a scheme with neither level *means*
// per-tensor f32 (see tensor_scale()) but is a different tuple from one that says tensor=f32,
// as in Burn.
struct Scheme {
  Value value = Value::q8s;
  Store store = Store::native();
  Mode mode = Mode::sym;
  std::optional<ScaleDtype> tensor;
  std::optional<BlockLevel> block;
  // The extension's alternative to `block` (validate() refuses a scheme with both).
  std::optional<AxisLevel> axis;

  friend bool operator==(const Scheme&, const Scheme&) = default;

  // The innermost level is per block or per axis.
  bool has_inner_level() const { return block.has_value() || axis.has_value(); }
  // The per-tensor level as resolved: f32 when neither level is given.
  std::optional<ScaleDtype> tensor_scale() const {
    if (!tensor && !has_inner_level()) return ScaleDtype::f32;
    return tensor;
  }
  bool two_level() const { return tensor.has_value() && has_inner_level(); }
  int num_levels() const { return (has_inner_level() ? 1 : 0) + (tensor_scale() ? 1 : 0); }
  // The innermost level's dtype: the block or axis dtype, else the tensor dtype, else f32.
  ScaleDtype scale_dtype() const {
    return block ? block->dtype : axis ? axis->dtype : tensor.value_or(ScaleDtype::f32);
  }
  // One zero point per innermost-level scale.
  bool affine() const { return mode == Mode::affine; }
};

// Facts of a value kind.
struct ValueInfo {
  std::string_view name;
  int bits;
  // Quantization range (a, b); for minifloats the largest finite magnitude is b.
  std::int32_t lo;
  std::int32_t hi;
  bool is_float;
  bool is_unsigned;  // codes 0..2^bits-1 (stored as such); else two's complement or a minifloat
  bool extension;    // qscheme's extension beyond Burn's QuantValue
};
const ValueInfo& info(Value v);
// The widest integer range a kind's bits hold: [-2^(bits-1), 2^(bits-1) - 1], or [0, 2^bits - 1]
// for an unsigned kind (precondition: an integer kind).
std::int32_t full_lo(Value v);
std::int32_t full_hi(Value v);

// Facts of a scale dtype.
struct ScaleDtypeInfo {
  std::string_view name;
  int bytes;       // bytes one scale takes when serialized
  bool has_zero;   // ue8m0 cannot represent 0
};
const ScaleDtypeInfo& info(ScaleDtype d);

std::string_view to_string(Value v);
std::string_view to_string(ScaleDtype d);
std::string_view to_string(Mode m);

// Bits one stored element occupies: the value's bits (native), 8 (packed-native), 32 (packed-u32).
int store_bits(const Scheme& s);
// Codes per stored element (1 for native).
int codes_per_storage_element(const Scheme& s);
// Does a value have a native two-codes-a-byte form (only e2m1, as e2m1x2)?
bool has_native_pair_form(Value v);

}  // namespace qscheme
