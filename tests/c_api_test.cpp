// The C API (fast/qscheme.h): status codes and messages, null pointers, short buffers, rejected
// tuples, and outputs left untouched on every error; success matches the C++ engine byte for byte.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "fast/qscheme.h"
#include "scheme/float_bits.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"
#include "tests/support/run_process.hpp"

namespace {
constexpr std::uint8_t kSentinel = 0xA5;
constexpr const char* kBadTarget = "NOT_A_TARGET";
bool Untouched(const std::vector<std::uint8_t>& v) {
  for (auto b : v) {
    if (b != kSentinel) return false;
  }
  return true;
}
// qscheme_last_error_message in full.
std::string LastMessage() {
  const std::size_t n = qscheme_last_error_message(nullptr, 0);
  std::string m(n + 1, '\x7F');
  BOOST_TEST(qscheme_last_error_message(m.data(), m.size()) == n);
  BOOST_TEST(m[n] == '\0');
  m.resize(n);
  return m;
}
}  // namespace

BOOST_AUTO_TEST_CASE(round_trip_matches_cpp) {
  const char* scheme = "q4s:packed-u32(0):block[8]=f16";
  const std::uint64_t shape[] = {3, 10};
  std::vector<float> x(30);
  for (int i = 0; i < 30; ++i) x[i] = std::sin(static_cast<float>(i)) * 3;
  std::size_t need = 0;
  std::uint64_t idx = 0;
  BOOST_TEST(qscheme_fast_bytes_size(scheme, shape, 2, &need, &idx) == QSCHEME_OK);
  std::vector<std::uint8_t> out(need);
  std::size_t len = 0;
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 2, x.data(), x.size(), nullptr, out.data(), out.size(), &len, &idx) == QSCHEME_OK);
  BOOST_TEST(len == need);
  BOOST_TEST(idx == UINT64_MAX);
  const auto s = qscheme::parse_scheme(scheme).value();
  const auto q = qscheme::fast::quantize(s, std::vector<std::uint64_t>{3, 10}, x).value();
  BOOST_TEST((qscheme::fast::encode(q).value() == out));
  std::vector<float> d(30);
  std::size_t dn = 0;
  BOOST_TEST(qscheme_fast_dequantize(scheme, shape, 2, out.data(), out.size(), QSCHEME_PROFILE_EXACT, d.data(), d.size(), &dn, &idx) == QSCHEME_OK);
  BOOST_TEST(dn == 30u);
  BOOST_TEST((d == qscheme::fast::dequantize(q).value()));

  qscheme_quantize_options o{QSCHEME_PROFILE_BURN, QSCHEME_CALIBRATION_MINMAX, nullptr, 0, 0, 0.0f, 0, 0, 0.0f};
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 2, x.data(), x.size(), &o, out.data(), out.size(), &len, &idx) == QSCHEME_OK);
  const float given[] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  o.given_scales = given;
  o.given_count = 6;
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 2, x.data(), x.size(), &o, out.data(), out.size(), &len, &idx) == QSCHEME_OK);
}

BOOST_AUTO_TEST_CASE(errors_leave_outputs_untouched) {
  const char* scheme = "q8s:block[4]=f32";
  const std::uint64_t shape[] = {8};
  std::vector<float> x(8, 1.0f);
  std::vector<std::uint8_t> out(64, kSentinel);
  std::size_t len = 12345;
  std::uint64_t idx = 0;
  // Null pointers.
  BOOST_TEST(qscheme_fast_quantize(nullptr, shape, 1, x.data(), 8, nullptr, out.data(), out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(qscheme_fast_quantize(scheme, nullptr, 1, x.data(), 8, nullptr, out.data(), out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, nullptr, 8, nullptr, out.data(), out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, nullptr, nullptr, out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, nullptr, out.data(), out.size(), nullptr, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(qscheme_fast_bytes_size(scheme, shape, 1, nullptr, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(len == 12345u);
  BOOST_TEST(Untouched(out));
  // Bad option values.
  qscheme_quantize_options o{7, 0, nullptr, 0, 0, 0.0f, 0, 0, 0.0f};
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, &o, out.data(), out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
  // Short buffer: size reported, buffer untouched.
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, nullptr, out.data(), 9, &len, &idx) == QSCHEME_SIZE_MISMATCH);
  BOOST_TEST(len == 16u);  // 8 values + 2 f32 scales
  BOOST_TEST(Untouched(out));
  // Rejected tuples and inputs, with their codes and indices.
  BOOST_TEST(qscheme_fast_quantize("q8s:nonsense", shape, 1, x.data(), 8, nullptr, out.data(), out.size(), &len, &idx) == QSCHEME_MALFORMED_SCHEME);
  BOOST_TEST(qscheme_fast_quantize("q4s:packed-native(0)", shape, 1, x.data(), 8, nullptr, out.data(), out.size(), &len, &idx) == QSCHEME_PACKED_NATIVE_UNSUPPORTED);
  BOOST_TEST(qscheme_fast_quantize("q8s:block[4]=f32:tensor=f32", shape, 1, x.data(), 8, nullptr, out.data(), out.size(), &len, &idx) == QSCHEME_TWO_LEVEL_BLOCK_DTYPE);
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 7, nullptr, out.data(), out.size(), &len, &idx) == QSCHEME_SIZE_MISMATCH);
  x[6] = NAN;
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, nullptr, out.data(), out.size(), &len, &idx) == QSCHEME_NON_FINITE_INPUT);
  BOOST_TEST(idx == 6u);
  BOOST_TEST(Untouched(out));
  BOOST_TEST(std::string(qscheme_status_name(QSCHEME_NON_FINITE_INPUT)) == "non-finite-input");
  BOOST_TEST(std::string(qscheme_status_name(999)) == "unknown");

  // Dequantize: corrupt bytes, wrong length, bad profile; output untouched.
  std::vector<std::uint8_t> b(16, 0);
  b[2] = 0x80;  // -128 in q8s
  std::vector<float> d(8, 42.0f);
  std::size_t dn = 777;
  BOOST_TEST(qscheme_fast_dequantize(scheme, shape, 1, b.data(), b.size(), 0, d.data(), d.size(), &dn, &idx) == QSCHEME_CORRUPT_BYTES);
  BOOST_TEST(idx == 2u);
  BOOST_TEST(qscheme_fast_dequantize(scheme, shape, 1, b.data(), 15, 0, d.data(), d.size(), &dn, &idx) == QSCHEME_SIZE_MISMATCH);
  BOOST_TEST(qscheme_fast_dequantize(scheme, shape, 1, b.data(), b.size(), 5, d.data(), d.size(), &dn, &idx) == QSCHEME_INVALID_ARGUMENT);
  b[2] = 0;
  BOOST_TEST(qscheme_fast_dequantize(scheme, shape, 1, b.data(), b.size(), 0, d.data(), 4, &dn, &idx) == QSCHEME_SIZE_MISMATCH);
  BOOST_TEST(dn == 8u);
  for (float f : d) BOOST_TEST(f == 42.0f);
}

