#include "scheme/status.hpp"

#include <array>

namespace qscheme {
namespace {

struct CodeName {
  ErrorCode code;
  std::string_view name;
};

constexpr std::array kNames{
    CodeName{ErrorCode::ok, "ok"},
    CodeName{ErrorCode::malformed_scheme, "malformed-scheme"},
    CodeName{ErrorCode::malformed_binary_scheme, "malformed-binary-scheme"},
    CodeName{ErrorCode::unsupported_binary_version, "unsupported-binary-version"},
    CodeName{ErrorCode::lookup_table_missing, "lookup-table-missing"},
    CodeName{ErrorCode::packed_native_unsupported, "packed-native-unsupported"},
    CodeName{ErrorCode::zero_block_extent, "zero-block-extent"},
    CodeName{ErrorCode::two_level_block_dtype, "two-level-block-dtype"},
    CodeName{ErrorCode::two_level_global_dtype, "two-level-global-dtype"},
    CodeName{ErrorCode::rank_too_large, "rank-too-large"},
    CodeName{ErrorCode::packing_dim_out_of_range, "packing-dim-out-of-range"},
    CodeName{ErrorCode::block_rank_exceeds_tensor, "block-rank-exceeds-tensor"},
    CodeName{ErrorCode::shape_overflow, "shape-overflow"},
    CodeName{ErrorCode::non_finite_input, "non-finite-input"},
    CodeName{ErrorCode::invalid_scale, "invalid-scale"},
    CodeName{ErrorCode::zero_scale_nonzero_input, "zero-scale-nonzero-input"},
    CodeName{ErrorCode::size_mismatch, "size-mismatch"},
    CodeName{ErrorCode::corrupt_bytes, "corrupt-bytes"},
    CodeName{ErrorCode::unsupported_npy, "unsupported-npy"},
    CodeName{ErrorCode::unsupported_profile, "unsupported-profile"},
    CodeName{ErrorCode::invalid_argument, "invalid-argument"},
    CodeName{ErrorCode::io_error, "io-error"},
    CodeName{ErrorCode::internal, "internal"},
    CodeName{ErrorCode::unsupported_engine, "unsupported-engine"},
};

}  // namespace

std::string_view to_code(ErrorCode code) noexcept {
  for (const auto& entry : kNames) {
    if (entry.code == code) return entry.name;
  }
  return "internal";
}

std::optional<ErrorCode> error_code_from_string(std::string_view name) noexcept {
  for (const auto& entry : kNames) {
    if (entry.name == name) return entry.code;
  }
  return std::nullopt;
}

std::string Status::to_string() const {
  std::string out(to_code(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace qscheme
