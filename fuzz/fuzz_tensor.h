// Helpers shared by the engine fuzz targets (fuzz_differential, fuzz_decode_bytes): a fixed-size
// parameter tail (binary scheme, rank, dims, flags, Highway target) taken from the END of the
// input so that mutating it never shifts the payload, and readable mismatch reports.
#pragma once

#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "scheme/binary.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/text.hpp"
#include "scheme/float_bits.hpp"

namespace qscheme::fuzz {

// Tail layout, in input order (the last kTensorTailBytes bytes of the input; a shorter input is
// read as if zero-padded at the front of the tail):
//   [0, 13)  binary scheme (scheme/binary.hpp), decoded with decode_scheme_prefix; unused bytes
//            after the scheme are ignored
//   13       rank, taken modulo 6 (0..5)
//   14..18   dims, one byte each (outermost first, the first `rank` are used); 255 means 2^40
//   19       flags (meaning per target)
//   20       Highway target: 0 = automatic, k = available_targets()[(k - 1) % count]
inline constexpr std::size_t kSchemeBytes = kBinarySchemeMaxBytes;  // 13
inline constexpr std::size_t kTensorTailBytes = kSchemeBytes + 1 + 5 + 1 + 1;
inline constexpr std::uint64_t kHugeDim = std::uint64_t{1} << 40;

struct TensorParams {
  Scheme scheme;
  std::vector<std::uint64_t> shape;
  std::uint8_t flags = 0;
  std::uint8_t target = 0;
  // The element count, or nullopt when it does not fit in 64 bits.
  std::optional<std::uint64_t> elements;
};

// Splits the input: the payload (front) and the decoded tail. nullopt when the tail's scheme
// bytes do not decode (fuzz_scheme_text covers the binary decoder on its own).
inline std::optional<TensorParams> read_tensor_params(const std::uint8_t* data, std::size_t size,
                                                      std::span<const std::uint8_t>* payload) {
  std::array<std::uint8_t, kTensorTailBytes> tail{};
  const std::size_t k = size < kTensorTailBytes ? size : kTensorTailBytes;
  if (k) std::memcpy(tail.data() + (kTensorTailBytes - k), data + (size - k), k);
  *payload = std::span<const std::uint8_t>(data, size - k);

  auto decoded = decode_scheme_prefix(std::span<const std::uint8_t>(tail.data(), kSchemeBytes));
  if (!decoded.ok()) return std::nullopt;
  TensorParams p;
  p.scheme = decoded->first;
  const std::size_t rank = tail[kSchemeBytes] % 6;
  std::uint64_t n = 1;
  bool overflow = false;
  for (std::size_t i = 0; i < rank; ++i) {
    const std::uint8_t b = tail[kSchemeBytes + 1 + i];
    const std::uint64_t d = b == 255 ? kHugeDim : b;
    p.shape.push_back(d);
    if (d != 0 && n > UINT64_MAX / d) overflow = true;
    n *= d;
  }
  bool any_zero = false;
  for (auto d : p.shape) any_zero |= d == 0;
  if (any_zero) p.elements = 0;
  else if (!overflow) p.elements = n;
  p.flags = tail[kSchemeBytes + 6];
  p.target = tail[kSchemeBytes + 7];
  return p;
}

inline std::string shape_string(std::span<const std::uint64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

inline std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08" PRIx32, v);
  return buf;
}

// The first index at which two sequences differ (a length difference counts at the shorter
// length), or nullopt when they are equal.
template <class T>
std::optional<std::size_t> first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  const std::size_t n = a.size() < b.size() ? a.size() : b.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (!(a[i] == b[i])) return i;
  }
  if (a.size() != b.size()) return n;
  return std::nullopt;
}

// Prints "<context>\n<what> differ at index i: <a_name>=<a> <b_name>=<b> (sizes ...)" and aborts.
template <class T, class Fmt>
[[noreturn]] void report_difference(const std::string& context, const char* what, const char* a_name,
                                    const std::vector<T>& a, const char* b_name, const std::vector<T>& b,
                                    std::size_t i, Fmt fmt) {
  std::fprintf(stderr, "==== fuzz mismatch ====\n%s\n%s differ at index %zu: %s=%s %s=%s (sizes %zu vs %zu)\n",
               context.c_str(), what, i, a_name, i < a.size() ? fmt(a[i]).c_str() : "<none>", b_name,
               i < b.size() ? fmt(b[i]).c_str() : "<none>", a.size(), b.size());
  std::abort();
}

