// The fast engine: Google Highway SIMD kernels with dynamic dispatch, bit-identical to the
// reference engine (reference/reference.hpp) for every input, including the error code of every
// rejected input. docs/SEMANTICS-fast.md explains why the SIMD arithmetic is exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "scheme/byte_format.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/rules.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast {

// Quantizes row-major f32 `x` of `shape` under `scheme`, under options.rules when set (a point
// fast/points.hpp runs, else unsupported-profile). Errors, checked in this order: every
// validate() error; size-mismatch (x.size() != element count; given scales of the wrong count or
// a global present/absent against the scheme's levels); invalid-scale (index = scale, the
// global's index is the block-scale count); unsupported-profile (burn + absmean over two levels,
// when calibrating); non-finite-input (index = first bad element); unsupported-profile (burn:
// 2*alpha or g*s overflows f32; index = block); zero-scale-nonzero-input (exact, index = block).
Result<QuantizedTensor> quantize(const Scheme& scheme, Shape shape, std::span<const float> x,
                                 const QuantizeOptions& options = {});

// Dequantizes under q.profile. Errors: validate() errors, size-mismatch (codes, scale or global
// count), corrupt-bytes (first a scale, then the global, then a code bit pattern the scheme
// cannot hold; index = scale (global: block count) or element).
Result<std::vector<float>> dequantize(const QuantizedTensor& q);

// Serialized bytes in Burn's layout: [values][block or tensor scales][f32 global], little-endian.
// Errors as dequantize.
Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q);

// Inverse of encode. Errors: validate() errors, size-mismatch (bytes.size() != total_bytes),
// corrupt-bytes, checked in the reference's order: a non-zero padding field (index = byte offset
// of its storage element), a native sub-byte code that is no sign extension, a code the kind
// cannot produce (index = element), a scale (index = scale), the global (no index).
Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               Profile profile = Profile::exact);
// The same under a point of the rule space (a recipe's): the tensor carries the point, as
// reference::decode gives it. unsupported-profile for a point whose stored tensors the fast
// engine does not read yet.
Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               const Rules& rules);

// The profile under which the fast engine reads tensors stored under the point `rules` (a
// recipe's): their checks, dequantize and decode there equal the point's own. unsupported-profile
// for a point whose stored tensors it does not read yet, and for one whose codes or scales no
// profile holds (ggml's: a full-range code, a negative or infinite scale) or whose two levels
// multiply in f32 (nvidia-nvfp4's product f32(s g)), which the overloads taking the point read. (fast::quantize takes a recipe as recipe_options(recipe, options),
// scheme/recipes.hpp.)
Result<Profile> reading_profile(const Rules& rules);

// The scales q stores, as given scales (QuantizeOptions::scales): quantizing under them stores
// the same scale patterns again. Static calibration: calibrate once on representative data, then
// quantize each later tensor over these. Each value is exact (every stored scale is an f32
// value). Errors: validate() errors, size-mismatch (a scale, global or zero-point count that is
// not the layout's), corrupt-bytes (a pattern no stored scale can have, a negative one such as
// ggml q4_0's signed scales included, as no given scale may be negative; index = scale, the
// global's is the block-scale count; a zero point outside the kind's range).
Result<GivenScales> given_scales(const QuantizedTensor& q);

// ---- byte formats (scheme/byte_format.hpp): Burn's layout, or ggml's blocks -------------------
//
// The ggml format holds block_q8_0 and block_q4_0 (schemes q8s, q8f, q4s, q4f with block[32]=f16,
// an innermost dim that 32 divides); each call below is reference::encode / decode's under the
// same format and point, errors included (docs/SEMANTICS.md section 12).

