/* Quantizes 64 floats to q8_0 (ggml's layout: 8-bit codes, one f16 scale per block of 32) with
 * qscheme's fast kernels through the C API, dequantizes them back and reports the error. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "fast/qscheme.h"

int main(void) {
  enum { N = 64 };
  float x[N];
  for (int i = 0; i < N; ++i) x[i] = sinf(0.1f * (float)i) * 4.0f;
  const uint64_t shape[2] = {2, 32};

  qscheme_fast_set_threads(0); /* all cores; the output never depends on it */
  printf("target %s\n", qscheme_fast_current_target());

  size_t size = 0;
  int st = qscheme_fast_bytes_size("q8_0", shape, 2, &size, NULL);
  if (st != QSCHEME_OK) return fprintf(stderr, "bytes_size: %s\n", qscheme_status_name(st)), 1;

  uint8_t bytes[256];
  size_t len = 0;
  uint64_t err_index = 0;
  st = qscheme_fast_quantize("q8_0", shape, 2, x, N, NULL, bytes, sizeof bytes, &len, &err_index);
  if (st != QSCHEME_OK) return fprintf(stderr, "quantize: %s\n", qscheme_status_name(st)), 1;
  printf("q8_0 bytes %zu (expected %zu)\n", len, size);

  float y[N];
  size_t n = 0;
  st = qscheme_fast_dequantize("q8_0", shape, 2, bytes, len, QSCHEME_PROFILE_EXACT, y, N, &n, &err_index);
  if (st != QSCHEME_OK) return fprintf(stderr, "dequantize: %s\n", qscheme_status_name(st)), 1;
  float max_err = 0.0f;
  for (int i = 0; i < N; ++i) max_err = fmaxf(max_err, fabsf(x[i] - y[i]));
  printf("elements %zu max abs error %.6f\n", n, max_err);

  /* Errors are status codes with a stable name and a message; nothing is written on error. */
  x[5] = NAN;
  st = qscheme_fast_quantize("q8_0", shape, 2, x, N, NULL, bytes, sizeof bytes, &len, &err_index);
  printf("NaN input: %s at element %llu\n", qscheme_status_name(st), (unsigned long long)err_index);
  char why[256];
  qscheme_last_error_message(why, sizeof why);
  printf("message: %s\n", why);
  return (len == size && n == N && max_err < 0.02f) ? 0 : 1;
}
