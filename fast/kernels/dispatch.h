// The fast engine's SIMD kernels: one table of per-target entry points (Kernels), looked up once
// per driver call by Get(), and the argument types they share. Pointer + length entry points,
// caller-owned output, no allocation, no validation (preconditions are stated per kernel). The
// bodies live in kernels/<operation>-inl.h; each entry point has one scalar twin, in
// kernels/scalar.h (the scale round-up's in exact_scale.h, the MX exponent rules' in points.hpp),
// that the tests hold it to on every compiled target. Exactness arguments: docs/SEMANTICS-fast.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace qscheme::fast::kernels {

// ---- argument types

// How block scales follow from a block's max |x| under the exact profile:
//   c = smallest value of the scale grid >= 2a / wg  (saturating at the grid's max)
//   e = c * g  (the effective scale, exact in f64)
// Given scales take the same kernel with their values as a and wg = 2: c is the given value rounded
// up to the grid, e = c * g under the given global (quantize_units.cc).
struct ScaleSpec {
  double wg = 1;      // W (one level) or W * g (two levels), exact in f64; 2 for given scales
  double g = 1;       // the global scale (two levels) or 1
  int m = 23;         // grid: mantissa bits,
  int emin = -126;    //       smallest normal exponent,
  double max = 0;     //       largest value,
  bool has_zero = true;  //    0 is on the grid (false: ue8m0, whose least value is 2^-127)
  bool ue8m0 = false;    //    bit pattern = biased exponent (else IEEE-like: (E - emin) << m | n)
  // Whether scales_from_max counts the tight blocks (ScaleFacts::tight, below; 0 when false).
  // Only the asymmetric integer kinds need them; counting is a fifth of the kernel for 16-wide
  // blocks.
  bool count_tight = true;
};

// The reciprocal rule of scales_from_max for one effective scale e >= 0 (f32(1 / f32(e)); 0 for
// e == 0; NaN outside [2^-100, 2^100], where codes divide exactly instead).
inline float InvF32(double e) {
  if (e == 0) return 0.0f;
  if (!(e >= 0x1p-100 && e <= 0x1p100)) return std::numeric_limits<float>::quiet_NaN();
  // The f32 quotient of the f32-rounded scale: within 2^-23 + 2^-46 of 1/e (relative), which
  // the near-boundary margins of the f32-lane codes allow for (docs/SEMANTICS-fast.md section 6).
  return 1.0f / static_cast<float>(e);
}

// The ue8m0 exponent rules of the MX recipes (fast/points.hpp, docs/SEMANTICS.md section 11):
// how a block's max |x| a (f32 bits) becomes the biased exponent p of its scale 2^(p - 127).
enum class ExponentRuleKind : std::uint8_t {
  ocp_floor,     // floor(log2 a) - emax, clamped to [-127, 127]; a = 0 gives 2^-127
  torchao_ceil,  // a's f32 exponent field, +1 for any mantissa bit, - emax
  torchao_even,  // a's pattern + half a unit of the element's last mantissa bit, then as ocp_floor
                 // on the field (p = 0xFF where that carries into f32's inf exponent: an error)
  rceil,         // the least power of two >= u = f32(a * rcp_m), at least 2^-127
  log2f_floor,   // floor(f32(log2 a)) - emax: one exponent more where a's mantissa reaches
                 // log2_thresholds[a's field] (log2 rounded up onto the next integer)
};
struct ExponentSpec {
  ExponentRuleKind rule = ExponentRuleKind::ocp_floor;
  int emax = 8;                 // the exponent of the element kind's largest normal value
  std::uint32_t half_unit = 0;  // torchao_even: half of the element's last mantissa bit, in a's pattern
  float rcp_m = 1;              // rceil: f32(1 / M), M the element kind's largest magnitude
  double W = 1;                 // hi - lo of the element kind (the clamp test of ExponentFacts)
  const std::uint32_t* log2_thresholds = nullptr;  // log2f_floor: 256 mantissa thresholds (fast/log2f_thresholds.hpp)
};
// What exponent_scales found besides the scales.
struct ExponentFacts {
  bool nan_scale = false;     // some p is 0xFF (torchao_even beyond f32): the call must fail
  bool any_far = false;       // some inv[k] is NaN (e outside [2^-100, 2^100])
  bool out_of_range = false;  // some block has 2a > W e: its largest |x| may saturate
};

// The range of given scales (scale_range): the largest and the least f32 pattern read as i32,
// -0 as +0. All are valid scales (finite, >= 0) exactly when least >= 0 and top < 0x7F800000
// (a negative value's pattern is negative as i32, a NaN's or inf's at least 0x7F800000).
struct ScaleRange {
  std::int32_t top = 0, least = 0;  // both 0 for no scales
};

