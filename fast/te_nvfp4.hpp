// NVIDIA's NVFP4 reference quantizer (recipe nvidia-nvfp4; rules two-level=te-nvfp4, all its
// steps in f32): the tensor's encode scale S = min(f32(f32(D M) / A), f32max) from its max |x| A
// (D the block scale dtype's largest value, M the element kind's), the stored global g = f32(1 /
// S), and per block v = min(f32(a f32(S f32(1 / M))), f32max) rounded to the nearest ue4m3, ties
// to even, saturating; its codes come from t = f32(x r), r = min(f32(1 / f32(s g)), f32max)
// (1 / 0 = f32max), rounded to even on the element's grid, +0 for a zero t. Given scales take the
// place of g and v (v rounded as above, a -0 stored as +0). Every step is one IEEE f32 operation,
// so the fast engine computes them as such: per block in scalar code, per element on the step
// kernel (kernels::quantize_steps, multiply).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fast/kernels/dispatch.h"
#include "scheme/quantized.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::fast::detail {

struct TeNvfp4 {
  float g = 0;     // the stored global, f32(1 / S)
  float mult = 0;  // f32(S * f32(1 / M))
  int fmt = 0;     // the element kind's minifloat format (kernels' numbering)
};

// The tensor's constants from the bits of its max |x| (finite), for element kind v under ue4m3
// block scales.
TeNvfp4 te_nvfp4_global(std::uint32_t top_bits, Value v);

// The ue4m3 patterns of nb blocks of maxima amax (bits) and the f32 multipliers r of their codes
// (kernels::te_scales).
void te_nvfp4_blocks(const kernels::Kernels& kf, const TeNvfp4& t, const std::uint32_t* amax, std::size_t nb,
                     std::uint32_t* bits, float* r);

// The same from given scales (checked: finite, >= 0 or -0) of a two-level scheme of kind v: the
// global (set in t, with fmt), the block patterns and multipliers. Returns the first block whose
// product f32(s g) overflows (unsupported-profile there, as the reference's product=f32), else nb.
// scratch holds nb words.
std::size_t te_nvfp4_given(const kernels::Kernels& kf, const GivenScales& given, Value v, std::size_t nb,
                           TeNvfp4* t, std::uint32_t* bits, float* r, std::uint32_t* scratch);

// The step kernel's rules for the codes.
kernels::StepSpec te_nvfp4_step_spec(const TeNvfp4& t);

}  // namespace qscheme::fast::detail
