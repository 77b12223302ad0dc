// Where the quantize driver's output goes (fast/quantize.cc): Burn's serialized bytes
// (quantize_to_bytes), ggml's blocks (quantize_to_bytes in ByteFormat::ggml) or i32 codes and
// scale patterns (quantize, quantize_into). The units stage
// (quantize_units.hpp) makes one-byte codes per row of a unit and the stored scales' patterns; a
// sink places them. The whole-tensor stage (quantize_whole.hpp) makes i32 codes; a sink takes those
// too. The sinks have the same members (GgmlSink has two more, for a kernel that writes its blocks),
// and the stages are templates over them.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "fast/bytes_plan.hpp"
#include "fast/codec.hpp"
#include "fast/ggml_blocks.hpp"
#include "fast/kernels/dispatch.h"
#include "scheme/byte_format.hpp"
#include "scheme/layout.hpp"
#include "scheme/status.hpp"

namespace qscheme::fast::detail {

// Burn's serialized bytes, out[0 .. l.total_bytes).
class BytesSink {
 public:
  BytesSink(const Scheme& s, const Layout& l, const BytesPlan& p, std::uint8_t* out)
      : s_(s), l_(l), p_(p), out_(out), native_(p.bits == 8 && p.nq == 1) {}

  // Whether the units' codes go through scratch rows (to be packed) rather than in place.
  bool needs_scratch() const { return !native_; }
  // Where row i of unit un puts its one-byte codes: in place for a native store, else row i of
  // the unit's scratch (rows of p.chunk bytes).
  std::uint8_t* code_row(const BytesPlan::Unit& un, std::uint64_t i, std::uint8_t* scratch) const {
    return native_ ? out_ + un.value_offset : scratch + i * p_.chunk;
  }
  // A 4-bit row whose storage elements the unit fills: the code kernel may write the packed bytes
  // here itself (QuantizeCodes' nibbles), leaving nothing to pack. Null otherwise.
  std::uint8_t* nibbles(const BytesPlan::Unit& un) const {
    return !native_ && !p_.vertical && p_.bits == 4 && un.len % p_.nq == 0 ? out_ + un.value_offset : nullptr;
  }
  // The unit's codes, rows[i] for i < un.count, into storage elements (unless they are there
  // already: a native store, or `packed` as nibbles).
  void finish(const kernels::Kernels& kf, const BytesPlan::Unit& un, const std::uint8_t* const* rows,
              bool packed) const {
    if (native_ || packed) return;
    std::uint8_t* dst = out_ + un.value_offset;
    if (p_.vertical) {
      kf.pack_columns(rows, un.count, un.len, p_.bits, p_.ebytes, dst);
    } else {
      kf.pack_row(rows[0], un.len, p_.bits, p_.nq, p_.ebytes, dst);
    }
  }
  // Stored block scales j .. j + n - 1.
  void block_scales(std::uint64_t j, const std::uint32_t* bits, std::uint64_t n) const {
    std::uint8_t* dst = out_ + l_.value_bytes + j * p_.sbytes;
    switch (p_.sbytes) {
      case 1: narrow<std::uint8_t>(bits, n, dst); break;
      case 2: narrow<std::uint16_t>(bits, n, dst); break;
      default: std::memcpy(dst, bits, n * 4); break;  // x86-64: little-endian host
    }
  }
  void tensor_scale(std::uint32_t bits) const { put_le(out_ + l_.value_bytes, bits, p_.sbytes); }
  void global(std::uint32_t bits) const { put_le(out_ + l_.value_bytes + l_.scale_bytes, bits, 4); }

  // The whole-tensor stage: quantize(codes, scale_bits, global_bits) into i32 buffers of the
  // layout's sizes, then the bytes, written only when it succeeds.
  template <class Quantize>
  Status whole(Quantize&& quantize) const {
    std::vector<std::int32_t> codes(l_.elements);
    std::vector<std::uint32_t> scale_bits(l_.scales);
    std::uint32_t g = 0;
    QSCHEME_RETURN_IF_ERROR(quantize(codes.data(), scale_bits.data(), &g));
    write_values(s_, l_, codes.data(), out_);
    write_scales(s_, l_, scale_bits.data(), s_.two_level() ? &g : nullptr, out_);
    return {};
  }

 private:
  // Little-endian scale patterns of sizeof(T) bytes each, stored as they are narrowed (the compiler
  // vectorizes the loop; a unit has dozens of blocks). Through a typed buffer and a memcpy of
  // variable length, the copy was a `rep movsq`, which cost an in-cache 64K q8_0 quantize 2-3%.
  template <class T>
  static void narrow(const std::uint32_t* bits, std::uint64_t n, std::uint8_t* out) {
    for (std::uint64_t k = 0; k < n; ++k) {
      const T t = static_cast<T>(bits[k]);
      std::memcpy(out + k * sizeof(T), &t, sizeof(T));
    }
  }
  const Scheme& s_;
  const Layout& l_;
  const BytesPlan& p_;
  std::uint8_t* out_;
  bool native_;
};

// ggml's blocks (scheme/byte_format.hpp), out[0 .. g.total_bytes): a block's f16 scale, then its
// codes. The units keep the blocks' boundaries (their columns are whole blocks of 32 of a row
// whose length 32 divides): the f32-step kernel writes a unit's rows into their blocks itself
// (ggml_row); other code kernels' rows go through scratch into the blocks.
class GgmlSink {
 public:
  GgmlSink(const GgmlLayout& g, const BytesPlan& p, std::uint8_t* out) : g_(g), p_(p), out_(out) {}

