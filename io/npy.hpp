// NumPy .npy files: the tensors the command line reads and writes.
//
// Read: little-endian float32 in C order ('<f4'), and for codes and scales the integer arrays
// '<i4', '|i1', '|u1' and '<u4'; format versions 1.0, 2.0 and 3.0; rank 0 to kMaxRank. Anything
// else (another dtype, big-endian, Fortran order, a malformed or truncated header, a data
// length that disagrees with the shape, trailing bytes) is unsupported-npy with a message naming
// the problem; a shape with an extent, element count or byte count past 2^63 - 1 is
// shape-overflow, as everywhere else (even beside a zero extent). The parser works on bytes in memory and
// never reads outside them, so a fuzzer can call it directly.
// Write: version 1.0, '<f4' (or '<f2' / '<u2' for 16-bit output), C order, the header padded to a multiple of 64 bytes as NumPy does.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::io::npy {

enum class Dtype : std::uint8_t { f32, i32, i8, u8, u32 };

// The descr string of a dtype, e.g. "<f4".
std::string_view descr(Dtype d);

struct Array {
  Dtype dtype = Dtype::f32;
  std::vector<std::uint64_t> shape;
  // Exactly one is filled: `f32` for Dtype::f32 (bit patterns preserved), `ints` otherwise.
  std::vector<float> f32;
  std::vector<std::int64_t> ints;

  std::uint64_t size() const { return dtype == Dtype::f32 ? f32.size() : ints.size(); }
};

// Parses a whole .npy file held in memory.
Result<Array> parse(std::span<const std::uint8_t> bytes);

// Reads and parses a file; io-error when it cannot be read.
Result<Array> read_file(const std::string& path);

// The bytes of a version-1.0 '<f4' C-order file. invalid-argument when the shape's element count
// disagrees with values.size() or the rank is above kMaxRank; shape-overflow for an extent past
// 2^63 - 1.
Result<std::vector<std::uint8_t>> serialize_f32(std::span<const std::uint64_t> shape, std::span<const float> values);

// Writes the file serialize_f32 describes to path (file_io.hpp's write_bytes: all or nothing).
Status write_f32_file(const std::string& path, std::span<const std::uint64_t> shape, std::span<const float> values);

// The same for 16-bit elements given as bit patterns: descr "<f2" (float16) or "<u2" (bfloat16,
// which has no .npy dtype, written as its uint16 patterns). invalid-argument for another descr.
Status write_16_file(const std::string& path, std::string_view descr, std::span<const std::uint64_t> shape,
                     std::span<const std::uint16_t> bits);

}  // namespace qscheme::io::npy
