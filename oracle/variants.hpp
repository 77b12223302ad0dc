// A small variant quantizer for `qscheme check`: the reference engine's rules with one or more
// named deviations switched on, built from the reference's exact building blocks (rational.hpp,
// minifloat.hpp, calibrate.hpp, scales.hpp). It exists to *diagnose* another implementation: if a
// candidate's output is reproduced exactly by the reference plus one named deviation, that
// deviation is the likely bug. It never replaces the reference: `base_variant(profile)` must
// reproduce reference::quantize bit for bit, and check.cpp verifies that on every run.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "reference/rational.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/status.hpp"

namespace qscheme::oracle {

// How an out-of-range code is handled.
enum class Saturation : std::uint8_t {
  standard,    // the scheme's range: [lo, hi] for integers, +-max for minifloats
  full_range,  // integers clamp to the full two's complement range of their bits (q8s to -128)
  none,        // no saturation: integers wrap modulo 2^bits, e4m3 overflows to NaN, e5m2 to inf
};

// The explicit option set. Every field has the reference's meaning at its base value
// (base_variant); each deviation is one field changed.
struct Variant {
  reference::RoundMode ties = reference::RoundMode::half_even;  // final rounding of an integer code
  reference::RoundMode float_ties = reference::RoundMode::half_even;  // final rounding onto a minifloat grid
  bool f32_quotient = false;         // x / e rounded to f32 before the final rounding
  bool reciprocal = false;           // x * f32(1 / e), rounded to f32, instead of x / e
  reference::RoundMode scale_rounding = reference::RoundMode::up;  // stored scale: up/half_even/down
  Saturation saturation = Saturation::standard;
  bool drop_zero_sign = false;       // float kinds: a negative-zero code becomes +0
  bool integer_before_cast = false;  // float kinds: round x / e to an integer, then to the grid
  bool reversed_packing = false;     // packed stores: fields filled from the high bits down
  bool two_level_product_f32 = false;  // effective scale f32(g * s_j) instead of exact g * s_j
  bool zero_scale_substitution = false;  // a zero effective scale divides/multiplies as f32(0.1)
  bool burn_calibration = false;     // Burn's f32 calibration steps (profile burn)
  bool zero_quotient_positive = false;  // a zero f32 quotient gives the +0 code (onnx e2m1)

  friend bool operator==(const Variant&, const Variant&) = default;
};

// The variant that is the profile itself (exact: every field at its default; burn: ties away,
// f32 quotient, f32 two-level product, zero-scale substitution, Burn's calibration; onnx: f32
// quotient, ties to even, and for e2m1 a zero quotient gives +0).
Variant base_variant(Profile p, Value value);

// One named single deviation from a profile's base.
struct Deviation {
  std::string_view name;         // stable kebab-case name, e.g. "ties-away"
  std::string_view description;  // one sentence for people
  Variant variant;
};

// The deviations worth trying for profile p: each is base_variant(p) with one rule changed
// (rules already on in the base are offered switched off).
std::vector<Deviation> deviations(Profile p, Value value);

// Quantizes under variant v. Precondition: reference::quantize accepted the same request (the
// checks are not repeated). Profile p only selects error-free behaviour of the base (none today).
Result<QuantizedTensor> quantize(const Variant& v, const Scheme& scheme, Shape shape, std::span<const float> x,
                                 const QuantizeOptions& options);

// Dequantizes q's codes under variant v's effective-scale rules; codes a scheme cannot hold
// (produced by saturation none) dequantize to NaN or inf as their bit patterns say.
Result<std::vector<float>> dequantize(const Variant& v, const QuantizedTensor& q);

// The serialized bytes of q with v's packing order (reference::encode, with the fields of each
// packed storage element reversed when v.reversed_packing). Invalid codes are packed as raw bits.
Result<std::vector<std::uint8_t>> encode(const Variant& v, const QuantizedTensor& q);

// Reverses the order of the code fields inside every storage element of the value section of
// `bytes` (a no-op for native stores). Precondition: bytes.size() == make_layout(...).total_bytes.
void reverse_packing(const Scheme& s, const Layout& l, std::span<std::uint8_t> bytes);

}  // namespace qscheme::oracle
