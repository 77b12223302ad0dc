#include "scheme/space.hpp"

#include <array>
#include <optional>
#include <span>
#include <vector>

namespace qscheme {

namespace {

// Every combination of the fields' lists, in the order the space lists them.
std::vector<Scheme> cross(std::span<const Value> values, const std::vector<Store>& stores,
                          std::span<const Mode> modes, const std::vector<std::optional<ScaleDtype>>& tensors,
                          const std::vector<std::optional<BlockLevel>>& blocks) {
  std::vector<Scheme> out;
  for (Value v : values) {
    for (Store st : stores) {
      for (Mode m : modes) {
        for (const auto& t : tensors) {
          for (const auto& b : blocks) out.push_back(Scheme{v, st, m, t, b, std::nullopt});
        }
      }
    }
  }
  return out;
}

constexpr std::array kBurnModes{Mode::sym, Mode::lookup};

}  // namespace

const std::vector<Scheme>& tuple_space() {
  static const std::vector<Scheme> kSpace = [] {
    std::vector<Store> stores{Store::native()};
    for (std::uint8_t d = 0; d < 3; ++d) stores.push_back(Store::packed_native(d));
    for (std::uint8_t d = 0; d < 3; ++d) stores.push_back(Store::packed_u32(d));
    const std::vector<BlockSize> sizes{BlockSize::of({16}), BlockSize::of({32}), BlockSize::of({4, 4}),
                                       BlockSize::of({2, 3, 5}), BlockSize::of({255})};
    std::vector<std::optional<ScaleDtype>> tensors{std::nullopt};
    for (ScaleDtype d : kAllScaleDtypes) tensors.emplace_back(d);
    std::vector<std::optional<BlockLevel>> blocks{std::nullopt};
    for (ScaleDtype d : kAllScaleDtypes) {
      for (const BlockSize& b : sizes) blocks.emplace_back(BlockLevel{b, d});
    }
    return cross(kBurnValues, stores, kBurnModes, tensors, blocks);
  }();
  return kSpace;
}

const std::vector<Scheme>& extension_space() {
  static const std::vector<Scheme> kSpace = [] {
    const std::vector<Store> stores{Store::native(), Store::packed_native(0), Store::packed_u32(0),
                                    Store::packed_u32(1)};
    const std::vector<std::optional<ScaleDtype>> tensors{std::nullopt, ScaleDtype::f32, ScaleDtype::bf16};
    const std::vector<std::optional<BlockLevel>> blocks{
        std::nullopt,
        BlockLevel{BlockSize::of({32}), ScaleDtype::f32},
        BlockLevel{BlockSize::of({4, 4}), ScaleDtype::f16},
        BlockLevel{BlockSize::of({2, 3, 5}), ScaleDtype::bf16},
        BlockLevel{BlockSize::of({16}), ScaleDtype::ue4m3},
        BlockLevel{BlockSize::of({255}), ScaleDtype::ue8m0},
    };
    std::vector<Scheme> out = cross(kExtensionValues, stores, kBurnModes, tensors, blocks);
    // Affine mode over every kind: the stores and levels whose rules could meet a zero point.
    const std::vector<std::optional<BlockLevel>> affine_blocks{
        std::nullopt,
        BlockLevel{BlockSize::of({32}), ScaleDtype::f32},
        BlockLevel{BlockSize::of({4, 4}), ScaleDtype::f16},
        BlockLevel{BlockSize::of({16}), ScaleDtype::ue4m3},
    };
    const std::array affine{Mode::affine};
    const std::vector<Scheme> sampled = cross(kAllValues, {Store::native(), Store::packed_u32(0)}, affine,
                                              {std::nullopt, ScaleDtype::f32}, affine_blocks);
    out.insert(out.end(), sampled.begin(), sampled.end());
    // Per-axis scales over every kind, in both computing modes: the innermost axis, the next one
    // out, and a dtype without a zero.
    constexpr std::array axis_modes{Mode::sym, Mode::affine};
    for (Value v : kAllValues) {
      for (Mode m : axis_modes) {
        for (const AxisLevel& a : {AxisLevel{0, ScaleDtype::f32}, AxisLevel{1, ScaleDtype::f16},
                                   AxisLevel{1, ScaleDtype::ue8m0}}) {
          const Scheme s{v, Store::native(), m, std::nullopt, std::nullopt, a};
          out.push_back(s);
        }
      }
    }
    return out;
  }();
  return kSpace;
}

const std::vector<std::vector<std::uint64_t>>& shape_set() {
  static const std::vector<std::vector<std::uint64_t>> kShapes{
      {0}, {1}, {7}, {3, 5}, {2, 3, 4}, {64, 64}, {}, {5, 0}, {33}, {3, 17, 9},
  };
  return kShapes;
}

}  // namespace qscheme
