// The engine-independent result types both engines produce and consume: a quantized tensor
// (codes and stored scales as exact bit patterns), the options that steer quantization, and
// caller-supplied scales. Both reference/ and fast/ speak these types, so their outputs can be
// compared with ==.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheme/rules.hpp"
#include "scheme/scheme.hpp"
#include "scheme/status.hpp"

namespace qscheme {

// How the arithmetic is done (docs/SEMANTICS.md).
//  exact: every step exact, one named rounding per stored quantity (the default).
//  burn:  Burn's ndarray arithmetic, f32 at every step, ties away from zero.
//  onnx:  ONNX QuantizeLinear/DequantizeLinear with zero point 0: given f32 scales used as they
//         are, x / scale divided in f32, ties to even, saturating; e2m1 drops the sign of a zero
//         quotient (the ONNX reference adds the zero point, -0 + 0 = +0). One-level f32 scales,
//         given scales only. Dequantize: f32(code * scale), as exact.
enum class Profile : std::uint8_t { exact, burn, onnx };
enum class Calibration : std::uint8_t { minmax, absmean };

// The float type dequantize writes: f32, or (ONNX DequantizeLinear with a float16 scale or
// output_dtype) f16 or bf16, which is the f32 result rounded once more (docs/SEMANTICS.md
// section 16).
enum class OutputDtype : std::uint8_t { f32, f16, bf16 };
inline constexpr OutputDtype kAllOutputDtypes[] = {OutputDtype::f32, OutputDtype::f16, OutputDtype::bf16};
std::string_view to_string(OutputDtype d);
std::optional<OutputDtype> output_dtype_from_string(std::string_view s);

// Every profile, in the order help texts and messages list them.
inline constexpr Profile kAllProfiles[] = {Profile::exact, Profile::burn, Profile::onnx};

std::string_view to_string(Profile p);
std::string_view to_string(Calibration c);
std::optional<Profile> profile_from_string(std::string_view s);
// "exact, burn or onnx": the accepted names, for help texts and messages.
std::string profile_list();
std::optional<Calibration> calibration_from_string(std::string_view s);

// Scales supplied by the caller instead of calibration (ONNX QuantizeLinear, Burn's quantize
// with qparams). `block` holds one scale per innermost-level scale of the layout (one entry for
// a per-tensor scheme), row-major over the block grid; `global` is present exactly for a
// two-level scheme. Each is rounded up to its dtype before use, and that is what is stored.
// Affine mode: `zero_points` holds one zero point per scale (in the kind's range), or is empty
// for zero points of 0 (ONNX QuantizeLinear without y_zero_point); a sym scheme takes none.
struct GivenScales {
  std::vector<float> block;
  std::optional<float> global;
  std::vector<std::int32_t> zero_points = {};
};

struct QuantizeOptions {
  Profile profile = Profile::exact;
  Calibration calibration = Calibration::minmax;
  // When set, calibration is skipped and these scales are used.
  std::optional<GivenScales> scales;
  // A two-level scheme calibrated by minmax with its tensor-wide statistic known ahead (static
  // calibration, delayed scaling, a known NVFP4 amax): the max |x| the global is computed from, by
  // the rules' own formula, in place of the tensor's. The block scales still follow each block's
  // max |x| under that global, so one pass over x suffices; a block above the given max saturates
  // (its scale at the dtype's largest value, its codes clamped). check_global_amax says which
  // points take it.
  std::optional<float> global_amax;
  // When set, this point of the rule space (scheme/rules.hpp, a recipe's rules) decides every
  // step instead of `profile`. A point that is a profile's behaves as that profile. The fast
  // engine runs the points fast/points.hpp lists; any other is unsupported-profile there.
  std::optional<Rules> rules;
};

// The point options select: options.rules, else the profile's.
Rules rules_of(const QuantizeOptions& options);

// options.global_amax against the scheme and the point r (rules_of(options)), both engines' check
// after the rules' own (validate_rules): a two-level symmetric scheme without given scales,
// calibrated by max |x| under the exact or te-nvfp4 global (Burn's takes its global from the data
// only), and a finite amax >= 0 (-0 counts as 0).
Status check_global_amax(const Scheme& s, const Rules& r, const QuantizeOptions& options);

// A quantized tensor in logical form.
struct QuantizedTensor {
  Scheme scheme;
  Profile profile = Profile::exact;
  std::vector<std::uint64_t> shape;
  // One code per element, row-major. Integer kinds: the signed value. Float kinds: the unsigned
  // bit pattern (e4m3/e5m2: 8 bits, e2m1: 4 bits, sign in the top bit).
  std::vector<std::int32_t> codes;
  // The stored innermost-level scales as bit patterns of their dtype (f32: 32 bits, f16/bf16:
  // 16 bits, ue8m0/ue4m3: 8 bits), one per block row-major over the block grid, or one for a
  // per-tensor scheme.
  std::vector<std::uint32_t> scale_bits;
  // The f32 bit pattern of the per-tensor scale of a two-level scheme.
  std::optional<std::uint32_t> global_bits;
  // Affine mode: one zero point per scale (the kind's integer, within its range); empty for sym.
  std::vector<std::int32_t> zero_points = {};
  // The point of the rule space the tensor was quantized under, when it is not a profile's
  // (then `profile` is exact and not consulted). Dequantize and encode follow it.
  std::optional<Rules> rules;

  friend bool operator==(const QuantizedTensor&, const QuantizedTensor&) = default;
};

// The point q follows: q.rules, else its profile's.
Rules rules_of(const QuantizedTensor& q);

}  // namespace qscheme
