// C API (fast/qscheme.h) over qscheme::fast. Every entry point catches everything: no exception
// crosses the boundary; outputs are written only on success.
#include "fast/qscheme.h"

#include <cstring>
#include <optional>
#include <span>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "fast/fast.hpp"
#include "fast/output_dtype.hpp"
#include "scheme/byte_format.hpp"
#include "scheme/errors.hpp"
#include "scheme/layout.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"

namespace {

using qscheme::ErrorCode;

static_assert(static_cast<int>(ErrorCode::size_mismatch) == QSCHEME_SIZE_MISMATCH);
static_assert(static_cast<int>(ErrorCode::corrupt_bytes) == QSCHEME_CORRUPT_BYTES);
static_assert(static_cast<int>(ErrorCode::invalid_argument) == QSCHEME_INVALID_ARGUMENT);
static_assert(static_cast<int>(ErrorCode::internal) == QSCHEME_INTERNAL);
static_assert(static_cast<int>(ErrorCode::unsupported_engine) == QSCHEME_UNSUPPORTED_ENGINE);
static_assert(static_cast<int>(ErrorCode::non_finite_input) == QSCHEME_NON_FINITE_INPUT);
static_assert(static_cast<int>(ErrorCode::unsupported_profile) == QSCHEME_UNSUPPORTED_PROFILE);
static_assert(QSCHEME_MAX_THREADS == qscheme::fast::kMaxThreads);

// The calling thread's last error message (qscheme_last_error_message); empty after a success.
thread_local std::string t_message;

// Never throws: a message that cannot be stored is dropped, the status still says what failed.
void SetMessage(std::string_view m) noexcept {
  try {
    t_message.assign(m);
  } catch (...) {
    t_message.clear();
  }
}

int Fail(const qscheme::Status& s, uint64_t* err_index) {
  if (err_index) *err_index = s.index() == qscheme::kNoIndex ? UINT64_MAX : static_cast<uint64_t>(s.index());
  SetMessage(s.message());
  return static_cast<int>(s.code());
}
int Fail(int code, std::string_view why, uint64_t* err_index) {
  if (err_index) *err_index = UINT64_MAX;
  SetMessage(why);
  return code;
}
int Ok(uint64_t* err_index) {
  if (err_index) *err_index = UINT64_MAX;
  t_message.clear();
  return QSCHEME_OK;
}

// The first NULL among the named pointers that must not be NULL, as an invalid-argument error.
int NullArgument(const char* name, uint64_t* err_index) {
  return Fail(QSCHEME_INVALID_ARGUMENT, std::string(name) + " is NULL; pass a valid pointer", err_index);
}

template <class Fn>
int Guard(uint64_t* err_index, Fn fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Fail(QSCHEME_INTERNAL, "out of memory", err_index);
  } catch (const std::exception& e) {
    return Fail(QSCHEME_INTERNAL, e.what(), err_index);
  } catch (...) {
    return Fail(QSCHEME_INTERNAL, "an unknown exception inside qscheme (a bug, please report)", err_index);
  }
}

std::string Count(std::uint64_t n, const char* unit) { return std::to_string(n) + " " + unit; }

// The scheme, shape and layout of a call, checked in the engines' order (text, scheme rules,
// rank, sizes). rank is the caller's word for how many entries `shape` has: a rank above
// kMaxRank is reported before the shape is formed, so no entry past those the engines could
// take is read.
struct Tensor {
  qscheme::Scheme scheme;
  qscheme::Shape shape;
  qscheme::Layout layout;
};
qscheme::Result<Tensor> ParseTensor(qscheme::Result<qscheme::Scheme> s, const uint64_t* shape, size_t rank) {
  if (!s) return s.status();
  QSCHEME_RETURN_IF_ERROR(qscheme::validate_scheme(*s));
  QSCHEME_RETURN_IF_ERROR(qscheme::validate_rank(rank));
  const qscheme::Shape sh(shape, rank);
  auto l = qscheme::make_layout(*s, sh);
  if (!l) return l.status();
  return Tensor{*std::move(s), sh, *std::move(l)};
}
qscheme::Result<Tensor> ParseTensor(const char* scheme, const uint64_t* shape, size_t rank) {
  return ParseTensor(qscheme::parse_scheme(scheme), shape, rank);
}

