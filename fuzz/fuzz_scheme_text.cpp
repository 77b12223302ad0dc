// fuzz_scheme_text: arbitrary text to the scheme parser.
// Fails if the parser crashes or reads past the input, if an accepted string does not
// round-trip (parse(format(parse(t))) == parse(t), format is a fixed point), or if a rejection
// is anything but malformed-scheme with an offset inside the text and a message.
#include <string_view>

#include "fuzz/fuzz_common.h"
#include "scheme/binary.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace qscheme;
  // A copy in its own allocation lets ASan see any read past the end.
  std::string owned(reinterpret_cast<const char*>(data), size);
  const std::string_view text(owned);
  auto parsed = parse_scheme(text);
  if (!parsed.ok()) {
    FUZZ_ASSERT(parsed.status().code() == ErrorCode::malformed_scheme);
    FUZZ_ASSERT(parsed.status().index() <= size);
    FUZZ_ASSERT(!parsed.status().message().empty());
    return 0;
  }
  const std::string canonical = format_scheme(*parsed);
  auto again = parse_scheme(canonical);
  FUZZ_ASSERT_MSG(again.ok() && *again == *parsed, canonical);
  FUZZ_ASSERT_MSG(format_scheme(*again) == canonical, canonical);
  auto decoded = decode_scheme(encode_scheme(*parsed));
  FUZZ_ASSERT_MSG(decoded.ok() && *decoded == *parsed, canonical);
  // validate must answer (ok or a typed error), never crash.
  const Status st = validate_scheme(*parsed);
  FUZZ_ASSERT(st.ok() || !st.message().empty());
  return 0;
}
