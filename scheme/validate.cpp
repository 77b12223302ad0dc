#include "scheme/validate.hpp"

#include <string>

#include "scheme/layout.hpp"
#include "scheme/text.hpp"

namespace qscheme {
namespace {

std::string quoted(const Scheme& s) { return "'" + format_scheme(s) + "'"; }

}  // namespace

Status validate_scheme(const Scheme& s) {
  if (s.block && s.axis) {
    // Not writable in the text form or the binary form: only a Scheme built in code has both.
    return {ErrorCode::malformed_scheme,
            quoted(s) + ": a scheme has one innermost level, per block or per axis; drop one of them"};
  }
  if (s.store.kind == StoreKind::packed_native && !has_native_pair_form(s.value)) {
    return {ErrorCode::packed_native_unsupported,
            quoted(s) + ": " + std::string(to_string(s.value)) +
                " has no native packed form (only e2m1 packs two codes a byte); use native or "
                "packed-u32(" + std::to_string(s.store.dim) + ")"};
  }
  if (s.block) {
    const auto ext = s.block->size.extents();
    for (std::size_t i = 0; i < ext.size(); ++i) {
      if (ext[i] == 0) {
        return {ErrorCode::zero_block_extent,
                quoted(s) + ": block extent " + std::to_string(i) +
                    " is 0; every extent must be 1 to 255",
                i};
      }
    }
  }
  if (s.two_level()) {
    const ScaleDtype d = s.scale_dtype();
    if (d != ScaleDtype::f16 && d != ScaleDtype::ue4m3) {
      return {ErrorCode::two_level_block_dtype,
              quoted(s) + ": a two-level scheme normalises block scales into a dtype no wider "
                          "than f16, but " + std::string(to_string(d)) +
                  " reaches beyond f16's range; use block[...]=f16 or =ue4m3 (axis(D)=f16 or =ue4m3), or "
                  "drop the tensor level"};
    }
    if (*s.tensor != ScaleDtype::f32) {
      return {ErrorCode::two_level_global_dtype,
              quoted(s) + ": the per-tensor scale of a two-level scheme is stored as f32, got " +
                  std::string(to_string(*s.tensor)) + "; use tensor=f32"};
    }
  }
  if (s.affine()) {
    // The code space error codes are shared with the C API's status enum: the affine mode's
    // conflicts are reported as unsupported-profile, the code of "no rules define this".
    if (info(s.value).is_float) {
      return {ErrorCode::unsupported_profile,
              quoted(s) + ": affine mode adds an integer zero point to integer codes; " +
                  std::string(to_string(s.value)) + " is a minifloat kind (use sym, or an integer kind)"};
    }
    if (s.two_level()) {
      return {ErrorCode::unsupported_profile,
              quoted(s) + ": affine mode keeps one scale and one zero point per block; drop the tensor level "
                          "or the block level"};
    }
  }
  if (s.mode == Mode::lookup) {
    return {ErrorCode::lookup_table_missing,
            quoted(s) + ": lookup mode decodes codes through a table, and no lookup table was "
                        "supplied; use sym mode"};
  }
  return {};
}

namespace detail {

Status validate_shape_rules(const Scheme& s, Shape shape) {
  const std::size_t rank = shape.size();
  QSCHEME_RETURN_IF_ERROR(validate_rank(rank));
  if (s.store.kind != StoreKind::native && s.store.dim >= rank) {
    return {ErrorCode::packing_dim_out_of_range,
            quoted(s) + ": packed dim " + std::to_string(s.store.dim) +
                " (counted from the innermost) is outside a rank-" + std::to_string(rank) +
                " tensor; use a dim below " + std::to_string(rank) +
                (rank == 0 ? " (a scalar cannot be packed: use native)" : "")};
  }
  if (s.block && s.block->size.rank() > rank) {
    return {ErrorCode::block_rank_exceeds_tensor,
            quoted(s) + ": the block has " + std::to_string(s.block->size.rank()) +
                " dims but the tensor only " + std::to_string(rank) +
                "; use a block with at most as many dims as the tensor"};
  }
  if (s.axis && s.axis->dim >= rank) {
    return {ErrorCode::block_rank_exceeds_tensor,
            quoted(s) + ": axis " + std::to_string(s.axis->dim) + " (counted from the innermost) is outside a rank-" +
                std::to_string(rank) + " tensor; use an axis below " + std::to_string(rank) +
                (rank == 0 ? " (a scalar has no axis: use a per-tensor scale)" : "")};
  }
  return {};
}

}  // namespace detail

Status validate_rank(std::size_t rank) {
  if (rank > kMaxRank) {
    return {ErrorCode::rank_too_large,
            "a tensor of rank " + std::to_string(rank) + " is beyond the supported rank of " +
                std::to_string(kMaxRank) + "; reshape it first"};
  }
  return {};
}

Status validate(const Scheme& s, Shape shape) {
  // make_layout applies validate_scheme and the shape rules, then the size arithmetic: a shape
  // is supported only if its sizes fit.
  return make_layout(s, shape).status();
}

}  // namespace qscheme