// qscheme_fast_dequantize_to: f32 is qscheme_fast_dequantize; f16 and bf16 round those values
// once more (docs/SEMANTICS.md section 16), out untouched on every error, a short out_cap
// included (the count then in *out_len).
BOOST_AUTO_TEST_CASE(dequantize_to_an_output_dtype) {
  const char* scheme = "q8s";
  const std::uint64_t shape[] = {4};
  std::vector<std::uint8_t> b{1, 2, 0xFF, 0, 0, 0, 0x80, 0x3F};  // codes 1 2 -1 0, scale 1.0f
  std::vector<float> d(4, 42.0f);
  std::size_t dn = 0;
  std::uint64_t idx = 0;
  BOOST_TEST(qscheme_fast_dequantize_to(scheme, shape, 1, b.data(), b.size(), 0, QSCHEME_OUT_F32, d.data(), d.size(),
                                        &dn, &idx) == QSCHEME_OK);
  BOOST_TEST(d == (std::vector<float>{1.0f, 2.0f, -1.0f, 0.0f}), boost::test_tools::per_element());
  std::vector<std::uint16_t> h(4, 0xABCD);
  BOOST_TEST(qscheme_fast_dequantize_to(scheme, shape, 1, b.data(), b.size(), 0, QSCHEME_OUT_F16, h.data(), h.size(),
                                        &dn, &idx) == QSCHEME_OK);
  BOOST_TEST(h == (std::vector<std::uint16_t>{0x3C00, 0x4000, 0xBC00, 0x0000}), boost::test_tools::per_element());
  BOOST_TEST(qscheme_fast_dequantize_to(scheme, shape, 1, b.data(), b.size(), 0, QSCHEME_OUT_BF16, h.data(), h.size(),
                                        &dn, &idx) == QSCHEME_OK);
  BOOST_TEST(h == (std::vector<std::uint16_t>{0x3F80, 0x4000, 0xBF80, 0x0000}), boost::test_tools::per_element());
  BOOST_TEST(dn == 4u);
  h.assign(4, 0xABCD);
  dn = 777;
  BOOST_TEST(qscheme_fast_dequantize_to(scheme, shape, 1, b.data(), b.size(), 0, QSCHEME_OUT_F16, h.data(), 3, &dn,
                                        &idx) == QSCHEME_SIZE_MISMATCH);
  BOOST_TEST(dn == 4u);
  dn = 777;
  BOOST_TEST(qscheme_fast_dequantize_to(scheme, shape, 1, b.data(), 7, 0, QSCHEME_OUT_BF16, h.data(), h.size(), &dn,
                                        &idx) == QSCHEME_SIZE_MISMATCH);
  BOOST_TEST(qscheme_fast_dequantize_to(scheme, shape, 1, b.data(), b.size(), 0, 3, h.data(), h.size(), &dn, &idx) ==
             QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(qscheme_fast_dequantize_to(scheme, shape, 1, b.data(), b.size(), 0, QSCHEME_OUT_F16, nullptr, 4, &dn,
                                        &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(dn == 777u);
  for (std::uint16_t v : h) BOOST_TEST(v == 0xABCD);
}

// Every failing call leaves a message saying what is wrong; engine errors carry the C++ API's
// message word for word; a success clears it; the copy truncates like snprintf.
BOOST_AUTO_TEST_CASE(errors_come_with_the_cpp_message) {
  const char* scheme = "q8s:block[4]=f32";
  const std::uint64_t shape[] = {8};
  std::vector<float> x(8, 1.0f);
  x[5] = INFINITY;
  std::vector<std::uint8_t> out(16, kSentinel);
  std::size_t len = 0;
  std::uint64_t idx = 0;
  const auto s = qscheme::parse_scheme(scheme).value();
  const std::vector<std::uint64_t> vshape{8};
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, nullptr, out.data(), out.size(), &len, &idx) ==
             QSCHEME_NON_FINITE_INPUT);
  const std::string nonfinite = qscheme::fast::quantize(s, vshape, x).status().message();
  BOOST_TEST(LastMessage() == nonfinite);
  BOOST_TEST(nonfinite == "input element 5 is NaN or infinite");

  // Truncation: cap - 1 bytes and a NUL; the full length returned.
  char small[6];
  std::memset(small, 'z', sizeof small);
  BOOST_TEST(qscheme_last_error_message(small, sizeof small) == nonfinite.size());
  BOOST_TEST(std::string(small) == nonfinite.substr(0, 5));

  // Corrupt bytes: the decode message of the C++ API.
  std::vector<std::uint8_t> b(16, 0);
  b[8] = 0x00, b[9] = 0x00, b[10] = 0x80, b[11] = 0xFF;  // scale 0: f32 -inf
  std::vector<float> d(8, 42.0f);
  std::size_t dn = 0;
  BOOST_TEST(qscheme_fast_dequantize(scheme, shape, 1, b.data(), b.size(), 0, d.data(), d.size(), &dn, &idx) ==
             QSCHEME_CORRUPT_BYTES);
  BOOST_TEST(LastMessage() == qscheme::fast::decode(s, vshape, b).status().message());
  BOOST_TEST(LastMessage().find("scale 0") != std::string::npos, LastMessage());

  // A rejected tuple: validate()'s message.
  BOOST_TEST(qscheme_fast_quantize("q4s:packed-native(0)", shape, 1, x.data(), 8, nullptr, out.data(), out.size(), &len,
                                   &idx) == QSCHEME_PACKED_NATIVE_UNSUPPORTED);
  BOOST_TEST(LastMessage() == qscheme::validate_scheme(qscheme::parse_scheme("q4s:packed-native(0)").value()).message());

  // C-level errors name the argument or the value.
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, nullptr, out.data(), out.size(), nullptr, &idx) ==
             QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(LastMessage().find("out_len is NULL") != std::string::npos, LastMessage());
  qscheme_quantize_options o{7, 0, nullptr, 0, 0, 0.0f, 0, 0, 0.0f};
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, &o, out.data(), out.size(), &len, &idx) ==
             QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(LastMessage().find("options->profile is 7") != std::string::npos, LastMessage());
  x[5] = 1.0f;
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, nullptr, out.data(), 9, &len, &idx) ==
             QSCHEME_SIZE_MISMATCH);
  BOOST_TEST(LastMessage().find("out_cap is 9 byte(s), the tensor takes 16 byte(s)") != std::string::npos, LastMessage());
  BOOST_TEST(qscheme_fast_set_target("NOPE") == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(LastMessage().find("\"NOPE\"") != std::string::npos, LastMessage());
  BOOST_TEST(Untouched(out));

  // Success clears it.
  BOOST_TEST(qscheme_fast_quantize(scheme, shape, 1, x.data(), 8, nullptr, out.data(), out.size(), &len, &idx) ==
             QSCHEME_OK);
  BOOST_TEST(qscheme_last_error_message(nullptr, 0) == 0u);
  BOOST_TEST(LastMessage().empty());
}