// What scales_from_max found besides the scales, for the codes that follow.
struct ScaleFacts {
  bool any_far = false;  // some inv[k] is NaN
  // How many blocks are tight: a > 0 and W e <= 2a (W = wg / g; both sides exact, as W has at
  // most 17 significant bits and e at most 35). Such a block's largest |x| may divide to W/2 or
  // beyond, where an asymmetric integer kind needs its lowest code (support/lowest_code.hpp).
  std::size_t tight = 0;
  // How many of them have W e < 2a: only a scale saturated at the grid's max gives that.
  std::size_t below = 0;
};

// Value kind of one-byte codes: integers in [lo, hi] (fmt < 0), or a minifloat (fmt 0 e4m3,
// 1 e5m2, 2 e2m1) whose code is its bit pattern.
struct CodeSpec {
  int lo = 0, hi = 0;
  int fmt = -1;
  int bits = 8;      // field width in the serialized bytes
  int nan_mask = 0;  // minifloats: a pattern p with (p & nan_mask) == nan_mask is NaN/inf (0: none)
  // Integers: false when the caller knows |x / e| <= hi = -lo for every element (a symmetric kind
  // with calibrated, unsaturated scales: e >= 2 max|x| / (hi - lo)), so no code needs clamping.
  bool clamp = true;
  // Whether x was just read (by the unit's calibration), so that it sits in L1 and the prefetches
  // of the code loop are for the next unit; false when the block maxima came from a prepass and x
  // is read here first.
  bool x_just_read = true;
};

// The f32 steps of one recipe's codes (the f32-step points: onnx's QuantizeLinear, torch's
// quantize_val, ggml's q8_0 and q4_0): per block one f32 operand r, per element t = f32(x / r)
// (divide) or f32(x * r) (multiply), then for integers t rounded by `tie` (even: ties to even;
// away: half away from zero; half_up_offset: trunc(f32(t + (0.5 - lo))), the offset code, which
// only upper_only takes) and saturated by `saturation`:
//   clamp: to [lo, hi] (t not NaN);
//   int64_min_then_clamp: NaN and t >= 2^63 give lo, the rest clamped;
//   x86_wrap: the x86 conversion (NaN, +-inf and values outside int32 give INT32_MIN), wrapped
//     to the low `bits` bits, sign-extended (ggml's (int8_t)roundf(t));
//   x86_full_range: the x86 conversion, then clamped to [lo, hi], which the caller sets to the
//     full two's complement range of `bits` (ggml x86's cvtps_epi32 and saturating packs);
//   upper_only: the x86 conversion of the offset code wrapped to 8 bits, then
//     min(that, hi - lo) + lo (ggml q4_0's MIN(15, (int8_t)(t + 8.5f)) - 8).
// Minifloats: t cast onto the grid of fmt by round-to-nearest-even (tie even) or microxcaling's
// floor(f32(q + 0.5)) of q = |t| on its binade's quantum (tie away), saturating, with t's sign
// (zero_plus: a zero t gives +0).
enum class StepOp : std::uint8_t { divide, multiply };
enum class StepTie : std::uint8_t { even, away, half_up_offset };
enum class StepSaturation : std::uint8_t { clamp, int64_min_then_clamp, x86_wrap, x86_full_range, upper_only };
struct StepSpec {
  StepOp op = StepOp::divide;
  StepTie tie = StepTie::even;
  StepSaturation saturation = StepSaturation::clamp;
  bool zero_plus = false;
  int lo = 0, hi = 0;
  int fmt = -1;  // -1 integers, else the minifloat (0 e4m3, 1 e5m2, 2 e2m1)
  // As CodeSpec::x_just_read: x sits in L1 (a unit just checked), so the loop prefetches the
  // units after it; else x comes cold and the loop prefetches its own lines ahead.
  bool x_just_read = false;
  int bits = 8;  // x86_wrap: the code's width
};

// The calibrated scales of the f32-step recipes (ggml's q8_0 and q4_0), per block from its
// statistic a (f32 bits: max |x|, or the signed max of block_signed_max_bits), all in f32:
//   d = f32(a / divisor)  (divisor: M, or lo for a signed max: d = m / lo, of the opposite sign);
//   the stored pattern of d in dtype dt (ScaleDtype as int: 0 f32, 1 f16, 2 bf16), rounded to
//   nearest-even with d's sign, subnormals kept, past the largest finite value to +-inf;
//   the operand of the codes: reciprocal_or_zero: d != 0 ? f32(1 / d) : 0 (ggml's id);
//   hi_over_amax: a != 0 ? f32(hi / a) : 0 (ggml x86's 127 / amax).
enum class StepOperand : std::uint8_t { reciprocal_or_zero, hi_over_amax };
struct StepScaleSpec {
  float divisor = 127;
  int dt = 1;
  StepOperand operand = StepOperand::reciprocal_or_zero;
  float hi = 127;
};

