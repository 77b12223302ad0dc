// The extension module qscheme._qscheme: quantize, decode, dequantize, validate, schemes,
// recipes and the quantized tensor type; check, hard_cases and stats are in oracle_calls.cpp.
// Every rule lives in the C++ libraries; this file converts arrays and raises errors.
#include <bit>
#include <cstring>
#include <limits>

#include "fast/fast.hpp"
#include "io/scale_numbers.hpp"
#include "python/src/binding.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"

namespace qscheme::python {

void raise(const Status& st) {
  py::object index = st.index() == kNoIndex ? py::none() : py::object(py::int_(st.index()));
  py::object err = py::module_::import("qscheme._errors")
                       .attr("make_error")(std::string(to_code(st.code())), st.message(), index);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(err.ptr())), err.ptr());
  throw py::error_already_set();
}

std::vector<std::uint64_t> shape_of(const py::array& a) {
  std::vector<std::uint64_t> shape;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) shape.push_back(static_cast<std::uint64_t>(a.shape(i)));
  return shape;
}

Request resolve(const std::optional<std::string>& scheme, const std::optional<std::string>& recipe,
                const std::optional<std::string>& profile, const std::string& calibration,
                const std::optional<F32Array>& scales, const std::optional<float>& global_scale,
                const std::optional<float>& global_amax, const std::string& engine) {
  Request rq;
  if (recipe && profile) {
    raise({ErrorCode::invalid_argument, "profile and recipe both choose the rules; give one (the profiles are "
                                        "recipes too: recipe='exact', 'burn' or 'onnx')"});
  }
  if (recipe) {
    rq.recipe = value_or_raise(find_recipe(*recipe));
    rq.scheme = value_or_raise(recipe_scheme(*rq.recipe, scheme.value_or("")));
    rq.format = rq.recipe->format;
  } else {
    if (!scheme) raise({ErrorCode::invalid_argument, "give a scheme (or a recipe, whose scheme is then the default)"});
    rq.scheme = value_or_raise(parse_scheme(*scheme));
  }
  const std::optional<Profile> p = profile_from_string(profile.value_or("exact"));
  if (!p) raise({ErrorCode::invalid_argument, "profile: '" + profile.value_or("") + "' is not " + profile_list()});
  rq.options.profile = *p;
  const std::optional<Calibration> c = calibration_from_string(calibration);
  if (!c) raise({ErrorCode::invalid_argument, "calibration: '" + calibration + "' is not minmax or absmean"});
  rq.options.calibration = *c;
  if (global_scale && !scales) raise({ErrorCode::invalid_argument, "global_scale is only meaningful with scales"});
  if (scales) {
    GivenScales given;
    given.block.assign(scales->data(), scales->data() + scales->size());
    given.global = global_scale;
    rq.options.scales = std::move(given);
  }
  rq.options.global_amax = global_amax;
  if (rq.recipe) rq.options = recipe_options(*rq.recipe, std::move(rq.options));
  rq.engine_named = !engine.empty();
  rq.engine = value_or_raise(oracle::find_engine(engine.empty() ? oracle::kDefaultEngine : engine));
  return rq;
}

ErrorCode code_of(const Status& s) { return s.code(); }

ByteFormat byte_format(const std::optional<std::string>& name, const Request& rq) {
  if (!name) return rq.format;
  const std::optional<ByteFormat> f = byte_format_from_string(*name);
  if (!f) raise({ErrorCode::invalid_argument, "byte_format: '" + *name + "' is not burn or ggml"});
  return *f;
}

Threads::Threads(const std::optional<int>& n) {
  if (!n) return;
  if (*n < 0) raise({ErrorCode::invalid_argument, "threads: " + std::to_string(*n) + " is negative; use 1 to 256, or 0 for all cores"});
  const unsigned before = fast::threads();
  ok_or_raise(fast::set_threads(static_cast<unsigned>(*n)));
  previous_ = before;
}

Threads::~Threads() {
  if (previous_) (void)fast::set_threads(*previous_);
}

