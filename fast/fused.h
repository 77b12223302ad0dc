// Dispatched SIMD kernels of the fused bytes path (fast/quantize_bytes.cc, dequantize_bytes.cc):
// f32 straight to Burn's serialized bytes and back, one L1-sized chunk of a row at a time, with
// one-byte codes in between instead of i32. Pointer + length entry points, caller-owned output,
// no validation (preconditions per kernel). Exactness arguments: docs/SEMANTICS-fast.md section 6.
// Their scalar twins are in fused_scalar.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace qscheme::fast::kernels {

// How block scales follow from a block's max |x| under the exact profile:
//   c = smallest value of the scale grid >= 2a / wg  (saturating at the grid's max)
//   e = c * g  (the effective scale, exact in f64)
struct ScaleSpec {
  double wg = 1;      // W (one level) or W * g (two levels); W * g is exact in f64
  double g = 1;       // the global scale (two levels) or 1
  int m = 23;         // grid: mantissa bits,
  int emin = -126;    //       smallest normal exponent,
  double max = 0;     //       largest value,
  bool has_zero = true;  //    0 is on the grid (false: ue8m0, whose least value is 2^-127)
  bool ue8m0 = false;    //    bit pattern = biased exponent (else IEEE-like: (E - emin) << m | n)
  // Whether ScalesFromMax counts the tight blocks (ScaleFacts::tight, below; 0 when false). Only
  // the asymmetric integer kinds need them; counting is a fifth of the kernel for 16-wide blocks.
  bool count_tight = true;
};

// For k < nb, from a = f32 with bits amax[k] (finite, >= 0): bits[k] = stored bit pattern of c,
// e[k] = c * g, inv[k] = InvF32(e[k]).
// The reciprocal rule of ScalesFromMax for one effective scale e >= 0 (f32(1 / f32(e)); 0 for
// e == 0; NaN outside [2^-100, 2^100], where codes divide exactly instead).
inline float InvF32(double e) {
  if (e == 0) return 0.0f;
  if (!(e >= 0x1p-100 && e <= 0x1p100)) return std::numeric_limits<float>::quiet_NaN();
  // The f32 quotient of the f32-rounded scale: within 2^-23 + 2^-46 of 1/e (relative), which
  // the near-boundary margins of the f32-lane codes allow for (docs/SEMANTICS-fast.md section 6).
  return 1.0f / static_cast<float>(e);
}

// What ScalesFromMax found besides the scales, for the codes that follow.
struct ScaleFacts {
  bool any_far = false;  // some inv[k] is NaN
  // How many blocks are tight: a > 0 and W e <= 2a (W = wg / g; both sides exact, as W has at
  // most 17 significant bits and e at most 35). Such a block's largest |x| may divide to W/2 or
  // beyond, where an asymmetric integer kind needs its lowest code (lowest_code.hpp).
  std::size_t tight = 0;
  // How many of them have W e < 2a: only a scale saturated at the grid's max gives that.
  std::size_t below = 0;
};
// tight (optional): tight[k] = 1 for a tight block k, else 0.
// lowest (optional): lowest[k] = the bits of -a when W e == 2a and a > 0 (the one x of the block
// that divides to -W/2), else 0xFFFFFFFF: the patterns kernels::QuantizeRow puts lo back by.
ScaleFacts ScalesFromMax(const std::uint32_t* amax, std::size_t nb, const ScaleSpec& s, std::uint32_t* bits, double* e,
                         float* inv, std::uint32_t* tight = nullptr, std::uint32_t* lowest = nullptr);

// amax[k] = bit pattern of max |x| over block k of x[0..len) (blocks of bw, the last one possibly
// partial), k < ceil(len / bw); >= 0x7F800000 when the block holds a NaN or infinity. Returns the
// largest amax[k]. Precondition: lanes divide bw.
std::uint32_t BlockMaxAbsBits(const float* x, std::size_t len, std::size_t bw, std::uint32_t* amax);
// The same, prefetching as suits one call over many rows of input not in cache (a prepass over a
// whole tensor) rather than one unit's calibration (docs/PERFORMANCE.md, "Prefetching").
std::uint32_t PrepassBlockMaxAbsBits(const float* x, std::size_t len, std::size_t bw, std::uint32_t* amax);

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

// Exact-profile codes of x[0..len): codes[i] = x[i] / e(i) rounded as QuantizeExactInt/Float
// (two's complement byte for integers, the bit pattern for minifloats). Element i lies in block
// (start + i) / bw - start / bw of inv/e (bw == 0: one scale, inv[0]/e[0], for all).
// Preconditions: lanes divide bw and start (see FusedLanes), x finite, inv/e from ScalesFromMax,
// any_far: whether some inv of these blocks is NaN (ScalesFromMax's result).
// nibbles (optional, 4-bit kinds, len even): the codes two per byte instead, low nibble first
// (PackRow's bytes for bits 4 when nq divides len), written as they are made; codes is then
// scratch with unspecified contents. Packing a unit's codes afterwards cost quantize q4_0 about a
// tenth of its time at 64 MiB.
void QuantizeCodes(const float* x, std::size_t len, std::size_t start, std::size_t bw, const float* inv,
                   const double* e, bool any_far, const CodeSpec& c, std::uint8_t* codes,
                   std::uint8_t* nibbles = nullptr);

