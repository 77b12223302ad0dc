// validate(): each rejection rule at its boundary, the order in which rules apply, and messages
// that say how to fix the input.
#include <boost/test/unit_test.hpp>
#include <set>

#include "scheme/ostream.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"

using namespace qscheme;
using Dims = std::vector<std::uint64_t>;

namespace {

ErrorCode code_of(std::string_view scheme, const Dims& shape) {
  auto s = parse_scheme(scheme);
  BOOST_TEST_REQUIRE(s.ok(), scheme);
  return validate(*s, shape).code();
}

ErrorCode scheme_code(std::string_view scheme) {
  auto s = parse_scheme(scheme);
  BOOST_TEST_REQUIRE(s.ok(), scheme);
  return validate_scheme(*s).code();
}

}  // namespace

BOOST_AUTO_TEST_CASE(packed_native_only_for_e2m1) {
  BOOST_TEST((scheme_code("e2m1:packed-native(0)") == ErrorCode::ok));
  for (const char* v : {"q8f", "q8s", "q4f", "q4s", "q2f", "q2s", "e4m3", "e5m2"}) {
    BOOST_TEST((scheme_code(std::string(v) + ":packed-native(0)") == ErrorCode::packed_native_unsupported), v);
    BOOST_TEST((scheme_code(std::string(v) + ":packed-u32(0)") == ErrorCode::ok), v);
  }
}

BOOST_AUTO_TEST_CASE(block_extents_must_be_positive) {
  BOOST_TEST((scheme_code("q8s:block[0]=f32") == ErrorCode::zero_block_extent));
  BOOST_TEST((scheme_code("q8s:block[4,0]=f32") == ErrorCode::zero_block_extent));
  BOOST_TEST((scheme_code("q8s:block[1]=f32") == ErrorCode::ok));
  BOOST_TEST((scheme_code("q8s:block[255]=f32") == ErrorCode::ok));
  auto s = parse_scheme("q8s:block[4,0]=f32").value();
  BOOST_TEST(validate_scheme(s).index() == 1u);
}

BOOST_AUTO_TEST_CASE(two_level_block_dtype_must_fit_f16_range) {
  BOOST_TEST((scheme_code("q8s:block[4]=f16:tensor=f32") == ErrorCode::ok));
  BOOST_TEST((scheme_code("q8s:block[4]=ue4m3:tensor=f32") == ErrorCode::ok));
  for (const char* d : {"f32", "bf16", "ue8m0"}) {
    BOOST_TEST((scheme_code(std::string("q8s:block[4]=") + d + ":tensor=f32") == ErrorCode::two_level_block_dtype), d);
    // The same dtypes are fine on one level.
    BOOST_TEST((scheme_code(std::string("q8s:block[4]=") + d) == ErrorCode::ok), d);
  }
}

BOOST_AUTO_TEST_CASE(two_level_global_must_be_f32) {
  for (const char* d : {"f16", "bf16", "ue8m0", "ue4m3"}) {
    BOOST_TEST((scheme_code(std::string("q8s:block[4]=ue4m3:tensor=") + d) == ErrorCode::two_level_global_dtype), d);
    // A one-level per-tensor scale may use any dtype, ue8m0 included.
    BOOST_TEST((scheme_code(std::string("q8s:tensor=") + d) == ErrorCode::ok), d);
  }
}

BOOST_AUTO_TEST_CASE(lookup_needs_a_table) {
  BOOST_TEST((scheme_code("q4s:packed-u32(0):lookup") == ErrorCode::lookup_table_missing));
  BOOST_TEST((scheme_code("e4m3:lookup") == ErrorCode::lookup_table_missing));
}

BOOST_AUTO_TEST_CASE(rules_apply_in_documented_order) {
  // packed-native before the level rules before lookup.
  BOOST_TEST((scheme_code("q8s:packed-native(0):lookup:block[4]=f32:tensor=f16") == ErrorCode::packed_native_unsupported));
  BOOST_TEST((scheme_code("q8s:lookup:block[0]=f32:tensor=f16") == ErrorCode::zero_block_extent));
  BOOST_TEST((scheme_code("q8s:lookup:block[4]=f32:tensor=f16") == ErrorCode::two_level_block_dtype));
  BOOST_TEST((scheme_code("q8s:lookup:block[4]=f16:tensor=f16") == ErrorCode::two_level_global_dtype));
}

BOOST_AUTO_TEST_CASE(packing_dim_must_be_inside_the_rank) {
  BOOST_TEST((code_of("q4s:packed-u32(0)", {7}) == ErrorCode::ok));
  BOOST_TEST((code_of("q4s:packed-u32(1)", {7}) == ErrorCode::packing_dim_out_of_range));
  BOOST_TEST((code_of("q4s:packed-u32(1)", {3, 7}) == ErrorCode::ok));
  BOOST_TEST((code_of("q4s:packed-u32(2)", {3, 7}) == ErrorCode::packing_dim_out_of_range));
  BOOST_TEST((code_of("e2m1:packed-native(2)", {2, 3, 7}) == ErrorCode::ok));
  BOOST_TEST((code_of("e2m1:packed-native(0)", {}) == ErrorCode::packing_dim_out_of_range));
  // Native has no packing dim: any rank, scalars included.
  BOOST_TEST((code_of("q4s", {}) == ErrorCode::ok));
}

