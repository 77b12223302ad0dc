// Per-target packing of codes into storage elements and back: i32 codes to native bytes and
// u32 words (QuantizedTensor), one-byte codes to Burn's packed rows and columns, and two 4-bit
// codes per byte straight from the code registers.

#if defined(QSCHEME_FAST_KERNELS_PACK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_PACK_INL_H_
#undef QSCHEME_FAST_KERNELS_PACK_INL_H_
#else
#define QSCHEME_FAST_KERNELS_PACK_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fast/kernels/codes-inl.h"
#include "fast/kernels/vector-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_NOINLINE void CodesToBytesImpl(const std::int32_t* HWY_RESTRICT c, std::size_t n, std::uint8_t* HWY_RESTRICT out) {
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const std::size_t N = hn::Lanes(di);
  const auto m = hn::Set(di, 0xFF);
  auto one = [&](const std::int32_t* src, std::uint8_t* dst) {
    hn::StoreU(hn::DemoteTo(d8, hn::And(hn::LoadU(di, src), m)), d8, dst);
  };
  ForEachVectorPadded(c, out, n, N, one);
}

HWY_NOINLINE void BytesToCodesImpl(const std::uint8_t* HWY_RESTRICT bytes, std::size_t n, bool is_signed,
                                   std::int32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<uint8_t, decltype(di)> du8;
  const hn::Rebind<int8_t, decltype(di)> ds8;
  const std::size_t N = hn::Lanes(di);
  auto one = [&](const std::uint8_t* src, std::int32_t* dst) {
    const auto b = hn::LoadU(du8, src);
    const auto v = is_signed ? hn::PromoteTo(di, hn::BitCast(ds8, b)) : hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<decltype(di)>(), b));
    hn::StoreU(v, di, dst);
  };
  ForEachVectorPadded(bytes, out, n, N, one);
}

HWY_NOINLINE void PackWordsImpl(const std::int32_t* HWY_RESTRICT codes, std::size_t inner, std::size_t count,
                                std::size_t stride, int bits, std::uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<uint32_t> du;
  const std::size_t N = hn::Lanes(du);
  const auto mask = hn::Set(du, bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1));
  std::size_t j = 0;
  for (; j + N <= inner; j += N) {
    auto acc = hn::Zero(du);
    for (std::size_t i = 0; i < count; ++i) {
      const auto v = hn::And(hn::LoadU(du, reinterpret_cast<const uint32_t*>(codes + i * stride + j)), mask);
      acc = hn::Or(acc, hn::ShiftLeftSame(v, static_cast<int>(i) * bits));
    }
    hn::StoreU(acc, du, out + j);
  }
  for (; j < inner; ++j) {
    std::uint32_t w = 0;
    for (std::size_t i = 0; i < count; ++i) {
      w |= (static_cast<std::uint32_t>(codes[i * stride + j]) & (bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1)))
           << (i * bits);
    }
    out[j] = w;
  }
}

HWY_NOINLINE void UnpackWordsImpl(const std::uint32_t* HWY_RESTRICT words, std::size_t inner, std::size_t count,
                                  std::size_t stride, int bits, bool is_signed, std::int32_t* HWY_RESTRICT codes) {
  const hn::ScalableTag<int32_t> di;
  const std::size_t N = hn::Lanes(di);
  std::size_t j = 0;
  for (; j + N <= inner; j += N) {
    const auto w = hn::BitCast(di, hn::LoadU(hn::RebindToUnsigned<decltype(di)>(), words + j));
    for (std::size_t i = 0; i < count; ++i) {
      // Move field i to the top, then shift back down: arithmetic shift sign-extends.
      const auto top = hn::ShiftLeftSame(w, 32 - static_cast<int>((i + 1)) * bits);
      const auto v = is_signed ? hn::ShiftRightSame(top, 32 - bits)
                               : hn::BitCast(di, hn::ShiftRightSame(hn::BitCast(hn::RebindToUnsigned<decltype(di)>(), top),
                                                                    32 - bits));
      hn::StoreU(v, di, codes + i * stride + j);
    }
  }
  for (; j < inner; ++j) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t f = (words[j] >> (i * bits)) & ((1u << bits) - 1);
      std::int32_t v = static_cast<std::int32_t>(f);
      if (is_signed && (f >> (bits - 1))) v -= (1 << bits);
      codes[i * stride + j] = v;
    }
  }
}