// nvidia-nvfp4's block scales (fast/te_nvfp4.hpp), per block from a (f32 bits, finite, >= 0:
// its max |x|, or a given scale), all in f32: v = min(f32(a * mult), f32max); its ue4m3 pattern,
// nearest with ties to even, saturating at 448; e = f32(value * g); the codes' multiplier
// min(f32(1 / e), f32max), f32max for e = 0.
struct TeScaleSpec {
  float mult = 1;
  float g = 1;
};

// Burn's block scales (docs/SEMANTICS.md sections 3 and 4), each step one f32 operation, per block
// from a (f32 bits): calibrated, a is max |x| and q = f32(f32(2a) / W), over a global f32(q / g);
// given, a is the given scale and q = |a| (a -0 is +0). c = q rounded up onto the grid of `grid`
// (its m, emin, max and ue8m0; saturating, ue8m0's 0 as 2^-127) is the stored scale, and the
// codes divide by f32(g * c) (c for one level), a zero one as 0.1 (Burn's valid_scale). 2a or
// g * c overflowing to inf is Burn's error (unsupported-profile), which the kernel reports.
struct BurnScaleSpec {
  ScaleSpec grid;  // the grid fields only
  float W = 254;   // the value kind's hi - lo
  float g = 1;     // the global (two levels)
  bool two = false;
  bool given = false;
};

// What dequant_ggml reads: ggml's blocks (block_q8_0: the f16 scale d, little-endian, then 32 int8
// codes; block_q4_0 (nibbles): d, then 16 bytes holding code i + 8 in byte i's low nibble and code
// i + 16 + 8 in its high nibble), the least code allowed (-127 or -7 under a kind's standard range,
// else the field's least: every code), and the scale patterns allowed: f16's finite non-negative
// ones, and the negative and infinite ones a point adds (fast/points.hpp's StoredReading).
struct GgmlSpec {
  bool nibbles = false;
  int lo = -128;
  bool signed_scales = false;
  bool inf_scales = false;
};

// Ordered keys of f32 bit patterns (the min/max kernels of affine calibration): key(b) = b ^
// ((b >> 31) & 0x7FFFFFFF) read as i32 orders finite values as the floats (-0 just below +0);
// +inf and positive NaNs have keys >= kKeyPosInf, -inf and negative NaNs keys <= kKeyNegInf, so
// the least and largest keys also find non-finite input. The same formula maps a key back.
inline std::int32_t OrderedKey(std::uint32_t bits) {
  return static_cast<std::int32_t>(bits ^ ((bits >> 31) * 0x7FFFFFFFu));
}
inline std::uint32_t BitsOfKey(std::int32_t key) {
  const auto k = static_cast<std::uint32_t>(key);
  return k ^ ((k >> 31) * 0x7FFFFFFFu);
}
inline constexpr std::int32_t kKeyPosInf = 0x7F800000;
inline constexpr std::int32_t kKeyNegInf = static_cast<std::int32_t>(0x807FFFFFu);
// The least and largest key of a range; kNoKeys for none.
struct MinMaxKeys {
  std::int32_t lo = std::numeric_limits<std::int32_t>::max();
  std::int32_t hi = std::numeric_limits<std::int32_t>::min();
  bool finite() const { return lo > kKeyNegInf && hi < kKeyPosInf; }
};
inline constexpr MinMaxKeys kNoKeys{};

// Integer codes with a zero point, q = clamp(round(t) + z, lo, hi) (affine mode; the extension
// kinds' sym codes with z = 0), t by `op`:
//   exact:    t = x / e exactly; r = InvF32(e) per block, e (f64, at most 35 significant bits)
//   divide:   t = f32(x / r), ties to even, or away from zero (`away`: burn); r > 0 finite
//   multiply: t = f32(x * r), ties to even, NaN and |t| >= 2^63 give lo whatever z (torch)
enum class AffineOp : std::uint8_t { exact, divide, multiply };
struct AffineSpec {
  AffineOp op = AffineOp::exact;
  bool away = false;
  int lo = 0, hi = 0;  // the kind's codes
  // As CodeSpec::x_just_read: x sits in L1 (a unit just calibrated it), so the loop prefetches
  // what follows it; else x comes cold and the loop prefetches its own lines ahead.
  bool x_just_read = false;
};

// Whether value * s is exact in f32 for every value of the kind and every block scale of dtype sd
// (ScaleDtype as int): f16 or ue4m3 scales (at most 11 significant bits, in [2^-24, 65504]) times
// any value kind (at most 8 bits, magnitudes in [2^-16, 57344]) stay within 19 bits and
// [2^-40, 2^32], normal f32 numbers. validate() admits two levels only with these block dtypes
// (two-level-block-dtype).
inline bool TwoLevelInF32(int sd) { return sd == 1 || sd == 4; }