namespace {

// A quantized tensor with what it needs to be written and read back: the engine that made it
// and the byte format of its recipe.
struct Quantized {
  QuantizedTensor q;
  Layout layout;
  const oracle::Engine* engine = nullptr;
  bool engine_named = false;
  ByteFormat format = ByteFormat::burn;
  std::string recipe;
};

struct Scales {
  py::array values;
  py::array bits;
};

std::vector<std::uint64_t> scale_grid(const Layout& l) {
  return l.blocks_per_dim;  // all ones for a per-tensor scheme: the one scale
}

// Read-only numpy views of memory that `owner` keeps alive.
template <class T>
py::array view(const std::vector<T>& v, const std::vector<std::uint64_t>& shape, py::handle owner) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  py::array_t<T> a(dims, v.data(), owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

Quantized make_quantized(QuantizedTensor q, const Request& rq) {
  Quantized out;
  out.layout = value_or_raise(make_layout(q.scheme, q.shape));
  out.q = std::move(q);
  out.engine = rq.engine;
  out.engine_named = rq.engine_named;
  out.format = rq.format;
  out.recipe = rq.recipe ? std::string(rq.recipe->name) : std::string(to_string(rq.options.profile));
  return out;
}

Quantized quantize(const F32Array& x, const std::optional<std::string>& scheme, const std::optional<std::string>& recipe,
                   const std::optional<std::string>& profile, const std::string& engine,
                   const std::optional<F32Array>& scales, const std::optional<float>& global_scale,
                   const std::optional<float>& global_amax, const std::string& calibration,
                   const std::optional<int>& threads) {
  Request rq = resolve(scheme, recipe, profile, calibration, scales, global_scale, global_amax, engine);
  const std::vector<std::uint64_t> shape = shape_of(x);
  const Threads t(threads);
  Result<QuantizedTensor> q = Status();
  {
    py::gil_scoped_release unlocked;
    q = on_engine(rq.engine, rq.engine_named, [&](const oracle::Engine& e) {
      return e.quantize(rq.scheme, shape, std::span<const float>(x.data(), x.size()), rq.options);
    });
  }
  return make_quantized(value_or_raise(std::move(q)), rq);
}

Quantized decode(const py::array_t<std::uint8_t, py::array::c_style>& bytes, const std::optional<std::string>& scheme,
                 const std::vector<std::uint64_t>& shape, const std::optional<std::string>& recipe,
                 const std::optional<std::string>& profile, const std::optional<std::string>& format,
                 const std::string& engine) {
  Request rq = resolve(scheme, recipe, profile, "minmax", std::nullopt, std::nullopt, std::nullopt, engine);
  const ByteFormat f = byte_format(format, rq);
  Result<QuantizedTensor> q = Status();
  {
    py::gil_scoped_release unlocked;
    q = on_engine(rq.engine, rq.engine_named, [&](const oracle::Engine& e) {
      return e.decode_as(rq.scheme, shape, std::span<const std::uint8_t>(bytes.data(), bytes.size()),
                         rules_of(rq.options), f);
    });
  }
  Request as_read = rq;
  as_read.format = f;
  return make_quantized(value_or_raise(std::move(q)), as_read);
}

py::array dequantize_quantized(const Quantized& self, const std::optional<int>& threads) {
  const Threads t(threads);
  Result<std::vector<float>> y = Status();
  {
    py::gil_scoped_release unlocked;
    const oracle::Engine* engine = self.engine;
    y = on_engine(engine, self.engine_named, [&](const oracle::Engine& e) { return e.dequantize(self.q); });
  }
  return owning_array(value_or_raise(std::move(y)), self.q.shape);
}

// Bytes straight to values: the engines' fused path for Burn's layout under a profile (no
// tensor of i32 codes), else decode and dequantize.
py::array dequantize_bytes(const py::array_t<std::uint8_t, py::array::c_style>& bytes,
                           const std::optional<std::string>& scheme, const std::vector<std::uint64_t>& shape,
                           const std::optional<std::string>& recipe, const std::optional<std::string>& profile,
                           const std::optional<std::string>& format, const std::string& engine,
                           const std::optional<int>& threads) {
  Request rq = resolve(scheme, recipe, profile, "minmax", std::nullopt, std::nullopt, std::nullopt, engine);
  const ByteFormat f = byte_format(format, rq);
  const std::optional<Profile> p = profile_of(rules_of(rq.options));
  const Threads t(threads);
  const std::span<const std::uint8_t> in(bytes.data(), bytes.size());
  if (p && f == ByteFormat::burn) {
    const Layout l = value_or_raise(make_layout(rq.scheme, shape));
    std::vector<py::ssize_t> dims(shape.begin(), shape.end());
    py::array_t<float> out(dims);
    Status st;
    {
      py::gil_scoped_release unlocked;
      st = on_engine(rq.engine, rq.engine_named, [&](const oracle::Engine& e) {
        return e.dequantize_bytes(rq.scheme, shape, in, *p, std::span<float>(out.mutable_data(), l.elements));
      });
    }
    ok_or_raise(st);
    return out;
  }
  Result<std::vector<float>> y = Status();
  {
    py::gil_scoped_release unlocked;
    y = on_engine(rq.engine, rq.engine_named, [&](const oracle::Engine& e) {
      auto q = e.decode_as(rq.scheme, shape, in, rules_of(rq.options), f);
      return q ? e.dequantize(*q) : Result<std::vector<float>>(q.status());
    });
  }
  return owning_array(value_or_raise(std::move(y)), shape);
}

py::bytes to_bytes(const Quantized& self, const std::optional<std::string>& format) {
  ByteFormat f = self.format;
  if (format) {
    const std::optional<ByteFormat> named = byte_format_from_string(*format);
    if (!named) raise({ErrorCode::invalid_argument, "format: '" + *format + "' is not burn or ggml"});
    f = *named;
  }
  Result<std::vector<std::uint8_t>> b = Status();
  {
    py::gil_scoped_release unlocked;
    const oracle::Engine* engine = self.engine;
    b = on_engine(engine, self.engine_named, [&](const oracle::Engine& e) { return e.encode_as(self.q, f); });
  }
  const std::vector<std::uint8_t> bytes = value_or_raise(std::move(b));
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

Scales scales_of(py::object self_obj) {
  const Quantized& self = self_obj.cast<const Quantized&>();
  const io::ScaleNumbers numbers(self.q.scheme.scale_dtype());
  std::vector<float> values;
  values.reserve(self.q.scale_bits.size());
  for (std::uint32_t b : self.q.scale_bits) {
    values.push_back(numbers.valid(b) ? numbers.value(b) : std::numeric_limits<float>::quiet_NaN());
  }
  const std::vector<std::uint64_t> grid = scale_grid(self.layout);
  return {owning_array(std::move(values), grid), view(self.q.scale_bits, grid, self_obj)};
}

py::dict layout_dict(const Scheme& s, const Layout& l) {
  py::dict d;
  d["scheme"] = format_scheme(s);
  d["valid"] = true;
  d["shape"] = l.shape;
  d["block"] = l.block;
  d["blocks_per_dim"] = l.blocks_per_dim;
  d["scales"] = l.scales;
  d["scale_dtype"] = std::string(to_string(s.scale_dtype()));
  d["two_level"] = s.two_level();
  d["storage_elements"] = l.storage_elements;
  d["storage_element_bytes"] = l.storage_element_bytes;
  d["packed_axis"] = l.packed_axis;
  d["value_bytes"] = l.value_bytes;
  d["scale_bytes"] = l.scale_bytes;
  d["global_bytes"] = l.global_bytes;
  d["bytes"] = l.total_bytes;
  return d;
}

py::dict validate_text(const std::string& text, const std::optional<std::vector<std::uint64_t>>& shape) {
  const Scheme s = value_or_raise(parse_scheme(text));
  if (!shape) {
    ok_or_raise(validate_scheme(s));
    py::dict d;
    d["scheme"] = format_scheme(s);
    d["valid"] = true;
    return d;
  }
  return layout_dict(s, value_or_raise(make_layout(s, *shape)));
}

py::list schemes(bool presets_only) {
  py::list out;
  if (presets_only) {
    for (const Preset& p : presets()) {
      py::dict d;
      d["name"] = std::string(p.name);
      d["scheme"] = std::string(p.expansion);
      d["about"] = std::string(p.about);
      out.append(d);
    }
    return out;
  }
  // Burn's tuples, then qscheme's extension beyond Burn (docs/SEMANTICS.md sections 13-15).
  const std::pair<const char*, const std::vector<Scheme>*> spaces[] = {{"burn", &tuple_space()},
                                                                       {"extension", &extension_space()}};
  for (const auto& [space, tuples] : spaces) {
    for (const Scheme& s : *tuples) {
      const Status st = validate_scheme(s);
      py::dict d;
      d["scheme"] = format_scheme(s);
      d["space"] = space;
      d["supported"] = st.ok();
      d["error"] = st.ok() ? py::object(py::none()) : py::object(py::str(std::string(to_code(st.code()))));
      d["message"] = st.ok() ? py::object(py::none()) : py::object(py::str(st.message()));
      out.append(d);
    }
  }
  return out;
}

py::list recipe_list() {
  py::list out;
  for (const Recipe& r : recipes()) {
    py::dict d;
    d["name"] = std::string(r.name);
    d["schemes"] = std::string(r.schemes);
    d["rules"] = format_rules(r.rules);
    d["byte_format"] = std::string(to_string(r.format));
    d["source"] = std::string(r.source);
    d["notes"] = std::string(r.notes);
    out.append(d);
  }
  return out;
}

py::list error_codes() {
  py::list out;
  for (int c = static_cast<int>(ErrorCode::ok) + 1; c <= static_cast<int>(kLastErrorCode); ++c) {
    out.append(std::string(to_code(static_cast<ErrorCode>(c))));
  }
  return out;
}

}  // namespace
}  // namespace qscheme::python

PYBIND11_MODULE(_qscheme, m) {
  using namespace qscheme;
  using namespace qscheme::python;
  m.doc() = "qscheme's engines and oracle; use the qscheme package, which wraps this module";
  // All cores, as the command line: the output never depends on the count.
  (void)fast::set_threads(0);

  py::class_<Scales>(m, "Scales", "The stored block scales: their values (f32) and bit patterns, on the block grid")
      .def_readonly("values", &Scales::values)
      .def_readonly("bits", &Scales::bits)
      .def("__repr__", [](const Scales& s) { return "Scales(values=" + py::repr(s.values).cast<std::string>() + ")"; });

  py::class_<Quantized>(m, "Quantized", "A quantized tensor: codes, stored scales and the global, as the engines made them")
      .def_property_readonly("scheme", [](const Quantized& q) { return format_scheme(q.q.scheme); })
      .def_property_readonly("shape", [](const Quantized& q) { return py::tuple(py::cast(q.q.shape)); })
      .def_property_readonly("recipe", [](const Quantized& q) { return q.recipe; })
      .def_property_readonly("rules", [](const Quantized& q) { return format_rules(rules_of(q.q)); })
      .def_property_readonly("engine", [](const Quantized& q) { return std::string(q.engine->name); })
      .def_property_readonly("codes", [](py::object self) {
        const Quantized& q = self.cast<const Quantized&>();
        return view(q.q.codes, q.q.shape, self);
      }, "one code per element (int32, read-only): integer kinds the signed value, float kinds the bit pattern")
      .def_property_readonly("scales", &scales_of)
      .def_property_readonly("global_bits", [](const Quantized& q) -> py::object {
        return q.q.global_bits ? py::object(py::int_(*q.q.global_bits)) : py::object(py::none());
      })
      .def_property_readonly("global_scale", [](const Quantized& q) -> py::object {
        return q.q.global_bits ? py::object(py::float_(std::bit_cast<float>(*q.q.global_bits))) : py::object(py::none());
      })
      .def("to_bytes", &to_bytes, py::arg("format") = py::none(),
           "the serialized bytes: Burn's layout, or ggml's blocks (format='ggml'; default the recipe's own)")
      .def("dequantize", &dequantize_quantized, py::kw_only(), py::arg("threads") = py::none())
      .def("__repr__", [](const Quantized& q) {
        std::string shape;
        for (std::uint64_t d : q.q.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
        return "Quantized(scheme='" + format_scheme(q.q.scheme) + "', shape=(" + shape + "), recipe='" + q.recipe + "')";
      });

  m.def("quantize", &quantize, py::arg("x"), py::arg("scheme"), py::kw_only(), py::arg("recipe"), py::arg("profile"),
        py::arg("engine"), py::arg("scales"), py::arg("global_scale"), py::arg("global_amax"), py::arg("calibration"),
        py::arg("threads"));
  m.def("decode", &decode, py::arg("data"), py::arg("scheme"), py::arg("shape"), py::kw_only(), py::arg("recipe"),
        py::arg("profile"), py::arg("byte_format"), py::arg("engine"));
  m.def("dequantize_bytes", &dequantize_bytes, py::arg("data"), py::arg("scheme"), py::arg("shape"), py::kw_only(),
        py::arg("recipe"), py::arg("profile"), py::arg("byte_format"), py::arg("engine"), py::arg("threads"));
  m.def("validate", &validate_text, py::arg("scheme"), py::arg("shape") = py::none());
  m.def("schemes", &schemes, py::arg("presets") = false);
  m.def("recipes", &recipe_list);
  m.def("error_codes", &error_codes);
  m.def("threads", [] { return fast::threads(); }, "the fast engine's thread count (every core from import on)");
  m.def(
      "warm_up",
      [] {
        const py::gil_scoped_release unlocked;
        fast::warm_up();
      },
      "runs the fast engine's kernels once (a few milliseconds), so that the first real call does not pay for their "
      "first run");
  bind_oracle(m);
}
