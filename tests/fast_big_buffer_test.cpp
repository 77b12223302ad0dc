// fast/support/big_buffer.hpp: the whole-tensor scratch of the bytes paths (and, last,
// fast/support/unit_scratch.hpp's per-unit block). Small arrays come from the
// heap, arrays of 64 KiB or more from their own mapping (2 MiB-aligned from 2 MiB on), and a
// thread keeps its largest mapping for its next call; a call whose scratch is such a recycled
// mapping, full of the previous call's data, still gives the bytes of the unfused path; and a
// repeated call does not fault its scratch in again.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include "fast/fast.hpp"
#include "fast/qscheme.h"
#include "fast/support/big_buffer.hpp"
#include "fast/support/unit_scratch.hpp"
#include "scheme/text.hpp"

namespace fast = qscheme::fast;
using fast::detail::BigBuffer;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Writes a pattern over the whole array and reads it back: every byte is mapped and writable.
bool holds_pattern(BigBuffer<std::uint32_t>& b, std::uint32_t seed) {
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint32_t>(i * 2654435761u) ^ seed;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b[i] != (static_cast<std::uint32_t>(i * 2654435761u) ^ seed)) return false;
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(small_arrays_are_aligned_and_writable) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{4096}, kMiB / 4}) {
    BigBuffer<std::uint32_t> b(n);
    BOOST_TEST(b.size() == n);
    BOOST_TEST(addr(b.data()) % 64 == 0);
    BOOST_TEST(holds_pattern(b, 7));
  }
}

// Either side of the 64 KiB bound (in 64-byte steps, as the heap path rounds): both kinds are
// freed by their own means (ASan: a heap block unmapped, or a mapping freed, fails).
BOOST_AUTO_TEST_CASE(arrays_either_side_of_the_mapping_bound_are_writable_and_freed_by_their_kind) {
  for (std::size_t bytes : {kMiB / 16 - 128, kMiB / 16 - 64, kMiB / 16 - 60, kMiB / 16 - 4, kMiB / 16, kMiB / 16 + 4}) {
    BigBuffer<std::uint32_t> b(bytes / 4);
    BOOST_TEST(addr(b.data()) % 64 == 0);
    if (bytes > kMiB / 16 - 64) BOOST_TEST(addr(b.data()) % 4096 == 0);  // mapped
    BOOST_TEST(holds_pattern(b, 13));
  }
}

BOOST_AUTO_TEST_CASE(a_thread_reuses_a_mapping_smaller_than_a_huge_page) {
  std::thread([] {
    const std::uint32_t* first;
    {
      BigBuffer<std::uint32_t> b(kMiB / 4 / 4);  // 256 KiB
      first = b.data();
      BOOST_TEST(holds_pattern(b, 17));
    }
    BigBuffer<std::uint32_t> b(kMiB / 5 / 4);  // fits: the same memory
    BOOST_TEST(b.data() == first);
    BOOST_TEST(holds_pattern(b, 19));
  }).join();
}

BOOST_AUTO_TEST_CASE(large_arrays_start_on_a_huge_page_and_are_writable_to_the_end) {
  for (std::size_t bytes : {2 * kMiB, 2 * kMiB + 4, 5 * kMiB + 12}) {
    BigBuffer<std::uint32_t> b(bytes / 4);
    BOOST_TEST(addr(b.data()) % (2 * kMiB) == 0);
    BOOST_TEST(holds_pattern(b, 11));
  }
}

