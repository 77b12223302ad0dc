// The C API (fast/qscheme.h): status codes and messages, null pointers, short buffers, rejected
// tuples, and outputs left untouched on every error; success matches the C++ engine byte for byte.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "fast/qscheme.h"
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

  qscheme_quantize_options o{QSCHEME_PROFILE_BURN, QSCHEME_CALIBRATION_MINMAX, nullptr, 0, 0, 0.0f, 0};
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
  qscheme_quantize_options o{7, 0, nullptr, 0, 0, 0.0f, 0};
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
  qscheme_quantize_options o{7, 0, nullptr, 0, 0, 0.0f, 0};
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
    qscheme_quantize_options o{QSCHEME_PROFILE_EXACT, QSCHEME_CALIBRATION_MINMAX, nullptr, 0, 0, 0.0f, single};
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
