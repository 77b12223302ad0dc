// Errors are values in qscheme: every entry point that can meet bad input returns a Status or a
// Result<T>, never throws on a hot path and never aborts. Only tools/ turns codes into messages
// on stderr and exit statuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace qscheme {

// One enumerator per distinct input condition. The kebab-case spelling (to_code) is stable:
// scripts and the C API match on it, so never rename one, only add.
enum class ErrorCode : std::uint8_t {
  ok = 0,
  // Scheme text and binary form.
  malformed_scheme,           // the text is not in the scheme grammar; index = byte offset
  malformed_binary_scheme,    // a binary scheme field is unknown, out of range or truncated
  unsupported_binary_version, // the binary scheme's version byte is not one this build reads
  // Scheme-level validation (shape independent).
  lookup_table_missing,       // mode lookup without a lookup table
  packed_native_unsupported,  // packed-native for a value with no native pair form
  zero_block_extent,          // a block extent of 0
  two_level_block_dtype,      // two levels, block dtype reaches beyond f16's range
  two_level_global_dtype,     // two levels, per-tensor dtype not f32
  // Shape-dependent validation.
  rank_too_large,             // tensor rank above kMaxRank
  packing_dim_out_of_range,   // packed dim not inside the tensor's rank
  block_rank_exceeds_tensor,  // block has more dims than the tensor
  shape_overflow,             // element, storage or byte count does not fit in 64 bits
  // Data (later engines).
  non_finite_input,           // NaN or infinity in the input; index = first element
  invalid_scale,              // a supplied scale is negative, NaN or infinite; index = scale
  zero_scale_nonzero_input,   // a zero scale over a block holding a non-zero value
  size_mismatch,              // a buffer's length disagrees with scheme and shape
  corrupt_bytes,              // serialized bytes hold a value the scheme cannot produce
  unsupported_npy,            // an .npy file that is not little-endian f32 in C order
  unsupported_profile,        // a profile that does not define this scheme/calibration
  invalid_argument,           // a caller error not covered above (null pointer, bad option)
  io_error,                   // a file could not be read or written
  internal,                   // a broken invariant inside qscheme: a bug, please report
  unsupported_engine,         // the engine asked for does not implement this scheme (the other does)
};

// The highest code: codes are 0 (ok) to this, with no gaps.
inline constexpr ErrorCode kLastErrorCode = ErrorCode::unsupported_engine;

// The stable kebab-case name of a code, e.g. "packing-dim-out-of-range".
std::string_view to_code(ErrorCode code) noexcept;
// Inverse of to_code; nullopt for an unknown name.
std::optional<ErrorCode> error_code_from_string(std::string_view name) noexcept;

inline constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);

// The outcome of an operation that produces nothing but success or an error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message, std::size_t index = kNoIndex)
      : code_(code), message_(std::move(message)), index_(index) {}

  static Status Ok() { return {}; }
  bool ok() const noexcept { return code_ == ErrorCode::ok; }
  explicit operator bool() const noexcept { return ok(); }
  ErrorCode code() const noexcept { return code_; }
  // What is wrong and how to fix it, one sentence or two, no trailing newline.
  const std::string& message() const noexcept { return message_; }
  // The byte offset (text), element or scale index the error refers to, or kNoIndex.
  std::size_t index() const noexcept { return index_; }
  // "code: message", the form tools/ prints after "error: ".
  std::string to_string() const;

  friend bool operator==(const Status& a, const Status& b) { return a.code_ == b.code_; }

 private:
  ErrorCode code_ = ErrorCode::ok;
  std::string message_;
  std::size_t index_ = kNoIndex;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}          // NOLINT: implicit by design
  Result(ErrorCode code, std::string message, std::size_t index = kNoIndex)
      : v_(Status(code, std::move(message), index)) {}

  bool ok() const noexcept { return std::holds_alternative<T>(v_); }
  explicit operator bool() const noexcept { return ok(); }
  // Precondition: ok().
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  // Ok() when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace qscheme

// Propagate a non-ok Status (or a Result's status) to the caller.
#define QSCHEME_RETURN_IF_ERROR(expr)                 \
  do {                                                \
    ::qscheme::Status qscheme_status_ = (expr);       \
    if (!qscheme_status_.ok()) return qscheme_status_; \
  } while (0)
