// The tuple space and its support counts: 19,656 tuples, of which
// 1,599 are supported as schemes, with each rejection attributed to exactly one rule.
#include <boost/test/unit_test.hpp>
#include <map>
#include <set>

#include "scheme/ostream.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"

using namespace qscheme;

BOOST_AUTO_TEST_CASE(tuple_space_has_19656_distinct_tuples) {
  const auto& space = tuple_space();
  BOOST_TEST(space.size() == 19656u);
  std::set<std::string> texts;
  for (const Scheme& s : space) texts.insert(format_scheme(s));
  BOOST_TEST(texts.size() == space.size());
}

BOOST_AUTO_TEST_CASE(support_counts_match_the_rules) {
  std::map<ErrorCode, int> by_code;
  int supported = 0;
  for (const Scheme& s : tuple_space()) {
    const Status st = validate_scheme(s);
    if (st.ok()) ++supported;
    else ++by_code[st.code()];
  }
  BOOST_TEST(supported == 1599);
  int rejected = 0;
  for (auto& [code, n] : by_code) rejected += n;
  BOOST_TEST(rejected == 18057);
  // Reasons in rule order: packed-native first, then the two-level dtype rules, then lookup.
  BOOST_TEST(by_code[ErrorCode::packed_native_unsupported] == 8 * 3 * 2 * 6 * 26);
  BOOST_TEST(by_code.count(ErrorCode::zero_block_extent) == 0u);
}

// The extension space: 720 tuples of the extension kinds, 224 of affine mode and 84 of per-axis
// scales, distinct from each other and from Burn's, each rejection attributed to one rule
// (150 + 110 + 75 supported).
BOOST_AUTO_TEST_CASE(extension_space_counts) {
  const auto& space = extension_space();
  BOOST_TEST(space.size() == 1028u);
  std::set<std::string> texts;
  for (const Scheme& s : tuple_space()) texts.insert(format_scheme(s));
  for (const Scheme& s : space) {
    BOOST_TEST((info(s.value).extension || s.affine() || s.axis.has_value()));
    BOOST_TEST(texts.insert(format_scheme(s)).second, format_scheme(s));
  }
  std::map<ErrorCode, int> by_code;
  int supported = 0;
  int affine = 0;
  int axis = 0;
  for (const Scheme& s : space) {
    affine += s.affine() && !s.axis;
    axis += s.axis.has_value();
    const Status st = validate_scheme(s);
    if (st.ok()) ++supported;
    else ++by_code[st.code()];
  }
  BOOST_TEST(affine == 14 * 2 * 2 * 4);
  BOOST_TEST(axis == 14 * 2 * 3);
  // Affine, per kind and store: 5 one-level combinations supported; tensor=f32 over block=f32 is
  // two-level-block-dtype; over f16 and ue4m3 two levels, which affine refuses. A minifloat kind
  // is refused on all 7 but the block=f32 one. Per axis: all one-level, sym supported for every
  // kind, affine for the 11 integer kinds.
  BOOST_TEST(supported == 150 + 11 * 2 * 5 + 14 * 3 + 11 * 3);
  BOOST_TEST(by_code[ErrorCode::packed_native_unsupported] == 5 * 2 * 18);
  BOOST_TEST(by_code[ErrorCode::lookup_table_missing] == 150);
  BOOST_TEST(by_code[ErrorCode::unsupported_profile] == 11 * 2 * 2 + 3 * 2 * 7 + 3 * 3);
  BOOST_TEST(by_code[ErrorCode::two_level_block_dtype] + by_code[ErrorCode::two_level_global_dtype] ==
             5 * 3 * 2 * 8 + 14 * 2);
}
