/* C API of the qscheme fast engine. Plain C: status codes, caller-owned buffers, no exception
 * crosses it, no allocation is handed to the caller. Schemes are given in qscheme's text syntax
 * (e.g. "q4s:packed-u32(0):block[32]=f16"). Tensors travel as Burn's serialized bytes:
 * [values][scales][f32 global], little-endian (qscheme_fast_bytes_size() gives the length).
 *
 * On any error the output buffers are left untouched. *err_index (when err_index is not NULL)
 * receives the element/scale index of the error, or UINT64_MAX; qscheme_last_error_message()
 * says what is wrong and how to fix it (the C++ API's Status message, word for word).
 *
 * Counts are checked before the memory they describe is touched: rank against the largest rank
 * (8) before any shape entry is read, then n, given_count and len against the layout of the
 * scheme and shape (QSCHEME_SIZE_MISMATCH naming both numbers), so a wrong count is an error, not
 * a read past the caller's array. Outputs are written up to the layout's size only, whatever
 * out_cap says beyond it. */
#ifndef QSCHEME_FAST_QSCHEME_H_
#define QSCHEME_FAST_QSCHEME_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes; the values equal qscheme::ErrorCode's and never change. */
typedef enum qscheme_status {
  QSCHEME_OK = 0,
  QSCHEME_MALFORMED_SCHEME = 1,
  QSCHEME_MALFORMED_BINARY_SCHEME = 2,
  QSCHEME_UNSUPPORTED_BINARY_VERSION = 3,
  QSCHEME_LOOKUP_TABLE_MISSING = 4,
  QSCHEME_PACKED_NATIVE_UNSUPPORTED = 5,
  QSCHEME_ZERO_BLOCK_EXTENT = 6,
  QSCHEME_TWO_LEVEL_BLOCK_DTYPE = 7,
  QSCHEME_TWO_LEVEL_GLOBAL_DTYPE = 8,
  QSCHEME_RANK_TOO_LARGE = 9,
  QSCHEME_PACKING_DIM_OUT_OF_RANGE = 10,
  QSCHEME_BLOCK_RANK_EXCEEDS_TENSOR = 11,
  QSCHEME_SHAPE_OVERFLOW = 12,
  QSCHEME_NON_FINITE_INPUT = 13,
  QSCHEME_INVALID_SCALE = 14,
  QSCHEME_ZERO_SCALE_NONZERO_INPUT = 15,
  QSCHEME_SIZE_MISMATCH = 16,       /* also: an output buffer too short (see out_len) */
  QSCHEME_CORRUPT_BYTES = 17,
  QSCHEME_UNSUPPORTED_NPY = 18,
  QSCHEME_UNSUPPORTED_PROFILE = 19,
  QSCHEME_INVALID_ARGUMENT = 20,    /* NULL pointer, unknown enum value */
  QSCHEME_IO_ERROR = 21,
  QSCHEME_INTERNAL = 22,            /* a bug (or out of memory) */
  QSCHEME_UNSUPPORTED_ENGINE = 23   /* the fast engine lacks the scheme: use the reference engine */
} qscheme_status;

typedef enum qscheme_profile { QSCHEME_PROFILE_EXACT = 0, QSCHEME_PROFILE_BURN = 1 } qscheme_profile;
typedef enum qscheme_calibration { QSCHEME_CALIBRATION_MINMAX = 0, QSCHEME_CALIBRATION_ABSMEAN = 1 } qscheme_calibration;

typedef struct qscheme_quantize_options {
  int profile;          /* qscheme_profile */
  int calibration;      /* qscheme_calibration */
  /* Given scales: NULL to calibrate. Otherwise given_count block scales (one per innermost
   * scale, row-major) and, for a two-level scheme, has_global = 1 and global_scale. */
  const float* given_scales;
  size_t given_count;
  int has_global;
  float global_scale;
  /* 0 (default): the input is checked before the first byte of out is written, so every error
   * leaves out untouched. 1: one pass over x; a data error found after part of out was written
   * (a NaN or infinity in x, a given block scale that is NaN, infinite or negative, which each
   * unit checks as it reads it, a zero given scale over a non-zero value, an overflow of Burn's
   * f32 steps) is still reported, but out is then unspecified (about twice as fast for one-level
   * block schemes: docs/PERFORMANCE.md). */
  int single_pass;
  /* A two-level scheme calibrated by minmax (nvfp4) whose max |x| is known ahead (static
   * calibration, delayed scaling): has_global_amax = 1 and global_amax, from which the global
   * scale follows by the rules' formula; the block scales still follow the data, in one pass over
   * x, and blocks above it saturate. Not with given scales or a one-level scheme
   * (QSCHEME_INVALID_ARGUMENT), nor under the burn profile (QSCHEME_UNSUPPORTED_PROFILE); NaN,
   * infinite or negative is QSCHEME_INVALID_SCALE. */
  int has_global_amax;
  float global_amax;
} qscheme_quantize_options;

/* Stable kebab-case name of a status ("corrupt-bytes"); "unknown" for other values. */
const char* qscheme_status_name(int status);

/* The message of the calling thread's last call that returned a status ("" after a success):
 * what is wrong and how to fix it. Copies at most cap - 1 bytes and a NUL into buf (buf may be
 * NULL when cap is 0) and returns the message's full length, as snprintf does. */
size_t qscheme_last_error_message(char* buf, size_t cap);

/* Number of serialized bytes of a tensor of `shape` (rank entries) under `scheme`. */
int qscheme_fast_bytes_size(const char* scheme, const uint64_t* shape, size_t rank, size_t* bytes,
                            uint64_t* err_index);
