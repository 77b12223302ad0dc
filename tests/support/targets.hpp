// Running a test body once on every Highway target this build and CPU have, best first, with the
// target named in the context of a failure; the automatic choice restored afterwards.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>

#include "fast/kernels/dispatch.h"
#include "hwy/targets.h"

namespace qscheme::testing {

struct TargetGuard {
  ~TargetGuard() { hwy::SetSupportedTargetsForTest(0); }
};

template <class Fn>
void ForEachTarget(Fn fn) {
  TargetGuard guard;
  const auto targets = fast::kernels::AvailableTargetBits();
  BOOST_TEST_REQUIRE(!targets.empty());
  for (std::int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    BOOST_TEST_CONTEXT("target " << hwy::TargetName(t)) {
      BOOST_TEST_REQUIRE(fast::kernels::CurrentTarget() == std::string(hwy::TargetName(t)));
      fn();
    }
  }
}

}  // namespace qscheme::testing
