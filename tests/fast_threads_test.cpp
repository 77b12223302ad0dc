// The fast engine's thread count: bounded by fast::kMaxThreads.
#include <boost/test/unit_test.hpp>

#include <string>

#include "fast/fast.hpp"

namespace fast = qscheme::fast;

// The bound on the thread count: above it, invalid-argument naming the range, and the count
// stays; 0 is one per hardware thread, at most the bound.
BOOST_AUTO_TEST_CASE(the_thread_count_is_bounded) {
  BOOST_REQUIRE(fast::set_threads(5).ok());
  for (unsigned n : {fast::kMaxThreads + 1, 100000u, 4294967295u}) {
    const qscheme::Status st = fast::set_threads(n);
    BOOST_TEST((st.code() == qscheme::ErrorCode::invalid_argument));
    BOOST_TEST(st.message() == "a thread count of " + std::to_string(n) +
                                   " is above the maximum of 256; use 1 to 256, or 0 for one per hardware thread (at "
                                   "most 256)");
    BOOST_TEST(fast::threads() == 5u);
  }
  BOOST_TEST(fast::set_threads(fast::kMaxThreads).ok());
  BOOST_TEST(fast::threads() == fast::kMaxThreads);
  BOOST_TEST(fast::set_threads(0).ok());
  BOOST_TEST(fast::threads() >= 1u);
  BOOST_TEST(fast::threads() <= fast::kMaxThreads);
  BOOST_REQUIRE(fast::set_threads(1).ok());
}