// Stores the low byte of each i32 code (two's complement for integers, the pattern for minifloats).
template <class DI>
HWY_INLINE void StoreCodeBytes(DI di, hn::Vec<DI> codes, std::uint8_t* HWY_RESTRICT out) {
  const hn::Rebind<std::uint8_t, DI> d8;
#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR  // no TruncateTo there in Highway 1.0.3
  hn::StoreU(hn::DemoteTo(d8, hn::And(codes, hn::Set(di, 0xFF))), d8, out);
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  (void)di;
  (void)d8;
  if constexpr (sizeof(codes.raw) == 64) {
    // vpmovdb: Highway 1.0.3's TruncateTo takes a shuffle and a permute here.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(codes.raw));
  } else {
    hn::StoreU(hn::TruncateTo(d8, hn::BitCast(hn::RebindToUnsigned<DI>(), codes)), d8, out);
  }
#else
  (void)di;
  hn::StoreU(hn::TruncateTo(d8, hn::BitCast(hn::RebindToUnsigned<DI>(), codes)), d8, out);
#endif
}

// Two codes per byte (low nibble first) of n one-byte codes (n even): a u16 lane holds two codes
// (little-endian), the low nibble of each, the second moved up by 4.
HWY_INLINE void PackNibbles(const std::uint8_t* HWY_RESTRICT codes, std::size_t n, std::uint8_t* HWY_RESTRICT out) {
  const hn::ScalableTag<std::uint16_t> d16;
  const hn::Rebind<std::uint8_t, decltype(d16)> d8;
  const hn::RebindToSigned<decltype(d16)> di16;
  const std::size_t N = hn::Lanes(d16);
  std::size_t b = 0;
  for (; b + N <= n / 2; b += N) {
    const auto w = hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(codes + 2 * b));
    const auto v = hn::Or(hn::And(w, hn::Set(d16, 0x000F)), hn::ShiftRight<4>(hn::And(w, hn::Set(d16, 0x0F00))));
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di16, v)), d8, out + b);
  }
  for (; b < n / 2; ++b) out[b] = static_cast<std::uint8_t>((codes[2 * b] & 0xF) | (codes[2 * b + 1] << 4));
}

// Two codes per byte (low nibble first) of one vector of i32 codes, straight from the register: a
// reload of just-stored code bytes waits for the stores (no forwarding across four of them).
// Targets with fewer than two lanes go through code_bytes.
template <class DI>
HWY_INLINE void StoreNibbles(DI di, hn::Vec<DI> q, std::uint8_t* HWY_RESTRICT code_bytes, std::uint8_t* HWY_RESTRICT out) {
#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR
  StoreCodeBytes(di, q, code_bytes);
  PackNibbles(code_bytes, hn::Lanes(di), out);
#else
  (void)di;
  (void)code_bytes;
  // Lane pairs as u64: the low code's nibble from bits 0-3, the high one's from bits 32-35.
  const hn::Repartition<std::uint64_t, DI> d64;
  const auto w = hn::BitCast(d64, q);
  const auto v = hn::Or(hn::And(w, hn::Set(d64, 0xF)), hn::And(hn::ShiftRight<28>(w), hn::Set(d64, 0xF0)));
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (sizeof(v.raw) == 64) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm512_cvtepi64_epi8(v.raw));  // vpmovqb
    return;
  }
#endif
  const hn::Rebind<std::uint8_t, decltype(d64)> d8;
  hn::StoreU(hn::TruncateTo(d8, v), d8, out);
#endif
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// StoreNibbles of four consecutive 16-lane vectors of codes in 0..15: 32 bytes from three packs
// to bytes, one multiply-add that pairs neighbouring codes into a byte, a pack and a shuffle of
// words (k: NibbleShuffles'), six operations where shifts and ors into each lane's bytes took
// nine, and four truncations (two uops each) with four stores before that.
template <class V, class K>
HWY_INLINE void StoreNibbles4(const V* q, const K& k, std::uint8_t* HWY_RESTRICT out) {
  // 16-byte lane l: the codes of lanes 4l..4l+3 of q[0], then of q[1], q[2], q[3] (the packs
  // work within lanes; codes of 0..15 pass their saturation unchanged).
  const __m512i b = _mm512_packus_epi16(_mm512_packus_epi32(q[0].raw, q[1].raw), _mm512_packus_epi32(q[2].raw, q[3].raw));
  // Word 8l + 2t + j: code(4l + 2j, t) + 16 code(4l + 2j + 1, t), nibble byte 2l + j of vector t.
  const __m512i c = _mm512_maddubs_epi16(b, k.nib_bytes.raw);
  // Those bytes, twice in each lane; word 8l + t holds nibble bytes 2l, 2l + 1 of vector t, which
  // go to word 4t + l.
  const __m512i e = _mm512_permutexvar_epi16(k.nib_words.raw, _mm512_packus_epi16(c, c));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_castsi512_si256(e));
}
#endif

