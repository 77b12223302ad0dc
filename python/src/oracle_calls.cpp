// The oracle in Python: check (the report is the JSON `qscheme check --json` prints, parsed by
// the package, and its text), hard_cases (oracle/edge_tensors) and stats (oracle/stats).
#include <bit>

#include "oracle/candidate.hpp"
#include "oracle/check.hpp"
#include "oracle/edge_tensors.hpp"
#include "oracle/stats.hpp"
#include "python/src/binding.hpp"
#include "scheme/text.hpp"

namespace qscheme::python {
namespace {

using I32Array = py::array_t<std::int32_t, py::array::c_style>;
using U32Array = py::array_t<std::uint32_t, py::array::c_style>;
using U8Array = py::array_t<std::uint8_t, py::array::c_style>;

template <class T>
std::vector<T> copy_of(const py::array_t<T, py::array::c_style>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

// The candidate, from exactly one of: codes (with optional scale values or bit patterns and a
// global), serialized bytes, dequantized values.
oracle::Candidate candidate_of(const Request& rq, const std::vector<std::uint64_t>& shape, const std::optional<I32Array>& codes,
                               const std::optional<F32Array>& scale_values, const std::optional<U32Array>& scale_bits,
                               const std::optional<float>& global_scale, const std::optional<U8Array>& bytes,
                               ByteFormat format, const std::optional<F32Array>& values) {
  oracle::Candidate c;
  if (bytes) {
    return value_or_raise(oracle::candidate_from_bytes(rq.scheme, shape, copy_of(*bytes), rules_of(rq.options), format));
  }
  if (values) {
    c.kind = oracle::CandidateKind::dequantized;
    c.values = copy_of(*values);
    c.shape = shape_of(*values);
    return c;
  }
  if (!codes) raise({ErrorCode::invalid_argument, "give the candidate: codes, bytes or dequantized values"});
  c.kind = oracle::CandidateKind::quantized;
  c.codes = copy_of(*codes);
  c.shape = shape_of(*codes);
  if (scale_bits) c.scale_bits = copy_of(*scale_bits);
  if (scale_values) {
    std::vector<std::uint32_t> bits;
    bits.reserve(scale_values->size());
    for (py::ssize_t i = 0; i < scale_values->size(); ++i) {
      auto b = oracle::candidate_scale_bits(rq.scheme.scale_dtype(), scale_values->data()[i]);
      if (!b) raise({b.status().code(), "candidate scales: " + b.status().message()});
      bits.push_back(*b);
    }
    c.scale_bits = std::move(bits);
  }
  if (global_scale) c.global_bits = std::bit_cast<std::uint32_t>(*global_scale);
  return c;
}

// (json, text) of the report.
py::tuple check(const F32Array& x, const std::optional<std::string>& scheme, const std::optional<std::string>& recipe,
                const std::optional<std::string>& profile, const std::string& calibration,
                const std::optional<F32Array>& scales, const std::optional<float>& global_scale,
                const std::optional<float>& global_amax, const std::optional<I32Array>& codes, const std::optional<F32Array>& candidate_scales,
                const std::optional<U32Array>& candidate_scale_bits, const std::optional<float>& candidate_global,
                const std::optional<U8Array>& bytes, const std::optional<std::string>& byte_format_name,
                const std::optional<F32Array>& values, const std::optional<std::size_t>& max_shown,
                const std::optional<int>& threads) {
  const Request rq = resolve(scheme, recipe, profile, calibration, scales, global_scale, global_amax, "");
  oracle::CheckRequest request;
  request.scheme = rq.scheme;
  request.shape = shape_of(x);
  request.options = rq.options;
  if (rq.recipe) request.recipe = rq.recipe->name;
  request.max_shown = max_shown;
  const ByteFormat format = byte_format(byte_format_name, rq);
  const oracle::Candidate c = candidate_of(rq, request.shape, codes, candidate_scales, candidate_scale_bits,
                                           candidate_global, bytes, format, values);
  request.x.assign(x.data(), x.data() + x.size());
  const Threads t(threads);
  Result<oracle::CheckReport> r = Status();
  {
    py::gil_scoped_release unlocked;
    r = oracle::check(request, c);
  }
  const oracle::CheckReport report = value_or_raise(std::move(r));
  return py::make_tuple(oracle::to_json(report), oracle::to_text(report));
}

// (json, [dequantized values per scheme, in the sorted order]).
py::tuple stats(const F32Array& x, const std::vector<std::string>& schemes, const std::string& profile,
                const std::string& calibration, const std::optional<int>& threads) {
  QuantizeOptions options;
  const std::optional<Profile> p = profile_from_string(profile);
  if (!p) raise({ErrorCode::invalid_argument, "profile: '" + profile + "' is not " + profile_list()});
  options.profile = *p;
  const std::optional<Calibration> c = calibration_from_string(calibration);
  if (!c) raise({ErrorCode::invalid_argument, "calibration: '" + calibration + "' is not minmax or absmean"});
  options.calibration = *c;
  const std::vector<std::uint64_t> shape = shape_of(x);
  const Threads t(threads);
  Result<std::vector<oracle::SchemeStats>> r = Status();
  {
    py::gil_scoped_release unlocked;
    r = oracle::scheme_stats(schemes, shape, std::span<const float>(x.data(), x.size()), options);
  }
  std::vector<oracle::SchemeStats> rows = value_or_raise(std::move(r));
  const std::string json = oracle::stats_json(rows);
  py::list values;
  for (oracle::SchemeStats& s : rows) values.append(owning_array(std::move(s.dequantized), shape));
  return py::make_tuple(json, oracle::stats_text(rows), values);
}

// oracle/edge_tensors' inputs for this scheme and shape: [(name, x, block scales or None,
// global or None)].
py::list hard_cases(const std::string& scheme, const std::vector<std::uint64_t>& shape, std::uint32_t seed) {
  const Scheme s = value_or_raise(parse_scheme(scheme));
  const Layout l = value_or_raise(make_layout(s, shape));
  std::vector<oracle::EdgeInput> inputs;
  {
    py::gil_scoped_release unlocked;
    inputs = oracle::edge_inputs(s, l, seed);
  }
  py::list out;
  for (oracle::EdgeInput& e : inputs) {
    py::object scales = py::none(), global = py::none();
    if (e.scales) {
      scales = owning_array(std::move(e.scales->block), l.blocks_per_dim);
      if (e.scales->global) global = py::float_(*e.scales->global);
    }
    out.append(py::make_tuple(e.name, owning_array(std::move(e.x), l.shape), scales, global));
  }
  return out;
}

}  // namespace

void bind_oracle(py::module_& m) {
  m.def("check", &check, py::arg("x"), py::arg("scheme"), py::kw_only(), py::arg("recipe"), py::arg("profile"),
        py::arg("calibration"), py::arg("scales"), py::arg("global_scale"), py::arg("global_amax"), py::arg("codes"),
        py::arg("candidate_scales"),
        py::arg("candidate_scale_bits"), py::arg("candidate_global"), py::arg("bytes"), py::arg("byte_format"),
        py::arg("values"), py::arg("max_shown"), py::arg("threads"));
  m.def("hard_cases", &hard_cases, py::arg("scheme"), py::arg("shape"), py::arg("seed"));
  m.def("split_schemes", &oracle::split_schemes, py::arg("text"));
  m.def("stats", &stats, py::arg("x"), py::arg("schemes"), py::kw_only(), py::arg("profile"), py::arg("calibration"),
        py::arg("threads"));
}

}  // namespace qscheme::python
