// C API (fast/qscheme.h) over qscheme::fast. Every entry point catches everything: no exception
// crosses the boundary; outputs are written only on success.
#include "fast/qscheme.h"

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"

namespace {

using qscheme::ErrorCode;

static_assert(static_cast<int>(ErrorCode::size_mismatch) == QSCHEME_SIZE_MISMATCH);
static_assert(static_cast<int>(ErrorCode::corrupt_bytes) == QSCHEME_CORRUPT_BYTES);
static_assert(static_cast<int>(ErrorCode::invalid_argument) == QSCHEME_INVALID_ARGUMENT);
static_assert(static_cast<int>(ErrorCode::internal) == QSCHEME_INTERNAL);
static_assert(static_cast<int>(ErrorCode::non_finite_input) == QSCHEME_NON_FINITE_INPUT);
static_assert(static_cast<int>(ErrorCode::unsupported_profile) == QSCHEME_UNSUPPORTED_PROFILE);

int Fail(const qscheme::Status& s, uint64_t* err_index) {
  if (err_index) *err_index = s.index() == qscheme::kNoIndex ? UINT64_MAX : static_cast<uint64_t>(s.index());
  return static_cast<int>(s.code());
}
int Fail(int code, uint64_t* err_index) {
  if (err_index) *err_index = UINT64_MAX;
  return code;
}

template <class Fn>
int Guard(uint64_t* err_index, Fn fn) {
  try {
    return fn();
  } catch (...) {
    return Fail(QSCHEME_INTERNAL, err_index);
  }
}

}  // namespace

