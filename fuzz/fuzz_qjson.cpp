// fuzz_qjson: arbitrary bytes to the streaming Q.json reader (io/qjson.hpp), whole and in small pieces; accepted documents are written back and read again.
// Failure: a rejection with a code Q.json never gives, a different outcome when the text arrives in pieces, an accepted document whose bytes do not decode, write -> read not giving the same document (text included: writing is a fixed point), or a crash.
#include <algorithm>
#include <string>
#include <string_view>

#include "fuzz/fuzz_common.h"
#include "io/qjson.hpp"
#include "reference/reference.hpp"

namespace {

using qscheme::ErrorCode;
namespace qjson = qscheme::io::qjson;

bool expected_code(ErrorCode c) {
  switch (c) {
    case ErrorCode::invalid_argument:
    case ErrorCode::malformed_scheme:
    case ErrorCode::lookup_table_missing:
    case ErrorCode::packed_native_unsupported:
    case ErrorCode::zero_block_extent:
    case ErrorCode::two_level_block_dtype:
    case ErrorCode::two_level_global_dtype:
    case ErrorCode::rank_too_large:
    case ErrorCode::packing_dim_out_of_range:
    case ErrorCode::block_rank_exceeds_tensor:
    case ErrorCode::shape_overflow:
    case ErrorCode::size_mismatch:
    case ErrorCode::corrupt_bytes: return true;
    default: return false;
  }
}

qscheme::Rules rules_of(const qjson::Document& d) { return d.rules ? *d.rules : qscheme::profile_rules(d.profile); }

std::string text_of(const qjson::Document& d) {
  std::string out;
  const auto st = qjson::write(d.scheme, rules_of(d), d.shape, d.bytes, [&](std::span<const std::uint8_t> p) {
    out.append(reinterpret_cast<const char*>(p.data()), p.size());
    return qscheme::Status();
  });
  FUZZ_ASSERT_MSG(st.ok(), "an accepted document could not be written: " + st.to_string());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy in its own allocation lets ASan see any read past the end.
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto whole = qjson::read(qscheme::io::json::text_source(text), text.size());
  FUZZ_TRACE("trace: qjson -> %s\n", whole.ok() ? "ok" : whole.status().to_string().c_str());
  for (std::size_t step : {std::size_t{1}, std::size_t{3}}) {
    const auto piecewise = qjson::read(qscheme::io::json::text_source(text, step), text.size());
    FUZZ_ASSERT_MSG(piecewise.ok() == whole.ok(), "pieces of " + std::to_string(step) + " change the outcome");
    if (!whole.ok()) {
      FUZZ_ASSERT_MSG(piecewise.status().to_string() == whole.status().to_string(), piecewise.status().to_string());
    } else {
      FUZZ_ASSERT(piecewise->bytes == whole->bytes && piecewise->shape == whole->shape &&
                  piecewise->scheme == whole->scheme && piecewise->profile == whole->profile &&
                  piecewise->rules == whole->rules);
    }
  }
  if (!whole.ok()) {
    FUZZ_ASSERT_MSG(expected_code(whole.status().code()), whole.status().to_string());
    FUZZ_ASSERT(!whole.status().message().empty());
    return 0;
  }
  const auto q = qscheme::reference::decode(whole->scheme, whole->shape, whole->bytes, rules_of(*whole));
  FUZZ_ASSERT_MSG(q.ok(), "accepted bytes do not decode: " + q.status().to_string());
  const std::string written = text_of(*whole);
  const auto back = qjson::read(qscheme::io::json::text_source(written), written.size());
  FUZZ_ASSERT_MSG(back.ok(), "a written document does not read back: " + back.status().to_string());
  FUZZ_ASSERT_MSG(back->bytes == whole->bytes && back->shape == whole->shape && back->scheme == whole->scheme &&
                      back->profile == whole->profile && back->rules == whole->rules,
                  "write -> read changed the document");
  FUZZ_ASSERT_MSG(text_of(*back) == written, "writing is not a fixed point");
  return 0;
}
