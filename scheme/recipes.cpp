#include "scheme/recipes.hpp"

#include <array>
#include <string>

#include "scheme/text.hpp"

namespace qscheme {
namespace {

using namespace rule;

Rules ocp_mx() {
  Rules r;
  r.scale = ScaleRounding::ocp_floor;
  return r;
}

Rules torchao_mx(ScaleRounding s) {
  Rules r;
  r.scale = s;
  return r;
}

Rules torchao_mx_rceil() {
  Rules r;
  r.arithmetic = Arithmetic::f32_reciprocal;
  return r;  // scale up: round-up of f32(amax * f32(1 / max)) to a power of two
}

Rules microxcaling() {
  Rules r;
  r.scale = ScaleRounding::log2f_floor;
  r.quotient = Quotient::f32_divide;
  r.float_ties = Ties::half_away_f32_add;
  r.zero_sign = ZeroSign::zero_quotient_positive;
  return r;
}

Rules nvidia_nvfp4() {
  Rules r;
  r.arithmetic = Arithmetic::f32_reciprocal;
  r.scale = ScaleRounding::nearest;
  r.two_level = TwoLevel::te_nvfp4;
  r.product = Product::f32;
  r.quotient = Quotient::f32_reciprocal_capped;
  r.zero_sign = ZeroSign::zero_quotient_positive;
  r.zero_scale = ZeroScale::ieee;
  return r;
}

Rules ggml_q8_0() {
  Rules r;
  r.arithmetic = Arithmetic::f32_divide;
  r.scale = ScaleRounding::nearest;
  r.scale_overflow = ScaleOverflow::infinity;
  r.codes_from = CodesFrom::unrounded;
  r.quotient = Quotient::f32_reciprocal_or_zero;
  r.ties = Ties::half_away;
  r.saturation = Saturation::none;
  r.zero_scale = ZeroScale::ieee;
  return r;
}

Rules ggml_q8_0_x86() {
  Rules r = ggml_q8_0();
  r.quotient = Quotient::f32_max_over_amax;
  r.ties = Ties::half_even;
  r.saturation = Saturation::int32_min_then_full_range;
  return r;
}

Rules ggml_q4_0() {
  Rules r = ggml_q8_0();
  r.statistic = Statistic::signed_max;
  r.ties = Ties::half_up_f32_offset;
  r.saturation = Saturation::upper_only;
  return r;
}

Rules torch_qint8() {
  Rules r;
  r.source = Source::given_f32;
  r.quotient = Quotient::f32_reciprocal;
  r.saturation = Saturation::int64_min_then_clamp;
  r.zero_scale = ZeroScale::ieee;
  return r;
}

constexpr std::string_view kMx = "mxfp8; mxfp8-e5m2; mxfp4";

const std::array<Recipe, 15>& table() {
  static const std::array<Recipe, 15> kRecipes{{
      {"exact", "any", profile_rules(Profile::exact), ByteFormat::burn, "docs/SEMANTICS.md sections 3 to 6",
       "qscheme's own rules: one exact rounding per stored value, scales rounded up"},
      {"burn", "any", profile_rules(Profile::burn), ByteFormat::burn,
       "tracel-ai/burn, ndarray backend quantize and dequantize (docs/SEMANTICS.md section 3, burn)",
       "f32 at every step, integer ties away from zero, a zero scale divides as 0.1"},
      {"onnx", "any", profile_rules(Profile::onnx), ByteFormat::burn,
       "onnx/onnx onnx/reference/ops/op_quantize_linear.py _CommonQuantizeLinear._run (031c9977)",
       "given f32 scales, f32 division, ties to even; e2m1 gives +0 for a zero quotient"},
      {"ocp-mx", kMx, ocp_mx(), ByteFormat::burn,
       "OCP Microscaling Formats (MX) v1.0, section 6.3, the minimally supported conversion",
       "X = 2^(floor(log2 amax) - emax_elem): the block max may clip to +-max, where exact rounds the scale up"},
      {"torchao-mx-floor", kMx, torchao_mx(ScaleRounding::ocp_floor), ByteFormat::burn,
       "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py to_mx, ScaleCalculationMode.FLOOR (36027d82)",
       "the exponent of amax's f32 bits minus emax_elem: the ocp-mx point"},
      {"torchao-mx-ceil", kMx, torchao_mx(ScaleRounding::torchao_ceil), ByteFormat::burn,
       "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py to_mx, ScaleCalculationMode.CEIL (36027d82)",
       "one more exponent when amax is not a power of two: elements stay within 2^emax_elem"},
      {"torchao-mx-even", kMx, torchao_mx(ScaleRounding::torchao_even), ByteFormat::burn,
       "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py to_mx, ScaleCalculationMode.EVEN (36027d82)",
       "amax's f32 pattern plus half a unit of the element's last mantissa bit, mantissa cleared: half-up, "
       "not to even; an amax that carries into f32's inf exponent is unsupported-profile"},
      {"torchao-mx-rceil", kMx, torchao_mx_rceil(), ByteFormat::burn,
       "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py _to_mx_rceil, _f32_to_e8m0_rceil (36027d82); "
       "the cuBLAS 1D block scaling factor",
       "round-up of f32(amax * f32(1 / max_elem)) to a power of two: the exact profile's round-up wherever that "
       "product is an f32 normal, one step lower where it rounds down onto 2^-127 among the f32 subnormals"},
      {"microxcaling", kMx, microxcaling(), ByteFormat::burn,
       "microsoft/microxcaling mx/mx_ops.py _quantize_mx and _shared_exponents, mx/elemwise_ops.py "
       "_quantize_elemwise_core and _round_mantissa, round='nearest' (7bc41952)",
       "floor of log2 rounded to f32 (an amax just below 2^k takes 2^k), ties away from zero by "
       "floor(f32(q + 0.5)), -0 gives +0; its output is the dequantized values"},
      {"nvidia-nvfp4", "nvfp4", nvidia_nvfp4(), ByteFormat::burn,
       "NVIDIA/TransformerEngine transformer_engine/pytorch/custom_recipes/reference_nvfp4.py "
       "NVFP4QuantizerRef._quantize_blockwise_reference and cast_to_fp4x2, 1x16 tiles (d0067d0d)",
       "global 1 / f32(2688 / amax), e4m3 block scales rounded to nearest with no lower bound, codes from "
       "x * f32(1 / f32(s g)) capped at f32 max, -0 gives +0; stores the decode global, not amax"},
      {"ggml-q8_0", "q8_0", ggml_q8_0(), ByteFormat::ggml,
       "ggml-org/ggml src/ggml-quants.c quantize_row_q8_0_ref and dequantize_row_q8_0, src/ggml-impl.h "
       "ggml_compute_fp32_to_fp16 (d99724f2)",
       "d = f32(amax / 127) stored as f16(d) (inf past 65504), codes from the f32 d: roundf(x * f32(1 / d))"},
      {"ggml-q8_0-x86", "q8_0", ggml_q8_0_x86(), ByteFormat::ggml,
       "ggml-org/ggml src/ggml-cpu/arch/x86/quants.c quantize_row_q8_0, AVX2 branch (d99724f2)",
       "codes from x * f32(127 / amax), ties to even, a non-finite product gives -128"},
      {"ggml-q4_0", "q4f:packed-u32(0):block[32]=f16", ggml_q4_0(), ByteFormat::ggml,
       "ggml-org/ggml src/ggml-quants.c quantize_row_q4_0_ref and dequantize_row_q4_0 (d99724f2)",
       "signed scale d = m / -8 of the first element of largest |x| (all-zero block: -0), codes "
       "min(15, trunc(f32(x * f32(1 / d)) + 8.5)) - 8, ties up"},
      {"torch-qint8", "q8f; q8f:tensor=f32; q8f:block[...]=f32; q8f:affine; q8f:affine:block[...]=f32", torch_qint8(),
       ByteFormat::burn,
       "pytorch/pytorch aten/src/ATen/native/quantized/AffineQuantizerBase.cpp quantize_val and "
       "dequantize_val without FBGEMM (Debian's torch 1.13.1): quantize_per_tensor, quantize_per_channel",
       "given f32 scales (and zero points: affine), zero_point + x * f32(1 / scale), ties to even, NaN, inf or 2^63 "
       "and beyond give -128"},
      {"torch-quint8", "u8:affine; u8:affine:block[...]=f32; u8; u8:block[...]=f32", torch_qint8(), ByteFormat::burn,
       "pytorch/pytorch aten/src/ATen/native/quantized/AffineQuantizerBase.cpp quantize_val and "
       "dequantize_val without FBGEMM (Debian's torch 1.13.1): quantize_per_tensor, quantize_per_channel to quint8",
       "torch-qint8's rules on quint8: zero_point + x * f32(1 / scale), ties to even, NaN, inf or 2^63 and beyond "
       "give 0"},
  }};
  return kRecipes;
}

// One of the recipe's scheme texts against a scheme: "any", a text with "[...]" standing for
// any block extents, or a scheme text or preset compared by value.
bool matches(std::string_view pattern, const Scheme& s) {
  if (pattern == "any") return true;
  const std::size_t dots = pattern.find("[...]");
  if (dots != std::string_view::npos) {
    const std::string text = format_scheme(s);
    const std::string_view head = pattern.substr(0, dots + 1);
    const std::string_view tail = pattern.substr(dots + 4);
    return text.size() > head.size() + tail.size() && std::string_view(text).starts_with(head) &&
           std::string_view(text).ends_with(tail) &&
           text.find(']', head.size()) == text.size() - tail.size();
  }
  const Result<Scheme> p = parse_scheme(pattern);
  return p && *p == s;
}

template <class F>
bool any_pattern(std::string_view schemes, F&& f) {
  std::size_t pos = 0;
  while (pos <= schemes.size()) {
    const std::size_t semi = std::min(schemes.find(';', pos), schemes.size());
    std::string_view part = schemes.substr(pos, semi - pos);
    while (part.starts_with(' ')) part.remove_prefix(1);
    if (!part.empty() && f(part)) return true;
    pos = semi + 1;
  }
  return false;
}

}  // namespace

std::span<const Recipe> recipes() { return table(); }

Result<const Recipe*> find_recipe(std::string_view name) {
  std::string names;
  for (const Recipe& r : table()) {
    if (r.name == name) return &r;
    names += (names.empty() ? "" : ", ") + std::string(r.name);
  }
  return Status(ErrorCode::invalid_argument,
                "unknown recipe '" + std::string(name) + "'; recipes: " + names + " (qscheme recipes lists them)");
}

bool recipe_accepts(const Recipe& r, const Scheme& s) {
  return any_pattern(r.schemes, [&](std::string_view p) { return matches(p, s); });
}

Result<Scheme> recipe_scheme(const Recipe& r, std::string_view text) {
  if (text.empty()) {
    std::string_view first;
    any_pattern(r.schemes, [&](std::string_view p) {
      first = p;
      return true;
    });
    if (first == "any") {
      return Status(ErrorCode::invalid_argument, "recipe " + std::string(r.name) + " takes any scheme; give one");
    }
    return parse_scheme(first);
  }
  Result<Scheme> s = parse_scheme(text);
  if (!s) return s;
  if (!recipe_accepts(r, *s)) {
    return Status(ErrorCode::invalid_argument, "recipe " + std::string(r.name) + " reproduces " +
                                                   std::string(r.schemes) + ", not '" + format_scheme(*s) + "'");
  }
  return s;
}

QuantizeOptions recipe_options(const Recipe& r, QuantizeOptions base) {
  if (const std::optional<Profile> p = profile_of(r.rules)) {
    base.profile = *p;
    base.rules.reset();
  } else {
    base.profile = Profile::exact;
    base.rules = r.rules;
  }
  return base;
}

}  // namespace qscheme
