// Test inputs shared by the engine comparisons: f32 bit access and the edge-case tensors of
// `qscheme verify`-style checks (random, zeros, signed zeros, constants, subnormals, grid values,
// f32 max, any finite pattern, one outlier).
#pragma once

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace qscheme::testing {

inline std::uint32_t Bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float FromBits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The bit patterns of a float vector: engines are compared on bits (NaN payloads and -0 included).
inline std::vector<std::uint32_t> BitsOf(const std::vector<float>& v) {
  std::vector<std::uint32_t> out;
  out.reserve(v.size());
  for (float f : v) out.push_back(Bits(f));
  return out;
}

// Edge-case tensors of n elements.
inline std::vector<std::vector<float>> Tensors(std::uint64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<float>> out;
  std::vector<float> v(n);
  auto fill = [&](auto f) {
    for (auto& x : v) x = f();
    out.push_back(v);
  };
  fill([&] { return std::uniform_real_distribution<float>(-2, 2)(rng); });                  // random
  fill([&] { return 0.0f; });                                                                // all zero
  fill([&] { return (rng() & 1) ? -0.0f : 0.0f; });                                          // signed zeros
  fill([&] { return 0.75f; });                                                               // constant
  fill([&] { return FromBits(rng() % 0x800000u) * ((rng() & 1) ? -1.f : 1.f); });            // subnormals
  fill([&] { return static_cast<float>(static_cast<int>(rng() % 256) - 128) / 4; });         // grid-ish
  fill([&] { return (rng() % 5 == 0) ? ((rng() & 1) ? FLT_MAX : -FLT_MAX) : 1.0f; });        // f32 max
  fill([&] { return FromBits(rng() & 0x7F7FFFFFu) * ((rng() & 1) ? -1.f : 1.f); });          // any finite
  if (n) {
    v.assign(n, 0.01f);
    v[rng() % n] = 1e6f;  // one outlier
    out.push_back(v);
  }
  return out;
}

}  // namespace qscheme::testing
