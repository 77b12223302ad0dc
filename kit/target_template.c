/* Copy this file next to your kernel, fill in the three marked places, and build it with
 * qscheme_add_kernel_fuzzer() (kit/README.md). */
#include "kit/qscheme_kit.h"

/* 1. Your kernels, with these signatures (either may be left out). */
int my_quantize(const float* x, uint64_t rows, uint64_t cols, uint8_t* out, size_t out_size);
int my_dequantize(const uint8_t* in, size_t in_size, uint64_t rows, uint64_t cols, float* out);

qscheme_kit_target qscheme_kit_target_under_test(void) {
  qscheme_kit_target t = {0};
  t.recipe = "ggml-q8_0"; /* 2. the recipe your kernel follows: `qscheme recipes` */
  t.scheme = 0;           /*    NULL: the recipe's first scheme; or e.g. "q8_0" */
  t.quantize = my_quantize;     /* 3. NULL for a kernel you do not have */
  t.dequantize = my_dequantize;
  /* t.quantize_with_global_amax: a two-level kernel (nvfp4) given the tensor's max |x| ahead */
  return t;
}