/* The same for the bytes a recipe writes (scheme NULL or "": the recipe's first): ggml's blocks
 * for the ggml recipes, Burn's layout for the others. */
int qscheme_fast_recipe_bytes_size(const char* recipe, const char* scheme, const uint64_t* shape, size_t rank,
                                   size_t* bytes, uint64_t* err_index);

/* Quantizes n floats and writes the serialized bytes to out[0..out_cap). *out_len receives the
 * byte count (also when out_cap is too small: then QSCHEME_SIZE_MISMATCH and out untouched).
 * options may be NULL (exact profile, minmax). */
int qscheme_fast_quantize(const char* scheme, const uint64_t* shape, size_t rank, const float* x, size_t n,
                          const qscheme_quantize_options* options, uint8_t* out, size_t out_cap, size_t* out_len,
                          uint64_t* err_index);

/* Decodes serialized bytes and dequantizes them under `profile` into out[0..out_cap) floats;
 * *out_len receives the element count. */
int qscheme_fast_dequantize(const char* scheme, const uint64_t* shape, size_t rank, const uint8_t* bytes,
                            size_t len, int profile, float* out, size_t out_cap, size_t* out_len, uint64_t* err_index);

/* Output types of qscheme_fast_dequantize_to. */
typedef enum qscheme_out_dtype { QSCHEME_OUT_F32 = 0, QSCHEME_OUT_F16 = 1, QSCHEME_OUT_BF16 = 2 } qscheme_out_dtype;

/* qscheme_fast_dequantize with the output type chosen: out holds out_cap elements of out_dtype
 * (float for QSCHEME_OUT_F32, uint16_t bit patterns for f16 and bf16) and *out_len receives the
 * element count. QSCHEME_OUT_F32 is qscheme_fast_dequantize. f16 and bf16 (ONNX DequantizeLinear
 * with a float16 scale: the f32 value rounded once more, docs/SEMANTICS.md section 16) give the
 * same errors in the same order, then QSCHEME_SIZE_MISMATCH when out_cap is short (the count in
 * *out_len), out untouched on every error. An unknown out_dtype is QSCHEME_INVALID_ARGUMENT. */
int qscheme_fast_dequantize_to(const char* scheme, const uint64_t* shape, size_t rank, const uint8_t* bytes,
                               size_t len, int profile, int out_dtype, void* out, size_t out_cap, size_t* out_len,
                               uint64_t* err_index);

/* The same under a named recipe (`qscheme recipes` lists them; e.g. "ocp-mx"): its point of the
 * rule space replaces options->profile (calibration and given scales still apply). scheme is
 * one the recipe reproduces, or NULL or "" for its first. The bytes are the recipe's own: ggml's
 * blocks (block_q8_0, block_q4_0: docs/SEMANTICS.md section 12) for the ggml recipes, whose
 * innermost dim 32 must divide (QSCHEME_INVALID_ARGUMENT otherwise, after the data's errors);
 * Burn's layout for the others. QSCHEME_INVALID_ARGUMENT for an unknown name or a scheme the
 * recipe does not take; QSCHEME_UNSUPPORTED_PROFILE for a recipe the fast engine does not run yet
 * (the message names it). */
int qscheme_fast_quantize_recipe(const char* recipe, const char* scheme, const uint64_t* shape, size_t rank,
                                 const float* x, size_t n, const qscheme_quantize_options* options, uint8_t* out,
                                 size_t out_cap, size_t* out_len, uint64_t* err_index);
/* Dequantizes bytes a recipe wrote (in its format), as qscheme_fast_dequantize under the
 * recipe's point. */
int qscheme_fast_dequantize_recipe(const char* recipe, const char* scheme, const uint64_t* shape, size_t rank,
                                   const uint8_t* bytes, size_t len, float* out, size_t out_cap, size_t* out_len,
                                   uint64_t* err_index);

/* Gives back the calling thread's kept scratch: each thread keeps its largest whole-tensor
 * scratch (1/16 of its largest input for nvfp4) for its next call; freed at thread exit too. */
void qscheme_fast_release_scratch(void);

/* Runs the fast engine's kernels once, on the calling thread and the current target, so that a
 * process's first real call does not pay for their first run (qscheme::fast::warm_up: a few
 * milliseconds; the first in-cache call then takes about 2x a later one instead of 20-60x). Never
 * fails; changes no setting and no later output. */
void qscheme_fast_warm_up(void);

/* Most threads one call is split over (qscheme::fast::kMaxThreads). */
#define QSCHEME_MAX_THREADS 256u

/* Threads each call is split over, the calling thread included: 1 (the default) to
 * QSCHEME_MAX_THREADS, or 0 for one per hardware thread (at most QSCHEME_MAX_THREADS). A larger n
 * returns QSCHEME_INVALID_ARGUMENT and leaves the count as it was. The other threads come from a
 * pool kept across calls; when the system refuses to start one, calls run on the threads there
 * are. Output never depends on it. */
int qscheme_fast_set_threads(unsigned n);
/* Forces a Highway target by name ("AVX2"; "" or NULL = automatic). */
int qscheme_fast_set_target(const char* name);
/* QSCHEME_INVALID_ARGUMENT when the environment variable QSCHEME_TARGET names a target this build
 * and CPU do not have (the kernels then run on the automatic choice; the message lists the
 * targets there are), else QSCHEME_OK. */
int qscheme_fast_target_env_status(void);
/* Name of the target in use; a static string. */
const char* qscheme_fast_current_target(void);

#ifdef __cplusplus
}
#endif

#endif /* QSCHEME_FAST_QSCHEME_H_ */
