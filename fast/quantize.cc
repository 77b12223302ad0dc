// The quantize driver: one pipeline for both outputs. The options resolve to a point of the rule
// space (points.hpp), the layout to a plan of L1-sized units (bytes_plan.hpp); the units stage
// (quantize_units.hpp) then quantizes unit by unit into the sink (sinks.hpp: Burn's bytes, or a
// QuantizedTensor's i32 codes), and whatever it declines, the whole-tensor stage
// (quantize_whole.hpp) computes or reports, into the same sink.
#include <optional>

#include "fast/bytes_plan.hpp"
#include "fast/f32_steps.hpp"
#include "fast/fast.hpp"
#include "fast/points.hpp"
#include "fast/quantize_units.hpp"
#include "fast/quantize_whole.hpp"
#include "fast/scales.hpp"
#include "fast/sinks.hpp"
#include "fast/ext_stage.hpp"
#include "scheme/fp_env.hpp"
#include "scheme/errors.hpp"

namespace qscheme::fast {
namespace {

// What a call fixes before its first pass over x.
struct Call {
  Layout l;
  detail::Point point;
  detail::BytesPlan p;
};

// The point options ask for (points.hpp), checked in the reference's order: layout, given
// scales, then the rules; then the layout against the input's size. With out_size (the bytes
// output), the layout and the output's size come first, as in quantize_to_bytes' contract.
Result<Call> prepare(const Scheme& scheme, Shape shape, std::size_t n, const QuantizeOptions& opt,
                     const std::size_t* out_size = nullptr) {
  std::optional<Layout> l;
  auto layout = [&]() -> Status {
    if (l) return {};
    auto lr = layout_for_values(scheme, shape, n);
    if (!lr) return lr.status();
    l = std::move(*lr);
    return {};
  };
  if (out_size) {
    QSCHEME_RETURN_IF_ERROR(layout());
    if (*out_size != l->total_bytes) {
      return Status(ErrorCode::size_mismatch, "out has room for " + std::to_string(*out_size) +
                                                  " bytes; the layout needs " + std::to_string(l->total_bytes));
    }
  }
  if (opt.rules && !profile_of(*opt.rules)) {
    QSCHEME_RETURN_IF_ERROR(layout());
    if (opt.scales) QSCHEME_RETURN_IF_ERROR(detail::check_given_scales(*opt.scales, *l, scheme.two_level()));
  }
  if (opt.scales && !opt.scales->zero_points.empty()) {
    // Zero points are affine mode's (the extension stage's): here they are an error, after the
    // scales' own.
    QSCHEME_RETURN_IF_ERROR(layout());
    QSCHEME_RETURN_IF_ERROR(detail::check_given_scales(*opt.scales, *l, scheme.two_level()));
    return errors::given_zero_point_count(opt.scales->zero_points.size(), l->zero_points, false);
  }
  Result<detail::Point> point = detail::point_of(scheme, opt);
  if (!point) return point.status();
  QSCHEME_RETURN_IF_ERROR(layout());
  if (opt.global_amax) {
    // The reference's order: given scales, the rules (a profile's own refusals too, which the
    // stages report otherwise), then the global amax.
    if (opt.scales) QSCHEME_RETURN_IF_ERROR(detail::check_given_scales(*opt.scales, *l, scheme.two_level()));
    QSCHEME_RETURN_IF_ERROR(validate_rules(rules_of(opt), scheme, opt.calibration, opt.scales.has_value()));
    QSCHEME_RETURN_IF_ERROR(check_global_amax(scheme, rules_of(opt), opt));
  }
  Call c{std::move(*l), std::move(*point), {}};
  c.p = detail::make_bytes_plan(scheme, c.l);
  return c;
}

template <class Sink>
Status run(const Scheme& scheme, const Call& c, const float* x, OutputPolicy policy, const Sink& sink) {
  const std::optional<detail::StepRecipe> step = detail::step_recipe(c.point);
  const detail::Units u =
      step ? detail::steps_units(*step, scheme, c.l, c.p, x, c.point.options.scales,
                                 policy, sink)
           : detail::quantize_units(scheme, c.l, c.p, x, c.point, policy, sink);
  if (u == detail::Units::done) return {};
  return sink.whole([&](std::int32_t* codes, std::uint32_t* scale_bits, std::uint32_t* global_bits) {
    return detail::quantize_whole(scheme, c.l, x, c.point, codes, scale_bits, global_bits);
  });
}

}  // namespace

Status quantize_into(const Scheme& scheme, Shape shape, const float* x, std::size_t n, const QuantizeOptions& options,
                     std::int32_t* codes, std::uint32_t* scale_bits, std::uint32_t* global_bits,
                     std::int32_t* zero_points) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  if (detail::extension_stage(scheme)) {
    return detail::ext_quantize(scheme, shape, x, n, options, OutputPolicy::single_pass,
                                {.codes = codes, .scale_bits = scale_bits, .global_bits = global_bits,
                                 .zero_points = zero_points});
  }
  const Result<Call> c = prepare(scheme, shape, n, options);
  if (!c) return c.status();
  // The arrays' contents are unspecified on error (fast.hpp): one pass.
  return run(scheme, *c, x, OutputPolicy::single_pass,
             detail::CodesSink(scheme, c->p, codes, scale_bits, global_bits));
}