// A recipe by name (NULL: none), and the scheme of a call: the given text, or the recipe's
// first scheme when it is NULL or empty.
qscheme::Result<const qscheme::Recipe*> FindRecipe(const char* name) {
  if (!name) return static_cast<const qscheme::Recipe*>(nullptr);
  return qscheme::find_recipe(name);
}
// The byte format of a call: the recipe's own (ggml's blocks for the ggml recipes), else Burn's.
qscheme::ByteFormat FormatOf(const qscheme::Recipe* r) { return r ? r->format : qscheme::ByteFormat::burn; }
qscheme::Result<qscheme::Scheme> SchemeOf(const qscheme::Recipe* r, const char* scheme) {
  if (!r) return qscheme::parse_scheme(scheme);
  return qscheme::recipe_scheme(*r, scheme ? scheme : "");
}

}  // namespace

extern "C" {

const char* qscheme_status_name(int status) {
  if (status < 0 || status > QSCHEME_UNSUPPORTED_ENGINE) return "unknown";
  static std::string names[QSCHEME_UNSUPPORTED_ENGINE + 1];
  static const bool init = [] {
    for (int i = 0; i <= QSCHEME_UNSUPPORTED_ENGINE; ++i) names[i] = std::string(qscheme::to_code(static_cast<ErrorCode>(i)));
    return true;
  }();
  (void)init;
  return names[status].c_str();
}

int qscheme_fast_bytes_size(const char* scheme, const uint64_t* shape, size_t rank, size_t* bytes, uint64_t* err_index) {
  return Guard(err_index, [&] {
    if (!scheme) return NullArgument("scheme", err_index);
    if (!shape && rank) return NullArgument("shape (with rank > 0)", err_index);
    if (!bytes) return NullArgument("bytes", err_index);
    const auto t = ParseTensor(scheme, shape, rank);
    if (!t) return Fail(t.status(), err_index);
    *bytes = static_cast<size_t>(t->layout.total_bytes);
    return Ok(err_index);
  });
}

}  // extern "C"