// ---- the table

// Every entry point, for the target chosen now. The members are grouped by operation, in the
// order of the -inl.h files that hold their bodies.
struct Kernels {
  // -- maxabs-inl.h: block maxima
  // Largest (bits(x[i]) & 0x7FFFFFFF) over x[0..n); 0 for n == 0. A result >= 0x7F800000 means a
  // NaN or infinity is present. For finite input this is the bit pattern of max|x|.
  std::uint32_t (*max_abs_bits)(const float* x, std::size_t n);
  // For k < ceil(len / w): acc[k] = max(acc[k], max_abs_bits(x + k*w, min(w, len - k*w))).
  // Precondition: w >= 1.
  void (*segment_max_abs_bits)(const float* x, std::size_t len, std::size_t w, std::uint32_t* acc);
  // segment_max_abs_bits of each of `rows` rows of L elements (x + r*L) into the same acc: the
  // segments of a run of rows that share their blocks; with `groups` such runs whose first rows
  // are gstride elements apart (x + gi * gstride + r * L: blocks that span two outer axes).
  // Precondition: w >= 1.
  void (*rows_segment_max_abs_bits)(const float* x, std::size_t rows, std::size_t L, std::size_t w,
                                    std::uint32_t* acc, std::size_t groups, std::size_t gstride);
  // amax[k] = bit pattern of max |x| over block k of x[0..len) (blocks of bw, the last one
  // possibly partial), k < ceil(len / bw); >= 0x7F800000 when the block holds a NaN or infinity.
  // Returns the largest amax[k]. Precondition: lanes divide bw.
  std::uint32_t (*block_max_abs_bits)(const float* x, std::size_t len, std::size_t bw, std::uint32_t* amax);
  // The signed maximum of each block (ggml q4_0's statistic): m[k] = the f32 pattern of the first
  // element, in order, of largest |x| in block k of x[0..len) (blocks of bw, the last one possibly
  // partial), patterns of |x| compared strictly from +0, so that a block of zeros of either sign
  // gives +0. Returns the largest |x| pattern (>= 0x7F800000: a NaN or infinity is present, whose
  // patterns compare as the others do). Precondition: lanes divide bw.
  std::uint32_t (*block_signed_max_bits)(const float* x, std::size_t len, std::size_t bw, std::uint32_t* m);
  // The same, prefetching as suits one call over many rows of input not in cache (a prepass over
  // a whole tensor) rather than one unit's calibration (docs/PERFORMANCE.md, "Prefetching").
  std::uint32_t (*prepass_block_max_abs_bits)(const float* x, std::size_t len, std::size_t bw, std::uint32_t* amax);
  // ScaleRange of s[0..n): one pass over a caller's given scales (nvfp4 has one per 16 elements).
  ScaleRange (*scale_range)(const float* s, std::size_t n);

  // -- scales-inl.h: scales
  // For k < nb, from a = |f32 with bits amax[k]| (finite; the sign bit is ignored, so that given
  // scales are read as they are, -0 as +0): bits[k] = stored bit pattern of c,
  // e[k] = c * g, inv[k] = InvF32(e[k]).
  // tight (optional): tight[k] = 1 for a tight block k, else 0.
  // lowest (optional): lowest[k] = the bits of -a when W e == 2a and a > 0 (the one x of the
  // block that divides to -W/2), else 0xFFFFFFFF: the patterns quantize_row puts lo back by.
  ScaleFacts (*scales_from_max)(const std::uint32_t* amax, std::size_t nb, const ScaleSpec& s, std::uint32_t* bits,
                                double* e, float* inv, std::uint32_t* tight, std::uint32_t* lowest);
  // Whether 2a <= W e[k] for every k < nb, a the f32 with bits amax[k] (finite, >= 0): no element
  // of those blocks divides past W/2 (then symmetric integers and e2m1 need no clamp). Both sides
  // are exact in f64 when W has at most 17 significant bits and each e at most 35. Scalar twin:
  // scalar::blocks_within.
  bool (*blocks_within)(const std::uint32_t* amax, const double* e, std::size_t nb, double W);
  // For k < nb, from a = amax[k] (finite, >= 0): bits[k] = p by rule s.rule, e[k] = 2^(p - 127),
  // inv[k] = InvF32(e[k]) (NaN outside [2^-100, 2^100]). Scalar twin: detail::ExponentRule
  // (fast/points.hpp) and InvF32.
  ExponentFacts (*exponent_scales)(const std::uint32_t* amax, std::size_t nb, const ExponentSpec& s,
                                   std::uint32_t* bits, double* e, float* inv);
  // Stored scales (nb of them, sbytes each, little-endian) of dtype dt (0 f32, 1 f16, 2 bf16,
  // 3 ue8m0, 4 ue4m3, as ScaleDtype) to f32 values. Returns the first index whose pattern no stored
  // scale can have (see detail::scale_from_bits), or nb; value[k] is meaningless from there on.
  std::size_t (*scales_from_bytes)(const std::uint8_t* in, std::size_t nb, int dt, float* value);
  // The same from scale bit patterns held in u32 (QuantizedTensor::scale_bits).
  std::size_t (*scale_values_from_bits)(const std::uint32_t* bits, std::size_t nb, int dt, float* value);
  // StepScaleSpec's steps for k < nb: bits[k] the stored pattern, operand[k] the codes' operand,
  // from stat[k] (finite). Scalar twin: scalar::step_scale.
  void (*step_scales)(const std::uint32_t* stat, std::size_t nb, const StepScaleSpec& s, std::uint32_t* bits,
                      float* operand);
  // TeScaleSpec's steps for k < nb: bits[k] the ue4m3 pattern, r[k] the codes' multiplier, from
  // a[k]. Returns the first k whose e = f32(value * g) is infinite (a given global's), else nb.
  // Scalar twin: scalar::te_scale.
  std::size_t (*te_scales)(const std::uint32_t* a, std::size_t nb, const TeScaleSpec& s, std::uint32_t* bits,
                           float* r);
  // BurnScaleSpec's steps for k < nb: bits[k] the stored pattern, divisor[k] the codes' f32
  // divisor, from a[k] (finite; given: any sign). Returns true when some block overflows (2a or
  // g * c), whose entries are then meaningless. Scalar twin: detail::burn_block_scale
  // (fast/scales.hpp).
  bool (*burn_scales)(const std::uint32_t* a, std::size_t nb, const BurnScaleSpec& s, std::uint32_t* bits,
                      float* divisor);