BOOST_AUTO_TEST_CASE(targets_and_threads) {
  BOOST_TEST(qscheme_fast_set_threads(2) == QSCHEME_OK);
  BOOST_TEST(qscheme_fast_set_threads(1) == QSCHEME_OK);
  BOOST_TEST(qscheme_fast_set_target("NOPE") == QSCHEME_INVALID_ARGUMENT);
  const std::string t = qscheme_fast_current_target();
  BOOST_TEST(qscheme_fast_set_target(t.c_str()) == QSCHEME_OK);
  BOOST_TEST(qscheme_fast_set_target(nullptr) == QSCHEME_OK);
  BOOST_TEST(std::string(qscheme_fast_current_target()) == t);
}

// Run twice: in ctest's environment (no QSCHEME_TARGET, or a valid one) the status is OK; the case
// below runs this one again in a child process with QSCHEME_TARGET set to a name no build has.
BOOST_AUTO_TEST_CASE(target_env_status_says_when_qscheme_target_was_not_applied) {
  const char* env = std::getenv("QSCHEME_TARGET");
  if (env && std::string(env) == kBadTarget) {
    BOOST_TEST(qscheme_fast_target_env_status() == QSCHEME_INVALID_ARGUMENT);
    const std::string m = LastMessage();
    BOOST_TEST(m.find(std::string("QSCHEME_TARGET=") + kBadTarget + " names no Highway target") != std::string::npos, m);
    BOOST_TEST(m.find(std::string("the kernels run on ") + qscheme_fast_current_target()) != std::string::npos, m);
    // The kernels still run, on the automatic choice.
    const std::vector<std::string> all = qscheme::fast::available_targets();
    BOOST_TEST(std::string(qscheme_fast_current_target()) == all.front());
  } else {
    BOOST_TEST(qscheme_fast_target_env_status() == QSCHEME_OK);
    BOOST_TEST(LastMessage().empty());
  }
}

BOOST_AUTO_TEST_CASE(target_env_status_in_a_child_with_a_target_the_build_lacks) {
  const auto& suite = boost::unit_test::framework::master_test_suite();
  const qscheme::testing::Run r = qscheme::testing::run_process(
      suite.argv[0], {"--run_test=target_env_status_says_when_qscheme_target_was_not_applied", "--color_output=false"},
      {std::string("QSCHEME_TARGET=") + kBadTarget});
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST((r.out + r.err).find("No errors detected") != std::string::npos, r.out << r.err);
}

// The fused path the C API runs when out has room: q8_0 over rows longer than one unit, both
// output policies, the same bytes as the C++ engine; a NaN in the last row is reported with its
// index either way, and under the default policy nothing is written.
BOOST_AUTO_TEST_CASE(single_pass_option_gives_the_same_bytes_and_errors) {
  const char* scheme = "q8_0";
  const std::uint64_t shape[] = {3, 4160};
  std::vector<float> x(3 * 4160);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * 5;
  std::size_t need = 0;
  std::uint64_t idx = 0;
  BOOST_TEST_REQUIRE(qscheme_fast_bytes_size(scheme, shape, 2, &need, &idx) == QSCHEME_OK);
  const auto s = qscheme::parse_scheme(scheme).value();
  const auto want = qscheme::fast::encode(qscheme::fast::quantize(s, std::vector<std::uint64_t>{3, 4160}, x).value()).value();
  for (int single : {0, 1}) {
    qscheme_quantize_options o{QSCHEME_PROFILE_EXACT, QSCHEME_CALIBRATION_MINMAX, nullptr, 0, 0, 0.0f, single, 0, 0.0f};
    std::vector<std::uint8_t> out(need, kSentinel);
    std::size_t len = 0;
    BOOST_TEST(qscheme_fast_quantize(scheme, shape, 2, x.data(), x.size(), &o, out.data(), out.size(), &len, &idx) == QSCHEME_OK);
    BOOST_TEST((out == want));
    auto bad = x;
    bad[2 * 4160 + 7] = NAN;
    std::vector<std::uint8_t> out2(need, kSentinel);
    BOOST_TEST(qscheme_fast_quantize(scheme, shape, 2, bad.data(), bad.size(), &o, out2.data(), out2.size(), &len, &idx) ==
               QSCHEME_NON_FINITE_INPUT);
    BOOST_TEST(idx == 2u * 4160 + 7);
    if (!single) BOOST_TEST(Untouched(out2));
  }
}