  bool needs_scratch() const { return true; }
  std::uint8_t* code_row(const BytesPlan::Unit&, std::uint64_t i, std::uint8_t* scratch) const {
    return scratch + i * p_.chunk;
  }
  std::uint8_t* nibbles(const BytesPlan::Unit&) const { return nullptr; }
  // Row i of unit un's first block, for a kernel that writes ggml's blocks (its members alone).
  std::uint8_t* block_row(const BytesPlan::Unit& un, std::uint64_t i) const {
    return out_ + first_block(un, i) * g_.block_bytes;
  }
  bool nibble_blocks() const { return g_.nibbles; }
  // `placed`: the rows are in their blocks already (ggml_row).
  void finish(const kernels::Kernels&, const BytesPlan::Unit& un, const std::uint8_t* const* rows, bool placed) const {
    if (placed) return;
    for (std::uint64_t i = 0; i < un.count; ++i) {
      const std::uint64_t b0 = first_block(un, i);
      for (std::uint64_t k = 0; k * kGgmlBlockCodes < un.len; ++k) {
        put_ggml_codes(g_.nibbles, rows[i] + k * kGgmlBlockCodes, out_ + (b0 + k) * g_.block_bytes + 2);
      }
    }
  }
  void block_scales(std::uint64_t j, const std::uint32_t* bits, std::uint64_t n) const {
    std::uint8_t* dst = out_ + j * g_.block_bytes;
    for (std::uint64_t k = 0; k < n; ++k) {
      const auto h = static_cast<std::uint16_t>(bits[k]);  // x86-64: little-endian host
      std::memcpy(dst + k * g_.block_bytes, &h, 2);
    }
  }
  // ggml's schemes have block scales only.
  void tensor_scale(std::uint32_t) const {}
  void global(std::uint32_t) const {}

  template <class Quantize>
  Status whole(Quantize&& quantize) const {
    std::vector<std::int32_t> codes(g_.blocks * kGgmlBlockCodes);
    std::vector<std::uint32_t> scale_bits(g_.blocks);
    QSCHEME_RETURN_IF_ERROR(quantize(codes.data(), scale_bits.data(), nullptr));
    write_ggml(g_, codes.data(), scale_bits.data(), out_);
    return {};
  }

 private:
  std::uint64_t first_block(const BytesPlan::Unit& un, std::uint64_t i) const {
    return (un.row[i] * p_.L + un.c0) / kGgmlBlockCodes;
  }
  const GgmlLayout& g_;
  const BytesPlan& p_;
  std::uint8_t* out_;
};

// A QuantizedTensor's arrays: codes[l.elements] (integers sign-extended, minifloat patterns as
// they are), scale_bits[l.scales], *global_bits (two levels).
class CodesSink {
 public:
  CodesSink(const Scheme& s, const BytesPlan& p, std::int32_t* codes, std::uint32_t* scale_bits,
            std::uint32_t* global_bits)
      : p_(p), codes_(codes), scale_bits_(scale_bits), global_bits_(global_bits), signed_(!info(s.value).is_float) {}

  bool needs_scratch() const { return true; }
  std::uint8_t* code_row(const BytesPlan::Unit&, std::uint64_t i, std::uint8_t* scratch) const {
    return scratch + i * p_.chunk;
  }
  std::uint8_t* nibbles(const BytesPlan::Unit&) const { return nullptr; }
  void finish(const kernels::Kernels& kf, const BytesPlan::Unit& un, const std::uint8_t* const* rows, bool) const {
    for (std::uint64_t i = 0; i < un.count; ++i) {
      kf.bytes_to_codes(rows[i], un.len, signed_, codes_ + un.row[i] * p_.L + un.c0);
    }
  }
  void block_scales(std::uint64_t j, const std::uint32_t* bits, std::uint64_t n) const {
    std::memcpy(scale_bits_ + j, bits, n * sizeof(std::uint32_t));
  }
  void tensor_scale(std::uint32_t bits) const { scale_bits_[0] = bits; }
  void global(std::uint32_t bits) const {
    if (global_bits_) *global_bits_ = bits;
  }
  template <class Quantize>
  Status whole(Quantize&& quantize) const {
    return quantize(codes_, scale_bits_, global_bits_);
  }

 private:
  const BytesPlan& p_;
  std::int32_t* codes_;
  std::uint32_t* scale_bits_;
  std::uint32_t* global_bits_;
  bool signed_;
};

}  // namespace qscheme::fast::detail