  // -- quantize-inl.h: codes, one segment under one scale (i32 codes)
  // exact profile, integer kinds: out[i] = clamp(round_half_even(x[i] / e), lo, hi), with x/e
  // decided exactly (docs/SEMANTICS-fast.md). Precondition: e > 0 finite, and e has at most 35
  // significant bits; x finite.
  void (*quantize_exact_int)(const float* x, std::size_t n, double e, int lo, int hi, std::int32_t* out);
  // exact profile, minifloat kinds (fmt: 0 e4m3, 1 e5m2, 2 e2m1): out[i] = code of x[i]/e rounded
  // to nearest-even on the format grid incl. subnormals, saturating, sign of x kept.
  // Precondition as quantize_exact_int.
  void (*quantize_exact_float)(const float* x, std::size_t n, double e, int fmt, std::int32_t* out);
  // exact profile, e == 0: out[i] = zero code with x's sign (ints: 0; floats: sign bit if x < 0
  // or x == -0). Precondition: sign_code is 0 (ints) or the format's sign bit.
  void (*quantize_zero_scale)(const float* x, std::size_t n, int sign_code, std::int32_t* out);
  // burn profile, integer kinds: out[i] = clamp(round_half_away(f32(x[i] / e)), lo, hi).
  // Precondition: e > 0 finite.
  void (*quantize_burn_int)(const float* x, std::size_t n, float e, int lo, int hi, std::int32_t* out);
  // burn profile, minifloats: RNE cast of f32(x[i] / e) onto the grid, saturating.
  void (*quantize_burn_float)(const float* x, std::size_t n, float e, int fmt, std::int32_t* out);
  // -- quantize-inl.h: codes of whole runs of rows (i32 codes)
  // `rows` consecutive rows of L elements (x + r*L, out + r*L), in `groups` groups gstride
  // elements apart (x + gi * gstride + r * L), each crossing the same ceil(L/bw) blocks; segment s
  // uses ee[s] and ei[s] = InvF32(ee[s]) (modes 0 exact int, 1 exact float; ee[s] == 0 writes zero
  // codes with x's sign, as quantize_zero_scale) or eb[s] (modes 2 burn int, 3 burn float). Same
  // results as the per-segment kernels.
  // g: the global scale of ee[s] = s_j * g (s_j f16 or ue4m3), or 1 for one level (ee[s] f32
  // values); any other ee still gives exact codes, by a slower path.
  // lowest (mode 0, an asymmetric kind's codes clamped at lo = -hi; else null): per segment s, the
  // f32 bits whose code is lo - 1 (the kind's lowest code, put back in a tight block: -a, see
  // support/lowest_code.hpp), or 0xFFFFFFFF for none.
  void (*quantize_row)(const float* x, std::size_t L, std::size_t bw, const double* ee, const float* ei, double g,
                       const float* eb, int mode, int lo, int hi, int fmt, std::int32_t* out, std::size_t rows,
                       std::size_t groups, std::size_t gstride, const std::uint32_t* lowest);
  // -- quantize-inl.h: codes of one unit of the bytes path (one-byte codes)
  // Exact-profile codes of x[0..len): codes[i] = x[i] / e(i) rounded as quantize_exact_int/float
  // (two's complement byte for integers, the bit pattern for minifloats). Element i lies in block
  // (start + i) / bw - start / bw of inv/e (bw == 0: one scale, inv[0]/e[0], for all).
  // Preconditions: lanes divide bw and start (see lanes_f32), x finite, inv/e from
  // scales_from_max, any_far: whether some inv of these blocks is NaN (scales_from_max's result).
  // nibbles (optional, 4-bit kinds, len even): the codes two per byte instead, low nibble first
  // (pack_row's bytes for bits 4 when nq divides len), written as they are made; codes is then
  // scratch with unspecified contents. Packing a unit's codes afterwards cost quantize q4_0 about
  // a tenth of its time at 64 MiB.
  void (*quantize_codes)(const float* x, std::size_t len, std::size_t start, std::size_t bw, const float* inv,
                         const double* e, bool any_far, const CodeSpec& c, std::uint8_t* codes,
                         std::uint8_t* nibbles);