// Lying counts: every count an entry point takes is checked before the memory it describes is
// touched, and the error names the number given and the true one. The arrays below are exactly
// as long as the true count (on the heap, where ASan sees a read or write past them); each count
// is then given too large by one, as 10^6, 2^62 and SIZE_MAX. Outputs are surrounded by sentinel
// bytes that must survive.
namespace {

std::vector<std::uint64_t> Lies(std::uint64_t truth) {
  return {truth + 1, 1000000, std::uint64_t{1} << 62, SIZE_MAX};
}

constexpr const char* kLyingScheme = "q8s:block[4]=f32";  // [8]: 8 values + 2 f32 scales = 16 bytes
constexpr std::size_t kLyingBytes = 16;

// What a quantize call may write: out (its sentinels must survive a failed call), *out_len and
// *err_index (set to UINT64_MAX by every call without an element index).
struct Outputs {
  std::vector<std::uint8_t> out = std::vector<std::uint8_t>(kLyingBytes + 64, kSentinel);
  std::size_t len = 12345;
  std::uint64_t idx = 7;
  bool untouched() const { return Untouched(out) && len == 12345u; }
};

}  // namespace

BOOST_AUTO_TEST_CASE(bytes_size_with_a_lying_rank) {
  const std::vector<std::uint64_t> shape(qscheme::kMaxRank, 1);  // as many entries as any rank takes
  for (std::uint64_t rank : Lies(qscheme::kMaxRank)) {
    BOOST_TEST_CONTEXT("rank " << rank) {
      std::size_t bytes = 12345;
      std::uint64_t idx = 7;
      BOOST_TEST(qscheme_fast_bytes_size(kLyingScheme, shape.data(), rank, &bytes, &idx) == QSCHEME_RANK_TOO_LARGE);
      BOOST_TEST(LastMessage() == "a tensor of rank " + std::to_string(rank) + " is beyond the supported rank of 8; reshape it first");
      BOOST_TEST(bytes == 12345u);
      BOOST_TEST(idx == UINT64_MAX);
    }
  }
}

BOOST_AUTO_TEST_CASE(quantize_with_lying_counts) {
  const std::vector<std::uint64_t> shape{8};
  const std::vector<float> x(8, 1.0f);
  const std::vector<float> given{0.5f, 0.5f};  // the two block scales of [8]
  const std::vector<std::uint64_t> long_shape(qscheme::kMaxRank, 1);
  for (std::size_t room : {kLyingBytes, std::size_t{0}}) {  // the fused path, and too little room
    BOOST_TEST_CONTEXT("out_cap " << room) {
      for (std::uint64_t rank : Lies(qscheme::kMaxRank)) {
        BOOST_TEST_CONTEXT("rank " << rank) {
          Outputs o;
          BOOST_TEST(qscheme_fast_quantize(kLyingScheme, long_shape.data(), rank, x.data(), x.size(), nullptr, o.out.data(),
                                           room, &o.len, &o.idx) == QSCHEME_RANK_TOO_LARGE);
          BOOST_TEST(LastMessage() == "a tensor of rank " + std::to_string(rank) + " is beyond the supported rank of 8; reshape it first");
          BOOST_TEST(o.untouched());
          BOOST_TEST(o.idx == UINT64_MAX);
        }
      }
      for (std::uint64_t n : Lies(8)) {
        BOOST_TEST_CONTEXT("n " << n) {
          Outputs o;
          BOOST_TEST(qscheme_fast_quantize(kLyingScheme, shape.data(), 1, x.data(), n, nullptr, o.out.data(), room, &o.len,
                                           &o.idx) == QSCHEME_SIZE_MISMATCH);
          BOOST_TEST(LastMessage() == "the input has " + std::to_string(n) + " value(s), but the shape holds 8 element(s)");
          BOOST_TEST(o.untouched());
          BOOST_TEST(o.idx == UINT64_MAX);
        }
      }
      for (std::uint64_t count : Lies(2)) {
        BOOST_TEST_CONTEXT("given_count " << count) {
          qscheme_quantize_options opt{QSCHEME_PROFILE_EXACT, QSCHEME_CALIBRATION_MINMAX, given.data(), count, 0, 0.0f, 0, 0, 0.0f};
          Outputs o;
          BOOST_TEST(qscheme_fast_quantize(kLyingScheme, shape.data(), 1, x.data(), x.size(), &opt, o.out.data(), room,
                                           &o.len, &o.idx) == QSCHEME_SIZE_MISMATCH);
          BOOST_TEST(LastMessage() == std::to_string(count) + " block scale(s) were given, but the scheme and shape take 2");
          BOOST_TEST(o.untouched());
          BOOST_TEST(o.idx == UINT64_MAX);
        }
      }
    }
  }
  // out_cap beyond the buffer: only the tensor's 16 bytes are written, the sentinels after them stay.
  for (std::uint64_t cap : Lies(kLyingBytes)) {
    BOOST_TEST_CONTEXT("out_cap " << cap) {
      Outputs o;
      BOOST_TEST(qscheme_fast_quantize(kLyingScheme, shape.data(), 1, x.data(), x.size(), nullptr, o.out.data(), cap,
                                       &o.len, &o.idx) == QSCHEME_OK);
      BOOST_TEST(o.len == kLyingBytes);
      BOOST_TEST(Untouched(std::vector<std::uint8_t>(o.out.begin() + kLyingBytes, o.out.end())));
    }
  }
}