// q's bytes in `format`. Errors: q's point not read (unsupported-profile), ggml_layout's, then
// dequantize's checks of q.
Result<std::vector<std::uint8_t>> encode(const QuantizedTensor& q, ByteFormat format);
// The tensor bytes in `format` hold under the point `rules` (a profile's point as that profile).
// ggml: the point not read, ggml_layout's errors, size-mismatch, then block by block its scale
// (corrupt-bytes, index = block) and its codes (index = element).
Result<QuantizedTensor> decode(const Scheme& scheme, Shape shape, std::span<const std::uint8_t> bytes,
                               const Rules& rules, ByteFormat format);

// ---- lower-level entry points: caller-owned buffers, no vectors --------------------------------

// Quantizes into caller-owned arrays: codes[layout.elements], scale_bits[layout.scales],
// *global_bits (two-level only; may be null otherwise), zero_points[layout.zero_points] (affine
// mode only; null for an affine scheme is invalid-argument). Same errors as quantize(); on error
// the outputs are unspecified. n = number of floats at x.
Status quantize_into(const Scheme& scheme, Shape shape, const float* x, std::size_t n,
                     const QuantizeOptions& options, std::int32_t* codes, std::uint32_t* scale_bits,
                     std::uint32_t* global_bits, std::int32_t* zero_points = nullptr);
// Dequantizes into out[n]; n must equal the element count (else size-mismatch).
Status dequantize_into(const QuantizedTensor& q, float* out, std::size_t n);

// ---- fused bytes path: f32 <-> Burn's serialized bytes ----------------------------------------

// What quantize_to_bytes / dequantize_from_bytes may leave in `out` when the *data* is bad
// (non-finite x, a corrupt code or padding field found mid-way). Errors found before the first
// write (validation, sizes, scales, a two-level or per-tensor scheme's non-finite x) always leave
// out untouched.
enum class OutputPolicy : std::uint8_t {
  // The whole input is checked before the first byte of out is written: every error leaves out
  // untouched. Costs one extra read of the input for one-level block schemes.
  untouched_on_error,
  // One pass over the input, checking each unit just before writing it: a data error is
  // reported as usual, but out then holds the units written before it (unspecified contents).
  single_pass,
};

// Quantizes x straight into serialized bytes: out[0..out_size) with out_size == layout
// total_bytes (else size-mismatch). Bytes and errors equal encode(quantize(...)).
// The fused SIMD path (docs/SEMANTICS-fast.md section 6) takes the exact profile with minmax
// calibration or given scales, per-tensor scales or blocks along the last axis whose extent is a
// multiple of the target's f32 lanes, one or two levels, any store, the MX recipes' and
// microxcaling's points (fast/points.hpp) on such blocks, nvidia-nvfp4's calibrated, and the
// f32-step recipes on them: the onnx profile and torch-qint8 with their given scales, ggml's
// recipes calibrated; every other case runs quantize + encode.
Status quantize_to_bytes(const Scheme& scheme, Shape shape, const float* x, std::size_t n,
                         const QuantizeOptions& options, std::uint8_t* out, std::size_t out_size,
                         OutputPolicy policy = OutputPolicy::untouched_on_error);

// Dequantizes serialized bytes straight into out[0..n), n == element count. Values and errors
// equal dequantize(decode(...)). Fused for the exact and onnx profiles on the schemes above.
Status dequantize_from_bytes(const Scheme& scheme, Shape shape, const std::uint8_t* bytes, std::size_t len,
                             Profile profile, float* out, std::size_t n,
                             OutputPolicy policy = OutputPolicy::untouched_on_error);

// quantize_to_bytes in `format`: ggml's blocks fused for every point the units stage takes on
// them (the profiles, ggml's recipes), out_size == ggml_layout's total_bytes (size-mismatch
// first, when there is a ggml layout). Bytes and errors equal encode(quantize(...), format).
Status quantize_to_bytes(const Scheme& scheme, Shape shape, const float* x, std::size_t n,
                         const QuantizeOptions& options, ByteFormat format, std::uint8_t* out, std::size_t out_size,
                         OutputPolicy policy = OutputPolicy::untouched_on_error);

