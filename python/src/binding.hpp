// What the extension's two translation units share: Status to Python exception, arrays in and
// out without copies, the rules a call names (scheme, recipe or profile, calibration, given
// scales) and the engine that runs them.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oracle/engine.hpp"
#include "scheme/byte_format.hpp"
#include "scheme/layout.hpp"
#include "scheme/quantized.hpp"
#include "scheme/recipes.hpp"
#include "scheme/status.hpp"

namespace qscheme::python {

namespace py = pybind11;

using F32Array = py::array_t<float, py::array::c_style>;

// Raises the Python exception for st (qscheme._errors.make_error: the class of st's code, with
// the code, the message and the index). Call with the GIL held.
[[noreturn]] void raise(const Status& st);

inline void ok_or_raise(const Status& st) {
  if (!st.ok()) raise(st);
}

template <class T>
T value_or_raise(Result<T> r) {
  if (!r.ok()) raise(r.status());
  return std::move(r).value();
}

std::vector<std::uint64_t> shape_of(const py::array& a);

// A numpy array that owns v (no copy), in the given shape.
template <class T>
py::array_t<T> owning_array(std::vector<T>&& v, const std::vector<std::uint64_t>& shape) {
  auto* held = new std::vector<T>(std::move(v));
  py::capsule owner(held, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  return py::array_t<T>(dims, held->data(), owner);
}

// What a call names: the scheme (or the recipe's default), the rules (a recipe's, else a
// profile's), calibration and given scales, the recipe's byte format, and the engine to run.
struct Request {
  Scheme scheme;
  const Recipe* recipe = nullptr;
  QuantizeOptions options;
  ByteFormat format = ByteFormat::burn;
  const oracle::Engine* engine = nullptr;
  bool engine_named = false;  // the call named it; else the fast engine, the reference where it refuses
};

// Raises on a bad name or combination. engine: empty for the fast engine (the reference taking
// over any call the fast engine refuses as unsupported-profile: on_engine), or a name.
Request resolve(const std::optional<std::string>& scheme, const std::optional<std::string>& recipe,
                const std::optional<std::string>& profile, const std::string& calibration,
                const std::optional<F32Array>& scales, const std::optional<float>& global_scale,
                const std::optional<float>& global_amax, const std::string& engine);

ErrorCode code_of(const Status& s);
template <class T>
ErrorCode code_of(const Result<T>& r) {
  return r.status().code();
}

// f(engine) on the request's engine; when the call named none and the fast engine refuses the
// point (unsupported-profile: a recipe, or a use of one, it does not run), on the reference,
// which gives the same bytes and values wherever both run. `engine` becomes the one that ran.
template <class F>
auto on_engine(const oracle::Engine*& engine, bool named, F&& f) {
  auto r = f(*engine);
  if (!named && code_of(r) == ErrorCode::unsupported_profile) {
    if (auto reference = oracle::find_engine("reference"); reference.ok() && *reference != engine) {
      engine = *reference;
      r = f(*engine);
    }
  }
  return r;
}

// --byte-format's choice: the given name, else the recipe's own format.
ByteFormat byte_format(const std::optional<std::string>& name, const Request& rq);

// Sets the fast engine's thread count for the life of the object (none: keep it), and puts
// the previous count back.
class Threads {
 public:
  explicit Threads(const std::optional<int>& n);
  ~Threads();
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  std::optional<unsigned> previous_;
};

// The bindings of oracle_calls.cpp: check, hard_cases, stats.
void bind_oracle(py::module_& m);

}  // namespace qscheme::python
