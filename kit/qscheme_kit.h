/* The kernel fuzzing kit: libFuzzer compares your quantize and/or dequantize kernel with
 * qscheme's reference under a recipe (`qscheme recipes`) and, on the first input where they
 * differ, prints qscheme check's report (which elements and blocks differ, and which recipe or
 * rule change reproduces your output) and stops.
 *
 * You write one function, qscheme_kit_target_under_test, that names the recipe and points at
 * your kernels (kit/target_template.c is a copy-and-edit start), and build it with
 * qscheme_add_kernel_fuzzer() (kit/README.md). Inputs are built from the fuzzer's bytes: a
 * shape of whole blocks, one of qscheme's edge-case tensors for the scheme (ties after scaling,
 * scale-rounding boundaries, saturation edges, subnormals, signed zeros, constant and all-zero
 * blocks), then elements overwritten by values the fuzzer chooses. Inputs are finite. */
#ifndef QSCHEME_KIT_H
#define QSCHEME_KIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Quantizes x, a row-major [rows, cols] f32 tensor, into out: exactly out_size bytes of the
 * recipe's byte format (Burn's serialized layout, or ggml's blocks for the ggml recipes).
 * Returns 0 on success; anything else is reported as a failure on that input. */
typedef int (*qscheme_kit_quantize_fn)(const float* x, uint64_t rows, uint64_t cols, uint8_t* out, size_t out_size);

/* Dequantizes in (in_size bytes of the recipe's byte format for a [rows, cols] tensor) into out,
 * rows * cols floats. Returns 0 on success. */
typedef int (*qscheme_kit_dequantize_fn)(const uint8_t* in, size_t in_size, uint64_t rows, uint64_t cols, float* out);

/* Quantizes as qscheme_kit_quantize_fn does, for a two-level scheme (nvfp4) whose kernel takes the
 * tensor's max |x| known ahead instead of finding it (TransformerEngine's NVFP4 quantizer's amax
 * input, delayed scaling): the global scale follows from global_amax, the block scales from the
 * data. The kit passes the input's own max |x|, fractions and a multiple of it, or 0, and checks
 * the bytes under the same amax (docs/SEMANTICS.md section 4.1). */
typedef int (*qscheme_kit_quantize_amax_fn)(const float* x, uint64_t rows, uint64_t cols, float global_amax,
                                            uint8_t* out, size_t out_size);

typedef struct qscheme_kit_target {
  /* A recipe or profile name: "ggml-q8_0", "ocp-mx", "nvidia-nvfp4", "exact", ... */
  const char* recipe;
  /* The scheme in qscheme's text syntax or a preset; NULL for the recipe's first scheme. */
  const char* scheme;
  /* Either may be NULL (not tested); at least one of these and quantize_with_global_amax. */
  qscheme_kit_quantize_fn quantize;
  qscheme_kit_dequantize_fn dequantize;
  /* Largest shape tried; 0 for the defaults (4 rows, 256 columns). */
  uint64_t max_rows;
  uint64_t max_cols;
  /* NULL, or a two-level recipe's kernel that takes a known global amax. */
  qscheme_kit_quantize_amax_fn quantize_with_global_amax;
} qscheme_kit_target;

/* Defined by you: the kernels under test. Called once, when the fuzzer starts. */
qscheme_kit_target qscheme_kit_target_under_test(void);

#ifdef __cplusplus
}
#endif

#endif /* QSCHEME_KIT_H */
