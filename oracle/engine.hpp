// The engine table: every harness that runs "each engine" (the command line's --engine, verify,
// tests, properties, fuzzers) iterates this one list. Adding an engine is one row in engines().
// The fast engine (fast/, Highway SIMD) is the default; reference/ is bit-identical by contract.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scheme/byte_format.hpp"
#include "scheme/quantized.hpp"
#include "scheme/rules.hpp"
#include "scheme/status.hpp"
#include "scheme/validate.hpp"

namespace qscheme::oracle {

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
  // Bytes of either format under any point of the rule space (scheme/rules.hpp), and back. An
  // engine that does not run a point or a format says so (unsupported-profile); every entry
  // above does the same for options.rules and q.rules, never ignoring them.
  Result<QuantizedTensor> (*decode_as)(const Scheme&, Shape, std::span<const std::uint8_t>, const Rules&, ByteFormat);
  Result<std::vector<std::uint8_t>> (*encode_as)(const QuantizedTensor&, ByteFormat);
  // Dequantize to f16 or bf16 bit patterns (docs/SEMANTICS.md section 16); an engine that writes
  // f32 only says so (unsupported-engine).
  Result<std::vector<std::uint16_t>> (*dequantize_16)(const QuantizedTensor&, OutputDtype);
  // quantize_bytes and dequantize_bytes in either format, under any point: the same bytes, values
  // and errors as encode_as(quantize(...)) and dequantize(decode_as(...)) (the fast engine's fused
  // paths; it says so, unsupported-profile, for a point it does not run or read).
  Result<std::vector<std::uint8_t>> (*quantize_bytes_as)(const Scheme&, Shape, std::span<const float>,
                                                         const QuantizeOptions&, ByteFormat);
  Status (*dequantize_bytes_as)(const Scheme&, Shape, std::span<const std::uint8_t>, const Rules&, ByteFormat,
                                std::span<float> out);
};

inline constexpr std::string_view kDefaultEngine = "fast";

const std::vector<Engine>& engines();
// The engine called `name`; invalid-argument naming the choices when there is none.
Result<const Engine*> find_engine(std::string_view name);


}  // namespace qscheme::oracle
