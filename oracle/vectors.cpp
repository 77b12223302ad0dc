// export_vectors(): one folder per scheme, one sub-folder per tensor case, the reference engine's
// result under each profile; index.json lists everything, README.md says how to use it.
#include "oracle/vectors.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "reference/calibrate.hpp"
#include "reference/minifloat.hpp"
#include "reference/reference.hpp"
#include "reference/scales.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/printable.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"
#include "io/file_io.hpp"
#include "io/npy.hpp"
#include "io/output_dir.hpp"
#include "io/qjson.hpp"

namespace qscheme::oracle {
namespace {

namespace fs = std::filesystem;

// The seed of every random tensor; part of the vectors' definition (README.md states it).
constexpr std::uint64_t kSeed = 0x5153434845'4D45ull;  // "QSCHEME"


struct Case {
  std::string name;
  std::string about;
  std::vector<std::uint64_t> shape;
  std::vector<float> x;
  Calibration calibration = Calibration::minmax;
  bool given_unit_scales = false;  // every scale (and the global) given as 1
};


std::vector<Case> cases() {
  std::vector<Case> out;
  const std::vector<std::uint64_t> shape{6, 40};
  const std::size_t n = 6 * 40;
  {
    // Exact ties for integer kinds (k + 1/2) and for the minifloat grids (midpoints of e4m3,
    // e5m2 and e2m1 neighbours), both signs, plus values past every range.
    const float ties[] = {0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, -3.5f, 6.5f, -6.5f, 1.0625f, -1.0625f,
                          1.25f, -1.25f, 2.5f, 5.0f, -5.0f, 0.25f, 0.75f, 1.125f, 1.75f, 3.0f, 7.5f, 126.5f,
                          -126.5f, 127.5f, -127.5f, 200.0f, -1000.0f, 464.0f, -464.0f, 61440.0f};
    Case c{"ties", "exact ties of every rounding and values beyond every range, against scales of 1", shape, {}};
    for (std::size_t i = 0; i < n; ++i) c.x.push_back(ties[i % std::size(ties)]);
    c.given_unit_scales = true;
    out.push_back(c);
  }
  {
    Case c{"subnormals", "f32 subnormals and the smallest normals, both signs", shape, {}};
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t mag = (i % 3 == 0) ? static_cast<std::uint32_t>(1 + i) : 0x00800000u + static_cast<std::uint32_t>(i);
      c.x.push_back(f32_from_bits(mag | (i % 2 ? 0x80000000u : 0u)));
    }
    out.push_back(c);
  }
  {
    Case c{"signed-zeros", "+0 and -0, an all -0 first row, mixed with small values", shape, {}};
    for (std::size_t i = 0; i < n; ++i) {
      if (i < 40 || i % 3 == 0) c.x.push_back(-0.0f);
      else if (i % 3 == 1) c.x.push_back(0.0f);
      else c.x.push_back(static_cast<float>(static_cast<int>(i % 17) - 8) * 0.125f);
    }
    out.push_back(c);
  }
  {
    Case c{"extremes", "the largest and smallest f32 magnitudes, both signs", shape, {}};
    const float ext[] = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                         std::numeric_limits<float>::min(), -std::numeric_limits<float>::denorm_min(),
                         1.0f, -0.0f, 3.0e38f, -1.0e-38f};
    for (std::size_t i = 0; i < n; ++i) c.x.push_back(ext[i % std::size(ext)]);
    out.push_back(c);
  }
  {
    Case c{"constant", "constant rows (every block constant); the first row all zero", shape, {}};
    for (std::size_t i = 0; i < n; ++i) c.x.push_back(static_cast<float>(i / 40) * -0.75f);
    out.push_back(c);
  }
  SplitMix64 rng(kSeed);
  auto random_tensor = [&](std::vector<std::uint64_t> s) {
    std::vector<float> x;
    std::uint64_t count = 1;
    for (auto e : s) count *= e;
    for (std::uint64_t i = 0; i < count; ++i) {
      const int exp = static_cast<int>(rng.next() % 17) - 8;  // magnitudes 2^-8 .. 2^8
      x.push_back(std::ldexp(rng.symmetric_unit(), exp));
    }
    return x;
  };
  out.push_back({"partial", "random values in a 5 x 37 tensor: partial blocks along both axes", {5, 37},
                 random_tensor({5, 37})});
  out.push_back({"random", "random values (SplitMix64, seed 0x51534348454D45), minmax calibration", shape,
                 random_tensor(shape)});
  Case abs{"random-absmean", "random values, absmean calibration", shape, random_tensor(shape)};
  abs.calibration = Calibration::absmean;
  out.push_back(abs);
  return out;
}

