// fast::warm_up(): what a process's first call pays for is its first run of the engine's code and
// tables, one minor page fault per page first touched (docs/PERFORMANCE.md, "First calls"). After
// warm_up() a first call of every preset and recipe on 64K elements takes none, while without it
// the same call takes several; and warm_up() changes no setting and no output.
//
// Each first call runs in a child process forked before this process has called the engine, so
// that nothing here warms it; the test cases that fork come before the one that calls the engine
// in this process (Boost.Test runs them in the order written).
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "fast/qscheme.h"
#include "scheme/byte_format.hpp"
#include "scheme/layout.hpp"
#include "scheme/recipes.hpp"
#include "scheme/text.hpp"

namespace fast = qscheme::fast;
using qscheme::ByteFormat;
using qscheme::Recipe;

namespace {

constexpr std::uint64_t kShape[] = {16, 4096};
constexpr std::size_t kElements = 16 * 4096;
// Exit codes of the child beyond a fault count.
constexpr int kCallFailed = 254;
constexpr int kSetUpFailed = 253;

std::vector<float> input() {
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  std::vector<float> x(kElements);
  for (float& v : x) v = normal(gen);
  return x;
}

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Given scales made without the engine (which would warm it): 1/16 for every block (a
// symmetric kind saturates N(0, 1) input beyond 8 or 127/16, as it may), a global of 1, zero
// points in the middle of u8's range.
qscheme::GivenScales given_scales(const qscheme::Scheme& s, const qscheme::Layout& l) {
  qscheme::GivenScales g;
  g.block.assign(l.scales, 0.0625f);
  if (s.two_level()) g.global = 1.0f;
  g.zero_points.assign(l.zero_points, 128);
  return g;
}

// The minor page faults of this recipe's first quantize_to_bytes (its first scheme, or the one
// named; calibrated, or over given scales) in a fresh child process, after fast::warm_up() or
// not; at most 250, or one of the codes above.
int first_call_faults(const Recipe& r, const char* scheme_text, bool given, bool warm) {
  const pid_t pid = fork();
  if (pid == 0) {
    auto s = scheme_text ? qscheme::parse_scheme(scheme_text) : qscheme::recipe_scheme(r, "");
    if (!s) _exit(kSetUpFailed);
    const auto layout = qscheme::make_layout(*s, qscheme::Shape(kShape));
    const auto total = qscheme::total_bytes(*s, qscheme::Shape(kShape), r.format);
    if (!layout || !total) _exit(kSetUpFailed);
    const std::vector<float> x = input();
    std::vector<std::uint8_t> out(*total, 1);  // written, so resident
    qscheme::QuantizeOptions options = qscheme::recipe_options(r);
    if (given) options.scales = given_scales(*s, *layout);
    if (warm) fast::warm_up();
    const long before = minor_faults();
    const qscheme::Status st = fast::quantize_to_bytes(*s, qscheme::Shape(kShape), x.data(), x.size(), options,
                                                       r.format, out.data(), out.size(),
                                                       fast::OutputPolicy::single_pass);
    const long faults = minor_faults() - before;
    _exit(st.ok() ? static_cast<int>(std::min(faults, 250L)) : kCallFailed);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// The recipes the fast engine runs, calibrated or over given scales, on the schemes the bench
// times them on.
struct Case {
  const char* recipe;
  const char* scheme;  // nullptr: the recipe's first
  bool given = false;
};
constexpr Case kCases[] = {
    {"exact", "q8_0"},
    {"exact", "q4_0"},
    {"exact", "mxfp8"},
    {"exact", "mxfp4"},
    {"exact", "nvfp4"},
    {"exact", "q8s"},
    {"burn", "q8_0"},
    {"ocp-mx", nullptr},
    {"ocp-mx", "mxfp4"},
    {"microxcaling", nullptr},
    {"torchao-mx-rceil", nullptr},
    {"nvidia-nvfp4", nullptr},
    {"ggml-q8_0", nullptr},
    {"ggml-q8_0-x86", nullptr},
    {"ggml-q4_0", nullptr},
    {"exact", "q8s", true},
    {"exact", "nvfp4", true},
    {"exact", "u8:affine:axis(1)=f32", true},
    {"onnx", "q8s:block[32]=f32", true},
    {"onnx", "u8:affine", true},
    {"torch-qint8", "q8f:tensor=f32", true},
    {"torch-quint8", "u8:affine", true},
};

std::string name_of(const Case& c) {
  return std::string(c.recipe) + " " + (c.scheme ? c.scheme : "(its first scheme)") + (c.given ? " given" : "");
}

}  // namespace

// Without it the counts below would hold trivially: a first call does fault pages in.
BOOST_AUTO_TEST_CASE(a_first_call_without_warm_up_faults_pages_in) {
  for (const Case& c : kCases) {
    auto r = qscheme::find_recipe(c.recipe);
    BOOST_REQUIRE(r.ok());
    const int faults = first_call_faults(**r, c.scheme, c.given, false);
    BOOST_TEST_INFO(name_of(c));
    BOOST_TEST((faults > 0 && faults < kSetUpFailed));
  }
}

// Under AddressSanitizer every block its allocator hands out maps fresh shadow pages, so there a
// first call faults whatever ran before it; that build checks that the calls after warm_up() run.
BOOST_AUTO_TEST_CASE(after_warm_up_a_first_call_faults_no_page_in) {
  for (const Case& c : kCases) {
    auto r = qscheme::find_recipe(c.recipe);
    BOOST_REQUIRE(r.ok());
    BOOST_TEST_INFO(name_of(c));
    const int faults = first_call_faults(**r, c.scheme, c.given, true);
#ifdef __SANITIZE_ADDRESS__
    BOOST_TEST((faults >= 0 && faults < kSetUpFailed));
#else
    BOOST_TEST(faults == 0);
#endif
  }
}

BOOST_AUTO_TEST_CASE(warm_up_changes_no_setting_and_no_output) {
  auto s = qscheme::parse_scheme("q8_0");
  BOOST_REQUIRE(s.ok());
  const std::vector<float> x = input();
  auto before = fast::quantize(*s, qscheme::Shape(kShape), x);
  BOOST_REQUIRE(before.ok());
  BOOST_REQUIRE(fast::set_threads(2).ok());
  const std::string target = fast::current_target();
  fast::warm_up();
  qscheme_fast_warm_up();
  BOOST_TEST(fast::threads() == 2u);
  BOOST_TEST(fast::current_target() == target);
  auto after = fast::quantize(*s, qscheme::Shape(kShape), x);
  BOOST_REQUIRE(after.ok());
  BOOST_TEST(after->codes == before->codes);
  BOOST_TEST(after->scale_bits == before->scale_bits);
}
