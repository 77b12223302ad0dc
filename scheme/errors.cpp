#include "scheme/errors.hpp"

#include <cstdio>

namespace qscheme {
namespace {

std::string hex(std::uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*X", digits, static_cast<unsigned>(v));
  return buf;
}

std::string str(std::uint64_t v) { return std::to_string(v); }

std::string f32_text(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

}  // namespace

std::optional<std::string> code_problem(Value v, std::int32_t code) {
  const ValueInfo& vi = info(v);
  if (!vi.is_float) {
    if (code < vi.lo || code > vi.hi) {
      return std::string(vi.name) + " codes lie in [" + std::to_string(vi.lo) + ", " + std::to_string(vi.hi) +
             "], got " + std::to_string(code);
    }
    return std::nullopt;
  }
  if (code < 0 || code >= (1 << vi.bits)) {
    return std::string(vi.name) + " codes are " + std::to_string(vi.bits) + "-bit patterns, got " +
           std::to_string(code);
  }
  const auto c = static_cast<std::uint32_t>(code);
  if (v == Value::e4m3 && (c & 0x7Fu) == 0x7Fu) return "e4m3 pattern " + hex(c, 2) + " is NaN";
  if (v == Value::e5m2 && (c & 0x7Cu) == 0x7Cu) return "e5m2 pattern " + hex(c, 2) + " is inf or NaN";
  return std::nullopt;
}

std::optional<std::string> scale_problem(ScaleDtype d, std::uint32_t bits) {
  const std::string name(to_string(d));
  const int width = info(d).bytes * 8;
  if (width < 32 && bits >> width != 0) {
    return name + " scales are " + std::to_string(width) + "-bit patterns, got " + hex(bits, 8);
  }
  switch (d) {
    case ScaleDtype::f32:
    case ScaleDtype::f16:
    case ScaleDtype::bf16: {
      const std::uint32_t sign = 1u << (width - 1);
      const std::uint32_t exp_mask = d == ScaleDtype::f32 ? 0x7F800000u : d == ScaleDtype::f16 ? 0x7C00u : 0x7F80u;
      if ((bits & exp_mask) == exp_mask) return name + " scale " + hex(bits, width / 4) + " is inf or NaN";
      if (bits & sign) return name + " scale " + hex(bits, width / 4) + " has its sign bit set (negative or -0)";
      return std::nullopt;
    }
    case ScaleDtype::ue4m3:
      if (bits & 0x80u) return "ue4m3 scale " + hex(bits, 2) + " has the unused sign bit set";
      if (bits == 0x7Fu) return "ue4m3 scale 0x7F is NaN";
      return std::nullopt;
    case ScaleDtype::ue8m0:
      if (bits == 0xFFu) return "ue8m0 scale 0xFF is NaN";
      return std::nullopt;
  }
  return "unknown scale dtype";
}

namespace errors {

Status input_size(std::uint64_t values, std::uint64_t elements) {
  return {ErrorCode::size_mismatch,
          "the input has " + str(values) + " value(s), but the shape holds " + str(elements) + " element(s)"};
}

Status given_scale_count(std::uint64_t given, std::uint64_t scales) {
  return {ErrorCode::size_mismatch,
          str(given) + " block scale(s) were given, but the scheme and shape take " + str(scales)};
}

Status given_global_presence(bool two_level) {
  return {ErrorCode::size_mismatch, two_level
                                        ? "a two-level scheme needs a global (per-tensor) scale, and none was given"
                                        : "only a two-level scheme takes a global (per-tensor) scale, and one was given"};
}

Status invalid_given_scale(std::uint64_t j) {
  return {ErrorCode::invalid_scale,
          "given scale " + str(j) + " is negative, NaN or infinite; scales must be finite and >= 0", j};
}

Status given_zero_point_count(std::uint64_t given, std::uint64_t scales, bool affine) {
  if (!affine) {
    return {ErrorCode::size_mismatch, str(given) + " zero point(s) were given, but only an affine scheme takes "
                                                   "zero points; use mode affine or drop them"};
  }
  return {ErrorCode::size_mismatch, str(given) + " zero point(s) were given, but the scheme and shape take " +
                                        str(scales) + " (one per scale), or none for zero points of 0"};
}

Status invalid_given_zero_point(std::uint64_t j, Value v, std::int32_t zp) {
  return {ErrorCode::invalid_scale,
          "given zero point " + str(j) + " is " + std::to_string(zp) + ", outside " + std::string(to_string(v)) +
              "'s range [" + std::to_string(info(v).lo) + ", " + std::to_string(info(v).hi) +
              "]; a zero point is a code of the value kind",
          j};
}

namespace {
Status onnx_range_error(std::uint64_t block, const std::string& what) {
  return {ErrorCode::unsupported_profile,
          "block " + str(block) + ": DynamicQuantizeLinear's f32 " + what + "; rescale the input, or use profile exact",
          block};
}
}  // namespace

Status onnx_affine_range_overflow(std::uint64_t block) { return onnx_range_error(block, "max - min overflows to inf"); }
Status onnx_affine_scale_underflow(std::uint64_t block) {
  return onnx_range_error(block, "scale (max - min) / 255 underflows to 0");
}

Status invalid_given_global(std::uint64_t block_scales) {
  return {ErrorCode::invalid_scale,
          "the given global (per-tensor) scale is negative, NaN or infinite; it must be finite and >= 0 "
          "(index = number of block scales)",
          block_scales};
}

Status global_amax_misplaced(const std::string& why) { return {ErrorCode::invalid_argument, why}; }

Status global_amax_unsupported(const std::string& why) { return {ErrorCode::unsupported_profile, why}; }

Status invalid_global_amax(float amax) {
  return {ErrorCode::invalid_scale, "the given global amax is " + f32_text(amax) +
                                        "; it is a max |x|, so it must be finite and >= 0"};
}

Status non_finite_input(std::uint64_t element) {
  return {ErrorCode::non_finite_input, "input element " + str(element) + " is NaN or infinite", element};
}

Status zero_scale_nonzero_input(std::uint64_t block, std::uint64_t element) {
  return {ErrorCode::zero_scale_nonzero_input,
          "block " + str(block) + " has a zero effective scale but holds the non-zero input element " + str(element) +
              "; give the block a positive scale",
          block};
}

Status burn_absmean_two_level() {
  return {ErrorCode::unsupported_profile,
          "Burn has no two-level form of absmean calibration (it asserts); use minmax, one scale level, or profile "
          "exact"};
}

Status onnx_needs_given_f32_scales() {
  return {ErrorCode::unsupported_profile, "profile onnx takes given scales (--scales) and one level of f32 scales"};
}

Status burn_alpha_overflow(std::uint64_t block) {
  return {ErrorCode::unsupported_profile,
          "block " + str(block) +
              ": max |x| is above f32 max / 2, where Burn's f32 arithmetic overflows (2 * alpha = inf); use profile "
              "exact",
          block};
}

Status burn_scale_product_overflow(std::uint64_t block) {
  return {ErrorCode::unsupported_profile,
          "block " + str(block) + ": global * block scale overflows f32 in Burn's arithmetic; use profile exact",
          block};
}

Status f32_scale_product_overflow(std::uint64_t block) {
  return {ErrorCode::unsupported_profile, "block " + str(block) + ": global * block scale overflows f32 (product=f32)",
          block};
}

Status torchao_even_nan_scale(std::uint64_t block, float amax) {
  return {ErrorCode::unsupported_profile,
          "block " + str(block) + ": max |x| = " + std::to_string(amax) +
              " rounds past f32 max under torchao's EVEN scale, which gives the NaN scale 0xFF; "
              "use scale=ocp-floor (recipe torchao-mx-floor)",
          block};
}

Status code_count(std::uint64_t codes, std::uint64_t elements) {
  return {ErrorCode::size_mismatch,
          "the tensor holds " + str(codes) + " code(s), but its shape has " + str(elements) + " element(s)"};
}

Status scale_count(std::uint64_t scales, std::uint64_t want) {
  return {ErrorCode::size_mismatch,
          "the tensor holds " + str(scales) + " scale(s), but its scheme and shape take " + str(want)};
}

Status global_presence(bool two_level) {
  return {ErrorCode::size_mismatch, two_level
                                        ? "a two-level scheme needs a global (per-tensor) scale, and the tensor has none"
                                        : "only a two-level scheme has a global (per-tensor) scale, and the tensor has one"};
}

Status zero_point_count(std::uint64_t zero_points, std::uint64_t want) {
  return {ErrorCode::size_mismatch, "the tensor holds " + str(zero_points) +
                                        " zero point(s), but its scheme and shape take " + str(want) +
                                        (want == 0 ? " (only affine mode has zero points)" : " (one per scale)")};
}

Status bad_zero_point(std::uint64_t j, Value v, std::int32_t zp) {
  return {ErrorCode::corrupt_bytes,
          "zero point " + str(j) + " is " + std::to_string(zp) + ", outside " + std::string(to_string(v)) +
              "'s range [" + std::to_string(info(v).lo) + ", " + std::to_string(info(v).hi) + "]",
          j};
}

Status check_stored_zero_points(Value v, std::span<const std::int32_t> zp) {
  const ValueInfo& vi = info(v);
  for (std::size_t j = 0; j < zp.size(); ++j) {
    if (zp[j] < vi.lo || zp[j] > vi.hi) return bad_zero_point(j, v, zp[j]);
  }
  return {};
}

Status bad_scale(std::uint64_t j, ScaleDtype d, std::uint32_t bits) {
  return {ErrorCode::corrupt_bytes, "scale " + str(j) + ": " + scale_problem(d, bits).value_or("valid"), j};
}

Status bad_global(std::uint64_t block_scales, std::uint32_t bits) {
  return {ErrorCode::corrupt_bytes, "global scale: " + scale_problem(ScaleDtype::f32, bits).value_or("valid"),
          block_scales};
}

Status bad_code(std::uint64_t element, Value v, std::int32_t code) {
  return {ErrorCode::corrupt_bytes, "element " + str(element) + ": " + code_problem(v, code).value_or("valid"),
          element};
}

Status byte_count(std::uint64_t bytes, const Layout& l) {
  return {ErrorCode::size_mismatch, "expected " + str(l.total_bytes) + " bytes (values " + str(l.value_bytes) +
                                        " + scales " + str(l.scale_bytes) + " + global " + str(l.global_bytes) +
                                        "), got " + str(bytes)};
}

Status ggml_byte_count(std::uint64_t bytes, std::uint64_t blocks, std::uint64_t block_bytes, std::uint64_t total) {
  return {ErrorCode::size_mismatch, "expected " + str(total) + " bytes (" + str(blocks) + " ggml blocks of " +
                                        str(block_bytes) + "), got " + str(bytes)};
}

Status nonzero_padding(std::uint64_t storage_element, std::uint64_t byte_offset) {
  return {ErrorCode::corrupt_bytes,
          "storage element " + str(storage_element) + " (byte offset " + str(byte_offset) +
              ") holds a non-zero padding code; padding past the end of a line must be zero",
          byte_offset};
}

Status bad_native_byte(std::uint64_t element, Value v, std::uint8_t byte) {
  const ValueInfo& vi = info(v);
  return {ErrorCode::corrupt_bytes,
          "element " + str(element) + ": byte " + std::to_string(byte) +
              (vi.is_float ? " has a non-zero high nibble; a native e2m1 code takes the low nibble only"
                           : vi.is_unsigned ? " is past the largest " + std::to_string(vi.bits) + "-bit " +
                                                  std::string(vi.name) + " code, " + std::to_string(vi.hi)
                                            : " is not the sign extension of a " + std::to_string(vi.bits) + "-bit " +
                                                  std::string(vi.name) + " code"),
          element};
}

}  // namespace errors

Result<Layout> layout_for_values(const Scheme& s, Shape shape, std::uint64_t values) {
  Result<Layout> l = make_layout(s, shape);
  if (l && values != l->elements) return errors::input_size(values, l->elements);
  return l;
}

Result<Layout> layout_for_bytes(const Scheme& s, Shape shape, std::uint64_t bytes) {
  Result<Layout> l = make_layout(s, shape);
  if (l && bytes != l->total_bytes) return errors::byte_count(bytes, *l);
  return l;
}

}  // namespace qscheme
