// Q.json: a quantized tensor as readable JSON (docs/QJSON.md is the format's specification):
//
//   {
//    "scheme": "q8s:block[4]=ue4m3:tensor=f32",
//    "profile": "exact",
//    "shape": [8],
//    "codes": [0,25,51,76,102,127,-128,-1],
//    "block_scales": [0.5,0.125],
//    "global_scale": 3.0,
//    "bytes": "0019334c667f80ff302000004040"
//   }
//
// Both directions stream: the writer formats from Burn's serialized bytes into a sink in pieces
// of about 1 MiB, the reader turns the text, read in pieces, straight into those bytes. Neither
// holds the text, a document tree or a tensor of i32 codes, so a file of any size costs about
// its serialized bytes in memory.
//
// Reading checks everything: JSON itself, unknown, duplicate or missing keys and wrong JSON types
// (invalid-argument), the scheme (malformed-scheme and validate()'s codes), the shape (an extent
// past 2^63 - 1 is shape-overflow, as for .npy), the code and scale counts (size-mismatch),
// codes the scheme cannot produce and scales that are not exactly a storable value of their
// dtype (corrupt-bytes), and that "bytes", when present, is exactly the encoding of codes and
// scales (corrupt-bytes, index = first differing byte). "profile", "rules" and "bytes" may be
// omitted (profile: exact). Errors come in the order the text meets them.
//
// "rules" (after "profile" when written) carries a point of the rule space that is not a
// profile's (scheme/rules.hpp format_rules; "profile" is then "exact"): the codes and scales
// accepted are those the point produces (code_allowed, scale_allowed), so a scale is written
// with its sign under signed-scale rules (ggml q4_0). An infinite scale (ggml's f16 overflow)
// has no Q.json form: the writer refuses it (write the bytes instead). "rules" must come before
// "codes" and "block_scales", as the writer puts it, so that they are checked as they are read.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/json_reader.hpp"
#include "scheme/quantized.hpp"
#include "scheme/rules.hpp"
#include "scheme/status.hpp"
#include "scheme/validate.hpp"

namespace qscheme::io::qjson {

// What a Q.json file says, with codes and scales in Burn's serialized layout (reference::encode).
struct Document {
  Scheme scheme;
  Profile profile = Profile::exact;
  // The point of the rule space when it is not a profile's (then profile is exact).
  std::optional<Rules> rules;
  std::vector<std::uint64_t> shape;
  std::vector<std::uint8_t> bytes;
};

// Where written text goes, piece by piece (io::OutputFile::write fits).
using Sink = std::function<Status(std::span<const std::uint8_t>)>;

// Writes the Q.json text of the serialized tensor `bytes` (scheme, shape) to `sink`, ending in a
// newline. The bytes are checked first, with decode()'s errors (size-mismatch, corrupt-bytes in
// decode's order): nothing reaches the sink for invalid bytes. A sink error stops the writing
// and is returned.
Status write(const Scheme& scheme, Profile profile, Shape shape, std::span<const std::uint8_t> bytes, const Sink& sink);
// The same under any point of the rule space: "profile" names a profile's point, "rules" any
// other. Codes and scales are checked against the point (code_allowed, scale_allowed);
// invalid-argument for an infinite scale, which JSON cannot write.
Status write(const Scheme& scheme, const Rules& rules, Shape shape, std::span<const std::uint8_t> bytes,
             const Sink& sink);

// The Q.json text of q (under q's rules). Fails with encode()'s errors for an invalid q.
Result<std::string> write(const QuantizedTensor& q);

// Reads a Q.json text from `source`. `text_size` is the text's length in bytes, an upper bound
// that lets the reader refuse a shape the text cannot hold before allocating for it.
Result<Document> read(const json::Source& source, std::uint64_t text_size);
// Reads the Q.json file at path (io-error when it cannot be read).
Result<Document> read_file(const std::string& path);
// Reads a Q.json text in memory as a QuantizedTensor.
Result<QuantizedTensor> read(std::string_view text);

// The exact value of a stored scale pattern of dtype d as an f32 (corrupt-bytes for a pattern
// that is not a storable scale).
Result<float> scale_to_float(ScaleDtype d, std::uint32_t bits);
// The pattern of dtype d whose value is exactly v; corrupt-bytes when there is none (v not on
// d's grid, out of range, negative, -0, NaN or inf).
Result<std::uint32_t> float_to_scale_bits(ScaleDtype d, float v);

}  // namespace qscheme::io::qjson
