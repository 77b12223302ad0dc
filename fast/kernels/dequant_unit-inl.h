// Per-target dequantize of one unit of the bytes path straight from its serialized bytes
// (DequantUnit): one byte per code, or two codes per byte (low nibble first), each vector of bytes
// checked (FirstBadCode's rule, field by field) and then dequantized (DequantCodes' values and
// products) in the same loop.
//
// Why one loop: a separate check pass over the unit's bytes took about a fifth of an in-cache
// (64K, L2) q8_0 dequantize, and unpacking nibbles into a buffer first another tenth of q4_0's;
// gathered into the loop that writes the values, the checks cost next to nothing.

#if defined(QSCHEME_FAST_KERNELS_DEQUANT_UNIT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QSCHEME_FAST_KERNELS_DEQUANT_UNIT_INL_H_
#undef QSCHEME_FAST_KERNELS_DEQUANT_UNIT_INL_H_
#else
#define QSCHEME_FAST_KERNELS_DEQUANT_UNIT_INL_H_
#endif

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "fast/kernels/dequant-inl.h"
#include "fast/kernels/dispatch.h"
#include "fast/kernels/scalar.h"
#include "fast/kernels/vector-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qscheme::fast::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Whether the 4-bit field n is no code of the kind (FirstBadCode's rule): an integer sign-extended
// from 4 bits outside [lo, hi]; a minifloat pattern above hi or a NaN/inf pattern.
inline bool BadNibble(int n, const CodeSpec& c) {
  if (c.fmt >= 0) return n > c.hi || (c.nan_mask != 0 && (n & c.nan_mask) == c.nan_mask);
  const int v = n >= 8 ? n - 16 : n;
  return v < c.lo || v > c.hi;
}

// The upper and lower bytes of the upper half of each e2m1 value's f32 pattern, by field (its
// lower half is zero): two 16-entry byte tables.
struct Bf16Bytes {
  alignas(16) std::uint8_t hi[16];
  alignas(16) std::uint8_t lo[16];
};
inline constexpr Bf16Bytes kE2M1Bf16 = [] {
  constexpr float kValues[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                                 -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  Bf16Bytes t{};
  for (int n = 0; n < 16; ++n) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(kValues[n]);
    if ((u & 0xFFFFu) != 0) throw "an e2m1 value needs more than bf16's bits";
    t.hi[n] = static_cast<std::uint8_t>(u >> 24);
    t.lo[n] = static_cast<std::uint8_t>(u >> 16);
  }
  return t;
}();