// dequantize_from_bytes under a point of the rule space, in `format`. Values and errors equal
// dequantize(decode(scheme, shape, bytes, rules, format)), after the point's own check
// (unsupported-profile where the fast engine does not read it) and n == element count. ggml's
// blocks are fused (kernels::dequant_ggml) under every point but burn's.
Status dequantize_from_bytes(const Scheme& scheme, Shape shape, const std::uint8_t* bytes, std::size_t len,
                             const Rules& rules, ByteFormat format, float* out, std::size_t n,
                             OutputPolicy policy = OutputPolicy::untouched_on_error);

// ---- threads -----------------------------------------------------------------------------------

// Most threads one call is split over. The kernels stream memory, which a few threads per memory
// channel saturate, so more threads only add hand-offs; the bound keeps what one call may claim
// (threads, each with its stack) finite whatever number a caller passes.
inline constexpr unsigned kMaxThreads = 256;

// Threads each quantize/dequantize/encode/decode call is split over, the calling thread included
// (1 = the calling thread alone, the default; 0 = std::thread::hardware_concurrency(), at most
// kMaxThreads). Above kMaxThreads: invalid-argument naming the range, and the count stays as it
// was. The output never depends on it: work is split by blocks and rows, each element computed
// the same way. Process-wide. The other threads come from a pool kept across calls
// (worker_pool.hpp); when the system refuses to start one, the call runs on the threads it has.
Status set_threads(unsigned n);
unsigned threads();

// ---- memory ------------------------------------------------------------------------------------

// Each thread that runs a two-pass quantize_to_bytes or a dequantize keeps its largest
// whole-tensor scratch (at most one mapping: 1/16 of its largest f32 input for nvfp4, 1/32 for
// q8_0) so that its next call does not fault it in again (docs/PERFORMANCE.md, "First calls"),
// and every thread that runs the units stages its block of per-unit scratch (about 40 KiB), so
// that a call allocates none. This gives the calling thread's back to the system; both are also
// freed when the thread exits.
void release_scratch() noexcept;

// ---- a process's first call --------------------------------------------------------------------

// A process's first call runs the engine's code and touches its tables for the first time, which
// costs far more than the work of a small call (64K elements: 200-330 us against 6-12 us later on
// the machine of docs/PERFORMANCE.md, "First calls"). warm_up() pays that ahead of time: on the
// calling thread and the current target (call it after set_target), it quantizes and dequantizes a
// small crafted tensor whose blocks reach the kernels' rare branches (ties and near-ties after
// scaling, subnormals, zero and constant blocks) through the byte pipeline, under every recipe and
// profile, for the presets and the common per-tensor, per-row and per-group int8/uint8 schemes,
// calibrated and over given scales, in both output policies. It takes a few milliseconds and
// changes no setting and no output of a later call. It warms the calling thread only: the pool's
// workers (set_threads) start, and take their own scratch, in the first call split over them.
// The library never calls it itself: at load time every process that links it would pay.
void warm_up() noexcept;

// ---- Highway targets ---------------------------------------------------------------------------

// Target the kernels run on now, e.g. "AVX3".
std::string current_target();
// Targets compiled into this build that this CPU supports, best first.
std::vector<std::string> available_targets();
// Forces a target by name (as listed by available_targets()); "" or "auto" restores automatic
// choice. The environment variable QSCHEME_TARGET=<name> does the same at first use. Returns
// false and changes nothing for an unknown or unsupported name. Process-wide; call it while no
// other thread runs qscheme::fast.
bool set_target(const std::string& name);
// invalid-argument when QSCHEME_TARGET names a target that available_targets() does not list
// (a typo, or one this build or CPU lacks): the kernels then run on the automatic choice, not on
// the target asked for, and a caller that forces targets to test them should stop here.
Status target_env_status();

}  // namespace qscheme::fast
