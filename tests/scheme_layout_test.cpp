// Layout: blocks per dimension, scale counts, per-line padding of packed stores and the
// serialized byte count, against Burn's published values and hand-computed cases; and
// overflow-checked arithmetic on shapes whose sizes do not fit.
#include <boost/test/unit_test.hpp>
#include <limits>

#include "scheme/ostream.hpp"
#include "scheme/checked.hpp"
#include "scheme/layout.hpp"
#include "scheme/text.hpp"

using namespace qscheme;
using Dims = std::vector<std::uint64_t>;

namespace {

Layout layout_of(std::string_view scheme, const Dims& shape) {
  auto s = parse_scheme(scheme);
  BOOST_TEST_REQUIRE(s.ok());
  auto l = make_layout(*s, shape);
  BOOST_TEST_REQUIRE(l.ok(), std::string(scheme) << ": " << l.status().to_string());
  return *l;
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_block_per_scale_as_in_burn) {
  // cubecl scheme.rs there_is_one_block_per_scale / a_partial_block_still_takes_a_scale.
  BOOST_TEST(layout_of("q8s:block[32]=f32", {8, 64}).blocks_per_dim == (Dims{8, 2}));
  BOOST_TEST(layout_of("q8s:block[4,32]=f32", {8, 64}).blocks_per_dim == (Dims{2, 2}));
  BOOST_TEST(layout_of("q8s:block[32]=f32", {4, 8, 64}).blocks_per_dim == (Dims{4, 8, 2}));
  BOOST_TEST(layout_of("q8s:block[32]=f32", {8, 70}).blocks_per_dim == (Dims{8, 3}));
  BOOST_TEST(layout_of("q8s:block[32]=f32", {8, 70}).scales == 24u);
}

BOOST_AUTO_TEST_CASE(blocks_are_right_aligned_rectangles) {
  const Layout l = layout_of("q8s:block[2,3,5]=f16", {4, 7, 11});
  BOOST_TEST(l.block == (Dims{2, 3, 5}));
  BOOST_TEST(l.blocks_per_dim == (Dims{2, 3, 3}));
  BOOST_TEST(l.scales == 18u);
  BOOST_TEST(l.scale_bytes == 36u);
  const Layout l2 = layout_of("q8s:block[4]=f32", {3, 2, 9});
  BOOST_TEST(l2.block == (Dims{1, 1, 4}));
  BOOST_TEST(l2.blocks_per_dim == (Dims{3, 2, 3}));
}

BOOST_AUTO_TEST_CASE(per_tensor_is_one_block_with_one_scale) {
  const Layout l = layout_of("q8s", {3, 5});
  BOOST_TEST(l.blocks_per_dim == (Dims{1, 1}));
  BOOST_TEST(l.block == (Dims{3, 5}));
  BOOST_TEST(l.scales == 1u);
  BOOST_TEST(l.total_bytes == 15u + 4u);
  // An empty tensor still carries its one per-tensor scale; a scalar is one element.
  BOOST_TEST(layout_of("q8s", {0}).total_bytes == 4u);
  BOOST_TEST(layout_of("q8s:tensor=f16", {}).total_bytes == 1u + 2u);
}

BOOST_AUTO_TEST_CASE(empty_tensor_with_blocks_has_no_scales) {
  const Layout l = layout_of("q8s:block[32]=f16", {5, 0});
  BOOST_TEST(l.blocks_per_dim == (Dims{5, 0}));
  BOOST_TEST(l.scales == 0u);
  BOOST_TEST(l.total_bytes == 0u);
}

BOOST_AUTO_TEST_CASE(packed_stores_pad_each_line_on_its_own) {
  // Burn's doc example: Q4 packed-u32 [3,3] is 3 words, not ceil(9/8) = 2.
  const Layout q4 = layout_of("q4s:packed-u32(0)", {3, 3});
  BOOST_TEST(q4.storage_elements == 3u);
  BOOST_TEST(q4.codes_per_storage_element == 8);
  BOOST_TEST(q4.packed_axis == 1);
  BOOST_TEST(q4.value_bytes == 12u);
  // Packing along an outer axis pads that axis instead.
  const Layout outer = layout_of("q8s:packed-u32(1)", {5, 3});
  BOOST_TEST(outer.packed_axis == 0);
  BOOST_TEST(outer.storage_elements == 2u * 3u);
  const Layout q2 = layout_of("q2s:packed-u32(2)", {17, 2, 3});
  BOOST_TEST(q2.packed_axis == 0);
  BOOST_TEST(q2.storage_elements == 2u * 2u * 3u);
  // e2m1 pairs: two codes a byte.
  const Layout fp4 = layout_of("e2m1:packed-native(0)", {4, 33});
  BOOST_TEST(fp4.storage_elements == 4u * 17u);
  BOOST_TEST(fp4.storage_element_bytes == 1);
}

BOOST_AUTO_TEST_CASE(native_sub_byte_values_take_one_byte_each) {
  const Layout l = layout_of("q4s", {7});
  BOOST_TEST(l.storage_elements == 7u);
  BOOST_TEST(l.value_bytes == 7u);
  BOOST_TEST(layout_of("e2m1", {7}).value_bytes == 7u);
}

BOOST_AUTO_TEST_CASE(serialized_bytes_follow_burns_formula) {
  // Burn should_pack_unpack_two_level_scales: 8 values + 2 ue4m3 + 4 f32 = 14 bytes.
  const Layout two = layout_of("q8s:block[4]=ue4m3:tensor=f32", {8});
  BOOST_TEST(two.value_bytes == 8u);
  BOOST_TEST(two.scale_bytes == 2u);
  BOOST_TEST(two.global_bytes == 4u);
  BOOST_TEST(two.total_bytes == 14u);
  // nvfp4 on [4,33]: 68 pair bytes + 12 ue4m3 + 4.
  BOOST_TEST(layout_of("nvfp4", {4, 33}).total_bytes == 84u);
  // mxfp8 on [64]: 64 + 2 ue8m0.
  BOOST_TEST(layout_of("mxfp8", {64}).total_bytes == 66u);
  // q4_0 on [2,40]: per line ceil(40/8)=5 words; blocks [2,2] f16.
  BOOST_TEST(layout_of("q4_0", {2, 40}).total_bytes == 2u * 5u * 4u + 4u * 2u);
}

BOOST_AUTO_TEST_CASE(overflowing_shapes_are_errors_not_wraps) {
  const Scheme q8 = parse_scheme("q8s").value();
  const std::uint64_t big = std::uint64_t{1} << 32;
  auto r = make_layout(q8, Dims{big, big});
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST((r.status().code() == ErrorCode::shape_overflow));
  // 2^63 elements is past the 63-bit bound even though it fits in u64.
  BOOST_TEST((make_layout(q8, Dims{std::uint64_t{1} << 62, 2}).status().code() == ErrorCode::shape_overflow));
  // 2^62 elements fit, but 4-byte words or f32 scales can push the byte count past the bound.
  BOOST_TEST(make_layout(q8, Dims{std::uint64_t{1} << 61}).ok());
  const Scheme f32_blocks = parse_scheme("q8s:block[1]=f32").value();
  BOOST_TEST((make_layout(f32_blocks, Dims{std::uint64_t{1} << 61}).status().code() == ErrorCode::shape_overflow));
  const Scheme max_dims = parse_scheme("q8s").value();
  const std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
  BOOST_TEST((make_layout(max_dims, Dims{m}).status().code() == ErrorCode::shape_overflow));
  // Every extent must itself fit in 63 bits, even where a zero extent makes the count 0.
  BOOST_TEST((make_layout(max_dims, Dims{m, 0}).status().code() == ErrorCode::shape_overflow));
  auto empty = make_layout(max_dims, Dims{std::uint64_t{1} << 62, 0});
  BOOST_TEST_REQUIRE(empty.ok());
  BOOST_TEST(empty->elements == 0u);
}

BOOST_AUTO_TEST_CASE(every_extent_fits_in_63_bits_beside_a_zero_extent_in_any_position) {
  // A zero extent makes every product 0, so only a check of each extent on its own catches
  // these, whichever side of the zero the large extent is on and whatever the scheme.
  const std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t two63 = std::uint64_t{1} << 63;
  for (const char* text : {"q8s", "q8s:block[32]=f16", "q4_0", "nvfp4", "e2m1:packed-native(1)"}) {
    const Scheme s = parse_scheme(text).value();
    for (const Dims& shape : {Dims{0, m}, Dims{m, 0}, Dims{0, two63}, Dims{two63, 0}, Dims{2, 0, m}, Dims{0, 0, two63}}) {
      std::string dims;
      for (std::uint64_t e : shape) dims += std::to_string(e) + " ";
      BOOST_TEST_CONTEXT(text << " " << dims) {
        auto r = make_layout(s, shape);
        BOOST_TEST_REQUIRE(!r.ok());
        BOOST_TEST((r.status().code() == ErrorCode::shape_overflow));
        BOOST_TEST(r.status().message().find("extent of dim") != std::string::npos, r.status().message());
      }
    }
    // 2^63 - 1 itself is the largest extent, beside a zero.
    BOOST_TEST(make_layout(s, Dims{0, two63 - 1}).ok(), text);
    BOOST_TEST(make_layout(s, Dims{two63 - 1, 0}).ok(), text);
  }
}

BOOST_AUTO_TEST_CASE(checked_helpers) {
  BOOST_TEST(!checked_mul(std::uint64_t{1} << 32, std::uint64_t{1} << 32).has_value());
  BOOST_TEST(checked_mul(std::uint64_t{1} << 31, std::uint64_t{1} << 32).value() == std::uint64_t{1} << 63);
  BOOST_TEST(!checked_add(~std::uint64_t{0}, 1).has_value());
  BOOST_TEST(ceil_div(~std::uint64_t{0}, 2) == (std::uint64_t{1} << 63));
  BOOST_TEST(ceil_div(0, 7) == 0u);
}

// The extension kinds: 16-bit codes take two bytes native and two a u32; unsigned sub-byte
// codes pack as the signed ones do.
BOOST_AUTO_TEST_CASE(extension_kinds_storage) {
  const Layout a = layout_of("i16", {3, 5});
  BOOST_TEST(a.storage_element_bytes == 2);
  BOOST_TEST(a.value_bytes == 30u);
  BOOST_TEST(a.total_bytes == 34u);
  const Layout b = layout_of("u16:packed-u32(0):block[4]=f16", {3, 5});
  BOOST_TEST(b.codes_per_storage_element == 2);
  BOOST_TEST(b.storage_elements == 9u);  // 3 lines of ceil(5 / 2)
  BOOST_TEST(b.total_bytes == 36u + 6u * 2u);
  const Layout c = layout_of("u4:packed-u32(0)", {3, 17});
  BOOST_TEST(c.codes_per_storage_element == 8);
  BOOST_TEST(c.storage_elements == 9u);
  const Layout d = layout_of("u2", {7});
  BOOST_TEST(d.storage_element_bytes == 1);
  BOOST_TEST(d.value_bytes == 7u);
  const Layout e = layout_of("u8:packed-u32(1)", {6, 2});
  BOOST_TEST(e.packed_axis == 0);
  BOOST_TEST(e.storage_elements == 4u);  // ceil(6 / 4) x 2
}

// Affine mode: one zero point per scale after the scales, a byte each (two for i16/u16).
BOOST_AUTO_TEST_CASE(affine_zero_points) {
  const Layout a = layout_of("u8:affine", {3, 5});
  BOOST_TEST(a.zero_points == 1u);
  BOOST_TEST(a.zero_point_bytes == 1u);
  BOOST_TEST(a.total_bytes == 15u + 4u + 1u);
  const Layout b = layout_of("i16:packed-u32(0):affine:block[4]=f16", {3, 5});
  BOOST_TEST(b.zero_points == 6u);
  BOOST_TEST(b.zero_point_bytes == 12u);
  BOOST_TEST(b.total_bytes == 36u + 6u * 2u + 12u);
  const Layout c = layout_of("q4f:packed-u32(0):affine:block[2,2]=ue8m0", {3, 17});
  BOOST_TEST(c.zero_points == 2u * 9u);
  BOOST_TEST(c.zero_point_bytes == 18u);
  const Layout sym = layout_of("u8:block[4]=f16", {3, 5});
  BOOST_TEST(sym.zero_points == 0u);
  BOOST_TEST(sym.zero_point_bytes == 0u);
}

// Per-axis scales on a [4096, 4096] weight: per row (axis 1 from the innermost) and per column
// (axis 0), extents Burn's u8 block sizes cannot hold.
BOOST_AUTO_TEST_CASE(axis_levels_of_any_extent) {
  const Layout rows = layout_of("u8:affine:axis(1)=f32", {4096, 4096});
  BOOST_TEST(rows.scales == 4096u);
  BOOST_TEST(rows.block == (std::vector<std::uint64_t>{1, 4096}), boost::test_tools::per_element());
  BOOST_TEST(rows.blocks_per_dim == (std::vector<std::uint64_t>{4096, 1}), boost::test_tools::per_element());
  BOOST_TEST(rows.total_bytes == 4096u * 4096u + 4096u * 4u + 4096u);
  const Layout cols = layout_of("q8s:axis(0)=f16", {4096, 4096});
  BOOST_TEST(cols.block == (std::vector<std::uint64_t>{4096, 1}), boost::test_tools::per_element());
  BOOST_TEST(cols.scale_bytes == 4096u * 2u);
  // An empty dim elsewhere: no elements, no scales; an empty axis: none either.
  BOOST_TEST(layout_of("q8s:axis(1)=f32", {3, 0}).scales == 0u);
  BOOST_TEST(layout_of("q8s:axis(1)=f32", {0, 3}).scales == 0u);
  const Layout three = layout_of("q8s:axis(1)=f32", {2, 3, 5});
  BOOST_TEST(three.scales == 3u);
  BOOST_TEST(three.block == (std::vector<std::uint64_t>{2, 1, 5}), boost::test_tools::per_element());
}