// kKind as CodeValuesOf (0: 8-bit integers, 1: 4-bit integers, 2 + fmt: a minifloat); kNibbles:
// two codes per byte (c.bits == 4), else one (c.bits == 8).
template <int kKind, bool kTwo, bool kNibbles, std::size_t kV>
HWY_INLINE bool DequantUnitT(const std::uint8_t* HWY_RESTRICT bytes, std::size_t len, std::size_t start,
                             std::size_t bw, const float* HWY_RESTRICT s, float g, const CodeSpec& c,
                             float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::Repartition<std::uint8_t, decltype(df)> d8;  // 4N bytes: the bytes of one check
  const hn::RebindToSigned<decltype(d8)> ds8;
  const std::size_t N = hn::Lanes(df);
  const std::size_t B = hn::Lanes(d8);
  constexpr std::size_t kPer = kNibbles ? 2 : 1;  // codes per byte
  const std::size_t C = B * kPer;                 // codes per check: 4N or 8N
  const auto vg = hn::Set(df, g);

  // Bad fields, gathered over the unit and tested once at its end (out is unspecified when it
  // fails): a test and branch per vector of bytes made the loop about 15% slower (2.1 against
  // 1.84 us per 64K q8_0 codes in L2), a min or max folded into a load cost next to nothing.
  // 8-bit integers: the least and the largest code (as i8); minifloats one a byte: the largest
  // raw & nan_mask, which is nan_mask exactly when some field is a NaN/inf pattern, and the
  // largest raw (above hi: e2m1's bytes beyond 15); nibbles: no bad field (e2m1, 4-bit full
  // ranges), field 8 alone (symmetric 4-bit integers: -8), or any other set, the OR of a 16-entry
  // table of bad fields looked up by each byte's low and high nibble. Field 8 alone: t = raw ^
  // 0x88 has a zero nibble exactly where a field is 8, and (t - 0x11) & ~t & 0x88 is nonzero in a
  // byte exactly when one of its nibbles is zero (the borrow of a zero low nibble can mark the
  // high one too, but only in a byte that has a zero already): three operations a vector of bytes
  // against the table's five.
  HWY_ALIGN std::uint8_t bad_table[16] = {};
  int nibble_check = 0;  // 0: none, 1: field 8 alone, 2: the table
  if constexpr (kNibbles) {
    bool any = false, eight_alone = true;
    for (int n = 0; n < 16; ++n) {
      bad_table[n] = BadNibble(n, c) ? 0xFF : 0;
      any = any || bad_table[n] != 0;
      eight_alone = eight_alone && (bad_table[n] != 0) == (n == 8);
    }
    nibble_check = !any ? 0 : eight_alone ? 1 : 2;
  }
  const auto vtable = hn::LoadDup128(d8, bad_table);
  const auto low4 = hn::Set(d8, 0x0F);
  const auto v88 = hn::Set(d8, 0x88), v11 = hn::Set(d8, 0x11);
  const auto vnm = hn::Set(d8, static_cast<std::uint8_t>(c.fmt < 0 ? 0 : c.nan_mask));
  const auto vhi = hn::Set(d8, static_cast<std::uint8_t>(c.fmt < 0 ? 0 : c.hi));
  auto least = hn::Zero(ds8), most = hn::Zero(ds8);  // code 0 is a code of every integer kind
  auto acc = hn::Zero(d8), top = hn::Zero(d8);
  auto gather = [&](hn::Vec<decltype(d8)> raw) QSCHEME_INLINE_LAMBDA {
    if constexpr (kNibbles) {
      if (nibble_check == 1) {
        const auto t = hn::Xor(raw, v88);
        acc = hn::Or(acc, hn::And(hn::AndNot(t, hn::Sub(t, v11)), v88));
      } else if (nibble_check == 2) {
        acc = hn::Or(acc, hn::Or(hn::TableLookupBytes(vtable, hn::And(raw, low4)),
                                 hn::TableLookupBytes(vtable, hn::ShiftRight<4>(raw))));
      }
    } else if constexpr (kKind >= 2) {
      acc = hn::Max(acc, hn::And(raw, vnm));
      top = hn::Max(top, raw);
    } else {
      least = hn::Min(least, hn::BitCast(ds8, raw));
      most = hn::Max(most, hn::BitCast(ds8, raw));
    }
  };
  auto all_good = [&]() QSCHEME_INLINE_LAMBDA {
    if constexpr (kNibbles) return hn::AllFalse(d8, hn::Ne(acc, hn::Zero(d8)));
    if constexpr (kKind >= 2) {
      return (c.nan_mask == 0 || hn::AllFalse(d8, hn::Eq(acc, vnm))) && hn::AllFalse(d8, hn::Gt(top, vhi));
    }
    const auto out_of_range = hn::Or(hn::Lt(least, hn::Set(ds8, static_cast<std::int8_t>(c.lo))),
                                     hn::Gt(most, hn::Set(ds8, static_cast<std::int8_t>(c.hi))));
    return hn::AllFalse(ds8, out_of_range);
  };

  // The scale of vector v of a step at column col: block (start + col + v N) / bw - start / bw.
  // kV > 0: blocks of kV vectors from the unit's first column, so that a step (4 or 8 vectors)
  // broadcasts its blocks' scales once each, at compile-time positions; kV == 0: a running count
  // of blocks, a test per vector. A shift and a broadcast load per vector instead took q8_0's loop
  // from 2.5 to 2.9 us per 64K in L2.
  std::size_t b = 0;
  std::size_t next = bw ? (start / bw + 1) * bw - start : std::numeric_limits<std::size_t>::max();
  auto vs = hn::Set(df, s[0]);
  const std::size_t vpb = kV ? kV : 1;
  // kTail: a padded last step, whose vectors past len take the last block's scale.
  const std::size_t last = bw ? (len - 1) / bw : 0;
  auto scaled = [&](hn::Vec<decltype(df)> x, std::size_t col, std::size_t v, auto kTail) QSCHEME_INLINE_LAMBDA {
    if constexpr (kV > 0) {
      if (v % vpb == 0) {
        const std::size_t k = (col + v * N) / (vpb * N);
        vs = hn::Set(df, s[decltype(kTail)::value && k > last ? last : k]);
      }
    } else if (col + v * N >= next && col + v * N < len) {
      ++b;
      next += bw;
      vs = hn::Set(df, s[b]);
    }
    const auto p = hn::Mul(x, vs);
    return kTwo ? hn::Mul(p, vg) : p;
  };

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // Nibbles on 16 lanes: the values of all sixteen fields in one register, looked up by each
  // byte's low nibble (vpermps reads the index's low four bits) and by its high nibble, then the
  // two interleaved into code order.
  // (4-bit kinds: e2m1, whose -0 is field 8, or integers sign-extended from 4 bits.)
  const __m512 values16 = kKind >= 2 ? _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f,
                                                      -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f)
                                     : _mm512_setr_ps(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, -8.0f, -7.0f,
                                                      -6.0f, -5.0f, -4.0f, -3.0f, -2.0f, -1.0f);
  const __m512i even = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i odd = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  (void)values16;
  (void)even;
  (void)odd;