BOOST_AUTO_TEST_CASE(dequantize_with_lying_counts) {
  const std::vector<std::uint64_t> shape{8};
  const std::vector<std::uint64_t> long_shape(qscheme::kMaxRank, 1);
  std::vector<std::uint8_t> bytes(kLyingBytes, 0);  // codes 0, scales +0.0f: a valid all-zero tensor
  // Floats out, with sentinel bytes around them: 8 floats of room, then 16 more.
  auto untouched_floats = [](const std::vector<float>& v, std::size_t from) {
    for (std::size_t i = from; i < v.size(); ++i) {
      if (qscheme::f32_bits(v[i]) != 0xA5A5A5A5u) return false;
    }
    return true;
  };
  const float sentinel = qscheme::f32_from_bits(0xA5A5A5A5u);
  for (std::size_t room : {std::size_t{8}, std::size_t{0}}) {
    BOOST_TEST_CONTEXT("out_cap " << room) {
      for (std::uint64_t rank : Lies(qscheme::kMaxRank)) {
        BOOST_TEST_CONTEXT("rank " << rank) {
          std::vector<float> out(24, sentinel);
          std::size_t n = 12345;
          std::uint64_t idx = 7;
          BOOST_TEST(qscheme_fast_dequantize(kLyingScheme, long_shape.data(), rank, bytes.data(), bytes.size(),
                                             QSCHEME_PROFILE_EXACT, out.data(), room, &n, &idx) == QSCHEME_RANK_TOO_LARGE);
          BOOST_TEST(LastMessage() == "a tensor of rank " + std::to_string(rank) + " is beyond the supported rank of 8; reshape it first");
          BOOST_TEST(untouched_floats(out, 0));
          BOOST_TEST(n == 12345u);
          BOOST_TEST(idx == UINT64_MAX);
        }
      }
      for (std::uint64_t len : Lies(kLyingBytes)) {
        BOOST_TEST_CONTEXT("len " << len) {
          std::vector<float> out(24, sentinel);
          std::size_t n = 12345;
          std::uint64_t idx = 7;
          BOOST_TEST(qscheme_fast_dequantize(kLyingScheme, shape.data(), 1, bytes.data(), len, QSCHEME_PROFILE_EXACT,
                                             out.data(), room, &n, &idx) == QSCHEME_SIZE_MISMATCH);
          BOOST_TEST(LastMessage() == "expected 16 bytes (values 8 + scales 8 + global 0), got " + std::to_string(len));
          BOOST_TEST(untouched_floats(out, 0));
          BOOST_TEST(n == 12345u);
          BOOST_TEST(idx == UINT64_MAX);
        }
      }
    }
  }
  // out_cap beyond the buffer: only the tensor's 8 floats are written.
  for (std::uint64_t cap : Lies(8)) {
    BOOST_TEST_CONTEXT("out_cap " << cap) {
      std::vector<float> out(24, sentinel);
      std::size_t n = 12345;
      BOOST_TEST(qscheme_fast_dequantize(kLyingScheme, shape.data(), 1, bytes.data(), bytes.size(), QSCHEME_PROFILE_EXACT,
                                         out.data(), cap, &n, nullptr) == QSCHEME_OK);
      BOOST_TEST(n == 8u);
      BOOST_TEST(untouched_floats(out, 8));
    }
  }
}

BOOST_AUTO_TEST_CASE(last_error_message_with_a_lying_cap) {
  const std::uint64_t shape[] = {8};
  std::size_t len = 0;
  BOOST_TEST(qscheme_fast_quantize("q8s:nonsense", shape, 1, nullptr, 0, nullptr, nullptr, 0, &len, nullptr) ==
             QSCHEME_MALFORMED_SCHEME);
  const std::string m = LastMessage();
  BOOST_TEST_REQUIRE(!m.empty());
  for (std::uint64_t cap : Lies(m.size() + 1)) {
    BOOST_TEST_CONTEXT("cap " << cap) {
      std::vector<char> buf(m.size() + 1 + 32, static_cast<char>(kSentinel));
      BOOST_TEST(qscheme_last_error_message(buf.data(), cap) == m.size());
      BOOST_TEST(std::string(buf.data()) == m);
      for (std::size_t i = m.size() + 1; i < buf.size(); ++i) BOOST_TEST(buf[i] == static_cast<char>(kSentinel));
    }
  }
}

BOOST_AUTO_TEST_CASE(status_name_of_any_int) {
  for (int st : {-1, QSCHEME_UNSUPPORTED_ENGINE + 1, INT_MAX, INT_MIN}) BOOST_TEST(std::string(qscheme_status_name(st)) == "unknown");
  BOOST_TEST(std::string(qscheme_status_name(QSCHEME_INTERNAL)) == "internal");
}

// The thread count is bounded: above QSCHEME_MAX_THREADS the call fails and the count stays.
// Before the bound, 100000 was taken, and the next large quantize started a thread per row
// block until the system refused one, which ended the process (SIGABRT).
BOOST_AUTO_TEST_CASE(set_threads_with_a_lying_count) {
  BOOST_TEST_REQUIRE(qscheme_fast_set_threads(3) == QSCHEME_OK);
  for (std::uint64_t n : {std::uint64_t{QSCHEME_MAX_THREADS} + 1, std::uint64_t{100000}, std::uint64_t{UINT_MAX}}) {
    BOOST_TEST_CONTEXT("n " << n) {
      BOOST_TEST(qscheme_fast_set_threads(static_cast<unsigned>(n)) == QSCHEME_INVALID_ARGUMENT);
      BOOST_TEST(LastMessage() == "a thread count of " + std::to_string(n) +
                                      " is above the maximum of 256; use 1 to 256, or 0 for one per hardware thread "
                                      "(at most 256)");
      BOOST_TEST(qscheme::fast::threads() == 3u);
    }
  }
  BOOST_TEST(qscheme_fast_set_threads(QSCHEME_MAX_THREADS) == QSCHEME_OK);
  BOOST_TEST(qscheme::fast::threads() == QSCHEME_MAX_THREADS);
  BOOST_TEST(qscheme_fast_set_threads(0) == QSCHEME_OK);
  BOOST_TEST(qscheme::fast::threads() >= 1u);
  BOOST_TEST(qscheme::fast::threads() <= QSCHEME_MAX_THREADS);
  BOOST_TEST(qscheme_fast_set_threads(1) == QSCHEME_OK);
}