std::string dir_name(const std::string& scheme_text) {
  std::string out;
  for (char ch : scheme_text) {
    const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
    out.push_back(keep ? ch : '_');
  }
  return out;
}

Result<std::vector<std::uint8_t>> npy_i32(std::span<const std::uint64_t> shape, std::span<const std::int32_t> v) {
  std::vector<float> as_f32(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) as_f32[i] = qscheme::f32_from_bits(v[i]);
  auto b = io::npy::serialize_f32(shape, as_f32);
  if (!b) return b.status();
  // Same header length: only the descr changes ('<f4' -> '<i4'); the bytes are the int32 values.
  const std::string h(b->begin(), b->begin() + std::min<std::size_t>(b->size(), 128));
  const std::size_t at = h.find("'<f4'");
  if (at == std::string::npos) return Status(ErrorCode::internal, "unexpected .npy header");
  (*b)[at + 2] = 'i';
  return b;
}

Status write_file(const fs::path& p, std::span<const std::uint8_t> bytes) { return io::write_bytes(p.string(), bytes); }
Status write_text(const fs::path& p, const std::string& text) {
  return write_file(p, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

std::string readme(const std::vector<std::string>& schemes) {
  std::string s = R"(# qscheme golden vectors

Produced by `qscheme vectors`; the files are a pure function of the scheme list (re-running the
command gives byte-identical files). Every expected quantity comes from qscheme's reference
engine (exact arithmetic, docs/SEMANTICS.md in the qscheme repository).

## Layout

    index.json                     every case: scheme, shape, calibration or given scales, files
    <scheme>/<case>/input.npy      the f32 input tensor (little-endian, C order)
    <scheme>/<case>/scales.npy     given scales (only for cases with "given_scales" in index.json)
    <scheme>/<case>/<profile>.codes.npy        int32 codes, one per element (as QuantizedTensor)
    <scheme>/<case>/<profile>.scales.npy       the stored innermost-level scales, as f32 values
    <scheme>/<case>/<profile>.bin              Burn's serialized layout: [values][scales][f32 global]
    <scheme>/<case>/<profile>.dequantized.npy  f32 dequantized values
    <scheme>/<case>/<profile>.q.json           all of the above as qscheme's Q.json

The global (per-tensor) scale of a two-level scheme is in index.json ("global_bits", the f32
bit pattern, and "global"). Profiles: `exact` (one exact rounding per stored quantity),
`burn` (Burn's f32 arithmetic) and `onnx` (ONNX QuantizeLinear with zero point 0: given f32
scales only). A profile that rejects a case (Burn's f32 arithmetic overflows on the `extremes`
case; Burn has no two-level absmean; onnx takes only given one-level f32 scales) has
`"error": "<code>"` in index.json and no files. Vectors made with `--recipe NAME` hold that
recipe's result instead of the profiles' (files `<recipe>.*`, "recipe" in index.json; a ggml
recipe adds `<recipe>.ggml.bin`, ggml's own blocks, where the shape allows them).

## Cases

- `ties`: exact ties of every rounding rule and values beyond every range, given scales of 1.
- `subnormals`, `signed-zeros`, `extremes`, `constant`: edge cases, minmax calibration.
- `partial`: a 5 x 37 tensor, so blocks are partial along both axes.
- `random`, `random-absmean`: SplitMix64 (seed 0x51534348454D45), value = u * 2^k with u
  uniform in [-1, 1) on 24 bits and k uniform in [-8, 8].

## Checking an implementation

Run your quantizer on `input.npy` with the case's scheme (and scales, if given), then:

    qscheme check --scheme '<scheme>' --profile exact --input <case>/input.npy \
        --candidate your.bin                    # or Q.json, or codes .npy (+ --candidate-scales)
    qscheme check ... --candidate your_values.npy --candidate-kind dequantized
    # cases with given scales add: --scales <case>/scales.npy [--global 1]

Exit status 0 means bit-identical; 3 means different, with a diagnosis.

## Schemes

)";
  for (const std::string& t : schemes) s += "- `" + t + "` -> `" + dir_name(t) + "/`\n";
  return s;
}

}  // namespace

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float SplitMix64::symmetric_unit() {
  // 24 random bits: k in [0, 2^24), value (k - 2^23) / 2^23, exact in f32.
  const auto k = static_cast<std::int32_t>(next() >> 40);
  return static_cast<float>(k - (1 << 23)) / static_cast<float>(1 << 23);
}

std::vector<std::string> default_vector_schemes() {
  std::vector<std::string> out;
  for (const Preset& p : presets()) out.emplace_back(p.name);
  for (const char* s : {"q8s", "q8f:block[32]=f32", "q4f:packed-u32(0):block[4,4]=bf16", "q2s:packed-u32(0):block[8]=f16",
                        "q2f:block[16]=ue8m0", "e4m3:block[16]=f32", "e5m2", "e2m1:block[8]=ue4m3",
                        "q8s:block[32]=f16:tensor=f32", "q4s:packed-u32(1):block[2,8]=f16"}) {
    out.emplace_back(s);
  }
  return out;
}

// A stored scale pattern as an f32 value, its sign and infinity included (signed-max and
// overflowing scales of the recipes).
Result<float> scale_number(ScaleDtype d, std::uint32_t bits) {
  const reference::SignedScale s = reference::scale_of_pattern(d, bits);
  float v = std::numeric_limits<float>::infinity();
  if (!s.infinite) {
    const reference::Rational r = reference::to_rational(s.mag);
    v = reference::round_to_f32(r, reference::Overflow::infinity);
  }
  return s.negative ? -v : v;
}

Status export_vectors(const std::string& out_dir, const std::vector<std::string>& schemes, const Recipe* recipe,
                      const Progress& progress) {
  // Every scheme before any file: a bad one in the list leaves nothing behind.
  std::vector<Scheme> parsed;
  for (const std::string& text : schemes) {
    auto scheme = parse_scheme(text);
    if (!scheme) return scheme.status();
    QSCHEME_RETURN_IF_ERROR(validate_scheme(*scheme));
    if (recipe && !recipe_accepts(*recipe, *scheme)) {
      return {ErrorCode::invalid_argument, "recipe " + std::string(recipe->name) + " reproduces " +
                                               std::string(recipe->schemes) + ", not " + quote(text)};
    }
    parsed.push_back(*scheme);
  }
  auto out = io::OutputDir::create(out_dir);
  if (!out) return out.status();
  const std::string& dir = out->path();
  std::error_code ec;
  nlohmann::ordered_json index;
  index["generator"] = "qscheme vectors";
  index["seed"] = kSeed;
  index["cases"] = nlohmann::json::array();
  const std::vector<Case> all = cases();
  for (std::size_t k = 0; k < schemes.size(); ++k) {
    const std::string& text = schemes[k];
    const Scheme* scheme = &parsed[k];
    for (const Case& c : all) {
      if (progress) progress(k * all.size() + (&c - all.data()), schemes.size() * all.size());
      const fs::path folder = fs::path(dir) / dir_name(text) / c.name;
      fs::create_directories(folder, ec);
      if (ec) return {ErrorCode::io_error, "cannot create " + quote(folder.string()) + ": " + ec.message()};
      auto layout = make_layout(*scheme, c.shape);
      if (!layout) return layout.status();
      nlohmann::ordered_json e;
      e["dir"] = (fs::path(dir_name(text)) / c.name).generic_string();
      e["scheme"] = text;
      e["canonical"] = format_scheme(*scheme);
      e["case"] = c.name;
      e["about"] = c.about;
      e["shape"] = c.shape;
      auto in = io::npy::serialize_f32(c.shape, c.x);
      if (!in) return in.status();
      QSCHEME_RETURN_IF_ERROR(write_file(folder / "input.npy", *in));
      e["input"] = "input.npy";
      QuantizeOptions options;
      options.calibration = c.calibration;
      if (c.given_unit_scales) {
        GivenScales g;
        g.block.assign(layout->scales, 1.0f);
        if (scheme->two_level()) g.global = 1.0f;
        const std::vector<std::uint64_t> sshape{layout->scales};
        auto sb = io::npy::serialize_f32(sshape, g.block);
        if (!sb) return sb.status();
        QSCHEME_RETURN_IF_ERROR(write_file(folder / "scales.npy", *sb));
        e["given_scales"] = "scales.npy";
        if (g.global) e["given_global"] = 1.0;
        options.scales = std::move(g);
      } else {
        e["calibration"] = to_string(c.calibration);
      }
      nlohmann::ordered_json profiles;
      std::vector<std::pair<std::string, QuantizeOptions>> runs;
      if (recipe) {
        runs.emplace_back(std::string(recipe->name), recipe_options(*recipe, options));
      } else {
        for (Profile p : kAllProfiles) {
          QuantizeOptions o = options;
          o.profile = p;
          runs.emplace_back(std::string(to_string(p)), o);
        }
      }
      for (const auto& [pn, run_options] : runs) {
        nlohmann::ordered_json pe;
        auto q = reference::quantize(*scheme, c.shape, c.x, run_options);
        if (!q) {
          pe["error"] = to_code(q.status().code());
          profiles[pn] = pe;
          continue;
        }
        auto deq = reference::dequantize(*q);
        if (!deq) return deq.status();
        auto bytes = reference::encode(*q);
        if (!bytes) return bytes.status();
        // Q.json has no form for an infinite scale (ggml's f16 overflow): such a case has none.
        auto qj = io::qjson::write(*q);
        if (!qj && (!q->rules || qj.status().code() != ErrorCode::invalid_argument)) return qj.status();
        auto codes = npy_i32(c.shape, q->codes);
        if (!codes) return codes.status();
        std::vector<float> scale_values;
        for (std::uint32_t b : q->scale_bits) {
          auto v = scale_number(scheme->scale_dtype(), b);
          if (!v) return v.status();
          scale_values.push_back(*v);
        }
        const std::vector<std::uint64_t> sshape{scale_values.size()};
        auto scales = io::npy::serialize_f32(sshape, scale_values);
        if (!scales) return scales.status();
        auto dq = io::npy::serialize_f32(c.shape, *deq);
        if (!dq) return dq.status();
        QSCHEME_RETURN_IF_ERROR(write_file(folder / (pn + ".codes.npy"), *codes));
        QSCHEME_RETURN_IF_ERROR(write_file(folder / (pn + ".scales.npy"), *scales));
        QSCHEME_RETURN_IF_ERROR(write_file(folder / (pn + ".bin"), *bytes));
        QSCHEME_RETURN_IF_ERROR(write_file(folder / (pn + ".dequantized.npy"), *dq));
        if (qj) QSCHEME_RETURN_IF_ERROR(write_text(folder / (pn + ".q.json"), *qj));
        if (recipe && recipe->format == ByteFormat::ggml && ggml_layout(*scheme, c.shape).ok()) {
          auto gb = reference::encode(*q, ByteFormat::ggml);
          if (!gb) return gb.status();
          QSCHEME_RETURN_IF_ERROR(write_file(folder / (pn + ".ggml.bin"), *gb));
          pe["ggml_bytes"] = pn + ".ggml.bin";
        }
        pe["codes"] = pn + ".codes.npy";
        pe["scales"] = pn + ".scales.npy";
        pe["bytes"] = pn + ".bin";
        pe["dequantized"] = pn + ".dequantized.npy";
        if (qj) pe["qjson"] = pn + ".q.json";
        if (q->global_bits) {
          pe["global_bits"] = *q->global_bits;
          pe["global"] = static_cast<double>(qscheme::f32_from_bits(*q->global_bits));
        }
        profiles[pn] = pe;
      }
      e["profiles"] = profiles;
      index["cases"].push_back(e);
    }
  }
  if (recipe) index["recipe"] = std::string(recipe->name);
  QSCHEME_RETURN_IF_ERROR(write_text(fs::path(dir) / "index.json", index.dump(1) + "\n"));
  QSCHEME_RETURN_IF_ERROR(write_text(fs::path(dir) / "README.md", readme(schemes)));
  return out->commit();
}

}  // namespace qscheme::oracle