#endif
#if HWY_TARGET == HWY_AVX3_DL
  // With VBMI the interleave goes before the lookup: vpermb copies byte k of the 64 into dwords 2k
  // and 2k + 1 of its vector, a shift by 0 or 4 brings the low or high nibble to the bits vpermps
  // reads: two shuffles a vector against the two-table path's five for two vectors (in-cache
  // dequantize q4_0 0.81 of the probe against AVX3's 0.64, mxfp4 0.86 against 0.67).
  __m512i spread[8];
  for (int v = 0; v < 8; ++v) {
    spread[v] = _mm512_add_epi8(_mm512_setr_epi32(0, 0, 0x01010101, 0x01010101, 0x02020202, 0x02020202, 0x03030303,
                                                  0x03030303, 0x04040404, 0x04040404, 0x05050505, 0x05050505,
                                                  0x06060606, 0x06060606, 0x07070707, 0x07070707),
                                _mm512_set1_epi8(static_cast<char>(8 * v)));
  }
  const __m512i high_of_odd = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
  // 8-bit minifloats: vpermb copies byte 16 v + j of the 64 into every byte of lane j of vector v,
  // and one arithmetic shift takes its top copy to where CodeValuesOfBytes' sign extension and
  // shift take the byte; the same mask then clears both the sign's copies above and the other
  // copies below (bit 23 - m and up are the top copy's): no quarter extracted and no sign
  // extension (in-cache dequantize mxfp8 0.63 of the probe against AVX3's 0.58).
  __m512i byte_of_lane[4];
  for (int v = 0; v < 4; ++v) {
    byte_of_lane[v] = _mm512_add_epi8(_mm512_setr_epi32(0, 0x01010101, 0x02020202, 0x03030303, 0x04040404, 0x05050505,
                                                  0x06060606, 0x07070707, 0x08080808, 0x09090909, 0x0A0A0A0A,
                                                  0x0B0B0B0B, 0x0C0C0C0C, 0x0D0D0D0D, 0x0E0E0E0E, 0x0F0F0F0F),
                                _mm512_set1_epi8(static_cast<char>(16 * v)));
  }
  (void)spread;
  (void)high_of_odd;
  (void)byte_of_lane;