// The largest thread count on a tensor of as many row blocks: every chunk on its own thread
// where the system grants them, the bytes those of one thread.
BOOST_AUTO_TEST_CASE(quantize_on_the_most_threads_gives_the_one_thread_bytes) {
  const std::uint64_t shape[] = {QSCHEME_MAX_THREADS * 2, 256};
  std::vector<float> x(shape[0] * shape[1]);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.11f) * 7;
  std::size_t need = 0;
  BOOST_TEST_REQUIRE(qscheme_fast_bytes_size("q8_0", shape, 2, &need, nullptr) == QSCHEME_OK);
  std::vector<std::uint8_t> one(need), many(need);
  std::size_t len = 0;
  BOOST_TEST_REQUIRE(qscheme_fast_set_threads(1) == QSCHEME_OK);
  BOOST_TEST(qscheme_fast_quantize("q8_0", shape, 2, x.data(), x.size(), nullptr, one.data(), need, &len, nullptr) == QSCHEME_OK);
  BOOST_TEST_REQUIRE(qscheme_fast_set_threads(QSCHEME_MAX_THREADS) == QSCHEME_OK);
  BOOST_TEST(qscheme_fast_quantize("q8_0", shape, 2, x.data(), x.size(), nullptr, many.data(), need, &len, nullptr) == QSCHEME_OK);
  BOOST_TEST((one == many));
  BOOST_TEST_REQUIRE(qscheme_fast_set_threads(1) == QSCHEME_OK);
}