BOOST_AUTO_TEST_CASE(a_thread_reuses_its_largest_mapping_and_never_hands_it_out_twice) {
  std::thread([] {  // a fresh thread: nothing kept yet
    const std::uint32_t* first;
    {
      BigBuffer<std::uint32_t> b(4 * kMiB / 4);
      first = b.data();
    }
    {
      BigBuffer<std::uint32_t> b(3 * kMiB / 4);  // fits the kept 4 MiB: the same memory
      BOOST_TEST(b.data() == first);
      BigBuffer<std::uint32_t> c(3 * kMiB / 4);  // the kept one is taken: a mapping of its own
      BOOST_TEST(c.data() != first);
      BOOST_TEST((addr(c.data()) + 3 * kMiB <= addr(first) || addr(first) + 3 * kMiB <= addr(c.data())));
      BOOST_TEST(holds_pattern(b, 1));
      BOOST_TEST(holds_pattern(c, 2));
      for (std::size_t i = 0; i < b.size(); ++i) {  // writing c did not touch b
        if (b[i] != (static_cast<std::uint32_t>(i * 2654435761u) ^ 1u)) {
          BOOST_FAIL("c overlaps b at " << i);
        }
      }
    }
    BigBuffer<std::uint32_t> big(9 * kMiB / 4);  // larger than anything kept: a new mapping
    BOOST_TEST(holds_pattern(big, 3));
  }).join();
}

// A recycled mapping still holds the last call's data; once released, the next one is the
// kernel's, zero-filled.
BOOST_AUTO_TEST_CASE(release_scratch_gives_the_kept_mapping_back) {
  std::thread([] {
    auto fill_and_free = [] {
      BigBuffer<std::uint32_t> b(3 * kMiB / 4);
      BOOST_TEST(holds_pattern(b, 0x5A5A5A5Au));
    };
    auto all_zero = [] {
      BigBuffer<std::uint32_t> b(3 * kMiB / 4);
      for (std::size_t i = 0; i < b.size(); ++i) {
        if (b[i] != 0) return false;
      }
      return true;
    };
    fill_and_free();
    BOOST_TEST(!all_zero());  // kept: the pattern is still there
    fill_and_free();
    fast::release_scratch();
    BOOST_TEST(all_zero());
    fill_and_free();
    qscheme_fast_release_scratch();
    BOOST_TEST(all_zero());
  }).join();
}

// fast/support/unit_scratch.hpp: the per-unit block a thread keeps. A later call gets the same
// block (no allocation), larger when it needs more; a call made while the block is in use gets a
// block of its own; release_scratch gives the kept one back.
BOOST_AUTO_TEST_CASE(the_unit_scratch_block_is_kept_per_thread_and_released) {
  std::thread([] {
    using fast::detail::UnitScratch;
    const std::uint8_t* first = nullptr;
    {
      UnitScratch a(1000);
      first = a.data();
      BOOST_TEST(addr(first) % 64 == 0u);
      std::memset(a.data(), 0x5A, 1000);
      UnitScratch nested(1000);  // the kept block is taken
      BOOST_TEST(nested.data() != first);
      BOOST_TEST(addr(nested.data()) % 64 == 0u);
      std::memset(nested.data(), 0xA5, 1000);
      BOOST_TEST(a.data()[999] == 0x5A);
    }
    {
      UnitScratch b(600);
      BOOST_TEST(b.data() == first);  // kept
      BOOST_TEST(b.data()[599] == 0x5A);
      std::uint8_t* p = b.data();
      BOOST_TEST(b.take<std::uint32_t>(3) == reinterpret_cast<std::uint32_t*>(p));
      BOOST_TEST(reinterpret_cast<std::uint8_t*>(b.take<double>(1)) == p + 64);  // the next 64-byte line
    }
    {
      UnitScratch c(100000);  // larger: a new block, kept from then on
      std::memset(c.data(), 0x3C, 100000);
    }
    {
      UnitScratch d(100000);
      BOOST_TEST(d.data()[99999] == 0x3C);
    }
    fast::release_scratch();
    { UnitScratch e(100000); }  // after the release the thread takes a new block
  }).join();
}

BOOST_AUTO_TEST_CASE(a_moved_buffer_is_freed_once) {
  BigBuffer<std::uint32_t> a(3 * kMiB / 4);
  const std::uint32_t* p = a.data();
  BigBuffer<std::uint32_t> b(std::move(a));
  BOOST_TEST(b.data() == p);
  BOOST_TEST(a.data() == nullptr);
  BigBuffer<std::uint32_t> c;
  c = std::move(b);
  BOOST_TEST(c.data() == p);
  BOOST_TEST(holds_pattern(c, 5));
}