BOOST_AUTO_TEST_CASE(block_rank_must_not_exceed_tensor_rank) {
  BOOST_TEST((code_of("q8s:block[4,4]=f32", {16}) == ErrorCode::block_rank_exceeds_tensor));
  BOOST_TEST((code_of("q8s:block[4,4]=f32", {4, 16}) == ErrorCode::ok));
  // Canonicalised leading ones do not count.
  BOOST_TEST((code_of("q8s:block[1,4]=f32", {16}) == ErrorCode::ok));
  BOOST_TEST((code_of("q8s:block[4]=f32", {}) == ErrorCode::block_rank_exceeds_tensor));
  // A block larger than the tensor is one partial block, which is fine.
  BOOST_TEST((code_of("q8s:block[255]=f32", {7}) == ErrorCode::ok));
}

BOOST_AUTO_TEST_CASE(rank_limit) {
  BOOST_TEST((code_of("q8s", Dims(8, 1)) == ErrorCode::ok));
  BOOST_TEST((code_of("q8s", Dims(9, 1)) == ErrorCode::rank_too_large));
}

BOOST_AUTO_TEST_CASE(scheme_errors_come_before_shape_errors) {
  BOOST_TEST((code_of("q8s:lookup", Dims(9, 1)) == ErrorCode::lookup_table_missing));
}

BOOST_AUTO_TEST_CASE(messages_say_what_and_how_to_fix) {
  auto s = parse_scheme("q4s:packed-native(0)").value();
  const Status st = validate_scheme(s);
  BOOST_TEST(st.message().find("q4s:packed-native(0)") != std::string::npos);
  BOOST_TEST(st.message().find("use native or packed-u32(0)") != std::string::npos);
  BOOST_TEST(st.to_string().starts_with("packed-native-unsupported: "));
  auto two = parse_scheme("q8s:block[4]=bf16:tensor=f32").value();
  BOOST_TEST(validate_scheme(two).message().find("f16 or =ue4m3") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(error_codes_have_stable_unique_names) {
  std::set<std::string_view> seen;
  for (int c = 0; c <= static_cast<int>(qscheme::kLastErrorCode); ++c) {
    const auto code = static_cast<ErrorCode>(c);
    const std::string_view name = to_code(code);
    BOOST_TEST(seen.insert(name).second, name);
    BOOST_TEST((error_code_from_string(name) == code));
    for (char ch : name) BOOST_TEST(((ch >= 'a' && ch <= 'z') || ch == '-'));
  }
  BOOST_TEST(to_code(ErrorCode::packing_dim_out_of_range) == "packing-dim-out-of-range");
  BOOST_TEST(to_code(ErrorCode::unsupported_engine) == "unsupported-engine");
}

// No extension kind has a native packed form; the rest of the rules apply as to Burn's kinds.
BOOST_AUTO_TEST_CASE(extension_kinds_follow_the_tuple_rules) {
  for (const char* text : {"u8:packed-native(0)", "u4:packed-native(0)", "i16:packed-native(1)"}) {
    const Status st = validate_scheme(parse_scheme(text).value());
    BOOST_TEST((st.code() == ErrorCode::packed_native_unsupported), text);
  }
  BOOST_TEST(validate_scheme(parse_scheme("u2:lookup").value()).code() == ErrorCode::lookup_table_missing);
  BOOST_TEST(validate_scheme(parse_scheme("u16:block[8]=bf16:tensor=f32").value()).code() ==
             ErrorCode::two_level_block_dtype);
  BOOST_TEST(validate_scheme(parse_scheme("u4:packed-u32(0):block[16]=ue4m3:tensor=f32").value()).ok());
}

// Affine mode takes an integer kind and one level; its conflicts are unsupported-profile,
// checked after the two-level dtype rules and before lookup.
BOOST_AUTO_TEST_CASE(affine_mode_takes_integer_kinds_and_one_level) {
  for (const char* text : {"u8:affine", "q8f:affine:block[32]=f16", "i16:packed-u32(0):affine:tensor=bf16",
                           "q4s:affine:block[4,4]=ue8m0"}) {
    BOOST_TEST(validate_scheme(parse_scheme(text).value()).ok(), text);
  }
  for (const char* text : {"e4m3:affine", "e2m1:packed-native(0):affine:block[16]=ue4m3",
                           "q8f:affine:block[16]=f16:tensor=f32"}) {
    const Status st = validate_scheme(parse_scheme(text).value());
    BOOST_TEST((st.code() == ErrorCode::unsupported_profile), text);
    BOOST_TEST(st.message().find("affine") != std::string::npos, st.message());
  }
  BOOST_TEST(validate_scheme(parse_scheme("u8:affine:block[8]=f32:tensor=f32").value()).code() ==
             ErrorCode::two_level_block_dtype);
}

// Per-axis scales: the axis must be inside the tensor (block-rank-exceeds-tensor); a Scheme built
// in code with both a block and an axis level is malformed-scheme.
BOOST_AUTO_TEST_CASE(axis_level_rules) {
  const Scheme s = parse_scheme("u8:affine:axis(1)=f32").value();
  BOOST_TEST(validate(s, std::vector<std::uint64_t>{4096, 4096}).ok());
  const Status flat = validate(s, std::vector<std::uint64_t>{4096});
  BOOST_TEST((flat.code() == ErrorCode::block_rank_exceeds_tensor));
  BOOST_TEST(flat.message().find("axis 1") != std::string::npos, flat.message());
  BOOST_TEST((validate(s, std::vector<std::uint64_t>{}).code() == ErrorCode::block_rank_exceeds_tensor));
  Scheme both = s;
  both.block = BlockLevel{BlockSize::of({4}), ScaleDtype::f32};
  BOOST_TEST((validate_scheme(both).code() == ErrorCode::malformed_scheme));
  BOOST_TEST(validate_scheme(parse_scheme("q8s:axis(0)=f16:tensor=f32").value()).ok());
  BOOST_TEST((validate_scheme(parse_scheme("q8s:axis(0)=f32:tensor=f32").value()).code() ==
              ErrorCode::two_level_block_dtype));
}
