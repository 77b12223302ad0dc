// fuzz_c_api: calls through the C API (fast/qscheme.h) with arbitrary scheme text, shapes, sizes, options, null pointers and short buffers.
// Failure: a crash, a status other than what the C++ engine gives for the same request, any write on error or outside the buffer (canary-checked, ASan-sized), or output differing from the C++ engine.
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "fast/qscheme.h"
#include "fuzz/fuzz_common.h"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"

namespace {

// Tuning knobs.
// Largest element count for which data buffers are built; above it the calls get whatever the
// payload holds and must fail by size without allocating for the shape.
constexpr std::uint64_t kMaxElements = 1 << 16;
constexpr std::uint8_t kCanary = 0xA5;
constexpr std::size_t kCanarySize = 0xA5A5A5A5A5A5A5A5ull;
constexpr std::uint64_t kCanaryIndex = 0x5A5A5A5A5A5A5A5Aull;

// Tail layout (the last kTailBytes of the input, in input order):
//   0      operation % 4: bytes_size, quantize, dequantize, set_target + status_name
//   1      null mask (kNull*)
//   2      rank % 10 (0..9, one past kMaxRank + 1)
//   3..11  dims, one byte each; 255 means 2^40
//   12     int8: n (floats or bytes handed in) minus the count the shape needs
//   13     int8: out_cap minus the capacity the result needs
//   14     int8: profile (0 exact, 1 burn, anything else invalid)
//   15     int8: calibration (0 minmax, 1 absmean, anything else invalid)
//   16     options bits (kOpt*) and given-count delta in bits 2-3
//   17     length of the scheme text at the front of the payload; the rest is data
constexpr std::size_t kTailBytes = 18;
constexpr std::uint8_t kNullScheme = 1 << 0, kNullShape = 1 << 1, kNullInput = 1 << 2, kNullGiven = 1 << 3,
                       kNullOut = 1 << 4, kNullOutLen = 1 << 5, kNullErrIndex = 1 << 6, kNullSize = 1 << 7;
constexpr std::uint8_t kOptGiven = 1 << 0, kOptGlobal = 1 << 1, kOptPresent = 1 << 4, kOptNarrow = 1 << 5,
                         kOptSinglePass = 1 << 6, kOptGlobalAmax = 1 << 7;

struct Tail {
  std::array<std::uint8_t, kTailBytes> b{};
};

int code_of(const qscheme::Status& s) { return static_cast<int>(s.code()); }

// A heap buffer of exactly n elements (so ASan flags any access past it), canary-filled.
template <class T>
struct Canaried {
  explicit Canaried(std::size_t n) : n(n), p(new T[n]) { std::memset(p.get(), kCanary, n * sizeof(T)); }
  bool untouched_from(std::size_t from) const {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(p.get());
    for (std::size_t i = from * sizeof(T); i < n * sizeof(T); ++i) {
      if (bytes[i] != kCanary) return false;
    }
    return true;
  }
  std::size_t n;
  std::unique_ptr<T[]> p;
};

std::string ctx(const char* op, const std::string& text, const std::vector<std::uint64_t>& shape, int status) {
  std::string s = std::string(op) + " scheme \"" + text + "\" shape [";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "] status " + std::to_string(status) + " (" + qscheme_status_name(status) + ")";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace qscheme;
  Tail t;
  const std::size_t k = size < kTailBytes ? size : kTailBytes;
  if (k) std::memcpy(t.b.data() + (kTailBytes - k), data + (size - k), k);
  std::span<const std::uint8_t> payload(data, size - k);

  const int op = t.b[0] % 4;
  const std::uint8_t nulls = t.b[1];
  const std::size_t rank = t.b[2] % 10;
  std::vector<std::uint64_t> shape_v;
  for (std::size_t i = 0; i < rank; ++i) shape_v.push_back(t.b[3 + i] == 255 ? std::uint64_t{1} << 40 : t.b[3 + i]);
  const auto n_delta = static_cast<std::int8_t>(t.b[12]);
  const auto cap_delta = static_cast<std::int8_t>(t.b[13]);
  const int profile = static_cast<std::int8_t>(t.b[14]);
  const int calibration = static_cast<std::int8_t>(t.b[15]);
  const std::uint8_t opt = t.b[16];
  const std::size_t text_len = t.b[17] < payload.size() ? t.b[17] : payload.size();
  const std::string text_owned(reinterpret_cast<const char*>(payload.data()), text_len);
  const std::string text(text_owned.c_str());  // what a C caller's string means: up to the first NUL
  payload = payload.subspan(text_len);

  const char* scheme = (nulls & kNullScheme) ? nullptr : text_owned.c_str();
  // The shape array has exactly `rank` entries in its own allocation.
  std::unique_ptr<std::uint64_t[]> shape_buf(new std::uint64_t[rank ? rank : 1]);
  for (std::size_t i = 0; i < rank; ++i) shape_buf[i] = shape_v[i];
  const std::uint64_t* shape = (nulls & kNullShape) ? nullptr : shape_buf.get();
  std::uint64_t err_index = kCanaryIndex;
  std::uint64_t* err_ptr = (nulls & kNullErrIndex) ? nullptr : &err_index;

  // What the C++ engine says about the scheme and shape.
  const auto parsed = parse_scheme(text);
  std::optional<Layout> layout;
  if (parsed.ok()) {
    auto l = make_layout(*parsed, shape_v);
    if (l.ok()) layout = *l;
  }
  const bool small = layout && layout->elements <= kMaxElements;
  auto adjust = [](std::uint64_t base, int delta) -> std::size_t {
    const std::int64_t v = static_cast<std::int64_t>(base) + delta;
    return v < 0 ? 0 : static_cast<std::size_t>(v);
  };
  // Also the message: empty after a success, and something to read after every failure.
  auto check_err_index = [&](int status, const std::string& c) {
    if (status == QSCHEME_OK && err_ptr) FUZZ_ASSERT_MSG(err_index == UINT64_MAX, c + ": err_index not cleared on success");
    const std::size_t m = qscheme_last_error_message(nullptr, 0);
    FUZZ_ASSERT_MSG((status == QSCHEME_OK) == (m == 0), c + ": status " + std::to_string(status) + " with a message of " +
                                                            std::to_string(m) + " bytes");
  };

  if (op == 0) {  // qscheme_fast_bytes_size
    std::size_t bytes = kCanarySize;
    const int st = qscheme_fast_bytes_size(scheme, shape, rank, (nulls & kNullSize) ? nullptr : &bytes, err_ptr);
    int want;
    if (!scheme || (!shape && rank) || (nulls & kNullSize)) want = QSCHEME_INVALID_ARGUMENT;
    else if (!parsed.ok()) want = code_of(parsed.status());
    else want = code_of(make_layout(*parsed, shape_v).status());
    const std::string c = ctx("bytes_size", text, shape_v, st);
    FUZZ_TRACE("trace: %s\n", c.c_str());
    FUZZ_ASSERT_MSG(st == want, c + ", the C++ engine says " + std::to_string(want));
    if (st == QSCHEME_OK) FUZZ_ASSERT_MSG(bytes == layout->total_bytes, c);
    else FUZZ_ASSERT_MSG(bytes == kCanarySize, c + ": *bytes written on error");
    check_err_index(st, c);
    return 0;
  }

  if (op == 3) {  // targets and names
    const int st = qscheme_fast_set_target((nulls & kNullScheme) ? nullptr : text_owned.c_str());
    FUZZ_ASSERT_MSG(st == QSCHEME_OK || st == QSCHEME_INVALID_ARGUMENT, "set_target(\"" + text + "\") gave " + std::to_string(st));
    const char* cur = qscheme_fast_current_target();
    FUZZ_ASSERT(cur != nullptr && cur[0] != '\0');
    if (st == QSCHEME_OK && !(nulls & kNullScheme) && !text.empty() && text != "auto") {
      FUZZ_ASSERT_MSG(text == cur, text + " vs " + cur);
    }
    FUZZ_ASSERT(qscheme_fast_set_target(nullptr) == QSCHEME_OK);
    const int any = static_cast<int>(static_cast<std::int8_t>(t.b[12])) * 256 + t.b[13];
    const char* name = qscheme_status_name(any);
    FUZZ_ASSERT(name != nullptr && name[0] != '\0');
    if (any >= 0 && any <= QSCHEME_UNSUPPORTED_ENGINE) FUZZ_ASSERT(to_code(static_cast<ErrorCode>(any)) == name);
    else FUZZ_ASSERT(std::string(name) == "unknown");
    return 0;
  }

  const bool narrow = opt & kOptNarrow;
  std::size_t pos = 0;
  auto next_byte = [&]() -> std::uint8_t { return pos < payload.size() ? payload[pos++] : 0; };
  auto next_float = [&]() -> float {
    if (narrow) return static_cast<float>(static_cast<std::int8_t>(next_byte())) * 0.25f;
    std::uint8_t b[4] = {next_byte(), next_byte(), next_byte(), next_byte()};
    float f;
    std::memcpy(&f, b, 4);
    return f;
  };

  std::size_t out_len = kCanarySize;
  std::size_t* out_len_ptr = (nulls & kNullOutLen) ? nullptr : &out_len;

  if (op == 1) {  // qscheme_fast_quantize
    const std::size_t n = small ? adjust(layout->elements, n_delta)
                                : std::min<std::size_t>(narrow ? payload.size() : payload.size() / 4, kMaxElements);
    Canaried<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x.p[i] = next_float();
    const float* x_ptr = (nulls & kNullInput) ? nullptr : x.p.get();

    // Options: given scales sized to the layout, +1, -1 or none (bits 2-3 of opt). The +1 is a
    // lie: the array holds one scale fewer than given_count says, so a call that read the scales
    // before comparing the count with the layout would read past it.
    std::size_t given_count = 0, given_held = 0;
    if (opt & kOptGiven) {
      const std::uint64_t base = layout ? std::min<std::uint64_t>(layout->scales, kMaxElements) : 1;
      const int sel = (opt >> 2) & 3;
      given_count = sel == 0 ? base : sel == 1 ? base + 1 : sel == 2 ? adjust(base, -1) : 0;
      given_held = sel == 1 ? base : given_count;
    }
    Canaried<float> given(given_held);
    for (std::size_t i = 0; i < given_held; ++i) given.p[i] = next_float();
    qscheme_quantize_options o{profile,      calibration, nullptr, given_count, (opt & kOptGlobal) ? 1 : 0, next_float(),
                               (opt & kOptSinglePass) ? 1 : 0, 0, 0.0f};
    if (opt & kOptGlobalAmax) {
      o.has_global_amax = 1;
      o.global_amax = next_float();
    }
    if ((opt & kOptGiven) && !(nulls & kNullGiven)) o.given_scales = given.p.get();
    const qscheme_quantize_options* o_ptr = (opt & kOptPresent) ? &o : nullptr;

    // The C++ engine's answer for the same request.
    std::optional<std::vector<std::uint8_t>> want_bytes;
    int want;
    // Null pointers the call needs are checked first (out only once its capacity is known).
    if (!scheme || (!shape && rank) || (!x_ptr && n) || !out_len_ptr) want = QSCHEME_INVALID_ARGUMENT;
    else want = -1;
    if (want == -1) {
      QuantizeOptions qo;
      bool bad_opt = false;
      if (o_ptr) {
        bad_opt = (profile != 0 && profile != 1) || (calibration != 0 && calibration != 1);
        qo.profile = static_cast<Profile>(profile & 1);
        qo.calibration = static_cast<Calibration>(calibration & 1);
        if (o.given_scales || o.given_count || o.has_global) {
          if (!o.given_scales && o.given_count) bad_opt = true;
          GivenScales g;
          if (o.given_count && o.given_scales) {
            g.block.assign(o.given_scales, o.given_scales + given_held);
            g.block.resize(o.given_count);  // the count the call claims, for the engine's count check
          }
          if (o.has_global) g.global = o.global_scale;
          qo.scales = g;
        }
        if (o.has_global_amax) qo.global_amax = o.global_amax;
      }
      if (bad_opt) want = QSCHEME_INVALID_ARGUMENT;
      else if (!parsed.ok()) want = code_of(parsed.status());
      else {
        const auto q = fast::quantize(*parsed, shape_v, std::span<const float>(x.p.get(), n), qo);
        if (!q.ok()) want = code_of(q.status());
        else {
          auto b = fast::encode(*q);
          if (!b.ok()) want = code_of(b.status());
          else { want = QSCHEME_OK; want_bytes = std::move(*b); }
        }
      }
    }
    const std::size_t cap = adjust(want_bytes ? want_bytes->size() : (small ? layout->total_bytes : 16), cap_delta);
    Canaried<std::uint8_t> out(cap);
    std::uint8_t* out_ptr = (nulls & kNullOut) ? nullptr : out.p.get();
    if (!out_ptr && cap && want != QSCHEME_INVALID_ARGUMENT) want = QSCHEME_INVALID_ARGUMENT, want_bytes.reset();
    if (want == QSCHEME_OK && cap < want_bytes->size()) want = QSCHEME_SIZE_MISMATCH;

    const int st = qscheme_fast_quantize(scheme, shape, rank, x_ptr, n, o_ptr, out_ptr, cap, out_len_ptr, err_ptr);
    const std::string c = ctx("quantize", text, shape_v, st) + " n " + std::to_string(n) + " cap " + std::to_string(cap);
    FUZZ_TRACE("trace: %s\n", c.c_str());
    FUZZ_ASSERT_MSG(st == want, c + ", the C++ engine says " + std::to_string(want));
    check_err_index(st, c);
    if (st == QSCHEME_OK) {
      FUZZ_ASSERT_MSG(out_len == want_bytes->size(), c + ": out_len " + std::to_string(out_len));
      FUZZ_ASSERT_MSG(out_len == 0 || std::memcmp(out.p.get(), want_bytes->data(), out_len) == 0,
                      c + ": bytes differ from fast::encode");
      FUZZ_ASSERT_MSG(out.untouched_from(out_len), c + ": wrote past out_len");
    } else {
      // single_pass may have written units before a data error (qscheme.h), never past them.
      const bool data_error = st == QSCHEME_NON_FINITE_INPUT || st == QSCHEME_INVALID_SCALE ||
                              st == QSCHEME_ZERO_SCALE_NONZERO_INPUT || st == QSCHEME_UNSUPPORTED_PROFILE;
      const bool partial_ok = o_ptr && o.single_pass && data_error && layout;
      FUZZ_ASSERT_MSG(out.untouched_from(partial_ok ? std::min<std::size_t>(cap, layout->total_bytes) : 0),
                      c + ": output buffer written on error");
      const bool short_cap = st == QSCHEME_SIZE_MISMATCH && want_bytes && cap < want_bytes->size();
      FUZZ_ASSERT_MSG(out_len == kCanarySize || (short_cap && out_len == want_bytes->size()),
                      c + ": *out_len written on error: " + std::to_string(out_len));
    }
    return 0;
  }

  // op == 2: qscheme_fast_dequantize
  const std::size_t len = small ? adjust(layout->total_bytes, n_delta) : std::min<std::size_t>(payload.size(), 1 << 20);
  Canaried<std::uint8_t> bytes(len);
  for (std::size_t i = 0; i < len; ++i) bytes.p[i] = next_byte();
  const std::uint8_t* bytes_ptr = (nulls & kNullInput) ? nullptr : bytes.p.get();

  int want = -1;
  std::optional<std::vector<float>> want_floats;
  if (!scheme || (!shape && rank) || (!bytes_ptr && len) || !out_len_ptr) want = QSCHEME_INVALID_ARGUMENT;
  else if (profile != 0 && profile != 1) want = QSCHEME_INVALID_ARGUMENT;
  else if (!parsed.ok()) want = code_of(parsed.status());
  else {
    const auto q = fast::decode(*parsed, shape_v, std::span<const std::uint8_t>(bytes.p.get(), len),
                                static_cast<Profile>(profile));
    if (!q.ok()) want = code_of(q.status());
    else {
      auto d = fast::dequantize(*q);
      if (!d.ok()) want = code_of(d.status());
      else { want = QSCHEME_OK; want_floats = std::move(*d); }
    }
  }
  const std::size_t cap = adjust(want_floats ? want_floats->size() : (small ? layout->elements : 16), cap_delta);
  Canaried<float> out(cap);
  float* out_ptr = (nulls & kNullOut) ? nullptr : out.p.get();
  if (!out_ptr && cap && want != QSCHEME_INVALID_ARGUMENT) want = QSCHEME_INVALID_ARGUMENT, want_floats.reset();
  if (want == QSCHEME_OK && cap < want_floats->size()) want = QSCHEME_SIZE_MISMATCH;

  const int st = qscheme_fast_dequantize(scheme, shape, rank, bytes_ptr, len, profile, out_ptr, cap, out_len_ptr, err_ptr);
  const std::string c = ctx("dequantize", text, shape_v, st) + " len " + std::to_string(len) + " cap " + std::to_string(cap);
  FUZZ_TRACE("trace: %s\n", c.c_str());
  FUZZ_ASSERT_MSG(st == want, c + ", the C++ engine says " + std::to_string(want));
  check_err_index(st, c);
  if (st == QSCHEME_OK) {
    FUZZ_ASSERT_MSG(out_len == want_floats->size(), c + ": out_len " + std::to_string(out_len));
    FUZZ_ASSERT_MSG(out_len == 0 || std::memcmp(out.p.get(), want_floats->data(), out_len * sizeof(float)) == 0,
                    c + ": values differ from fast::dequantize");
    FUZZ_ASSERT_MSG(out.untouched_from(out_len), c + ": wrote past out_len");
  } else {
    FUZZ_ASSERT_MSG(out.untouched_from(0), c + ": output buffer written on error");
    const bool short_cap = st == QSCHEME_SIZE_MISMATCH && want_floats && cap < want_floats->size();
    FUZZ_ASSERT_MSG(out_len == kCanarySize || (short_cap && out_len == want_floats->size()),
                    c + ": *out_len written on error: " + std::to_string(out_len));
  }
  return 0;
}