Result<QuantizedTensor> quantize(const Scheme& scheme, Shape shape, std::span<const float> x,
                                 const QuantizeOptions& options) {
  auto lr = make_layout(scheme, shape);
  if (!lr) return lr.status();
  QuantizedTensor q;
  q.scheme = scheme;
  // A point that is a profile's is that profile, as in reference::quantize.
  q.profile = options.profile;
  if (options.rules) {
    if (const std::optional<Profile> p = profile_of(*options.rules)) {
      q.profile = *p;
    } else {
      q.profile = Profile::exact;
      q.rules = options.rules;
    }
  }
  q.shape.assign(shape.begin(), shape.end());
  if (x.size() == lr->elements) {
    q.codes.resize(lr->elements);
    q.scale_bits.resize(lr->scales);
    q.zero_points.resize(lr->zero_points);
  }
  std::uint32_t gb = 0;
  const Status st = quantize_into(scheme, shape, x.data(), x.size(), options, q.codes.data(), q.scale_bits.data(), &gb,
                                  q.zero_points.data());
  if (!st.ok()) return st;
  if (scheme.two_level()) q.global_bits = gb;
  return q;
}

Status quantize_to_bytes(const Scheme& scheme, Shape shape, const float* x, std::size_t n,
                         const QuantizeOptions& options, std::uint8_t* out, std::size_t out_size, OutputPolicy policy) {
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  if (detail::extension_stage(scheme)) {
    return detail::ext_quantize(scheme, shape, x, n, options, policy, {.bytes = out, .bytes_size = out_size});
  }
  const Result<Call> c = prepare(scheme, shape, n, options, &out_size);
  if (!c) return c.status();
  return run(scheme, *c, x, policy, detail::BytesSink(scheme, c->l, c->p, out));
}

Status quantize_to_bytes(const Scheme& scheme, Shape shape, const float* x, std::size_t n,
                         const QuantizeOptions& options, ByteFormat format, std::uint8_t* out, std::size_t out_size,
                         OutputPolicy policy) {
  if (format == ByteFormat::burn) return quantize_to_bytes(scheme, shape, x, n, options, out, out_size, policy);
  const FpEnvGuard fp_env;  // IEEE defaults for the call (scheme/fp_env.hpp)
  const Result<GgmlLayout> g = ggml_layout(scheme, shape);
  if (!g) {
    // What encode(quantize(...), ggml) reports: quantize's errors before the format's.
    const Result<QuantizedTensor> q = quantize(scheme, shape, std::span<const float>(x, n), options);
    return q ? g.status() : q.status();
  }
  if (out_size != g->total_bytes) {
    return Status(ErrorCode::size_mismatch, "out has room for " + std::to_string(out_size) +
                                                " bytes; ggml's blocks take " + std::to_string(g->total_bytes));
  }
  const Result<Call> c = prepare(scheme, shape, n, options);
  if (!c) return c.status();
  return run(scheme, *c, x, policy, detail::GgmlSink(*g, c->p, out));
}

}  // namespace qscheme::fast