BOOST_AUTO_TEST_CASE(an_array_whose_size_overflows_is_bad_alloc) {
  BOOST_CHECK_THROW(BigBuffer<std::uint32_t>(SIZE_MAX / 2), std::bad_alloc);
}

// nvfp4's block maxima of 2^23 elements fill 2 MiB: the mapped, kept path. The smaller tensor's
// call runs on the larger one's block maxima (other data, 300 times larger), and must not see
// them; the last call reuses that mapping again.
BOOST_AUTO_TEST_CASE(bytes_on_recycled_scratch_equal_the_unfused_path_both_ways) {
  const auto scheme = *qscheme::parse_scheme("nvfp4");
  const std::vector<std::uint64_t> big_shape{3072, 4096}, small_shape{2048, 4096};
  std::mt19937 rng(42);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (const auto& shape : {big_shape, small_shape, big_shape}) {
    std::vector<float> x(shape[0] * shape[1]);
    const float spread = shape[0] == 3072 ? 3.0f : 0.01f;
    for (float& v : x) v = nd(rng) * spread;
    qscheme::QuantizeOptions opt;
    auto q = fast::quantize(scheme, shape, x, opt);
    BOOST_TEST_REQUIRE(q.ok());
    auto want = fast::encode(*q);
    BOOST_TEST_REQUIRE(want.ok());
    for (auto policy : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
      std::vector<std::uint8_t> got(want->size());
      const auto st = fast::quantize_to_bytes(scheme, shape, x.data(), x.size(), opt, got.data(), got.size(), policy);
      BOOST_TEST_REQUIRE(st.ok());
      BOOST_TEST((got == *want));
    }
    // Dequantize keeps the decoded scales (f32 per block: 2 MiB and more here) the same way.
    auto y_want = fast::dequantize(*q);
    BOOST_TEST_REQUIRE(y_want.ok());
    std::vector<float> y(x.size());
    const auto st = fast::dequantize_from_bytes(scheme, shape, want->data(), want->size(), qscheme::Profile::exact,
                                                y.data(), y.size());
    BOOST_TEST_REQUIRE(st.ok());
    BOOST_TEST(std::memcmp(y.data(), y_want->data(), y.size() * sizeof(float)) == 0);
  }
}

// The defect this guards against: glibc maps aligned_alloc blocks of 128 KiB and more afresh on
// every call, so a 16 MiB nvfp4 tensor's 1 MiB of block maxima (256 pages) faulted in on every
// call, at some 13 us a page on a VM. The second call here may fault a few heap pages, not the
// maxima.
BOOST_AUTO_TEST_CASE(a_repeated_two_level_call_does_not_fault_its_maxima_in_again) {
  std::thread([] {
    const auto scheme = *qscheme::parse_scheme("nvfp4");
    const std::vector<std::uint64_t> shape{1024, 4096};
    const auto layout = *qscheme::make_layout(scheme, shape);
    BOOST_TEST_REQUIRE(layout.scales * 4 == kMiB);
    std::vector<float> x(shape[0] * shape[1]);
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& v : x) v = nd(rng);
    std::vector<std::uint8_t> out(layout.total_bytes);
    auto call = [&] {
      rusage before{}, after{};
      getrusage(RUSAGE_THREAD, &before);
      const auto st = fast::quantize_to_bytes(scheme, shape, x.data(), x.size(), {}, out.data(), out.size(),
                                              fast::OutputPolicy::single_pass);
      getrusage(RUSAGE_THREAD, &after);
      BOOST_TEST_REQUIRE(st.ok());
      return after.ru_minflt - before.ru_minflt;
    };
    const long first = call();
    const long second = call();
    BOOST_TEST_MESSAGE("minor faults: first call " << first << ", second " << second);
    BOOST_TEST(first >= 256);  // the maxima were faulted in once (else this test shows nothing)
    BOOST_TEST(second < 64);
  }).join();
}