extern "C" {

const char* qscheme_status_name(int status) {
  if (status < 0 || status > QSCHEME_INTERNAL) return "unknown";
  static std::string names[QSCHEME_INTERNAL + 1];
  static const bool init = [] {
    for (int i = 0; i <= QSCHEME_INTERNAL; ++i) names[i] = std::string(qscheme::to_code(static_cast<ErrorCode>(i)));
    return true;
  }();
  (void)init;
  return names[status].c_str();
}

int qscheme_fast_bytes_size(const char* scheme, const uint64_t* shape, size_t rank, size_t* bytes, uint64_t* err_index) {
  return Guard(err_index, [&] {
    if (!scheme || (!shape && rank) || !bytes) return Fail(QSCHEME_INVALID_ARGUMENT, err_index);
    const auto s = qscheme::parse_scheme(scheme);
    if (!s) return Fail(s.status(), err_index);
    const auto l = qscheme::make_layout(*s, qscheme::Shape(shape, rank));
    if (!l) return Fail(l.status(), err_index);
    *bytes = static_cast<size_t>(l->total_bytes);
    if (err_index) *err_index = UINT64_MAX;
    return static_cast<int>(QSCHEME_OK);
  });
}

int qscheme_fast_quantize(const char* scheme, const uint64_t* shape, size_t rank, const float* x, size_t n,
                          const qscheme_quantize_options* options, uint8_t* out, size_t out_cap, size_t* out_len,
                          uint64_t* err_index) {
  return Guard(err_index, [&] {
    if (!scheme || (!shape && rank) || (!x && n) || !out_len || (!out && out_cap)) {
      return Fail(QSCHEME_INVALID_ARGUMENT, err_index);
    }
    qscheme::QuantizeOptions o;
    if (options) {
      if (options->profile != QSCHEME_PROFILE_EXACT && options->profile != QSCHEME_PROFILE_BURN) {
        return Fail(QSCHEME_INVALID_ARGUMENT, err_index);
      }
      if (options->calibration != QSCHEME_CALIBRATION_MINMAX && options->calibration != QSCHEME_CALIBRATION_ABSMEAN) {
        return Fail(QSCHEME_INVALID_ARGUMENT, err_index);
      }
      o.profile = static_cast<qscheme::Profile>(options->profile);
      o.calibration = static_cast<qscheme::Calibration>(options->calibration);
      if (options->given_scales || options->given_count || options->has_global) {
        if (!options->given_scales && options->given_count) return Fail(QSCHEME_INVALID_ARGUMENT, err_index);
        qscheme::GivenScales g;
        if (options->given_count) g.block.assign(options->given_scales, options->given_scales + options->given_count);
        if (options->has_global) g.global = options->global_scale;
        o.scales = std::move(g);
      }
    }
    const auto s = qscheme::parse_scheme(scheme);
    if (!s) return Fail(s.status(), err_index);
    const qscheme::Shape sh(shape, rank);
    // Room for the bytes: the fused path writes them in place (every error found before its
    // first write; with single_pass, a non-finite x found later leaves out unspecified).
    if (const auto l = qscheme::make_layout(*s, sh); l && out_cap >= l->total_bytes) {
      const auto pol = options && options->single_pass ? qscheme::fast::OutputPolicy::single_pass
                                                       : qscheme::fast::OutputPolicy::untouched_on_error;
      const qscheme::Status st =
          qscheme::fast::quantize_to_bytes(*s, sh, x, n, o, out, static_cast<std::size_t>(l->total_bytes), pol);
      if (!st.ok()) return Fail(st, err_index);
      *out_len = static_cast<size_t>(l->total_bytes);
      if (err_index) *err_index = UINT64_MAX;
      return static_cast<int>(QSCHEME_OK);
    }
    // Too little room (or no layout): the errors in their documented order, out untouched.
    const auto q = qscheme::fast::quantize(*s, sh, std::span<const float>(x, n), o);
    if (!q) return Fail(q.status(), err_index);
    const auto b = qscheme::fast::encode(*q);
    if (!b) return Fail(b.status(), err_index);
    *out_len = b->size();
    if (out_cap < b->size()) return Fail(QSCHEME_SIZE_MISMATCH, err_index);
    if (!b->empty()) std::memcpy(out, b->data(), b->size());
    if (err_index) *err_index = UINT64_MAX;
    return static_cast<int>(QSCHEME_OK);
  });
}

int qscheme_fast_dequantize(const char* scheme, const uint64_t* shape, size_t rank, const uint8_t* bytes, size_t len,
                            int profile, float* out, size_t out_cap, size_t* out_len, uint64_t* err_index) {
  return Guard(err_index, [&] {
    if (!scheme || (!shape && rank) || (!bytes && len) || !out_len || (!out && out_cap)) {
      return Fail(QSCHEME_INVALID_ARGUMENT, err_index);
    }
    if (profile != QSCHEME_PROFILE_EXACT && profile != QSCHEME_PROFILE_BURN) return Fail(QSCHEME_INVALID_ARGUMENT, err_index);
    const auto s = qscheme::parse_scheme(scheme);
    if (!s) return Fail(s.status(), err_index);
    const qscheme::Shape sh(shape, rank);
    if (const auto l = qscheme::make_layout(*s, sh); l && len == l->total_bytes && out_cap >= l->elements) {
      const qscheme::Status st = qscheme::fast::dequantize_from_bytes(
          *s, sh, bytes, len, static_cast<qscheme::Profile>(profile), out, static_cast<std::size_t>(l->elements));
      if (!st.ok()) return Fail(st, err_index);
      *out_len = static_cast<size_t>(l->elements);
      if (err_index) *err_index = UINT64_MAX;
      return static_cast<int>(QSCHEME_OK);
    }
    const auto q = qscheme::fast::decode(*s, sh, std::span<const std::uint8_t>(bytes, len), static_cast<qscheme::Profile>(profile));
    if (!q) return Fail(q.status(), err_index);
    const auto d = qscheme::fast::dequantize(*q);
    if (!d) return Fail(d.status(), err_index);
    *out_len = d->size();
    if (out_cap < d->size()) return Fail(QSCHEME_SIZE_MISMATCH, err_index);
    if (!d->empty()) std::memcpy(out, d->data(), d->size() * sizeof(float));
    if (err_index) *err_index = UINT64_MAX;
    return static_cast<int>(QSCHEME_OK);
  });
}

void qscheme_fast_release_scratch(void) { qscheme::fast::release_scratch(); }

int qscheme_fast_set_threads(unsigned n) {
  return Guard(nullptr, [&] {
    qscheme::fast::set_threads(n);
    return static_cast<int>(QSCHEME_OK);
  });
}

int qscheme_fast_set_target(const char* name) {
  return Guard(nullptr, [&] {
    return qscheme::fast::set_target(name ? name : "") ? static_cast<int>(QSCHEME_OK) : static_cast<int>(QSCHEME_INVALID_ARGUMENT);
  });
}

const char* qscheme_fast_current_target(void) {
  try {
    static thread_local std::string name;
    name = qscheme::fast::current_target();
    return name.c_str();
  } catch (...) {
    return "unknown";
  }
}

}  // extern "C"
