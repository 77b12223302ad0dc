// RapidCheck generators for the scheme model. Schemes are drawn from the whole tuple space, not
// only its supported part: every value, store kind and dim 0..7, both modes, any level
// combination, blocks of 1 to 5 extents including 0, 1 and 255.
#pragma once

#include <rapidcheck.h>

#include "scheme/scheme.hpp"

namespace rc {

template <>
struct Arbitrary<qscheme::BlockSize> {
  static Gen<qscheme::BlockSize> arbitrary() {
    return gen::exec([] {
      // Extents favour the interesting edges (0, 1, 255) and small values that divide shapes.
      const auto extent = gen::weightedOneOf<std::uint8_t>(
          {{6, gen::inRange<std::uint8_t>(1, 9)},
           {2, gen::element<std::uint8_t>(0, 1, 16, 32, 255)},
           {1, gen::arbitrary<std::uint8_t>()}});
      const auto rank = *gen::inRange<std::size_t>(1, qscheme::kMaxBlockDims + 1);
      const auto extents = *gen::container<std::vector<std::uint8_t>>(rank, extent);
      return qscheme::BlockSize::make(extents).value();
    });
  }
};

template <>
struct Arbitrary<qscheme::Scheme> {
  static Gen<qscheme::Scheme> arbitrary() {
    using namespace qscheme;
    return gen::exec([] {
      const auto dtype = gen::element(ScaleDtype::f32, ScaleDtype::f16, ScaleDtype::bf16, ScaleDtype::ue8m0,
                                      ScaleDtype::ue4m3);
      Scheme s;
      s.value = *gen::element(Value::q8f, Value::q8s, Value::q4f, Value::q4s, Value::q2f, Value::q2s,
                              Value::e4m3, Value::e5m2, Value::e2m1);
      const auto kind = *gen::element(StoreKind::native, StoreKind::packed_native, StoreKind::packed_u32);
      const std::uint8_t dim =
          kind == StoreKind::native ? 0 : *gen::inRange<std::uint8_t>(0, static_cast<std::uint8_t>(kMaxRank));
      s.store = Store{kind, dim};
      s.mode = *gen::element(Mode::sym, Mode::lookup);
      if (*gen::arbitrary<bool>()) s.tensor = *dtype;
      if (*gen::arbitrary<bool>()) s.block = BlockLevel{*gen::arbitrary<BlockSize>(), *dtype};
      return s;
    });
  }
};

}  // namespace rc
