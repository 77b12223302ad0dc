// fuzz_npy: arbitrary bytes to the .npy reader (io/npy.hpp, from memory); accepted f32 arrays are written back and read again.
// Failure: a rejection other than unsupported-npy or shape-overflow, an accepted array whose size disagrees with its shape, write -> read not giving the same array (bit for bit), or a crash.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "scheme/scheme.hpp"
#include "io/npy.hpp"

namespace {

// Tuning knobs.
// Also check that writing is a fixed point: serialize(parse(serialize(a))) == serialize(a).
constexpr bool kCheckWriteFixedPoint = true;

std::vector<std::uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  if (!v.empty()) std::memcpy(b.data(), v.data(), 4 * v.size());
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace npy = qscheme::io::npy;
  // A copy in its own allocation lets ASan see any read past the end.
  const std::vector<std::uint8_t> bytes(data, data + size);
  const auto a = npy::parse(bytes);
  FUZZ_TRACE("trace: npy -> %s\n", a.ok() ? "ok" : a.status().to_string().c_str());
  if (!a.ok()) {
    FUZZ_ASSERT_MSG(a.status().code() == qscheme::ErrorCode::unsupported_npy ||
                        a.status().code() == qscheme::ErrorCode::shape_overflow,
                    a.status().to_string());
    FUZZ_ASSERT(!a.status().message().empty());
    return 0;
  }
  FUZZ_ASSERT(a->shape.size() <= qscheme::kMaxRank);
  std::uint64_t count = 1;
  for (auto d : a->shape) count *= d;  // cannot overflow: the data is in memory
  FUZZ_ASSERT_MSG(a->size() == count, "element count differs from the shape's product");
  if (a->dtype == npy::Dtype::f32) {
    FUZZ_ASSERT(a->ints.empty());
  } else {
    FUZZ_ASSERT(a->f32.empty());
  }
  // The same bytes always parse to the same array.
  const auto again = npy::parse(bytes);
  FUZZ_ASSERT(again.ok() && again->dtype == a->dtype && again->shape == a->shape &&
              bits_of(again->f32) == bits_of(a->f32) && again->ints == a->ints);

  if (a->dtype != npy::Dtype::f32) return 0;  // the writer writes '<f4' only
  const auto written = npy::serialize_f32(a->shape, a->f32);
  FUZZ_ASSERT_MSG(written.ok(), "an accepted f32 array could not be written: " + written.status().to_string());
  const auto back = npy::parse(*written);
  FUZZ_ASSERT_MSG(back.ok(), "a written array does not read back: " + back.status().to_string());
  FUZZ_ASSERT(back->dtype == npy::Dtype::f32);
  FUZZ_ASSERT_MSG(back->shape == a->shape, "shape changed through write -> read");
  FUZZ_ASSERT_MSG(bits_of(back->f32) == bits_of(a->f32), "values changed through write -> read");
  if (kCheckWriteFixedPoint) {
    const auto rewritten = npy::serialize_f32(back->shape, back->f32);
    FUZZ_ASSERT(rewritten.ok() && *rewritten == *written);
    FUZZ_ASSERT_MSG(written->size() % 64 == (4 * a->f32.size()) % 64, "header not padded to 64 bytes");
  }
  return 0;
}