namespace {

int Quantize(const char* recipe, const char* scheme, const uint64_t* shape, size_t rank, const float* x, size_t n,
             const qscheme_quantize_options* options, uint8_t* out, size_t out_cap, size_t* out_len,
             uint64_t* err_index) {
  return Guard(err_index, [&] {
    if (!scheme && !recipe) return NullArgument("scheme", err_index);
    if (!shape && rank) return NullArgument("shape (with rank > 0)", err_index);
    if (!x && n) return NullArgument("x (with n > 0)", err_index);
    if (!out_len) return NullArgument("out_len", err_index);
    if (!out && out_cap) return NullArgument("out (with out_cap > 0)", err_index);
    qscheme::QuantizeOptions o;
    if (options) {
      if (options->profile != QSCHEME_PROFILE_EXACT && options->profile != QSCHEME_PROFILE_BURN) {
        return Fail(QSCHEME_INVALID_ARGUMENT,
                    "options->profile is " + std::to_string(options->profile) +
                        "; use QSCHEME_PROFILE_EXACT (0) or QSCHEME_PROFILE_BURN (1)",
                    err_index);
      }
      if (options->calibration != QSCHEME_CALIBRATION_MINMAX && options->calibration != QSCHEME_CALIBRATION_ABSMEAN) {
        return Fail(QSCHEME_INVALID_ARGUMENT,
                    "options->calibration is " + std::to_string(options->calibration) +
                        "; use QSCHEME_CALIBRATION_MINMAX (0) or QSCHEME_CALIBRATION_ABSMEAN (1)",
                    err_index);
      }
      o.profile = static_cast<qscheme::Profile>(options->profile);
      o.calibration = static_cast<qscheme::Calibration>(options->calibration);
      if (!options->given_scales && options->given_count) {
        return NullArgument("options->given_scales (with given_count > 0)", err_index);
      }
    }
    const auto r = FindRecipe(recipe);
    if (!r) return Fail(r.status(), err_index);
    if (*r) o = qscheme::recipe_options(**r, o);  // the recipe's point decides, not options->profile
    // Every count the caller gives is checked against the layout before the memory it describes
    // is read, in the engines' order (layout, input size, scale count: errors.hpp), so a call
    // with several faults gets the C++ API's first error.
    const auto t = ParseTensor(SchemeOf(*r, scheme), shape, rank);
    if (!t) return Fail(t.status(), err_index);
    const qscheme::Scheme& s = t->scheme;
    const qscheme::Shape sh = t->shape;
    const qscheme::Layout& l = t->layout;
    if (n != l.elements) return Fail(qscheme::errors::input_size(n, l.elements), err_index);
    if (options && (options->given_scales || options->given_count || options->has_global)) {
      if (options->given_count != l.scales) {
        return Fail(qscheme::errors::given_scale_count(options->given_count, l.scales), err_index);
      }
      qscheme::GivenScales g;
      g.block.assign(options->given_scales, options->given_scales + l.scales);
      if (options->has_global) g.global = options->global_scale;
      o.scales = std::move(g);
    }
    if (options && options->has_global_amax) o.global_amax = options->global_amax;
    // The byte count in the recipe's format: ggml's blocks need a layout of their own, whose error
    // comes after quantize's (the C++ API's order).
    const qscheme::ByteFormat format = FormatOf(*r);
    std::uint64_t total = l.total_bytes;
    if (format == qscheme::ByteFormat::ggml) {
      const auto g = qscheme::ggml_layout(s, sh);
      if (!g) {
        const auto q = qscheme::fast::quantize(s, sh, std::span<const float>(x, n), o);
        return Fail(q ? g.status() : q.status(), err_index);
      }
      total = g->total_bytes;
    }
    // Room for the bytes: the fused path writes them in place (every error found before its
    // first write; with single_pass, a non-finite x found later leaves out unspecified).
    if (out_cap >= total) {
      const auto pol = options && options->single_pass ? qscheme::fast::OutputPolicy::single_pass
                                                       : qscheme::fast::OutputPolicy::untouched_on_error;
      const qscheme::Status st =
          qscheme::fast::quantize_to_bytes(s, sh, x, n, o, format, out, static_cast<std::size_t>(total), pol);
      if (!st.ok()) return Fail(st, err_index);
      *out_len = static_cast<size_t>(total);
      return Ok(err_index);
    }
    // Too little room: the data errors first, in their documented order, out untouched.
    const auto q = qscheme::fast::quantize(s, sh, std::span<const float>(x, n), o);
    if (!q) return Fail(q.status(), err_index);
    const auto b = qscheme::fast::encode(*q, format);
    if (!b) return Fail(b.status(), err_index);
    *out_len = b->size();
    if (out_cap < b->size()) {
      return Fail(QSCHEME_SIZE_MISMATCH,
                  "out_cap is " + Count(out_cap, "byte(s)") + ", the tensor takes " + Count(b->size(), "byte(s)") +
                      " (now in *out_len); qscheme_fast_bytes_size gives it beforehand",
                  err_index);
    }
    if (!b->empty()) std::memcpy(out, b->data(), b->size());
    return Ok(err_index);
  });
}

// The pointer, count and profile checks of the dequantize entry points, in order: the failing
// one's return code, or nothing when all pass.
std::optional<int> BadDequantizeArgs(bool named, const uint64_t* shape, size_t rank, const uint8_t* bytes, size_t len,
                                     const void* out, size_t out_cap, const size_t* out_len, int profile,
                                     uint64_t* err_index) {
  if (!named) return NullArgument("scheme", err_index);
  if (!shape && rank) return NullArgument("shape (with rank > 0)", err_index);
  if (!bytes && len) return NullArgument("bytes (with len > 0)", err_index);
  if (!out_len) return NullArgument("out_len", err_index);
  if (!out && out_cap) return NullArgument("out (with out_cap > 0)", err_index);
  if (profile != QSCHEME_PROFILE_EXACT && profile != QSCHEME_PROFILE_BURN) {
    return Fail(QSCHEME_INVALID_ARGUMENT,
                "profile is " + std::to_string(profile) + "; use QSCHEME_PROFILE_EXACT (0) or QSCHEME_PROFILE_BURN (1)",
                err_index);
  }
  return std::nullopt;
}

int Dequantize(const char* recipe, const char* scheme, const uint64_t* shape, size_t rank, const uint8_t* bytes,
               size_t len, int profile, float* out, size_t out_cap, size_t* out_len, uint64_t* err_index) {
  return Guard(err_index, [&] {
    if (const std::optional<int> bad =
            BadDequantizeArgs(scheme || recipe, shape, rank, bytes, len, out, out_cap, out_len, profile, err_index)) {
      return *bad;
    }
    const auto r = FindRecipe(recipe);
    if (!r) return Fail(r.status(), err_index);
    // A recipe's bytes are read under its point (dequantize_from_bytes checks that the fast engine
    // reads it: every recipe's point is read).
    const qscheme::Rules rules = *r ? (*r)->rules : qscheme::profile_rules(static_cast<qscheme::Profile>(profile));
    const qscheme::ByteFormat format = FormatOf(*r);
    // len is checked against the layout before a byte is read, as decode does first.
    const auto t = ParseTensor(SchemeOf(*r, scheme), shape, rank);
    if (!t) return Fail(t.status(), err_index);
    const qscheme::Scheme& s = t->scheme;
    const qscheme::Shape sh = t->shape;
    const qscheme::Layout& l = t->layout;
    if (format == qscheme::ByteFormat::ggml) {
      const auto g = qscheme::ggml_layout(s, sh);
      if (!g) return Fail(g.status(), err_index);
      if (len != g->total_bytes) {
        return Fail(qscheme::errors::ggml_byte_count(len, g->blocks, g->block_bytes, g->total_bytes), err_index);
      }
    } else if (len != l.total_bytes) {
      return Fail(qscheme::errors::byte_count(len, l), err_index);
    }
    if (out_cap >= l.elements) {
      const std::size_t ne = static_cast<std::size_t>(l.elements);
      const qscheme::Status st =
          *r ? qscheme::fast::dequantize_from_bytes(s, sh, bytes, len, rules, format, out, ne)
             : qscheme::fast::dequantize_from_bytes(s, sh, bytes, len, static_cast<qscheme::Profile>(profile), out, ne);
      if (!st.ok()) return Fail(st, err_index);
      *out_len = ne;
      return Ok(err_index);
    }
    // Too little room: the data errors first, in their documented order, out untouched.
    const auto q = qscheme::fast::decode(s, sh, std::span<const std::uint8_t>(bytes, len), rules, format);
    if (!q) return Fail(q.status(), err_index);
    const auto d = qscheme::fast::dequantize(*q);
    if (!d) return Fail(d.status(), err_index);
    *out_len = d->size();
    if (out_cap < d->size()) {
      return Fail(QSCHEME_SIZE_MISMATCH,
                  "out_cap is " + Count(out_cap, "float(s)") + ", the tensor has " + Count(d->size(), "element(s)") +
                      " (now in *out_len)",
                  err_index);
    }
    if (!d->empty()) std::memcpy(out, d->data(), d->size() * sizeof(float));
    return Ok(err_index);
  });
}

}  // namespace

