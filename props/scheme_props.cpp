// Properties of the scheme model's text and binary forms over the whole tuple space.
#include <rapidcheck/boost_test.h>

#include <boost/test/unit_test.hpp>

#include "props/generators.h"
#include "scheme/binary.hpp"
#include "scheme/ostream.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"

using namespace qscheme;

BOOST_AUTO_TEST_SUITE(scheme_forms)

RC_BOOST_PROP(text_form_round_trips, (const Scheme& s)) {
  const std::string text = format_scheme(s);
  RC_CLASSIFY(s.block.has_value(), "block level");
  RC_CLASSIFY(s.two_level(), "two levels");
  const auto back = parse_scheme(text);
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == s);
  RC_ASSERT(format_scheme(*back) == text);
}

RC_BOOST_PROP(binary_scheme_encoding_round_trips, (const Scheme& s)) {
  const auto bytes = encode_scheme(s);
  RC_ASSERT(bytes.size() <= kBinarySchemeMaxBytes);
  const auto back = decode_scheme(bytes);
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == s);
}

RC_BOOST_PROP(binary_decoding_never_accepts_a_truncated_scheme, (const Scheme& s)) {
  const auto bytes = encode_scheme(s);
  const std::size_t cut = *rc::gen::inRange<std::size_t>(0, bytes.size());
  const auto r = decode_scheme(std::span<const std::uint8_t>(bytes.data(), cut));
  RC_ASSERT(!r.ok());
  RC_ASSERT(r.status().code() == ErrorCode::malformed_binary_scheme);
}

RC_BOOST_PROP(validation_is_decided_by_the_scheme_before_the_shape,
              (const Scheme& s, const std::vector<std::uint8_t>& small_dims)) {
  std::vector<std::uint64_t> shape(small_dims.begin(), small_dims.begin() + std::min<std::size_t>(small_dims.size(), 9));
  const Status tuple = validate_scheme(s);
  const Status pair = validate(s, shape);
  if (!tuple.ok()) RC_ASSERT(pair.code() == tuple.code());
  RC_ASSERT(pair.ok() || !pair.message().empty());
}

BOOST_AUTO_TEST_SUITE_END()