#endif

  // The C codes of the bytes at src (column col of the unit), whose 4N bytes are in `raw`, into
  // dst.
  auto values = [&](hn::Vec<decltype(d8)> raw, const std::uint8_t* HWY_RESTRICT src, std::size_t col,
                    float* HWY_RESTRICT dst, auto kTail) QSCHEME_INLINE_LAMBDA {
    // The four quarters of raw, each made into its vectors by quarter(q, kQ).
    auto quarters = [&](auto quarter) QSCHEME_INLINE_LAMBDA {
      quarter(QuarterOf<0>(d8, raw), std::integral_constant<std::size_t, 0>());
      quarter(QuarterOf<1>(d8, raw), std::integral_constant<std::size_t, 1>());
      quarter(QuarterOf<2>(d8, raw), std::integral_constant<std::size_t, 2>());
      quarter(QuarterOf<3>(d8, raw), std::integral_constant<std::size_t, 3>());
    };
    if constexpr (!kNibbles) {
      (void)src;
#if HWY_TARGET == HWY_AVX3_DL
      if constexpr ((kKind == 2 + scalar::kE4M3 || kKind == 2 + scalar::kE5M2) &&
                    sizeof(hn::Vec<decltype(df)>().raw) == sizeof(__m512)) {
        constexpr int kM = scalar::kMini[kKind - 2].m;
        const __m512i keep = _mm512_set1_epi32(static_cast<int>(0x80000000u | (0x7Fu << (23 - kM))));
        const __m512 bias = _mm512_set1_ps(MiniBias<kKind>());
        auto vector = [&](auto kAt) QSCHEME_INLINE_LAMBDA {
          constexpr std::size_t v = decltype(kAt)::value;
          const __m512i copies = _mm512_permutexvar_epi8(byte_of_lane[v], raw.raw);
          const __m512i bits = _mm512_and_si512(_mm512_srai_epi32(copies, 1 + kM), keep);
          hn::StoreU(scaled(hn::Vec<decltype(df)>{_mm512_mul_ps(_mm512_castsi512_ps(bits), bias)}, col, v, kTail), df,
                     dst + v * N);
        };
        ForEachIndex<4>(vector);
        return;
      }
#endif
#if HWY_TARGET == HWY_AVX2
      if constexpr (sizeof(hn::Vec<decltype(df)>().raw) == sizeof(__m256)) {
        // On AVX2 each vector loads its 8 bytes again, widened in the load (vpmovsxbd from
        // memory): taking them from the step's register cost an extract or a shuffle each. On a
        // Zen 3, in-cache dequantize mxfp8 0.85-0.95 of the probe against 0.69-0.70, q8_0
        // 1.12-1.13 against 0.96-0.98 (docs/PERFORMANCE.md, sitting R).
        auto vector = [&](auto kAt) QSCHEME_INLINE_LAMBDA {
          constexpr std::size_t v = decltype(kAt)::value;
          hn::StoreU(scaled(CodeValuesOf<kKind>(df, src + v * N, c), col, v, kTail), df, dst + v * N);
        };
        ForEachIndex<4>(vector);
        return;
      }
#endif
      quarters([&](auto q, auto kQ) QSCHEME_INLINE_LAMBDA {
        constexpr std::size_t v = decltype(kQ)::value;
        hn::StoreU(scaled(CodeValuesOfBytes<kKind>(df, q, c), col, v, kTail), df, dst + v * N);
      });
    } else {
#if HWY_TARGET == HWY_AVX3_DL
      if constexpr (sizeof(values16) == sizeof(hn::Vec<decltype(df)>().raw)) {
        auto vector = [&](auto kAt) QSCHEME_INLINE_LAMBDA {
          constexpr std::size_t v = decltype(kAt)::value;
          const __m512i fields = _mm512_srlv_epi32(_mm512_permutexvar_epi8(spread[v], raw.raw), high_of_odd);
          hn::StoreU(scaled(hn::Vec<decltype(df)>{_mm512_permutexvar_ps(fields, values16)}, col, v, kTail), df, dst + v * N);
        };
        ForEachIndex<8>(vector);
        return;
      }
#endif
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
      if constexpr (sizeof(values16) == sizeof(hn::Vec<decltype(df)>().raw)) {
        const hn::Rebind<std::uint32_t, decltype(df)> du;
        quarters([&](auto q, auto kQ) QSCHEME_INLINE_LAMBDA {
          constexpr std::size_t v = 2 * decltype(kQ)::value;
          const auto wide = hn::PromoteTo(du, q);
          const __m512 lo = _mm512_permutexvar_ps(wide.raw, values16);
          const __m512 hi = _mm512_permutexvar_ps(hn::ShiftRight<4>(wide).raw, values16);
          hn::StoreU(scaled(hn::Vec<decltype(df)>{_mm512_permutex2var_ps(lo, even, hi)}, col, v, kTail), df, dst + v * N);
          hn::StoreU(scaled(hn::Vec<decltype(df)>{_mm512_permutex2var_ps(lo, odd, hi)}, col, v + 1, kTail), df, dst + (v + 1) * N);
        });
        return;
      }
#endif
#if HWY_TARGET == HWY_AVX2
      if constexpr (sizeof(hn::Vec<decltype(df)>().raw) == sizeof(__m256)) {
        // The step's 32 bytes split into 64 one-byte codes by in-lane unpacks, which leave codes
        // 0-15 and 32-47 in `a`, 16-31 and 48-63 in `b`; both go to a buffer that each vector's
        // load-and-widen reads in code order (kAt: where vector v's 8 codes begin). Integers are
        // sign-extended as bytes, once for 16 codes; e2m1 becomes the upper half of its f32
        // pattern (bf16, exact for all sixteen values), two bytes from two in-lane tables, widened
        // by one shift. Against the path below (a buffer of one-byte codes, each vector widened,
        // shifted twice and converted, or MiniValue's steps) on a Zen 3 without AVX-512: in-cache
        // dequantize q4_0 0.76 of the probe against 0.53-0.54, mxfp4 0.73 against 0.25-0.26.
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        const __m256i lo = _mm256_and_si256(raw.raw, m4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw.raw, 4), m4);
        const __m256i a = _mm256_unpacklo_epi8(lo, hi), b = _mm256_unpackhi_epi8(lo, hi);
        if constexpr (kKind == 1) {
          constexpr std::size_t kAt[8] = {0, 8, 32, 40, 16, 24, 48, 56};
          const __m256i e8 = _mm256_set1_epi8(8);
          HWY_ALIGN std::int8_t sx[64];
          _mm256_store_si256(reinterpret_cast<__m256i*>(sx), _mm256_sub_epi8(_mm256_xor_si256(a, e8), e8));
          _mm256_store_si256(reinterpret_cast<__m256i*>(sx + 32), _mm256_sub_epi8(_mm256_xor_si256(b, e8), e8));
          auto vector = [&](auto kV8) QSCHEME_INLINE_LAMBDA {
            constexpr std::size_t v = decltype(kV8)::value;
            const __m256i w = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sx + kAt[v])));
            hn::StoreU(scaled(hn::Vec<decltype(df)>{_mm256_cvtepi32_ps(w)}, col, v, kTail), df, dst + v * N);
          };
          ForEachIndex<8>(vector);
        } else {
          static_assert(kKind == 2 + scalar::kE2M1);
          // Two bytes a code: a's codes take bf[0, 64), in the order 0-7, 32-39, 8-15, 40-47 (the
          // unpacks are in-lane again); b's codes bf[64, 128), 16 more each.
          constexpr std::size_t kAt[8] = {0, 32, 64, 96, 16, 48, 80, 112};
          const __m256i th = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kE2M1Bf16.hi)));
          const __m256i tl = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kE2M1Bf16.lo)));
          HWY_ALIGN std::uint8_t bf[128];
          auto words = [&](__m256i codes, std::uint8_t* at) QSCHEME_INLINE_LAMBDA {
            const __m256i h = _mm256_shuffle_epi8(th, codes), l = _mm256_shuffle_epi8(tl, codes);
            _mm256_store_si256(reinterpret_cast<__m256i*>(at), _mm256_unpacklo_epi8(l, h));
            _mm256_store_si256(reinterpret_cast<__m256i*>(at + 32), _mm256_unpackhi_epi8(l, h));
          };
          words(a, bf);
          words(b, bf + 64);
          auto vector = [&](auto kV8) QSCHEME_INLINE_LAMBDA {
            constexpr std::size_t v = decltype(kV8)::value;
            const __m256i w = _mm256_cvtepu16_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(bf + kAt[v])));
            hn::StoreU(scaled(hn::Vec<decltype(df)>{_mm256_castsi256_ps(_mm256_slli_epi32(w, 16))}, col, v, kTail), df,
                       dst + v * N);
          };
          ForEachIndex<8>(vector);
        }
        return;
      }