HWY_NOINLINE void PackRowImpl(const std::uint8_t* HWY_RESTRICT codes, std::size_t len, int bits, std::size_t nq,
                              int ebytes, std::uint8_t* HWY_RESTRICT out) {
  const std::size_t total = (len + nq - 1) / nq * static_cast<std::size_t>(ebytes);
  if (bits == 8) {
    std::memcpy(out, codes, len);
    std::memset(out + len, 0, total - len);
    return;
  }
  const std::size_t per_byte = static_cast<std::size_t>(8 / bits);
  const std::size_t full = len / per_byte;  // output bytes made of whole groups of input
  std::size_t b = 0;
  if (bits == 4) {
    PackNibbles(codes, 2 * full, out);
    b = full;
  } else {
    const hn::ScalableTag<std::uint32_t> d32;
    const hn::Rebind<std::uint8_t, decltype(d32)> d8;
    const hn::RebindToSigned<decltype(d32)> di32;
    const std::size_t N = hn::Lanes(d32);
    for (; b + N <= full; b += N) {
      const auto w = hn::LoadU(d32, reinterpret_cast<const std::uint32_t*>(codes + 4 * b));
      auto v = hn::And(w, hn::Set(d32, 0x3));
      v = hn::Or(v, hn::And(hn::ShiftRight<6>(w), hn::Set(d32, 0xC)));
      v = hn::Or(v, hn::And(hn::ShiftRight<12>(w), hn::Set(d32, 0x30)));
      v = hn::Or(v, hn::And(hn::ShiftRight<18>(w), hn::Set(d32, 0xC0)));
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di32, v)), d8, out + b);
    }
  }
  const std::uint32_t mask = (1u << bits) - 1;
  for (; b < total; ++b) {  // the last few bytes, and zero padding up to the storage element
    std::uint32_t v = 0;
    for (std::size_t f = 0; f < per_byte; ++f) {
      const std::size_t j = b * per_byte + f;
      if (j < len) v |= (codes[j] & mask) << (f * static_cast<std::size_t>(bits));
    }
    out[b] = static_cast<std::uint8_t>(v);
  }
}

HWY_NOINLINE void PackColumnsImpl(const std::uint8_t* const* rows, std::size_t count, std::size_t len, int bits,
                                  int ebytes, std::uint8_t* HWY_RESTRICT out) {
  const hn::ScalableTag<std::uint32_t> d32;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8;
  const hn::RebindToSigned<decltype(d32)> di32;
  const std::size_t N = hn::Lanes(d32);
  const std::uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1);
  const auto vmask = hn::Set(d32, mask);
  std::size_t j = 0;
  for (; j + N <= len; j += N) {
    auto acc = hn::Zero(d32);
    for (std::size_t i = 0; i < count; ++i) {
      const auto v = hn::And(hn::PromoteTo(d32, hn::LoadU(d8, rows[i] + j)), vmask);
      acc = hn::Or(acc, hn::ShiftLeftSame(v, static_cast<int>(i) * bits));
    }
    if (ebytes == 4) {
      hn::StoreU(acc, d32, reinterpret_cast<std::uint32_t*>(out + 4 * j));
    } else {
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di32, acc)), d8, out + j);
    }
  }
  for (; j < len; ++j) {
    std::uint32_t w = 0;
    for (std::size_t i = 0; i < count; ++i) w |= (rows[i][j] & mask) << (i * static_cast<std::size_t>(bits));
    for (int b = 0; b < ebytes; ++b) out[j * static_cast<std::size_t>(ebytes) + b] = static_cast<std::uint8_t>(w >> (8 * b));
  }
}

