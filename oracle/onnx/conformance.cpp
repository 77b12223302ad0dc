// run_conformance(): decode each case with the generated protobuf classes, map it onto a scheme
// (conformance.hpp), run both engines under Profile::onnx and compare bit for bit with the
// expected output, which is data produced by the ONNX reference implementation.
#include "oracle/onnx/conformance.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <type_traits>

#include "fast/fast.hpp"
#include "fast/output_dtype.hpp"
#include "onnx_subset.pb.h"
#include "reference/reference.hpp"
#include "reference/values.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/printable.hpp"
#include "scheme/text.hpp"

namespace qscheme::oracle {
namespace {

namespace fs = std::filesystem;

// ONNX TensorProto.DataType values (onnx.proto).
enum DataType : int {
  kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kFloat16 = 10, kBfloat16 = 16,
  kE4M3FN = 17, kE4M3FNUZ = 18, kE5M2 = 19, kE5M2FNUZ = 20, kUint4 = 21, kInt4 = 22, kFloat4E2M1 = 23,
  kUint2 = 25, kInt2 = 26,
};

std::string type_name(int t) {
  switch (t) {
    case kFloat: return "float";
    case kUint8: return "uint8";
    case kInt8: return "int8";
    case kUint16: return "uint16";
    case kInt16: return "int16";
    case kInt32: return "int32";
    case kFloat16: return "float16";
    case kBfloat16: return "bfloat16";
    case kE4M3FN: return "float8e4m3fn";
    case kE4M3FNUZ: return "float8e4m3fnuz";
    case kE5M2: return "float8e5m2";
    case kE5M2FNUZ: return "float8e5m2fnuz";
    case kUint4: return "uint4";
    case kInt4: return "int4";
    case kFloat4E2M1: return "float4e2m1";
    case kUint2: return "uint2";
    case kInt2: return "int2";
    default: return "type " + std::to_string(t);
  }
}

// The qscheme value kind of an ONNX quantized type, or nullopt.
std::optional<Value> value_of(int t) {
  switch (t) {
    case kInt8: return Value::q8f;
    case kInt4: return Value::q4f;
    case kInt2: return Value::q2f;
    case kUint8: return Value::u8;
    case kUint4: return Value::u4;
    case kUint2: return Value::u2;
    case kInt16: return Value::i16;
    case kUint16: return Value::u16;
    case kE4M3FN: return Value::e4m3;
    case kE5M2: return Value::e5m2;
    case kFloat4E2M1: return Value::e2m1;
    default: return std::nullopt;
  }
}

int bits_of(int t) {
  switch (t) {
    case kUint4: case kInt4: case kFloat4E2M1: return 4;
    case kUint2: case kInt2: return 2;
    case kUint16: case kInt16: case kFloat16: case kBfloat16: return 16;
    case kFloat: case kInt32: return 32;
    default: return 8;
  }
}
bool is_signed_int(int t) { return t == kInt8 || t == kInt16 || t == kInt4 || t == kInt2 || t == kInt32; }

// A decoded tensor: dims and one raw field per element (bit pattern for float types, the
// sign-extended value for signed integers).
struct Tensor {
  int type = 0;
  std::vector<std::uint64_t> dims;
  std::vector<std::int64_t> v;
  std::uint64_t count() const {
    std::uint64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
  }
  float f32(std::size_t i) const { return qscheme::f32_from_bits(static_cast<std::uint32_t>(v[i])); }
};

Result<std::string> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status(ErrorCode::io_error, "cannot open " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<Tensor> read_tensor(const fs::path& p) {
  auto bytes = slurp(p);
  if (!bytes) return bytes.status();
  qscheme_onnx::TensorProto tp;
  if (!tp.ParseFromString(*bytes)) return Status(ErrorCode::corrupt_bytes, p.string() + ": not a TensorProto");
  Tensor t;
  t.type = tp.data_type();
  for (auto d : tp.dims()) t.dims.push_back(static_cast<std::uint64_t>(d));
  const std::uint64_t n = t.count();
  const int bits = bits_of(t.type);
  const bool sign = is_signed_int(t.type);
  auto field = [&](std::uint32_t raw) -> std::int64_t {
    if (!sign) return raw;
    const std::uint32_t m = bits == 32 ? 0xFFFFFFFFu : ((1u << bits) - 1);
    const std::uint32_t f = raw & m;
    const bool neg = bits < 32 && ((f >> (bits - 1)) & 1);
    return neg ? static_cast<std::int64_t>(f) - (std::int64_t{1} << bits) : static_cast<std::int64_t>(static_cast<std::int32_t>(f));
  };
  if (tp.has_raw_data()) {
    // Little-endian, sub-byte types packed low bits first.
    const std::string& r = tp.raw_data();
    if (static_cast<std::uint64_t>(r.size()) * 8 < n * bits) return Status(ErrorCode::corrupt_bytes, p.string() + ": raw_data too short");
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t bit = i * bits;
      std::uint32_t raw = 0;
      if (bits >= 8) {
        for (int b = 0; b < bits / 8; ++b) raw |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(r[bit / 8 + b])) << (8 * b);
      } else {
        raw = (static_cast<std::uint8_t>(r[bit / 8]) >> (bit % 8)) & ((1u << bits) - 1);
      }
      t.v.push_back(field(raw));
    }
  } else if (t.type == kFloat) {
    if (static_cast<std::uint64_t>(tp.float_data_size()) != n) return Status(ErrorCode::corrupt_bytes, p.string() + ": float_data count");
    for (float f : tp.float_data()) t.v.push_back(qscheme::f32_bits(f));
  } else {
    // int32_data: one element per entry for 8/16-bit types; sub-byte types keep one packed byte
    // per entry (two 4-bit or four 2-bit elements, element 0 in the low bits).
    const int per = bits < 8 ? 8 / bits : 1;
    const int width = bits < 8 ? bits : 32;
    const std::uint64_t need = (n + per - 1) / per;
    if (static_cast<std::uint64_t>(tp.int32_data_size()) != need) {
      return Status(ErrorCode::corrupt_bytes, p.string() + ": int32_data count");
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto entry = static_cast<std::uint32_t>(tp.int32_data(static_cast<int>(i / per)));
      const std::uint32_t raw = per == 1 ? entry : (entry >> ((i % per) * width)) & ((1u << width) - 1);
      t.v.push_back(per == 1 && sign ? static_cast<std::int64_t>(static_cast<std::int32_t>(entry)) : field(raw));
    }
  }
  return t;
}

struct Node {
  std::string op;
  int nodes = 1;  // nodes in the graph (an `_expanded` case is its function's body)
  bool dynamic_body = false;  // the graph is DynamicQuantizeLinear's function body
  std::int64_t axis = 1;
  std::int64_t block_size = 0;
  std::optional<std::int64_t> output_dtype;
  std::int64_t saturate = 1;
  bool precision = false;
};

// ONNX defines DynamicQuantizeLinear by a function body (onnx/defs/quantization/defs.cc): the
// range [min(0, ReduceMin x), max(0, ReduceMax x)], scale = range / 255, zero point =
// Cast<uint8>(Round(Clip(0 - min / scale, 0, 255))), then QuantizeLinear. Its `_expanded` node
// tests run that body over the one-node cases' data, so a graph that is exactly this body (these
// ops in this order, the constants 0 and 255, the cast to uint8) is the operator and runs as it;
// any other graph stays skipped.
bool is_dynamic_quantize_body(const qscheme_onnx::GraphProto& g) {
  static const char* const kBody[] = {"Constant", "Constant", "ReduceMin", "Min", "ReduceMax", "Max",
                                      "Sub", "Div", "Div", "Sub", "Clip", "Round", "Cast",
                                      "Identity", "Identity", "QuantizeLinear"};
  if (g.node_size() != static_cast<int>(std::size(kBody))) return false;
  for (int i = 0; i < g.node_size(); ++i) {
    if (g.node(i).op_type() != kBody[i]) return false;
  }
  auto constant_is = [&](int i, float want) {
    for (const auto& a : g.node(i).attribute()) {
      if (a.name() != "value" || !a.has_t()) continue;
      const auto& t = a.t();
      float got = 0;
      if (t.float_data_size() == 1) got = t.float_data(0);
      else if (t.raw_data().size() == sizeof(float)) std::memcpy(&got, t.raw_data().data(), sizeof got);
      else return false;
      return t.data_type() == kFloat && got == want;
    }
    return false;
  };
  bool cast_to_u8 = false;
  for (const auto& a : g.node(12).attribute()) cast_to_u8 |= a.name() == "to" && a.i() == kUint8;
  return constant_is(0, 0.0f) && constant_is(1, 255.0f) && cast_to_u8;
}

Result<Node> read_model(const fs::path& p) {
  auto bytes = slurp(p);
  if (!bytes) return bytes.status();
  qscheme_onnx::ModelProto m;
  if (!m.ParseFromString(*bytes) || m.graph().node_size() < 1) {
    return Status(ErrorCode::corrupt_bytes, p.string() + ": not a ModelProto with a node");
  }
  const auto& nd = m.graph().node(0);
  Node n;
  n.op = nd.op_type();
  n.nodes = m.graph().node_size();
  n.dynamic_body = is_dynamic_quantize_body(m.graph());
  for (const auto& a : nd.attribute()) {
    if (a.name() == "axis") n.axis = a.i();
    else if (a.name() == "block_size") n.block_size = a.i();
    else if (a.name() == "output_dtype") n.output_dtype = a.i();
    else if (a.name() == "saturate") n.saturate = a.i();
    else if (a.name() == "precision") n.precision = true;
  }
  return n;
}

// The scheme for value v, x dims and the scale tensor's granularity; a reason when there is none.
struct Mapping {
  std::optional<Scheme> scheme;
  std::string reason;
};

Mapping map_scheme(Value v, const std::vector<std::uint64_t>& xd, const Tensor& scale, const Node& node) {
  Mapping m;
  Scheme s;
  s.value = v;
  if (scale.count() == 1 && node.block_size == 0) {  // per-tensor (a [1]-shaped scale included)
    m.scheme = s;
    return m;
  }
  const auto rank = static_cast<std::int64_t>(xd.size());
  const std::int64_t axis = node.axis < 0 ? node.axis + rank : node.axis;
  if (axis < 0 || axis >= rank) {
    m.reason = "axis out of range";
    return m;
  }
  // Right-aligned qscheme blocks: per-axis on axis k = extent 1 on k, full extent elsewhere (one
  // block per index along k); blocked = extent B on k, 1 elsewhere.
  std::vector<std::uint64_t> ext(xd.size());
  for (std::size_t i = 0; i < xd.size(); ++i) {
    if (node.block_size == 0) ext[i] = static_cast<std::int64_t>(i) == axis ? 1 : xd[i];
    else ext[i] = static_cast<std::int64_t>(i) == axis ? static_cast<std::uint64_t>(node.block_size) : 1;
  }
  std::vector<std::uint8_t> e8;
  for (auto e : ext) {
    if (e > 255) {
      m.reason = fmt::format("needs a block extent of {} (> 255, Burn's u8 block extents)", e);
      return m;
    }
    e8.push_back(static_cast<std::uint8_t>(e == 0 ? 1 : e));
  }
  auto bs = BlockSize::make(e8);
  if (!bs) {
    m.reason = "needs a block of more than 5 dimensions";
    return m;
  }
  s.block = BlockLevel{*bs, ScaleDtype::f32};
  auto l = make_layout(s, xd);
  if (!l || l->scales != scale.count()) {
    m.reason = "the scale's shape does not match the mapped block grid";
    return m;
  }
  m.scheme = s;
  return m;
}

bool all_zero(const Tensor& t) {
  return std::all_of(t.v.begin(), t.v.end(), [&](std::int64_t v) {
    // Float zero points: +0 or -0 bit patterns.
    if (t.type == kE4M3FN || t.type == kE5M2) return (v & 0x7F) == 0;
    if (t.type == kFloat4E2M1) return (v & 0x7) == 0;
    return v == 0;
  });
}

// DynamicQuantizeLinear (x f32 -> y u8, y_scale f32, y_zero_point u8): u8 affine per tensor,
// calibrated under profile onnx, which computes the operator's f32 steps (docs/SEMANTICS.md
// section 14). All three outputs must match.
// Whether an engine gave a result to compare: unsupported-engine marks the case as refused by
// the fast engine; any other error becomes the case's detail (the first one only).
template <class T>
bool has_result(const Result<T>& r, const char* engine, ConformanceCase& c) {
  if (r) return true;
  if (r.status().code() == ErrorCode::unsupported_engine) {
    c.fast_unsupported = true;
  } else if (c.detail.empty()) {
    c.detail = std::string(engine) + ": " + r.status().to_string();
  }
  return false;
}

ConformanceCase run_dynamic(const fs::path& dir, ConformanceCase c) {
  auto x = read_tensor(dir / "test_data_set_0" / "input_0.pb");
  if (!x) {
    c.reason = "unreadable: " + x.status().to_string();
    return c;
  }
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) {
    auto t = read_tensor(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
    if (!t) {
      c.reason = "unreadable: " + t.status().to_string();
      return c;
    }
    out.push_back(std::move(*t));
  }
  if (x->type != kFloat || out[0].type != kUint8 || out[1].type != kFloat || out[2].type != kUint8) {
    c.reason = "DynamicQuantizeLinear takes float and gives uint8, float, uint8";
    return c;
  }
  Scheme s;
  s.value = Value::u8;
  s.mode = Mode::affine;
  c.expressible = true;
  c.scheme = format_scheme(s);
  if (out[0].count() != x->count() || out[1].count() != 1 || out[2].count() != 1) {
    c.detail = "output counts: y must match x, y_scale and y_zero_point hold one value";
    return c;
  }
  std::vector<float> xs;
  for (std::size_t i = 0; i < x->count(); ++i) xs.push_back(x->f32(i));
  QuantizeOptions o;
  o.profile = Profile::onnx;
  auto check = [&](const Result<QuantizedTensor>& q, const char* engine) {
    if (!has_result(q, engine, c)) return false;
    if (q->scale_bits.size() != 1 || q->scale_bits[0] != static_cast<std::uint32_t>(out[1].v[0])) {
      if (c.detail.empty()) c.detail = fmt::format("{}: y_scale {} expected {}", engine, qscheme::f32_from_bits(q->scale_bits.at(0)), out[1].f32(0));
      return false;
    }
    if (q->zero_points.size() != 1 || q->zero_points[0] != out[2].v[0]) {
      if (c.detail.empty()) c.detail = fmt::format("{}: y_zero_point {} expected {}", engine, q->zero_points.at(0), out[2].v[0]);
      return false;
    }
    for (std::size_t i = 0; i < q->codes.size(); ++i) {
      if (q->codes[i] != out[0].v[i]) {
        if (c.detail.empty()) c.detail = fmt::format("{}: element {}: code {} expected {}", engine, i, q->codes[i], out[0].v[i]);
        return false;
      }
    }
    return true;
  };
  c.reference_passed = check(reference::quantize(s, x->dims, xs, o), "reference");
  c.fast_passed = check(fast::quantize(s, x->dims, xs, o), "fast");
  return c;
}

ConformanceCase run_case(const fs::path& dir) {
  ConformanceCase c;
  c.name = dir.filename().string();
  auto fail = [&](const Status& st) {
    c.reason = "unreadable: " + st.to_string();
    return c;
  };
  auto node = read_model(dir / "model.onnx");
  if (!node) return fail(node.status());
  c.op = node->op;
  if (node->dynamic_body) {
    c.op = "DynamicQuantizeLinear";
    return run_dynamic(dir, c);
  }
  if (node->nodes != 1) {
    // An `_expanded` case is an operator's function body, over the data of its one-node case.
    c.skipped = true;
    c.op = "graph";
    c.reason = fmt::format("a graph of {} nodes: qscheme runs one-node quantization cases", node->nodes);
    return c;
  }
  const bool dynamic = c.op == "DynamicQuantizeLinear";
  if (c.op != "QuantizeLinear" && c.op != "DequantizeLinear" && !dynamic) {
    c.skipped = true;
    c.reason = "not a quantization operator";
    return c;
  }
  if (dynamic) return run_dynamic(dir, c);
  std::vector<Tensor> in;
  for (int i = 0; i < 3; ++i) {
    const fs::path p = dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    auto t = read_tensor(p);
    if (!t) return fail(t.status());
    in.push_back(std::move(*t));
  }
  auto out = read_tensor(dir / "test_data_set_0" / "output_0.pb");
  if (!out) return fail(out.status());
  if (in.size() < 2) {
    c.reason = "fewer than two inputs";
    return c;
  }
  const Tensor& x = in[0];
  const Tensor& scale = in[1];
  const Tensor* zp = in.size() > 2 ? &in[2] : nullptr;
  const bool quantize = c.op == "QuantizeLinear";
  // The quantized type: Q's output (zero point type, else output_dtype, else uint8), DQ's input.
  int qtype = quantize ? (zp ? zp->type : static_cast<int>(node->output_dtype.value_or(kUint8))) : x.type;
  if (quantize && out->type != qtype) qtype = out->type;
  const std::optional<Value> v = value_of(qtype);
  if (!v) {
    c.reason = type_name(qtype) + ": qscheme has no " + type_name(qtype) + " kind";
    return c;
  }
  // A float16 or bfloat16 scale is carried as the f32 of the same value (exact): ONNX's
  // reference multiplies in float32 and rounds the product to the output type afterwards.
  if (scale.type != kFloat && scale.type != kFloat16 && scale.type != kBfloat16) {
    c.reason = type_name(scale.type) + " scale: qscheme's onnx profile takes float, float16 or bfloat16 scales";
    return c;
  }
  if (quantize && (x.type != kFloat || scale.type != kFloat)) {
    c.reason = type_name(x.type) + " input to QuantizeLinear: qscheme quantizes f32";
    return c;
  }
  std::optional<OutputDtype> out_dtype;
  if (!quantize) {
    if (out->type == kFloat) out_dtype = OutputDtype::f32;
    else if (out->type == kFloat16) out_dtype = OutputDtype::f16;
    else if (out->type == kBfloat16) out_dtype = OutputDtype::bf16;
    if (!out_dtype) {
      c.reason = type_name(out->type) + " output: qscheme dequantizes to f32, f16 or bf16";
      return c;
    }
  }
  // A non-zero zero point maps onto affine mode (qscheme's extension), one per scale.
  const bool affine = zp && !all_zero(*zp);
  if (affine && info(*v).is_float) {
    c.reason = "non-zero zero point of a float type (affine mode takes integer kinds)";
    return c;
  }
  if (affine && zp->count() != scale.count()) {
    c.reason = "the zero point's shape differs from the scale's";
    return c;
  }
  if (node->saturate != 1 && (qtype == kE4M3FN || qtype == kE5M2)) {
    c.reason = "saturate=0 (qscheme casts saturate)";
    return c;
  }
  if (node->precision) {
    c.reason = "precision attribute";
    return c;
  }
  Mapping m = map_scheme(*v, x.dims, scale, *node);
  if (!m.scheme) {
    c.reason = m.reason;
    return c;
  }
  std::vector<std::int32_t> zero_points;
  if (affine) {
    m.scheme->mode = Mode::affine;
    for (std::int64_t z : zp->v) zero_points.push_back(static_cast<std::int32_t>(z));
  }
  c.expressible = true;
  c.scheme = format_scheme(*m.scheme);
  if (out->count() != x.count()) {
    c.detail = "output count differs from input count";
    return c;
  }
  std::vector<float> scales;
  for (std::size_t j = 0; j < scale.count(); ++j) {
    if (scale.type == kFloat) {
      scales.push_back(scale.f32(j));
      continue;
    }
    const auto bits = static_cast<std::uint32_t>(scale.v[j]);
    auto v = reference::scale_value(scale.type == kFloat16 ? ScaleDtype::f16 : ScaleDtype::bf16, bits);
    if (!v) {
      c.detail = "scale " + std::to_string(j) + ": " + v.status().to_string();
      return c;
    }
    scales.push_back(v->f32);
  }
  if (quantize) {
    std::vector<float> xs;
    for (std::size_t i = 0; i < x.count(); ++i) xs.push_back(x.f32(i));
    QuantizeOptions o;
    o.profile = Profile::onnx;
    o.scales = GivenScales{scales, std::nullopt, zero_points};
    auto check = [&](const Result<QuantizedTensor>& q, const char* engine) {
      if (!has_result(q, engine, c)) return false;
      for (std::size_t i = 0; i < q->codes.size(); ++i) {
        if (q->codes[i] != out->v[i]) {
          if (c.detail.empty()) c.detail = fmt::format("{}: element {}: code {} expected {}", engine, i, q->codes[i], out->v[i]);
          return false;
        }
      }
      return true;
    };
    c.reference_passed = check(reference::quantize(*m.scheme, x.dims, xs, o), "reference");
    c.fast_passed = check(fast::quantize(*m.scheme, x.dims, xs, o), "fast");
  } else {
    QuantizedTensor q;
    q.scheme = *m.scheme;
    q.profile = Profile::onnx;
    q.shape = x.dims;
    for (std::int64_t code : x.v) q.codes.push_back(static_cast<std::int32_t>(code));
    for (float s : scales) q.scale_bits.push_back(qscheme::f32_bits(s));
    q.zero_points = zero_points;
    // Each output's bits against the node test's: f32 values, or f16/bf16 patterns.
    auto check = [&](const auto& y, const char* engine) {
      if (!has_result(y, engine, c)) return false;
      for (std::size_t i = 0; i < y->size(); ++i) {
        const auto v = (*y)[i];
        if constexpr (std::is_same_v<decltype(v), const float>) {
          if (qscheme::f32_bits(v) == static_cast<std::uint32_t>(out->v[i])) continue;
          if (c.detail.empty()) c.detail = fmt::format("{}: element {}: {} expected {}", engine, i, v, out->f32(i));
        } else {
          if (v == static_cast<std::uint16_t>(out->v[i])) continue;
          if (c.detail.empty()) {
            c.detail = fmt::format("{}: element {}: {} 0x{:04x} expected 0x{:04x}", engine, i, to_string(*out_dtype), v,
                                   static_cast<std::uint16_t>(out->v[i]));
          }
        }
        return false;
      }
      return true;
    };
    if (*out_dtype == OutputDtype::f32) {
      c.reference_passed = check(reference::dequantize(q), "reference");
      c.fast_passed = check(fast::dequantize(q), "fast");
    } else {
      c.scheme += " -> " + std::string(to_string(*out_dtype));
      c.reference_passed = check(reference::dequantize_16(q, *out_dtype), "reference");
      c.fast_passed = check(fast::dequantize_16(q, *out_dtype), "fast");
    }
  }
  return c;
}

}  // namespace

