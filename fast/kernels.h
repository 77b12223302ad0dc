// Dispatched SIMD kernels of the fast engine: pointer + length entry points, caller-owned
// output, no allocation, no validation (preconditions are stated per kernel). Each one runs the
// best compiled Highway target the CPU supports, or the one forced with set_target() /
// QSCHEME_TARGET. Their scalar twins live in scalar.h under the same names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qscheme::fast::kernels {

// Largest (bits(x[i]) & 0x7FFFFFFF) over x[0..n); 0 for n == 0. A result >= 0x7F800000 means a
// NaN or infinity is present. For finite input this is the bit pattern of max|x|.
std::uint32_t MaxAbsBits(const float* x, std::size_t n);

// For k < ceil(len / w): acc[k] = max(acc[k], MaxAbsBits(x + k*w, min(w, len - k*w))).
// Precondition: w >= 1.
void SegmentMaxAbsBits(const float* x, std::size_t len, std::size_t w, std::uint32_t* acc);
// SegmentMaxAbsBits of each of `rows` rows of L elements (x + r*L) into the same acc: the
// segments of a run of rows that share their blocks; with `groups` such runs whose first rows are
// gstride elements apart (x + gi * gstride + r * L: blocks that span two outer axes).
// Precondition: w >= 1.
void RowsSegmentMaxAbsBits(const float* x, std::size_t rows, std::size_t L, std::size_t w, std::uint32_t* acc,
                           std::size_t groups = 1, std::size_t gstride = 0);

// exact profile, integer kinds: out[i] = clamp(round_half_even(x[i] / e), lo, hi), with x/e
// decided exactly (docs/SEMANTICS-fast.md). Precondition: e > 0 finite, and e has at most 35
// significant bits; x finite.
void QuantizeExactInt(const float* x, std::size_t n, double e, int lo, int hi, std::int32_t* out);
// exact profile, minifloat kinds (fmt: 0 e4m3, 1 e5m2, 2 e2m1): out[i] = code of x[i]/e rounded
// to nearest-even on the format grid incl. subnormals, saturating, sign of x kept.
// Precondition as QuantizeExactInt.
void QuantizeExactFloat(const float* x, std::size_t n, double e, int fmt, std::int32_t* out);
// exact profile, e == 0: out[i] = zero code with x's sign (ints: 0; floats: sign bit if x < 0
// or x == -0). Precondition: sign_code is 0 (ints) or the format's sign bit.
void QuantizeZeroScale(const float* x, std::size_t n, int sign_code, std::int32_t* out);
// burn profile, integer kinds: out[i] = clamp(round_half_away(f32(x[i] / e)), lo, hi).
// Precondition: e > 0 finite.
void QuantizeBurnInt(const float* x, std::size_t n, float e, int lo, int hi, std::int32_t* out);
// burn profile, minifloats: RNE cast of f32(x[i] / e) onto the grid, saturating.
void QuantizeBurnFloat(const float* x, std::size_t n, float e, int fmt, std::int32_t* out);

// exact dequantize: out[i] = f32_rne(value(code[i]) * e). Precondition: valid codes, e >= 0
// with value*e exact in f64 (e has at most 35 significant bits).
void DequantExactInt(const std::int32_t* c, std::size_t n, double e, float* out);
void DequantExactFloat(const std::int32_t* c, std::size_t n, double e, int fmt, float* out);
// burn dequantize: out[i] = f32(e * value(code[i])).
void DequantBurnInt(const std::int32_t* c, std::size_t n, float e, float* out);
void DequantBurnFloat(const std::int32_t* c, std::size_t n, float e, int fmt, float* out);

// out[i] = low byte of c[i].
void CodesToBytes(const std::int32_t* c, std::size_t n, std::uint8_t* out);
// out[i] = int8(b[i]) if is_signed else b[i].
void BytesToCodes(const std::uint8_t* b, std::size_t n, bool is_signed, std::int32_t* out);
// out[j] = OR_{i<count} (codes[i*stride + j] & mask(bits)) << (i*bits), j < inner.
// Precondition: count*bits <= 32.
void PackWords(const std::int32_t* codes, std::size_t inner, std::size_t count, std::size_t stride, int bits,
               std::uint32_t* out);
// codes[i*stride + j] = field i of words[j], sign-extended if is_signed; i < count, j < inner.
void UnpackWords(const std::uint32_t* words, std::size_t inner, std::size_t count, std::size_t stride, int bits,
                 bool is_signed, std::int32_t* codes);
// First i with c[i] outside [lo, hi] or (nan_mask && (c[i] & nan_mask) == nan_mask); n if none.
std::size_t FirstInvalidCode(const std::int32_t* c, std::size_t n, int lo, int hi, int nan_mask);

// `rows` consecutive rows of L elements (x + r*L, out + r*L), in `groups` groups gstride elements
// apart (x + gi * gstride + r * L), each crossing the same ceil(L/bw) blocks; segment s uses ee[s]
// and ei[s] = InvF32(ee[s]) (fused.h) (modes 0 exact int, 1 exact
// float; ee[s] == 0 writes zero codes with x's sign, as QuantizeZeroScale) or eb[s] (modes 2 burn
// int, 3 burn float). Same results as the per-segment kernels.
// g: the global scale of ee[s] = s_j * g (s_j f16 or ue4m3), or 1 for one level (ee[s] f32 values);
// any other ee still gives exact codes, by a slower path.
// lowest (mode 0, an asymmetric kind's codes clamped at lo = -hi; else null): per segment s, the
// f32 bits whose code is lo - 1 (the kind's lowest code, put back in a tight block: -a, see
// fast/lowest_code.hpp), or 0xFFFFFFFF for none.
void QuantizeRow(const float* x, std::size_t L, std::size_t bw, const double* ee, const float* ei, double g,
                 const float* eb, int mode, int lo, int hi, int fmt, std::int32_t* out, std::size_t rows = 1,
                 std::size_t groups = 1, std::size_t gstride = 0, const std::uint32_t* lowest = nullptr);
// Dequantize counterpart: modes 0 exact int, 1 exact float (f64 scales ee); modes 2 int and
// 3 float: out = f32(f32(eb[s] * value) * g) -- Burn's product (g = 1), and the exact one when
// eb holds the stored scale values and g the global (1 for one level): value * eb[s] is then
// exact in f32 (docs/SEMANTICS-fast.md section 4).
void DequantRow(const std::int32_t* c, std::size_t L, std::size_t bw, const double* ee, const float* eb, float g,
                int mode, int fmt, float* out, std::size_t rows = 1, std::size_t groups = 1, std::size_t gstride = 0);

// ---- target control ----
// Applies QSCHEME_TARGET once (before the first dispatch of any kernel, fused.cc's included).
void ApplyTargetEnv();
// Name of the target the kernels dispatch to now (e.g. "AVX2").
std::string CurrentTarget();
// f32 lanes of one vector on the current target.
std::size_t LanesF32();
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

}  // namespace qscheme::fast::kernels