extern "C" {

int qscheme_fast_recipe_bytes_size(const char* recipe, const char* scheme, const uint64_t* shape, size_t rank,
                                   size_t* bytes, uint64_t* err_index) {
  return Guard(err_index, [&] {
    if (!recipe) return NullArgument("recipe", err_index);
    if (!shape && rank) return NullArgument("shape (with rank > 0)", err_index);
    if (!bytes) return NullArgument("bytes", err_index);
    const auto r = FindRecipe(recipe);
    if (!r) return Fail(r.status(), err_index);
    const auto t = ParseTensor(SchemeOf(*r, scheme), shape, rank);
    if (!t) return Fail(t.status(), err_index);
    std::uint64_t total = t->layout.total_bytes;
    if (FormatOf(*r) == qscheme::ByteFormat::ggml) {
      const auto g = qscheme::ggml_layout(t->scheme, t->shape);
      if (!g) return Fail(g.status(), err_index);
      total = g->total_bytes;
    }
    *bytes = static_cast<size_t>(total);
    return Ok(err_index);
  });
}

int qscheme_fast_quantize(const char* scheme, const uint64_t* shape, size_t rank, const float* x, size_t n,
                          const qscheme_quantize_options* options, uint8_t* out, size_t out_cap, size_t* out_len,
                          uint64_t* err_index) {
  return Quantize(nullptr, scheme, shape, rank, x, n, options, out, out_cap, out_len, err_index);
}

int qscheme_fast_quantize_recipe(const char* recipe, const char* scheme, const uint64_t* shape, size_t rank,
                                 const float* x, size_t n, const qscheme_quantize_options* options, uint8_t* out,
                                 size_t out_cap, size_t* out_len, uint64_t* err_index) {
  if (!recipe) return Guard(err_index, [&] { return NullArgument("recipe", err_index); });
  return Quantize(recipe, scheme, shape, rank, x, n, options, out, out_cap, out_len, err_index);
}

int qscheme_fast_dequantize(const char* scheme, const uint64_t* shape, size_t rank, const uint8_t* bytes, size_t len,
                            int profile, float* out, size_t out_cap, size_t* out_len, uint64_t* err_index) {
  return Dequantize(nullptr, scheme, shape, rank, bytes, len, profile, out, out_cap, out_len, err_index);
}

int qscheme_fast_dequantize_to(const char* scheme, const uint64_t* shape, size_t rank, const uint8_t* bytes,
                               size_t len, int profile, int out_dtype, void* out, size_t out_cap, size_t* out_len,
                               uint64_t* err_index) {
  if (out_dtype == QSCHEME_OUT_F32) {
    return Dequantize(nullptr, scheme, shape, rank, bytes, len, profile, static_cast<float*>(out), out_cap, out_len,
                      err_index);
  }
  return Guard(err_index, [&] {
    if (out_dtype != QSCHEME_OUT_F16 && out_dtype != QSCHEME_OUT_BF16) {
      return Fail(QSCHEME_INVALID_ARGUMENT,
                  "out_dtype is " + std::to_string(out_dtype) +
                      "; use QSCHEME_OUT_F32 (0), QSCHEME_OUT_F16 (1) or QSCHEME_OUT_BF16 (2)",
                  err_index);
    }
    if (const std::optional<int> bad =
            BadDequantizeArgs(scheme, shape, rank, bytes, len, out, out_cap, out_len, profile, err_index)) {
      return *bad;
    }
    const auto t = ParseTensor(scheme, shape, rank);
    if (!t) return Fail(t.status(), err_index);
    if (len != t->layout.total_bytes) return Fail(qscheme::errors::byte_count(len, t->layout), err_index);
    // The data's errors first, in their documented order, then the room: out untouched on error.
    const auto q = qscheme::fast::decode(t->scheme, t->shape, std::span<const std::uint8_t>(bytes, len),
                                         static_cast<qscheme::Profile>(profile));
    if (!q) return Fail(q.status(), err_index);
    const auto h = qscheme::fast::dequantize_16(
        *q, out_dtype == QSCHEME_OUT_F16 ? qscheme::OutputDtype::f16 : qscheme::OutputDtype::bf16);
    if (!h) return Fail(h.status(), err_index);
    *out_len = h->size();
    if (out_cap < h->size()) {
      return Fail(QSCHEME_SIZE_MISMATCH,
                  "out_cap is " + Count(out_cap, "element(s)") + ", the tensor has " + Count(h->size(), "element(s)") +
                      " (now in *out_len)",
                  err_index);
    }
    if (!h->empty()) std::memcpy(out, h->data(), h->size() * sizeof(std::uint16_t));
    return Ok(err_index);
  });
}

int qscheme_fast_dequantize_recipe(const char* recipe, const char* scheme, const uint64_t* shape, size_t rank,
                                   const uint8_t* bytes, size_t len, float* out, size_t out_cap, size_t* out_len,
                                   uint64_t* err_index) {
  if (!recipe) return Guard(err_index, [&] { return NullArgument("recipe", err_index); });
  return Dequantize(recipe, scheme, shape, rank, bytes, len, QSCHEME_PROFILE_EXACT, out, out_cap, out_len, err_index);
}

size_t qscheme_last_error_message(char* buf, size_t cap) {
  const size_t n = t_message.size();
  if (buf && cap) {
    const size_t k = n < cap - 1 ? n : cap - 1;
    std::memcpy(buf, t_message.data(), k);
    buf[k] = '\0';
  }
  return n;
}

void qscheme_fast_release_scratch(void) { qscheme::fast::release_scratch(); }

void qscheme_fast_warm_up(void) { qscheme::fast::warm_up(); }

int qscheme_fast_set_threads(unsigned n) {
  return Guard(nullptr, [&] {
    const qscheme::Status st = qscheme::fast::set_threads(n);
    return st.ok() ? Ok(nullptr) : Fail(st, nullptr);
  });
}

int qscheme_fast_set_target(const char* name) {
  return Guard(nullptr, [&] {
    if (qscheme::fast::set_target(name ? name : "")) return Ok(nullptr);
    return Fail(QSCHEME_INVALID_ARGUMENT,
                "target \"" + std::string(name ? name : "") + "\" is not one this build compiled for this CPU; `qscheme info` lists them",
                nullptr);
  });
}

int qscheme_fast_target_env_status(void) {
  return Guard(nullptr, [&] {
    const qscheme::Status st = qscheme::fast::target_env_status();
    return st.ok() ? Ok(nullptr) : Fail(st, nullptr);
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
