// The scheme text syntax: every field, every preset, canonical formatting, and the offset and
// expectation named by each kind of syntax error.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "scheme/ostream.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"

using namespace qscheme;
namespace bdata = boost::unit_test::data;

namespace {

Scheme parsed(std::string_view text) {
  auto r = parse_scheme(text);
  BOOST_TEST_REQUIRE(r.ok(), "parse failed for '" << text << "': " << r.status().to_string());
  return *r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(bare_value_means_native_sym_with_no_levels) {
  const Scheme s = parsed("q8s");
  BOOST_TEST(s.value == Value::q8s);
  BOOST_TEST((s.store == Store::native()));
  BOOST_TEST((s.mode == Mode::sym));
  BOOST_TEST(!s.tensor.has_value());
  BOOST_TEST(!s.block.has_value());
  BOOST_TEST((s.tensor_scale() == ScaleDtype::f32));
  BOOST_TEST(s.num_levels() == 1);
}

BOOST_AUTO_TEST_CASE(every_value_name_parses) {
  const char* names[] = {"q8f", "q8s", "q4f", "q4s", "q2f", "q2s", "e4m3", "e5m2", "e2m1"};
  for (std::size_t i = 0; i < 9; ++i) {
    BOOST_TEST(parsed(names[i]).value == kAllValues[i]);
    BOOST_TEST(format_scheme(parsed(names[i])) == names[i]);
  }
}

BOOST_AUTO_TEST_CASE(extension_value_names_parse_after_burns) {
  const char* names[] = {"u8", "u4", "u2", "i16", "u16"};
  for (std::size_t i = 0; i < 5; ++i) {
    BOOST_TEST(parsed(names[i]).value == kExtensionValues[i]);
    BOOST_TEST(kAllValues[9 + i] == kExtensionValues[i]);
    BOOST_TEST(info(kExtensionValues[i]).extension);
    BOOST_TEST(format_scheme(parsed(names[i])) == names[i]);
  }
  for (Value v : kBurnValues) BOOST_TEST(!info(v).extension);
  BOOST_TEST(format_scheme(parsed("u4:packed-u32(1):block[4,4]=f16")) == "u4:packed-u32(1):block[4,4]=f16");
  // The error lists the extension kinds apart from Burn's.
  auto bad = parse_scheme("u32");
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.status().message().find("e2m1, or the extension kinds u8, u4, u2, i16, u16") != std::string::npos,
             bad.status().message());
}

BOOST_AUTO_TEST_CASE(store_fields) {
  BOOST_TEST((parsed("q4s:packed-u32(0)").store == Store::packed_u32(0)));
  BOOST_TEST((parsed("q4s:packed-u32(7)").store == Store::packed_u32(7)));
  BOOST_TEST((parsed("e2m1:packed-native(2)").store == Store::packed_native(2)));
  BOOST_TEST((parsed("q8s:native").store == Store::native()));
  // native is the default, so the canonical text omits it.
  BOOST_TEST(format_scheme(parsed("q8s:native")) == "q8s");
}

BOOST_AUTO_TEST_CASE(mode_fields) {
  BOOST_TEST((parsed("e4m3:lookup").mode == Mode::lookup));
  BOOST_TEST((parsed("e4m3:sym").mode == Mode::sym));
  BOOST_TEST(format_scheme(parsed("e4m3:sym")) == "e4m3");
  BOOST_TEST(format_scheme(parsed("e4m3:lookup")) == "e4m3:lookup");
  // affine: qscheme's extension, in the mode slot of the canonical order.
  BOOST_TEST((parsed("u8:affine").mode == Mode::affine));
  BOOST_TEST(format_scheme(parsed("q8f:block[32]=f32:affine:packed-u32(0)")) == "q8f:packed-u32(0):affine:block[32]=f32");
}

// axis(D)=DTYPE: per-axis scales (the extension), D from the innermost, in the block's slot.
BOOST_AUTO_TEST_CASE(axis_field) {
  const Scheme s = parsed("u8:tensor=f32:axis(1)=f16:affine");
  BOOST_TEST_REQUIRE(s.axis.has_value());
  BOOST_TEST(s.axis->dim == 1u);
  BOOST_TEST((s.axis->dtype == ScaleDtype::f16));
  BOOST_TEST(!s.block.has_value());
  BOOST_TEST(format_scheme(s) == "u8:affine:axis(1)=f16:tensor=f32");
  BOOST_TEST((s.scale_dtype() == ScaleDtype::f16));
  BOOST_TEST(s.two_level());
}

BOOST_AUTO_TEST_CASE(level_fields_and_every_dtype) {
  const char* dtypes[] = {"f32", "f16", "bf16", "ue8m0", "ue4m3"};
  for (std::size_t i = 0; i < 5; ++i) {
    const std::string d = dtypes[i];
    BOOST_TEST((parsed("q8f:tensor=" + d).tensor == kAllScaleDtypes[i]));
    BOOST_TEST((parsed("q8f:block[32]=" + d).block->dtype == kAllScaleDtypes[i]));
  }
  const Scheme s = parsed("q8s:block[2,3,5]=f16");
  BOOST_TEST(s.block->size.rank() == 3u);
  BOOST_TEST(s.block->size[0] == 2);
  BOOST_TEST(s.block->size[2] == 5);
  BOOST_TEST(parsed("q8s:block[255]=f16").block->size[0] == 255);
  BOOST_TEST(parsed("q8s:block[2,3,4,5,6]=f16").block->size.rank() == 5u);
  BOOST_TEST(parsed("q8s:block[1,2,3,4,5]=f16").block->size.rank() == 4u);
}

BOOST_AUTO_TEST_CASE(tensor_f32_is_kept_distinct_from_no_level) {
  // As in Burn, `tensor=f32` written out is a different tuple from no level, with the same meaning.
  const Scheme a = parsed("q8s");
  const Scheme b = parsed("q8s:tensor=f32");
  BOOST_TEST(!(a == b));
  BOOST_TEST((a.tensor_scale() == b.tensor_scale()));
  BOOST_TEST(format_scheme(b) == "q8s:tensor=f32");
}

BOOST_AUTO_TEST_CASE(leading_unit_extents_canonicalise_away) {
  BOOST_TEST(format_scheme(parsed("q8s:block[1,32]=f16")) == "q8s:block[32]=f16");
  BOOST_TEST(format_scheme(parsed("q8s:block[1,1,8,4,2,3]=f16")) == "q8s:block[8,4,2,3]=f16");
  BOOST_TEST(format_scheme(parsed("q8s:block[1,1]=f16")) == "q8s:block[1]=f16");
  // Inner and trailing ones stay.
  BOOST_TEST(format_scheme(parsed("q8s:block[32,1]=f16")) == "q8s:block[32,1]=f16");
  BOOST_TEST(format_scheme(parsed("q8s:block[4,1,4]=f16")) == "q8s:block[4,1,4]=f16");
  BOOST_TEST(parsed("q8s:block[1,1,1,1,1,1,1,2,3,4,5,6]=f16").block->size.rank() == 5u);
}

BOOST_AUTO_TEST_CASE(fields_in_any_order_format_in_canonical_order) {
  BOOST_TEST(format_scheme(parsed("e2m1:tensor=f32:block[16]=ue4m3:packed-native(0)")) ==
             "e2m1:packed-native(0):block[16]=ue4m3:tensor=f32");
  BOOST_TEST(format_scheme(parsed("q4s:lookup:packed-u32(1)")) == "q4s:packed-u32(1):lookup");
}

BOOST_AUTO_TEST_CASE(presets_expand_to_their_canonical_schemes) {
  BOOST_TEST(format_scheme(parsed("nvfp4")) == "e2m1:packed-native(0):block[16]=ue4m3:tensor=f32");
  BOOST_TEST(format_scheme(parsed("mxfp8")) == "e4m3:block[32]=ue8m0");
  BOOST_TEST(format_scheme(parsed("mxfp8-e5m2")) == "e5m2:block[32]=ue8m0");
  BOOST_TEST(format_scheme(parsed("mxfp4")) == "e2m1:packed-native(0):block[32]=ue8m0");
  BOOST_TEST(format_scheme(parsed("q8_0")) == "q8s:block[32]=f16");
  BOOST_TEST(format_scheme(parsed("q4_0")) == "q4s:packed-u32(0):block[32]=f16");
  BOOST_TEST(presets().size() == 6u);
  for (const Preset& p : presets()) BOOST_TEST(format_scheme(parsed(p.expansion)) == p.expansion);
}

BOOST_AUTO_TEST_CASE(format_parse_round_trips_over_the_whole_tuple_space) {
  for (const Scheme& s : extension_space()) BOOST_TEST((parsed(format_scheme(s)) == s), format_scheme(s));
  for (const Scheme& s : tuple_space()) {
    const std::string text = format_scheme(s);
    auto back = parse_scheme(text);
    BOOST_TEST_REQUIRE(back.ok(), text);
    BOOST_TEST((*back == s), text);
    BOOST_TEST(format_scheme(*back) == text);
  }
}

struct BadText {
  const char* text;
  std::size_t offset;
  const char* expected_fragment;
};
std::ostream& operator<<(std::ostream& os, const BadText& b) { return os << b.text; }

const BadText kBad[] = {
    {"", 0, "a value kind"},
    {"q8", 0, "a value kind"},
    {"Q8S", 0, "a value kind"},
    {"q8s:", 4, "a field"},
    {"q8s::native", 4, "a field"},
    {"q8s:nativ", 4, "a field"},
    {"q8s:native:", 11, "a field"},
    {"q8s:packed-u32(", 15, "a packed dimension"},
    {"q8s:packed-u32()", 15, "a packed dimension"},
    {"q8s:packed-u32(8)", 15, "a packed dimension"},
    {"q8s:packed-u32(01)", 15, "a packed dimension"},
    {"q8s:packed-u32(-1)", 15, "a packed dimension"},
    {"q8s:packed-u32(0", 16, "')'"},
    {"q8s:packed-u32(0)x", 17, "':' or the end"},
    {"q8s:native:packed-u32(0)", 11, "at most one store"},
    {"q8s:sym:lookup", 8, "at most one mode"},
    {"u8:affine:sym", 10, "at most one mode"},
    {"q8s:axis(8)=f32", 9, "an axis counted from the innermost"},
    {"q8s:axis(0=f32", 10, "')'"},
    {"q8s:axis(0)", 11, "'='"},
    {"q8s:axis(0)=f64", 12, "a scale dtype"},
    {"q8s:block[4]=f32:axis(0)=f32", 17, "at most one block or axis"},
    {"q8s:axis(0)=f32:axis(1)=f32", 16, "at most one block or axis"},
    {"q8s:tensor=", 11, "a scale dtype"},
    {"q8s:tensor=f64", 11, "a scale dtype"},
    {"q8s:tensor=f32:tensor=f16", 15, "at most one tensor"},
    {"q8s:block[]=f32", 10, "a block extent"},
    {"q8s:block[32=f32", 12, "',' or ']'"},
    {"q8s:block[256]=f32", 10, "a block extent"},
    {"q8s:block[32,]=f32", 13, "a block extent"},
    {"q8s:block[32]", 13, "'='"},
    {"q8s:block[32]=", 14, "a scale dtype"},
    {"q8s:block[32]=f32:block[16]=f16", 18, "at most one block"},
    {"q8s:block[2,2,2,2,2,2]=f32", 10, "at most 5 dimensions"},
    {"q8s :native", 0, "a value kind"},
    {"q8s:native ", 4, "a field"},
    {"nvfp4:tensor=f32", 0, "a value kind"},
};

BOOST_DATA_TEST_CASE(syntax_errors_name_the_offset_and_what_was_expected, bdata::make(kBad), bad) {
  auto r = parse_scheme(bad.text);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST((r.status().code() == ErrorCode::malformed_scheme));
  BOOST_TEST(r.status().index() == bad.offset);
  BOOST_TEST(r.status().message().find(bad.expected_fragment) != std::string::npos, r.status().message());
  BOOST_TEST(r.status().message().find("offset " + std::to_string(bad.offset)) != std::string::npos,
             r.status().message());
}

BOOST_AUTO_TEST_CASE(zero_extent_parses_so_that_validate_can_name_it) {
  // The grammar admits 0..255; validate() owns the rule that extents are positive.
  const Scheme s = parsed("q8s:block[0]=f32");
  BOOST_TEST(s.block->size[0] == 0);
}