// Aborts with a readable report unless the two quantized tensors are identical.
inline void require_same_tensor(const std::string& context, const char* a_name, const QuantizedTensor& a,
                                const char* b_name, const QuantizedTensor& b) {
  FUZZ_ASSERT_MSG(a.scheme == b.scheme, context + "\nscheme differs: " + format_scheme(a.scheme) + " vs " +
                                            format_scheme(b.scheme));
  FUZZ_ASSERT_MSG(a.profile == b.profile, context + "\nprofile differs");
  FUZZ_ASSERT_MSG(a.shape == b.shape, context + "\nshape differs: " + shape_string(a.shape) + " vs " +
                                          shape_string(b.shape));
  auto dec = [](std::int32_t v) { return std::to_string(v); };
  if (auto i = first_difference(a.codes, b.codes)) {
    report_difference(context, "codes", a_name, a.codes, b_name, b.codes, *i, dec);
  }
  if (auto i = first_difference(a.scale_bits, b.scale_bits)) {
    report_difference(context, "scale_bits", a_name, a.scale_bits, b_name, b.scale_bits, *i, hex32);
  }
  FUZZ_ASSERT_MSG(a.global_bits == b.global_bits,
                  context + "\nglobal_bits differ: " + std::string(a_name) + "=" +
                      (a.global_bits ? hex32(*a.global_bits) : "none") + " " + b_name + "=" +
                      (b.global_bits ? hex32(*b.global_bits) : "none"));
}

inline void require_same_bytes(const std::string& context, const char* a_name, const std::vector<std::uint8_t>& a,
                               const char* b_name, const std::vector<std::uint8_t>& b) {
  if (auto i = first_difference(a, b)) {
    report_difference(context, "bytes", a_name, a, b_name, b, *i,
                      [](std::uint8_t v) { return std::to_string(static_cast<int>(v)); });
  }
}

// Bit equality (NaN payloads and -0 included).
inline void require_same_floats(const std::string& context, const char* a_name, const std::vector<float>& a,
                                const char* b_name, const std::vector<float>& b) {
  const std::vector<std::uint32_t> ab = f32_bits(a), bb = f32_bits(b);
  if (auto i = first_difference(ab, bb)) {
    report_difference(context, "dequantized bits", a_name, ab, b_name, bb, *i, [](std::uint32_t v) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s(%.9g)", hex32(v).c_str(), static_cast<double>(f32_from_bits(v)));
      return std::string(buf);
    });
  }
}

// Both results fail with the same error (code, index and message: scheme/errors.hpp words each
// one once for both engines), or both succeed (then the caller compares values).
template <class A, class B>
bool require_same_outcome(const std::string& context, const char* what, const A& a, const B& b) {
  FUZZ_ASSERT_MSG(a.ok() == b.ok() && a.status().code() == b.status().code() &&
                      a.status().index() == b.status().index() && a.status().message() == b.status().message(),
                  context + "\n" + what + ": reference " +
                      (a.ok() ? std::string("ok") : a.status().to_string() + " (index " + std::to_string(a.status().index()) + ")") +
                      " | fast " +
                      (b.ok() ? std::string("ok") : b.status().to_string() + " (index " + std::to_string(b.status().index()) + ")"));
  return a.ok();
}

// A Status seen as an outcome (for require_same_outcome).
struct Outcome {
  Status st;
  bool ok() const { return st.ok(); }
  const Status& status() const { return st; }
};

// The bytes a fused call wrote (`got`, `ok` its status) against the expected outcome: same error
// code and index, `got` all `canary` when the policy promises an untouched output; else equal bytes.
template <class Expected>
void require_fused_bytes(const std::string& context, const char* what, const Status& st,
                         const std::vector<std::uint8_t>& got, std::uint8_t canary, bool untouched,
                         const Expected& want) {
  require_same_outcome(context, what, want, Outcome{st});
  if (!st.ok()) {
    FUZZ_ASSERT_MSG(st.index() == want.status().index(),
                    context + "\n" + what + ": error index " + std::to_string(st.index()) + " vs " +
                        std::to_string(want.status().index()));
    if (untouched) {
      for (std::uint8_t b : got) FUZZ_ASSERT_MSG(b == canary, context + "\n" + what + ": output written on error");
    }
    return;
  }
  require_same_bytes(context + "\n(" + what + ")", "reference", *want, "fused", got);
}

}  // namespace qscheme::fuzz