// Horizontal packing of one row chunk: out gets ceil(len / nq) storage elements of ebytes bytes;
// field i of element j (little-endian, i * bits up) = codes[j * nq + i] & mask(bits), zero past
// len. nq * bits == ebytes * 8.
void PackRow(const std::uint8_t* codes, std::size_t len, int bits, std::size_t nq, int ebytes, std::uint8_t* out);
// Vertical packing: out gets len storage elements; field i of element j = rows[i][j] & mask(bits)
// for i < count, zero for count <= i < nq. ebytes is 1 or 4.
void PackColumns(const std::uint8_t* const* rows, std::size_t count, std::size_t len, int bits, int ebytes,
                 std::uint8_t* out);

// Inverses: raw fields (0 .. 2^bits - 1) into codes. UnpackRow returns false when a field past
// len (padding) is not zero; UnpackColumns when a field i >= count of some element is not zero.
bool UnpackRow(const std::uint8_t* in, std::size_t len, int bits, std::size_t nq, int ebytes, std::uint8_t* codes);
bool UnpackColumns(const std::uint8_t* in, std::size_t count, std::size_t len, int bits, int ebytes,
                   std::uint8_t* const* rows);

// First i < len whose raw field is no code of the kind (integers outside [lo, hi] after sign
// extension from `bits`; minifloat patterns above hi = 2^value_bits - 1, or NaN/inf); len if none.
std::size_t FirstBadCode(const std::uint8_t* codes, std::size_t len, const CodeSpec& c);

// Stored scales (nb of them, sbytes each, little-endian) of dtype dt (0 f32, 1 f16, 2 bf16,
// 3 ue8m0, 4 ue4m3, as ScaleDtype) to f32 values. Returns the first index whose pattern no stored
// scale can have (see detail::scale_from_bits), or nb; value[k] is meaningless from there on.
std::size_t ScalesFromBytes(const std::uint8_t* in, std::size_t nb, int dt, float* value);
// The same from scale bit patterns held in u32 (QuantizedTensor::scale_bits).
std::size_t ScaleValuesFromBits(const std::uint32_t* bits, std::size_t nb, int dt, float* value);

// Exact dequantize of raw fields: out[i] = f32_rne(value(codes[i]) * e(i)), blocks as in
// QuantizeCodes, as f32(f32(value * s) * g): s the stored scale values, g the global (1 for one
// level, where value * s is the one rounding). For two levels value * s must be exact in f32
// (TwoLevelInF32); then the multiplication by g is the one rounding. Preconditions: valid codes;
// lanes divide bw and start.
void DequantCodes(const std::uint8_t* codes, std::size_t len, std::size_t start, std::size_t bw, const float* s,
                  float g, const CodeSpec& c, float* out);
// Whether value * s is exact in f32 for every value of the kind and every block scale of dtype sd
// (ScaleDtype as int): f16 or ue4m3 scales (at most 11 significant bits, in [2^-24, 65504]) times
// any value kind (at most 8 bits, magnitudes in [2^-16, 57344]) stay within 19 bits and
// [2^-40, 2^32], normal f32 numbers. validate() admits two levels only with these block dtypes
// (two-level-block-dtype).
inline bool TwoLevelInF32(int sd) { return sd == 1 || sd == 4; }

// f32 lanes of the fused kernels on the current target (bw and chunk starts must be multiples).
std::size_t FusedLanes();

// Copies n bytes to dst with non-temporal stores (from dst's first vector-aligned byte; the
// unaligned head and tail by plain stores), for outputs too large to stay in this core's caches:
// a plain store first reads the line it writes (read for ownership), which a streaming store
// skips. The stores are weakly ordered: the writing thread calls hwy::FlushStream() before the
// output is handed over. (`qscheme bench` measures the effect: docs/PERFORMANCE.md.)
void StreamCopy(std::uint8_t* dst, const std::uint8_t* src, std::size_t n);
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
// they are visible before the thread reports its chunk done (worker_pool.hpp).
struct StreamFence {
  bool on;
  ~StreamFence();
};

// The per-unit kernels above for the target chosen now, looked up once by a driver (quantize_to_bytes,
// dequantize_from_bytes) instead of once per 2048-column unit: each lookup applies QSCHEME_TARGET
// and asks libhwy for the chosen target, which together cost about 4% of quantize q8_0 in L2.
// Fetch a fresh table per driver call: tests change the target between calls.
struct FusedKernels {
  std::uint32_t (*block_max_abs_bits)(const float*, std::size_t, std::size_t, std::uint32_t*);
  ScaleFacts (*scales_from_max)(const std::uint32_t*, std::size_t, const ScaleSpec&, std::uint32_t*, double*, float*,
                                std::uint32_t*, std::uint32_t*);
  void (*quantize_codes)(const float*, std::size_t, std::size_t, std::size_t, const float*, const double*, bool,
                         const CodeSpec&, std::uint8_t*, std::uint8_t*);
  void (*pack_row)(const std::uint8_t*, std::size_t, int, std::size_t, int, std::uint8_t*);
  void (*pack_columns)(const std::uint8_t* const*, std::size_t, std::size_t, int, int, std::uint8_t*);
  bool (*unpack_row)(const std::uint8_t*, std::size_t, int, std::size_t, int, std::uint8_t*);
  bool (*unpack_columns)(const std::uint8_t*, std::size_t, std::size_t, int, int, std::uint8_t* const*);
  std::size_t (*first_bad_code)(const std::uint8_t*, std::size_t, const CodeSpec&);
  void (*dequant_codes)(const std::uint8_t*, std::size_t, std::size_t, std::size_t, const float*, float, const CodeSpec&,
                        float*);
  void (*stream_copy)(std::uint8_t*, const std::uint8_t*, std::size_t);
};
FusedKernels Fused();

}  // namespace qscheme::fast::kernels