int ConformanceReport::run() const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.expressible; }));
}
int ConformanceReport::passed() const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.passed(); }));
}
int ConformanceReport::reference_only() const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.reference_only(); }));
}
int ConformanceReport::skipped() const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.skipped; }));
}
int ConformanceReport::not_expressible() const { return static_cast<int>(cases.size()) - run() - skipped(); }

Result<ConformanceReport> run_conformance(const std::string& dir) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status(ErrorCode::io_error, quote(dir) + " is not a directory");
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_", 0) == 0) folders.push_back(e.path());
  }
  if (folders.empty()) return Status(ErrorCode::io_error, quote(dir) + " holds no test_* case folders");
  std::sort(folders.begin(), folders.end());
  ConformanceReport r;
  for (const fs::path& f : folders) r.cases.push_back(run_case(f));
  return r;
}

std::string conformance_table(const ConformanceReport& r) {
  std::string out = fmt::format("{:<42} {:<17} {:<9} {}\n", "case", "op", "result", "scheme / reason");
  for (const auto& c : r.cases) {
    std::string result = c.skipped       ? "skip"
                         : !c.expressible ? "n/a"
                         : c.passed()     ? "pass"
                         : c.reference_only() ? "pass-ref"
                                              : "FAIL";
    std::string what = c.expressible ? c.scheme : c.reason;
    if (c.reference_only()) what += "  (the fast engine: unsupported-engine)";
    else if (c.expressible && !c.passed()) what += "  (" + c.detail + ")";
    out += fmt::format("{:<42} {:<17} {:<9} {}\n", c.name, c.op, result, what);
  }
  out += fmt::format(
      "cases {}: run {}, passed {} (reference and fast), {} by the reference only (the fast engine refuses them: "
      "unsupported-engine), not expressible {}, skipped {} (not quantization cases)\n",
      r.cases.size(), r.run(), r.passed(), r.reference_only(), r.not_expressible(), r.skipped());
  return out;
}

}  // namespace qscheme::oracle