  // -- steps-inl.h: codes of the f32-step recipes
  // Codes of x[0..len) by the steps of s; element i lies in block (start + i) / bw - start / bw of
  // r (bw == 0: r[0] for all). Exactly one of out32 (i32 codes) and out8 (their low bytes) is
  // non-null. nibbles (optional, with out8, 4-bit kinds, len even): the codes two per byte
  // instead, low nibble first, as quantize_codes writes them; out8 is then scratch with
  // unspecified contents. Preconditions: no t is NaN under the clamp rule or for minifloats; the
  // tie half_up_offset exactly with saturation upper_only, and lo <= -1 there.
  void (*quantize_steps)(const float* x, std::size_t len, std::size_t start, std::size_t bw, const float* r,
                         const StepSpec& s, std::int32_t* out32, std::uint8_t* out8, std::uint8_t* nibbles);

  // ggml's blocks of x[0 .. 32 nb) by the steps of s (op multiply, an integer kind, saturation
  // x86_wrap, x86_full_range or upper_only; x86_wrap's bits 8, or at least 4 with nibbles): block
  // k's codes, as quantize_steps makes them under r[k], into out[k * B + 2 ..], B = 34 (the 32
  // codes' low bytes, block_q8_0) or, nibbles, B = 18 (code i + 8 in byte i's low nibble, code
  // i + 16 + 8 in its high one, block_q4_0); the scales' two bytes are left alone. Scalar twin:
  // scalar::quantize_steps_ggml.
  void (*quantize_steps_ggml)(const float* x, std::size_t nb, const float* r, const StepSpec& s, bool nibbles,
                              std::uint8_t* out);

  // -- pack-inl.h: storage elements
  // out[i] = low byte of c[i].
  void (*codes_to_bytes)(const std::int32_t* c, std::size_t n, std::uint8_t* out);
  // out[i] = int8(b[i]) if is_signed else b[i].
  void (*bytes_to_codes)(const std::uint8_t* b, std::size_t n, bool is_signed, std::int32_t* out);
  // out[j] = OR_{i<count} (codes[i*stride + j] & mask(bits)) << (i*bits), j < inner.
  // Precondition: count*bits <= 32.
  void (*pack_words)(const std::int32_t* codes, std::size_t inner, std::size_t count, std::size_t stride, int bits,
                     std::uint32_t* out);
  // codes[i*stride + j] = field i of words[j], sign-extended if is_signed; i < count, j < inner.
  void (*unpack_words)(const std::uint32_t* words, std::size_t inner, std::size_t count, std::size_t stride,
                       int bits, bool is_signed, std::int32_t* codes);
  // Horizontal packing of one row chunk: out gets ceil(len / nq) storage elements of ebytes bytes;
  // field i of element j (little-endian, i * bits up) = codes[j * nq + i] & mask(bits), zero past
  // len. nq * bits == ebytes * 8.
  void (*pack_row)(const std::uint8_t* codes, std::size_t len, int bits, std::size_t nq, int ebytes,
                   std::uint8_t* out);
  // Vertical packing: out gets len storage elements; field i of element j = rows[i][j] & mask(bits)
  // for i < count, zero for count <= i < nq. ebytes is 1 or 4.
  void (*pack_columns)(const std::uint8_t* const* rows, std::size_t count, std::size_t len, int bits, int ebytes,
                       std::uint8_t* out);
  // Inverses: raw fields (0 .. 2^bits - 1) into codes. unpack_row returns false when a field past
  // len (padding) is not zero; unpack_columns when a field i >= count of some element is not zero.
  bool (*unpack_row)(const std::uint8_t* in, std::size_t len, int bits, std::size_t nq, int ebytes,
                     std::uint8_t* codes);
  bool (*unpack_columns)(const std::uint8_t* in, std::size_t count, std::size_t len, int bits, int ebytes,
                         std::uint8_t* const* rows);