#endif
      // Other targets: 16 bytes at a time into 32 one-byte codes in order, then their values.
      const hn::Full128<std::uint8_t> d16;
      const auto m4 = hn::Set(d16, 0x0F);
      HWY_ALIGN std::uint8_t codes[32];
      for (std::size_t q = 0; q < C / 2; q += 16) {
        const auto raw = hn::LoadU(d16, src + q);
        const auto lo = hn::And(raw, m4), hi = hn::ShiftRight<4>(raw);
        hn::Store(hn::InterleaveLower(d16, lo, hi), d16, codes);
        hn::Store(hn::InterleaveUpper(d16, lo, hi), d16, codes + 16);
        for (std::size_t j = 0; j < 32; j += N) {
          hn::StoreU(scaled(CodeValuesOf<kKind>(df, codes + j, c), col, (2 * q + j) / N, kTail), df, dst + 2 * q + j);
        }
      }
    }
  };

  std::size_t i = 0;
  for (; i + C <= len; i += C) {
    const std::uint8_t* src = bytes + i / kPer;
    const auto raw = hn::LoadU(d8, src);
    gather(raw);
    values(raw, src, i, out + i, std::false_type());
  }
  if (i < len) {
    // The rest through buffers: field 0, the padding, is a code of every kind.
    HWY_ALIGN std::uint8_t src[HWY_MAX_BYTES] = {};
    HWY_ALIGN float o[2 * HWY_MAX_BYTES];  // C <= 8N floats
    std::memcpy(src, bytes + i / kPer, (len - i) / kPer);
    const auto raw = hn::Load(d8, src);
    gather(raw);
    values(raw, src, i, o, std::true_type());
    std::memcpy(out + i, o, (len - i) * sizeof(float));
  }
  return all_good();
}

