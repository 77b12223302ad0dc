/* A q8_0 quantize and dequantize kernel in ggml's x86 manner (recipe ggml-q8_0-x86): per block
 * of 32, d = amax / 127 stored as f16 (round to nearest even), codes nearbyint(x * (127 / amax))
 * from the unrounded scale, converted as x86 converts. Built twice: as written, and with -DTIE_BUG, where the codes use
 * roundf, which rounds ties away from zero instead of to even. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kit/qscheme_kit.h"

enum { kBlock = 32, kBlockBytes = 2 + kBlock };

/* f32 -> f16 bit pattern, round to nearest even (the value is >= 0 and finite here). */
static uint16_t f16_bits(float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  const uint32_t e = u >> 23, m = u & 0x7FFFFF;
  if (e >= 143) return 0x7C00; /* >= 65536: inf (ggml's f16 d overflows the same way) */
  if (e < 113) {               /* below f16's normal range: a subnormal quantum of 2^-24 */
    if (e < 102) return 0;
    const uint32_t full = m | 0x800000, shift = 126 - e;
    uint32_t q = full >> shift;
    const uint32_t rest = full & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (q & 1))) ++q;
    return (uint16_t)q;
  }
  uint32_t h = (e - 112) << 10 | m >> 13;
  const uint32_t rest = m & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h; /* a carry into the exponent is right */
  return (uint16_t)h;
}

static float f16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  const float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? INFINITY : ldexpf((float)(1024 + m), e - 25);
  return (h & 0x8000) ? -v : v;
}

static int8_t code_of(float t) {
#ifdef TIE_BUG
  const float r = roundf(t);
#else
  const float r = nearbyintf(t);
#endif
  /* x86's float -> int32 conversion (_mm256_cvtps_epi32) gives INT32_MIN for NaN, inf and
   * anything past int32, which the int8 packing saturates to -128: 127 / amax is inf for a
   * block of subnormals, and 0 * inf is NaN. */
  if (!(r >= -2147483648.0f && r < 2147483648.0f)) return -128;
  return (int8_t)(r > 127 ? 127 : r < -128 ? -128 : r);
}

int q8_0_quantize(const float* x, uint64_t rows, uint64_t cols, uint8_t* out, size_t out_size) {
  if (cols % kBlock || out_size != rows * cols / kBlock * kBlockBytes) return 1;
  for (uint64_t b = 0; b < rows * cols / kBlock; ++b, x += kBlock, out += kBlockBytes) {
    float amax = 0;
    for (int j = 0; j < kBlock; ++j) amax = fmaxf(amax, fabsf(x[j]));
    const uint16_t d = f16_bits(amax / 127.0f);
    const float id = amax != 0 ? 127.0f / amax : 0.0f;
    out[0] = (uint8_t)(d & 0xFF);
    out[1] = (uint8_t)(d >> 8);
    for (int j = 0; j < kBlock; ++j) out[2 + j] = (uint8_t)code_of(x[j] * id);
  }
  return 0;
}

int q8_0_dequantize(const uint8_t* in, size_t in_size, uint64_t rows, uint64_t cols, float* out) {
  if (cols % kBlock || in_size != rows * cols / kBlock * kBlockBytes) return 1;
  for (uint64_t b = 0; b < rows * cols / kBlock; ++b, in += kBlockBytes, out += kBlock) {
    const float d = f16_value((uint16_t)(in[0] | in[1] << 8));
    for (int j = 0; j < kBlock; ++j) out[j] = (float)(int8_t)in[2 + j] * d;
  }
  return 0;
}

qscheme_kit_target qscheme_kit_target_under_test(void) {
  qscheme_kit_target t = {0};
  t.recipe = "ggml-q8_0-x86";
  t.quantize = q8_0_quantize;
  t.dequantize = q8_0_dequantize;
  return t;
}
