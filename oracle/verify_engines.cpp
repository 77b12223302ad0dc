#include "oracle/verify_engines.hpp"

#include <algorithm>
#include <map>

#include "fast/fast.hpp"
#include "oracle/edge_tensors.hpp"
#include "reference/reference.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"

namespace qscheme::oracle {

std::uint64_t EngineAgreement::disagreements() const {
  std::uint64_t d = 0;
  for (const auto& r : rows) {
    if (!r.informational) d += (r.checked[0] - r.agreed[0]) + (r.checked[1] - r.agreed[1]);
  }
  return d;
}

namespace {

// Code, index and message: both engines word each error the same (scheme/errors.hpp).
bool same_status(const Status& a, const Status& b) {
  return a.code() == b.code() && a.index() == b.index() && a.message() == b.message();
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace

EngineAgreement compare_engines(const Progress& progress) {
  EngineAgreement a;
  const char* kWhat[] = {"quantize status", "codes",      "scales",       "global scale",     "zero points",
                         "errors (code, index, message)",
                         "bytes (encode)",  "decode",     "dequantized bits", "corrupt decode",   "corrupt decode error (index, message)",
                         "bytes (quantize_to_bytes)", "bits (dequantize_from_bytes)"};
  enum { kStatus, kCodes, kScales, kGlobal, kZeroPoints, kErrors, kBytes, kDecode, kDeq, kCorrupt, kCorruptIndex, kFused,
         kFusedDeq, kRows };
  a.rows.resize(kRows);
  for (int i = 0; i < kRows; ++i) a.rows[i].what = kWhat[i];
  std::string context;
  std::map<std::string, int> kinds;  // the first disagreement of each kind (row and detail) is listed
  auto check = [&](int row, int profile, bool ok, const std::string& detail) {
    ++a.rows[row].checked[profile];
    if (ok) {
      ++a.rows[row].agreed[profile];
    } else if (!a.rows[row].informational && kinds[std::string(kWhat[row]) + detail]++ == 0 &&
               a.first_disagreements.size() < 20) {
      a.first_disagreements.push_back(std::string(kWhat[row]) + ": " + context + (detail.empty() ? "" : " (" + detail + ")"));
    }
  };
  auto status_text = [](const Status& st) {
    return std::string(to_code(st.code())) + " at index " +
           (st.index() == static_cast<std::size_t>(-1) ? std::string("none") : std::to_string(st.index())) + ": " +
           st.message();
  };
  // Burn's space, then qscheme's extension (its kinds, affine mode, per-axis scales).
  std::vector<Scheme> space = tuple_space();
  space.insert(space.end(), extension_space().begin(), extension_space().end());
  std::uint64_t done = 0;
  for (const Scheme& s : space) {
    if (progress) progress(done++, space.size());
    if (!validate_scheme(s).ok()) continue;
    ++a.tuples;
    const std::string text = format_scheme(s);
    for (const auto& shape : shape_set()) {
      auto layout = make_layout(s, shape);
      if (!layout) continue;
      ++a.pairs;
      std::uint64_t n = 1;
      for (auto d : shape) n *= d;
      const bool small = n <= 1024;
      // Large tensors: only the inputs kept at every size; absmean on those, minmax on all.
      struct Run {
        const EdgeInput* in;
        Calibration calibration;
      };
      const auto inputs = edge_inputs(s, *layout, 12345, small ? EdgeSet::all : EdgeSet::every_size);
      std::vector<Run> runs;
      for (const EdgeInput& in : inputs) {
        runs.push_back({&in, Calibration::minmax});
        if (in.every_size && !in.scales) runs.push_back({&in, Calibration::absmean});
      }
      for (const Run& run : runs) {
        const EdgeInput& in = *run.in;
        for (int p = 0; p < 2; ++p) {
          ++a.tensors;
          const Profile profile = p == 0 ? Profile::exact : Profile::burn;
          context = text + " " + shape_text(shape) + " " + in.name +
                    (run.calibration == Calibration::absmean ? " absmean" : "") + (p == 0 ? " exact" : " burn");
          QuantizeOptions o;
          o.profile = profile;
          o.calibration = run.calibration;
          o.scales = in.scales;
          const auto rq = reference::quantize(s, shape, in.x, o);
          const auto fq = fast::quantize(s, shape, in.x, o);
          // The fused bytes path, under both output policies: the reference's bytes, or its error
          // (and, untouched-on-error, out as it was).
          const auto rbytes = rq.ok() ? reference::encode(*rq) : Result<std::vector<std::uint8_t>>(rq.status());
          for (const auto policy : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
            std::vector<std::uint8_t> out(layout->total_bytes, 0xA5);
            const Status st = fast::quantize_to_bytes(s, shape, in.x.data(), in.x.size(), o, out.data(), out.size(), policy);
            const bool untouched = std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xA5; });
            const bool agree = rbytes.ok() ? st.ok() && out == *rbytes
                                           : !st.ok() && same_status(st, rbytes.status()) &&
                                                 (policy == fast::OutputPolicy::single_pass || untouched);
            check(kFused, p, agree,
                  std::string(policy == fast::OutputPolicy::single_pass ? "single pass: " : "untouched on error: ") +
                      (rbytes.ok() ? std::string("ok") : status_text(rbytes.status())) + " vs " +
                      (st.ok() ? std::string("ok") : status_text(st)));
          }
          check(kStatus, p, rq.ok() == fq.ok(),
                std::string(rq.ok() ? "ok" : to_code(rq.status().code())) + " vs " +
                    std::string(fq.ok() ? "ok" : to_code(fq.status().code())));
          if (!rq.ok() || !fq.ok()) {
            if (!rq.ok() && !fq.ok()) {
              check(kErrors, p, same_status(rq.status(), fq.status()),
                    status_text(rq.status()) + " vs " + status_text(fq.status()));
            }
            continue;
          }
          check(kCodes, p, rq->codes == fq->codes && rq->shape == fq->shape && rq->profile == fq->profile, "");
          check(kScales, p, rq->scale_bits == fq->scale_bits, "");
          check(kGlobal, p, rq->global_bits == fq->global_bits, "");
          if (s.affine()) check(kZeroPoints, p, rq->zero_points == fq->zero_points, "");
          const auto& rb = rbytes;
          const auto fb = fast::encode(*rq);
          check(kBytes, p, rb.ok() && fb.ok() && *rb == *fb, "");
          if (!rb.ok()) continue;
          const auto rd = reference::decode(s, shape, *rb, profile);
          const auto fd = fast::decode(s, shape, *rb, profile);
          check(kDecode, p, rd.ok() && fd.ok() && *rd == *fd && *fd == *rq, "");
          const auto ry = reference::dequantize(*rq);
          const auto fy = fast::dequantize(*rq);
          check(kDeq, p, ry.ok() && fy.ok() && same_f32_bits(*ry, *fy),
                ry.ok() && fy.ok() ? "" : ry.status().to_string() + " vs " + fy.status().to_string());
          for (const auto policy : {fast::OutputPolicy::untouched_on_error, fast::OutputPolicy::single_pass}) {
            std::vector<float> out(n);
            const Status st = fast::dequantize_from_bytes(s, shape, rb->data(), rb->size(), profile, out.data(), n, policy);
            check(kFusedDeq, p, ry.ok() && st.ok() && same_f32_bits(*ry, out),
                  ry.ok() && st.ok() ? "" : ry.status().to_string() + " vs " + st.to_string());
          }
          // Corrupt bytes: every byte 0xff, and one byte short; both engines must agree on the
          // outcome (status code, index and message, or the decoded tensor).
          if (small && !rb->empty()) {
            for (int variant = 0; variant < 2; ++variant) {
              std::vector<std::uint8_t> bad = *rb;
              if (variant == 0) std::fill(bad.begin(), bad.end(), 0xff);
              else bad.pop_back();
              const auto rbad = reference::decode(s, shape, bad, profile);
              const auto fbad = fast::decode(s, shape, bad, profile);
              const std::string detail = (rbad.ok() ? std::string("ok") : status_text(rbad.status())) + " vs " +
                                         (fbad.ok() ? std::string("ok") : status_text(fbad.status()));
              check(kCorrupt, p,
                    rbad.ok() == fbad.ok() && (rbad.ok() ? *rbad == *fbad : rbad.status().code() == fbad.status().code()),
                    detail);
              if (!rbad.ok() && !fbad.ok() && rbad.status().code() == fbad.status().code()) {
                check(kCorruptIndex, p, same_status(rbad.status(), fbad.status()), detail);
              }
            }
          }
        }
      }
    }
  }
  return a;
}

}  // namespace qscheme::oracle
