// libFuzzer's entry points for a kernel under test (kit/qscheme_kit.h). A finding is printed and
// then abort()ed: that is how a libFuzzer target reports one, and libFuzzer saves the input
// (crash-<hash>) so that running the target on that file replays it.
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "kit/kit.hpp"
#include "scheme/text.hpp"

namespace {

std::optional<qscheme::kit::Target>& target() {
  static std::optional<qscheme::kit::Target> t;
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto t = qscheme::kit::make_target(qscheme_kit_target_under_test());
  if (!t) {
    std::fprintf(stderr, "qscheme kit: %s\n", t.status().to_string().c_str());
    std::exit(2);
  }
  target() = std::move(*t);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const qscheme::kit::Target& t = *target();
  const auto c = qscheme::kit::make_case(t, {data, size});
  if (!c) return 0;
  const auto finding = qscheme::kit::run_case(t, *c);
  if (!finding) return 0;
  std::fprintf(stderr, "\nqscheme kit: the %s kernel DIFFERS from recipe %s on %s\n%s\n%s", finding->kernel.c_str(),
               std::string(t.recipe->name).c_str(), qscheme::format_scheme(t.scheme).c_str(), finding->report.c_str(),
               qscheme::kit::describe(*c).c_str());
  std::fflush(stderr);
  std::abort();
}