  // -- check-inl.h: code checks
  // First i with c[i] outside [lo, hi] or (nan_mask && (c[i] & nan_mask) == nan_mask); n if none.
  std::size_t (*first_invalid_code)(const std::int32_t* c, std::size_t n, int lo, int hi, int nan_mask);
  // First i < len whose raw field is no code of the kind (integers outside [lo, hi] after sign
  // extension from `bits`; minifloat patterns above hi = 2^value_bits - 1, or NaN/inf); len if none.
  std::size_t (*first_bad_code)(const std::uint8_t* codes, std::size_t len, const CodeSpec& c);

  // -- dequant-inl.h: values
  // exact dequantize: out[i] = f32_rne(value(code[i]) * e). Precondition: valid codes, e >= 0
  // with value*e exact in f64 (e has at most 35 significant bits).
  void (*dequant_exact_int)(const std::int32_t* c, std::size_t n, double e, float* out);
  void (*dequant_exact_float)(const std::int32_t* c, std::size_t n, double e, int fmt, float* out);
  // burn dequantize: out[i] = f32(e * value(code[i])).
  void (*dequant_burn_int)(const std::int32_t* c, std::size_t n, float e, float* out);
  void (*dequant_burn_float)(const std::int32_t* c, std::size_t n, float e, int fmt, float* out);
  // quantize_row's counterpart: modes 0 exact int, 1 exact float (f64 scales ee); modes 2 int and
  // 3 float: out = f32(f32(eb[s] * value) * g) -- Burn's product (g = 1), and the exact one when
  // eb holds the stored scale values and g the global (1 for one level): value * eb[s] is then
  // exact in f32 (docs/SEMANTICS-fast.md section 4).
  void (*dequant_row)(const std::int32_t* c, std::size_t L, std::size_t bw, const double* ee, const float* eb,
                      float g, int mode, int fmt, float* out, std::size_t rows, std::size_t groups,
                      std::size_t gstride);
  // Exact dequantize of raw fields: out[i] = f32_rne(value(codes[i]) * e(i)), blocks as in
  // quantize_codes, as f32(f32(value * s) * g): s the stored scale values, g the global (1 for
  // one level, where value * s is the one rounding). For two levels value * s must be exact in f32
  // (TwoLevelInF32); then the multiplication by g is the one rounding. Preconditions: valid codes;
  // lanes divide bw and start.
  void (*dequant_codes)(const std::uint8_t* codes, std::size_t len, std::size_t start, std::size_t bw,
                        const float* s, float g, const CodeSpec& c, float* out);
  // first_bad_code and dequant_codes of one unit in one pass, straight from its serialized bytes:
  // code i is byte i (c.bits 8) or, for c.bits 4, the low (i even) or high (i odd) nibble of byte
  // i / 2 (a row packed horizontally whose storage elements the unit fills). Returns false when
  // some field is no code of the kind (out then unspecified), else true with out[i] the value
  // dequant_codes gives code i. Preconditions: c.bits 8 or 4 (then len even); lanes divide bw and
  // start. Scalar twin: scalar::dequant_unit.
  bool (*dequant_unit)(const std::uint8_t* bytes, std::size_t len, std::size_t start, std::size_t bw, const float* s,
                       float g, const CodeSpec& c, float* out);
  // ggml's blocks in[0 .. nb) (34 or 18 bytes each, GgmlSpec) to values: out[32k + i] =
  // f32(code_i * d_k), the IEEE product of block k's i-th code and its scale (exact: 8 and 11
  // significant bits), with IEEE's signs, infinities and 0 * inf (x86's default NaN 0xFFC00000).
  // Returns false when some scale or code pattern is not allowed (out unspecified); out null:
  // the check alone. Scalar twin: scalar::dequant_ggml.
  bool (*dequant_ggml)(const std::uint8_t* in, std::size_t nb, const GgmlSpec& s, float* out);
  // Copies n bytes to dst with non-temporal stores (from dst's first vector-aligned byte; the
  // unaligned head and tail by plain stores), for outputs too large to stay in this core's caches:
  // a plain store first reads the line it writes (read for ownership), which a streaming store
  // skips. The stores are weakly ordered: the writing thread calls hwy::FlushStream() before the
  // output is handed over (StreamFence). (`qscheme bench` measures the effect: docs/PERFORMANCE.md.)
  void (*stream_copy)(std::uint8_t* dst, const std::uint8_t* src, std::size_t n);

