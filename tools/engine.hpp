// The engines the command line can run. One row per engine: adding one is one line in engines()
// in engine.cpp. The fast engine (fast/, Highway SIMD) is the default; reference/ stays
// selectable with --engine reference and is bit-identical by contract (qscheme verify checks it).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scheme/quantized.hpp"
#include "scheme/status.hpp"
#include "scheme/validate.hpp"

namespace CLI {
class App;
}

namespace qscheme::cli {

struct Engine {
  std::string_view name;
  Result<QuantizedTensor> (*quantize)(const Scheme&, Shape, std::span<const float>, const QuantizeOptions&);
  Result<std::vector<float>> (*dequantize)(const QuantizedTensor&);
  Result<std::vector<std::uint8_t>> (*encode)(const QuantizedTensor&);
  Result<QuantizedTensor> (*decode)(const Scheme&, Shape, std::span<const std::uint8_t>, Profile);
  // f32 straight to serialized bytes, and back into out (sized to the element count): the same
  // bytes, values and errors as encode(quantize(...)) and dequantize(decode(...)), without the
  // tensor of i32 codes between them (the fast engine's fused path).
  Result<std::vector<std::uint8_t>> (*quantize_bytes)(const Scheme&, Shape, std::span<const float>,
                                                      const QuantizeOptions&);
  Status (*dequantize_bytes)(const Scheme&, Shape, std::span<const std::uint8_t>, Profile, std::span<float> out);
};

inline constexpr std::string_view kDefaultEngine = "fast";

const std::vector<Engine>& engines();
// The engine called `name`; invalid-argument naming the choices when there is none.
Result<const Engine*> find_engine(std::string_view name);

// Threads of the fast engine for a command: the command line uses every core
// (fast::set_threads(0)) unless --threads N is given; the library's own default stays 1.
// --threads is kept as typed and parsed here, so that a negative or oversized count is an
// invalid-argument error naming the range 0 to fast::kMaxThreads like any other bad value
// (CLI11 would reject -1 with its own message and pass 4294967295 on).
void add_threads_option(CLI::App& app, std::optional<std::string>& threads);
// The count --threads asks for, or invalid-argument naming the range.
Result<unsigned> parse_threads(std::string_view text);
// Parses --threads when given and applies it (absent: 0, every core).
Status apply_threads(const std::optional<std::string>& threads);
// fast::set_target(name), or invalid-argument naming the targets there are.
Status apply_target(const std::string& name);

}  // namespace qscheme::cli