HWY_NOINLINE bool DequantUnitImpl(const std::uint8_t* HWY_RESTRICT bytes, std::size_t len, std::size_t start,
                                  std::size_t bw, const float* HWY_RESTRICT s, float g, const CodeSpec& c,
                                  float* HWY_RESTRICT out) {
  const bool two = g != 1.0f;  // g == 1: the product is the same without it
  // Blocks of 1, 2 or 4 vectors from the unit's first column, or any other.
  const std::size_t N = hn::Lanes(hn::ScalableTag<float>());
  const bool from_block_start = bw != 0 && start % bw == 0;
  auto run = [&](auto kKind, auto kNibbles) {
    constexpr int K = decltype(kKind)::value;
    constexpr bool kNib = decltype(kNibbles)::value;
    auto go = [&](auto kTwo, auto kV) {
      return DequantUnitT<K, decltype(kTwo)::value, kNib, decltype(kV)::value>(bytes, len, start, bw, s, g, c, out);
    };
    auto blocks = [&](auto kTwo) {
      return WithVectorsPerBlock(from_block_start ? bw : 0, N, [&](auto kV) { return go(kTwo, kV); });
    };
    return two ? blocks(std::true_type()) : blocks(std::false_type());
  };
  using kByte = std::false_type;
  using kNib = std::true_type;
  if (c.bits == 4) {
    return c.fmt >= 0 ? run(std::integral_constant<int, 2 + scalar::kE2M1>(), kNib()) : run(std::integral_constant<int, 1>(), kNib());
  }
  switch (c.fmt) {
    case scalar::kE4M3: return run(std::integral_constant<int, 2 + scalar::kE4M3>(), kByte());
    case scalar::kE5M2: return run(std::integral_constant<int, 2 + scalar::kE5M2>(), kByte());
    case scalar::kE2M1: return run(std::integral_constant<int, 2 + scalar::kE2M1>(), kByte());  // native e2m1
    default: return run(std::integral_constant<int, 0>(), kByte());
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qscheme::fast::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