  // -- minmax-inl.h: the calibration of affine mode (ordered keys, OrderedKey)
  // The least and largest key of x[0..n) (kNoKeys for n == 0).
  MinMaxKeys (*min_max_keys)(const float* x, std::size_t n);
  // For k < ceil(len / w): lo[k] = min(lo[k], least key of segment k of w elements), hi[k]
  // likewise with the largest (w == 1: element-wise, a row folded into per-column keys).
  // Precondition: w >= 1.
  void (*segment_min_max_keys)(const float* x, std::size_t len, std::size_t w, std::int32_t* lo, std::int32_t* hi);

  // -- affine-inl.h: codes with a zero point, and their values
  // Codes of x[0..len) by spec s (AffineSpec); element i lies in block k = (start + i) / bw -
  // start / bw of r, e and z (bw == 0: block 0 for all; z null: zero points 0; e read by the
  // exact op only). Exactly one of out32 (i32 codes) and out8 (their low bytes: a kind of at most
  // 8 bits) is non-null. Preconditions: x finite; exact: e >= 0, and e == 0 only where every x of
  // the block is 0.
  void (*quantize_affine)(const float* x, std::size_t len, std::size_t start, std::size_t bw, const float* r,
                          const double* e, const std::int32_t* z, const AffineSpec& s, std::int32_t* out32,
                          std::uint8_t* out8);
  // out[i] = f32(f32(q_i - z_k) * s_k) for g == 1 (one IEEE multiplication: one rounding), else
  // f32(q_i * s_k * g) rounded once from f64 (two levels, z null); blocks as quantize_affine. q_i
  // from c32, or from the bytes c8 (sign-extended when c8_signed) when c32 is null.
  void (*dequant_affine)(const std::int32_t* c32, const std::uint8_t* c8, bool c8_signed, std::size_t len,
                         std::size_t start, std::size_t bw, const float* s, const std::int32_t* z, double g,
                         float* out);
  // -- narrow-inl.h: dequantize's 16-bit outputs
  // out[i] = the bit pattern of y[i] rounded to nearest-even f16 (bf16 false) or bf16: subnormals
  // included, past the largest finite value infinity, a NaN the quiet NaN of its sign (f16 0x7E00,
  // bf16 0x7FC0), zeros keep their sign.
  void (*narrow_f32)(const float* y, std::size_t n, bool bf16, std::uint16_t* out);

  // -- the target
  // f32 lanes of one vector (bw and unit starts of the bytes path must be multiples).
  std::size_t (*lanes_f32)();
  // The Highway target bit of these entry points.
  std::int64_t (*target)();
};

// The table for the target chosen now (applying QSCHEME_TARGET first, once per process). A driver
// fetches it once per call rather than once per unit or row: each fetch asks libhwy for the
// chosen target. Fetch it again on each call: tests change the target between calls.
const Kernels& Get();

// ---- target control
// Applies QSCHEME_TARGET once (Get() does so too).
void ApplyTargetEnv();
// Name of the target the kernels dispatch to now (e.g. "AVX2").
std::string CurrentTarget();
// Targets compiled into this build and supported by this CPU, best first.
std::vector<std::string> AvailableTargets();
// Compiled-target bits (hwy target values) supported by this CPU, best first.
std::vector<std::int64_t> AvailableTargetBits();
// Forces a target by name ("AVX3", "AVX2", "SSE4", "SSSE3", ...); "" or "auto" restores
// detection. Returns false (and changes nothing) for a name not in AvailableTargets().
// Process-wide; not safe to call while kernels run on other threads.
bool ForceTarget(const std::string& name);
// The value of QSCHEME_TARGET when it named no target of AvailableTargets() (so the automatic
// choice stayed in use), else "".
std::string RejectedEnvTarget();

// ---- streaming stores
// Outputs of at least StreamBytes() bytes are streamed (dequantize_from_bytes; quantize's 1 B per
// element gained nothing). Off by default (kNoStreaming): whether streaming makes the q8_0
// dequantizer faster depends on the machine and varies between runs on one (docs/PERFORMANCE.md,
// "Streaming stores"), so it is the user's choice: QSCHEME_STREAM_BYTES=8388608 in the environment
// (read once, at load) or SetStreamBytes.
// `qscheme bench` times both ("dequantize q8_0" and "dequantize q8_0 streamed"). Tests set it to
// 0 to run the streaming paths on small tensors.
inline constexpr std::size_t kNoStreaming = ~std::size_t{0};
std::size_t StreamBytes();
void SetStreamBytes(std::size_t bytes);
// Fences a thread's streaming stores (hwy::FlushStream) on every way out of its work, so that
// they are visible before the thread reports its chunk done (support/worker_pool.hpp).
struct StreamFence {
  bool on;
  ~StreamFence();
};

}  // namespace qscheme::fast::kernels