HWY_NOINLINE bool UnpackRowImpl(const std::uint8_t* HWY_RESTRICT in, std::size_t len, int bits, std::size_t nq,
                                int ebytes, std::uint8_t* HWY_RESTRICT codes) {
  const std::size_t total = (len + nq - 1) / nq * static_cast<std::size_t>(ebytes);
  const std::size_t per_byte = static_cast<std::size_t>(8 / bits);
  const std::uint32_t mask = (1u << bits) - 1;
  std::size_t b = 0;
  const std::size_t full = len / per_byte;
  if (bits == 8) {
    std::memcpy(codes, in, len);
    b = len;
  } else if (bits == 4) {
    const hn::ScalableTag<std::uint16_t> d16;
    const hn::Rebind<std::uint8_t, decltype(d16)> d8;
    const std::size_t N = hn::Lanes(d16);
    for (; b + N <= full; b += N) {
      const auto w = hn::PromoteTo(d16, hn::LoadU(d8, in + b));
      const auto v = hn::Or(hn::And(w, hn::Set(d16, 0x000F)), hn::ShiftLeft<4>(hn::And(w, hn::Set(d16, 0x00F0))));
      hn::StoreU(v, d16, reinterpret_cast<std::uint16_t*>(codes + 2 * b));
    }
  } else {
    const hn::ScalableTag<std::uint32_t> d32;
    const hn::Rebind<std::uint8_t, decltype(d32)> d8;
    const std::size_t N = hn::Lanes(d32);
    for (; b + N <= full; b += N) {
      const auto w = hn::PromoteTo(d32, hn::LoadU(d8, in + b));
      auto v = hn::And(w, hn::Set(d32, 0x3));
      v = hn::Or(v, hn::ShiftLeft<6>(hn::And(w, hn::Set(d32, 0xC))));
      v = hn::Or(v, hn::ShiftLeft<12>(hn::And(w, hn::Set(d32, 0x30))));
      v = hn::Or(v, hn::ShiftLeft<18>(hn::And(w, hn::Set(d32, 0xC0))));
      hn::StoreU(v, d32, reinterpret_cast<std::uint32_t*>(codes + 4 * b));
    }
  }
  bool padding_zero = true;
  for (; b < total; ++b) {
    for (std::size_t f = 0; f < per_byte; ++f) {
      const std::size_t j = b * per_byte + f;
      const std::uint8_t v = static_cast<std::uint8_t>((in[b] >> (f * static_cast<std::size_t>(bits))) & mask);
      if (j < len) {
        codes[j] = v;
      } else if (v != 0) {
        padding_zero = false;
      }
    }
  }
  return padding_zero;
}

HWY_NOINLINE bool UnpackColumnsImpl(const std::uint8_t* HWY_RESTRICT in, std::size_t count, std::size_t len, int bits,
                                    int ebytes, std::uint8_t* const* rows) {
  const hn::ScalableTag<std::uint32_t> d32;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8;
  const hn::RebindToSigned<decltype(d32)> di32;
  const std::size_t N = hn::Lanes(d32);
  const std::uint32_t mask = (1u << bits) - 1;
  const std::size_t used = count * static_cast<std::size_t>(bits);  // bits of a storage element in use
  const std::uint32_t unused = used >= 32 ? 0u : ~((1u << used) - 1) & (ebytes == 4 ? 0xFFFFFFFFu : 0xFFu);
  const auto vmask = hn::Set(d32, mask), vunused = hn::Set(d32, unused);
  auto bad = hn::Zero(d32);
  std::size_t j = 0;
  for (; j + N <= len; j += N) {
    const auto w = ebytes == 4 ? hn::LoadU(d32, reinterpret_cast<const std::uint32_t*>(in + 4 * j))
                               : hn::PromoteTo(d32, hn::LoadU(d8, in + j));
    bad = hn::Or(bad, hn::And(w, vunused));
    for (std::size_t i = 0; i < count; ++i) {
      const auto v = hn::And(hn::ShiftRightSame(w, static_cast<int>(i) * bits), vmask);
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di32, v)), d8, rows[i] + j);
    }
  }
  bool ok = hn::AllTrue(d32, hn::Eq(bad, hn::Zero(d32)));
  for (; j < len; ++j) {
    std::uint32_t w = 0;
    for (int b = 0; b < ebytes; ++b) w |= static_cast<std::uint32_t>(in[j * static_cast<std::size_t>(ebytes) + b]) << (8 * b);
    if (w & unused) ok = false;
    for (std::size_t i = 0; i < count; ++i) rows[i][j] = static_cast<std::uint8_t>((w >> (i * static_cast<std::size_t>(bits))) & mask);
  }
  return ok;
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