// A recipe by name: its point instead of options->profile, the bytes of the C++ engine under
// recipe_options; hand-worked bytes for one block of mxfp4 (e2m1 codes two per byte, low nibble
// first, then the ue8m0 scale) whose max |x| = 7 lies past e2m1's 6: ocp-mx's
// 2^(floor(log2 7) - 2) = 1 clips it to 6 (code 0x7) and keeps -1 (0xA); torchao-mx-ceil's
// 2^(ceil(log2 7) - 2) = 2 rounds 3.5 to the even 4 (code 0x6) and gives -0.5 (0x9). Without a
// scheme a recipe takes its first (mxfp8: a byte per code, 33 bytes).
BOOST_AUTO_TEST_CASE(recipes_by_name) {
  const std::uint64_t shape[] = {32};
  std::vector<float> x(32, 0.0f);
  x[0] = 7.0f;
  x[1] = -1.0f;
  std::uint64_t idx = 0;
  std::size_t len = 0;
  struct Want {
    const char* recipe;
    std::uint8_t first, scale;
    float y0;  // x[0] dequantized: the code's value times the scale
  };
  for (const Want& w : {Want{"ocp-mx", 0xA7, 0x7F, 6.0f}, Want{"torchao-mx-ceil", 0x96, 0x80, 8.0f}}) {
    BOOST_TEST_CONTEXT(w.recipe) {
      std::vector<std::uint8_t> out(17, kSentinel);
      // options->profile is burn: the recipe's point decides, not it.
      qscheme_quantize_options o{QSCHEME_PROFILE_BURN, QSCHEME_CALIBRATION_MINMAX, nullptr, 0, 0, 0.0f, 0, 0, 0.0f};
      BOOST_TEST(qscheme_fast_quantize_recipe(w.recipe, "mxfp4", shape, 1, x.data(), x.size(), &o, out.data(),
                                              out.size(), &len, &idx) == QSCHEME_OK, LastMessage());
      BOOST_TEST(len == 17u);
      BOOST_TEST(out[0] == w.first);
      BOOST_TEST(out[16] == w.scale);
      const auto r = qscheme::find_recipe(w.recipe).value();
      const auto s = qscheme::recipe_scheme(*r, "mxfp4").value();
      std::vector<std::uint8_t> cpp(17);
      BOOST_TEST(qscheme::fast::quantize_to_bytes(s, std::vector<std::uint64_t>{32}, x.data(), x.size(),
                                                  qscheme::recipe_options(*r, {}), cpp.data(), cpp.size())
                     .ok());
      BOOST_TEST((cpp == out));
      std::vector<float> d(32);
      std::size_t dn = 0;
      BOOST_TEST(qscheme_fast_dequantize_recipe(w.recipe, "mxfp4", shape, 1, out.data(), out.size(), d.data(), d.size(), &dn,
                                                &idx) == QSCHEME_OK, LastMessage());
      BOOST_TEST(dn == 32u);
      BOOST_TEST(d[0] == w.y0);
      BOOST_TEST(d[1] == -1.0f);
      std::vector<std::uint8_t> mxfp8(33);
      BOOST_TEST(qscheme_fast_quantize_recipe(w.recipe, nullptr, shape, 1, x.data(), x.size(), nullptr, mxfp8.data(),
                                              mxfp8.size(), &len, &idx) == QSCHEME_OK, LastMessage());
      BOOST_TEST(len == 33u);
    }
  }
  std::vector<std::uint8_t> out(64, kSentinel);
  // Unknown name, a scheme the recipe does not take, a lying n, a NULL recipe: typed errors, out untouched.
  BOOST_TEST(qscheme_fast_quantize_recipe("ocp-mxx", nullptr, shape, 1, x.data(), x.size(), nullptr, out.data(),
                                          out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(LastMessage().find("unknown recipe") != std::string::npos, LastMessage());
  BOOST_TEST(qscheme_fast_quantize_recipe("ocp-mx", "q8s", shape, 1, x.data(), x.size(), nullptr, out.data(),
                                          out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(qscheme_fast_quantize_recipe("ocp-mx", "mxfp4", shape, 1, x.data(), 31, nullptr, out.data(), out.size(),
                                          &len, &idx) == QSCHEME_SIZE_MISMATCH);
  BOOST_TEST(qscheme_fast_quantize_recipe(nullptr, "mxfp4", shape, 1, x.data(), x.size(), nullptr, out.data(),
                                          out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(Untouched(out));
}

// nvidia-nvfp4 on one block of 16, hand-worked (tests/data/recipes/nvidia-nvfp4/README.md): A = 6
// gives S = 2688 / 6 = 448, the global f32(1 / 448) = 0x3B124925 and the block's v = f32(6 *
// f32(448 * f32(1 / 6))) = 448.00003, stored as 448 (e4m3 0x7E); f32(448 * g) = 1 (448 g = 1 +
// 4.5e-8), so the codes are x's own e2m1 roundings, ties to even, -0 as +0: bytes 07 22 44 66 a8 ca
// ec 0e, then 7E and the global. Back, each value times that f32 product 1: 6 stays 6, where the
// exact product 448 g would give f32(6 (1 + 4.5e-8)) = 6.0000005. A global of f32 max makes 448 g
// overflow: unsupported-profile naming block 0. The same scales given write the same bytes.
BOOST_AUTO_TEST_CASE(nvidia_nvfp4_writes_and_reads_te_bytes) {
  const std::uint64_t shape[] = {16};
  const std::vector<float> x = {6.0f,  0.25f,  0.75f,  1.25f,  1.75f,  2.5f,  3.5f,  5.0f,
                                -0.25f, -0.75f, -1.25f, -1.75f, -2.5f, -3.5f, -5.0f, -0.0f};
  const std::vector<std::uint8_t> want = {0x07, 0x22, 0x44, 0x66, 0xA8, 0xCA, 0xEC, 0x0E, 0x7E, 0x25, 0x49, 0x12, 0x3B};
  std::uint64_t idx = 0;
  std::size_t len = 0, need = 0;
  BOOST_TEST(qscheme_fast_recipe_bytes_size("nvidia-nvfp4", nullptr, shape, 1, &need, &idx) == QSCHEME_OK);
  BOOST_TEST(need == want.size());
  for (int single_pass = 0; single_pass < 2; ++single_pass) {
    qscheme_quantize_options o{};
    o.single_pass = single_pass;
    std::vector<std::uint8_t> out(want.size(), kSentinel);
    BOOST_TEST(qscheme_fast_quantize_recipe("nvidia-nvfp4", nullptr, shape, 1, x.data(), x.size(), &o, out.data(),
                                            out.size(), &len, &idx) == QSCHEME_OK, LastMessage());
    BOOST_TEST(out == want, boost::test_tools::per_element());
    const float block = 448.0f;
    o.given_scales = &block;
    o.given_count = 1;
    o.has_global = 1;
    o.global_scale = qscheme::f32_from_bits(0x3B124925u);
    std::fill(out.begin(), out.end(), kSentinel);
    BOOST_TEST(qscheme_fast_quantize_recipe("nvidia-nvfp4", nullptr, shape, 1, x.data(), x.size(), &o, out.data(),
                                            out.size(), &len, &idx) == QSCHEME_OK, LastMessage());
    BOOST_TEST(out == want, boost::test_tools::per_element());
    // Given, the product overflows at quantize as it does at dequantize.
    o.global_scale = qscheme::f32_from_bits(0x7F7FFFFFu);
    std::fill(out.begin(), out.end(), kSentinel);
    BOOST_TEST(qscheme_fast_quantize_recipe("nvidia-nvfp4", nullptr, shape, 1, x.data(), x.size(), &o, out.data(),
                                            out.size(), &len, &idx) == QSCHEME_UNSUPPORTED_PROFILE);
    BOOST_TEST(idx == 0u);
    BOOST_TEST(Untouched(out));
    // The input's own max |x| as a known global amax: the calibrated bytes. Beside given scales
    // it is invalid-argument; a NaN one invalid-scale; the output untouched either way.
    o.has_global_amax = 1;
    o.global_amax = 6.0f;
    std::fill(out.begin(), out.end(), kSentinel);
    BOOST_TEST(qscheme_fast_quantize_recipe("nvidia-nvfp4", nullptr, shape, 1, x.data(), x.size(), &o, out.data(),
                                            out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
    BOOST_TEST(Untouched(out));
    o.given_scales = nullptr;
    o.given_count = 0;
    o.has_global = 0;
    BOOST_TEST(qscheme_fast_quantize_recipe("nvidia-nvfp4", nullptr, shape, 1, x.data(), x.size(), &o, out.data(),
                                            out.size(), &len, &idx) == QSCHEME_OK, LastMessage());
    BOOST_TEST(out == want, boost::test_tools::per_element());
    o.global_amax = std::nanf("");
    std::fill(out.begin(), out.end(), kSentinel);
    BOOST_TEST(qscheme_fast_quantize_recipe("nvidia-nvfp4", nullptr, shape, 1, x.data(), x.size(), &o, out.data(),
                                            out.size(), &len, &idx) == QSCHEME_INVALID_SCALE);
    BOOST_TEST(Untouched(out));
    // Half of it: the global is twice as fine, and the block scale saturates at 448 (0x7E).
    o.global_amax = 3.0f;
    BOOST_TEST(qscheme_fast_quantize_recipe("nvidia-nvfp4", nullptr, shape, 1, x.data(), x.size(), &o, out.data(),
                                            out.size(), &len, &idx) == QSCHEME_OK, LastMessage());
    BOOST_TEST(out[8] == 0x7Eu);
    std::uint32_t g = 0;
    std::memcpy(&g, out.data() + 9, 4);
    BOOST_TEST(g == qscheme::f32_bits(1.0f / (2688.0f / 3.0f)));
  }
  std::vector<float> y(16, -1.0f);
  std::size_t n = 0;
  BOOST_TEST(qscheme_fast_dequantize_recipe("nvidia-nvfp4", nullptr, shape, 1, want.data(), want.size(), y.data(),
                                            y.size(), &n, &idx) == QSCHEME_OK, LastMessage());
  const std::vector<float> values = {6.0f, 0.0f, 1.0f, 1.0f, 2.0f, 2.0f, 4.0f, 4.0f,
                                     -0.0f, -1.0f, -1.0f, -2.0f, -2.0f, -4.0f, -4.0f, 0.0f};
  BOOST_TEST(n == 16u);
  BOOST_TEST(qscheme::f32_bits(y) == qscheme::f32_bits(values), boost::test_tools::per_element());
  std::vector<std::uint8_t> big = want;
  big[9] = 0xFF, big[10] = 0xFF, big[11] = 0x7F, big[12] = 0x7F;
  std::vector<float> untouched(16, -1.0f);
  BOOST_TEST(qscheme_fast_dequantize_recipe("nvidia-nvfp4", nullptr, shape, 1, big.data(), big.size(),
                                            untouched.data(), untouched.size(), &n, &idx) == QSCHEME_UNSUPPORTED_PROFILE);
  BOOST_TEST(idx == 0u);
  BOOST_TEST(LastMessage().find("product=f32") != std::string::npos, LastMessage());
  BOOST_TEST(std::all_of(untouched.begin(), untouched.end(), [](float v) { return v == -1.0f; }));
}

// The ggml recipes write and read ggml's own blocks, hand-worked for one block of x[0] = 7,
// x[1] = -1, the rest 0. ggml-q8_0: d = f32(7 / 127) = 0.05511811, f16 0x2B0E (little-endian first),
// codes roundf(x * f32(1 / d)): 127 and roundf(-18.142857) = -18 (0xEE); back, 127 * 0x2B0E's
// 0.05511474609375 = 6.99957275390625. ggml-q4_0: the signed max 7 gives d = 7 / -8 = -0.875 (0xBB00),
// codes MIN(15, (int8_t)(x * f32(1 / d) + 8.5)) - 8: trunc(0.5) - 8 = -8 and trunc(9.6428...) - 8 = 1,
// 0 for the zeros, as offset nibbles byte 0 = 0x0 | 0x8 << 4 and byte 1 = 0x9 | 0x8 << 4; back,
// -8 * -0.875 = 7. A row that 32 does not divide has no ggml blocks.
BOOST_AUTO_TEST_CASE(ggml_recipes_write_and_read_ggml_blocks) {
  const std::uint64_t shape[] = {32};
  std::vector<float> x(32, 0.0f);
  x[0] = 7.0f;
  x[1] = -1.0f;
  std::uint64_t idx = 0;
  std::size_t len = 0, need = 0;
  BOOST_TEST(qscheme_fast_recipe_bytes_size("ggml-q8_0", nullptr, shape, 1, &need, &idx) == QSCHEME_OK);
  BOOST_TEST(need == 34u);
  std::vector<std::uint8_t> q8(34, kSentinel);
  BOOST_TEST(qscheme_fast_quantize_recipe("ggml-q8_0", nullptr, shape, 1, x.data(), x.size(), nullptr, q8.data(),
                                          q8.size(), &len, &idx) == QSCHEME_OK, LastMessage());
  BOOST_TEST(len == 34u);
  std::vector<std::uint8_t> want8(34, 0);
  want8[0] = 0x0E;
  want8[1] = 0x2B;
  want8[2] = 0x7F;
  want8[3] = 0xEE;
  BOOST_TEST(q8 == want8, boost::test_tools::per_element());
  std::vector<float> y(32, -1.0f);
  std::size_t n = 0;
  BOOST_TEST(qscheme_fast_dequantize_recipe("ggml-q8_0", nullptr, shape, 1, q8.data(), q8.size(), y.data(), y.size(), &n,
                                            &idx) == QSCHEME_OK, LastMessage());
  BOOST_TEST(n == 32u);
  BOOST_TEST(y[0] == 6.99957275390625f);
  BOOST_TEST(y[2] == 0.0f);

  BOOST_TEST(qscheme_fast_recipe_bytes_size("ggml-q4_0", nullptr, shape, 1, &need, &idx) == QSCHEME_OK);
  BOOST_TEST(need == 18u);
  std::vector<std::uint8_t> q4(18, kSentinel);
  BOOST_TEST(qscheme_fast_quantize_recipe("ggml-q4_0", nullptr, shape, 1, x.data(), x.size(), nullptr, q4.data(),
                                          q4.size(), &len, &idx) == QSCHEME_OK, LastMessage());
  std::vector<std::uint8_t> want4(18, 0x88);
  want4[0] = 0x00;
  want4[1] = 0xBB;
  want4[2] = 0x80;
  want4[3] = 0x89;
  BOOST_TEST(q4 == want4, boost::test_tools::per_element());
  BOOST_TEST(qscheme_fast_dequantize_recipe("ggml-q4_0", nullptr, shape, 1, q4.data(), q4.size(), y.data(), y.size(), &n,
                                            &idx) == QSCHEME_OK, LastMessage());
  BOOST_TEST(y[0] == 7.0f);
  BOOST_TEST(y[1] == -0.875f);
  BOOST_TEST(qscheme::f32_bits(y[2]) == 0x80000000u);  // code 0 under a negative scale: -0

  // Too little room: the byte count in *out_len, out untouched; a NaN f16 scale is corrupt-bytes
  // naming its block; a row of 40 has no blocks; a wrong length is size-mismatch.
  std::vector<std::uint8_t> small(33, kSentinel);
  BOOST_TEST(qscheme_fast_quantize_recipe("ggml-q8_0", nullptr, shape, 1, x.data(), x.size(), nullptr, small.data(),
                                          small.size(), &len, &idx) == QSCHEME_SIZE_MISMATCH);
  BOOST_TEST(len == 34u);
  BOOST_TEST(Untouched(small));
  q8[1] = 0x7E;
  std::vector<float> untouched(32, -1.0f);
  BOOST_TEST(qscheme_fast_dequantize_recipe("ggml-q8_0", nullptr, shape, 1, q8.data(), q8.size(), untouched.data(),
                                            untouched.size(), &n, &idx) == QSCHEME_CORRUPT_BYTES);
  BOOST_TEST(idx == 0u);
  BOOST_TEST(std::all_of(untouched.begin(), untouched.end(), [](float v) { return v == -1.0f; }));
  const std::uint64_t odd[] = {40};
  std::vector<float> x40(40, 1.0f);
  std::vector<std::uint8_t> out(64, kSentinel);
  BOOST_TEST(qscheme_fast_quantize_recipe("ggml-q8_0", nullptr, odd, 1, x40.data(), x40.size(), nullptr, out.data(),
                                          out.size(), &len, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(qscheme_fast_recipe_bytes_size("ggml-q8_0", nullptr, odd, 1, &need, &idx) == QSCHEME_INVALID_ARGUMENT);
  BOOST_TEST(Untouched(out));
  BOOST_TEST(qscheme_fast_dequantize_recipe("ggml-q8_0", nullptr, shape, 1, q8.data(), 33, y.data(), y.size(), &n,
                                            &idx) == QSCHEME_SIZE_MISMATCH);
}
