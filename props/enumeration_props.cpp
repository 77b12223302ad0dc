// The enumeration proof (not random): every tuple of tuple_space() on every shape of
// shape_set() is either supported -- both engines quantize, encode, decode and dequantize it and
// agree -- or rejected cleanly: every entry point (C++ reference, C++ fast, C API, and the CLI
// for one tuple per distinct error code) returns validate()'s error code, writes nothing to its
// outputs and neither crashes nor throws.
#include <boost/test/unit_test.hpp>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "fast/fast.hpp"
#include "fast/qscheme.h"
#include "reference/reference.hpp"
#include "scheme/layout.hpp"
#include "scheme/ostream.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"
#include "scheme/float_bits.hpp"

using namespace qscheme;

namespace {

std::string shape_str(const std::vector<std::uint64_t>& sh) {
  std::string s = "[";
  for (std::size_t i = 0; i < sh.size(); ++i) s += (i ? "," : "") + std::to_string(sh[i]);
  return s + "]";
}

std::uint64_t product(const std::vector<std::uint64_t>& sh) {
  std::uint64_t n = 1;
  for (auto e : sh) n *= e;
  return n;
}

// Small deterministic data: a few magnitudes, both signs, a zero.
std::vector<float> data_for(std::uint64_t n) {
  std::vector<float> x(n);
  for (std::uint64_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<int>((i * 7) % 11) - 5) * 0.375f;
  return x;
}

void write_npy(const std::filesystem::path& p, const std::vector<std::uint64_t>& shape, const std::vector<float>& x) {
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(p, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t hl = static_cast<std::uint16_t>(header.size());
  f.put(static_cast<char>(hl & 0xFF));
  f.put(static_cast<char>(hl >> 8));
  f << header;
  f.write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

constexpr std::uint8_t kCanary = 0xA5;
constexpr std::size_t kCanaryLen = 64;

}  // namespace

BOOST_AUTO_TEST_CASE(every_tuple_is_supported_or_rejected_cleanly) {
  const auto& tuples = tuple_space();
  const auto& shapes = shape_set();
  BOOST_REQUIRE_EQUAL(tuples.size(), 19656u);
  std::uint64_t accepted = 0, rejected = 0, tuples_supported = 0;
  std::map<ErrorCode, std::uint64_t> by_code;
  std::map<ErrorCode, std::pair<Scheme, std::vector<std::uint64_t>>> cli_sample;
  std::uint64_t failures = 0;
  auto fail = [&](const Scheme& s, const std::vector<std::uint64_t>& sh, const std::string& what) {
    if (++failures <= 20) BOOST_ERROR(format_scheme(s) << " on " << shape_str(sh) << ": " << what);
  };

  for (const Scheme& s : tuples) {
    const std::string text = format_scheme(s);
    if (validate_scheme(s).ok()) ++tuples_supported;
    for (const auto& sh : shapes) {
      const Status v = validate(s, sh);
      const std::vector<float> x = data_for(product(sh));
      try {
        if (v.ok()) {
          ++accepted;
          const auto r = reference::quantize(s, sh, x);
          const auto f = fast::quantize(s, sh, x);
          if (!r.ok() || !f.ok()) {
            fail(s, sh, "quantize failed: " + r.status().to_string() + " / " + f.status().to_string());
            continue;
          }
          if (!(*r == *f)) fail(s, sh, "engines differ on quantize");
          const auto rb = reference::encode(*r);
          const auto fb = fast::encode(*f);
          if (!rb.ok() || !fb.ok() || *rb != *fb) {
            fail(s, sh, "encode failed or differs");
            continue;
          }
          const auto rd = reference::decode(s, sh, *rb);
          const auto fd = fast::decode(s, sh, *fb);
          if (!rd.ok() || !fd.ok() || !(*rd == *r) || !(*fd == *f)) fail(s, sh, "decode failed or differs");
          const auto rx = reference::dequantize(*r);
          const auto fx = fast::dequantize(*f);
          if (!rx.ok() || !fx.ok() || rx->size() != x.size() ||
              !same_f32_bits(*rx, *fx)) {
            fail(s, sh, "dequantize failed or differs");
          }
          continue;
        }
        ++rejected;
        const ErrorCode code = v.code();
        ++by_code[code];
        if (!cli_sample.count(code)) cli_sample.emplace(code, std::make_pair(s, sh));
        auto expect = [&](const Status& got, const char* where) {
          if (got.code() != code) fail(s, sh, std::string(where) + " returned " + std::string(to_code(got.code())) +
                                                  ", validate says " + std::string(to_code(code)));
        };
        expect(reference::quantize(s, sh, x).status(), "reference::quantize");
        expect(fast::quantize(s, sh, x).status(), "fast::quantize");
        QuantizedTensor q;
        q.scheme = s;
        q.shape = sh;
        q.codes.assign(x.size(), 0);
        q.scale_bits.assign(1, 0);
        if (s.two_level()) q.global_bits = 0x3F800000u;
        expect(reference::dequantize(q).status(), "reference::dequantize");
        expect(fast::dequantize(q).status(), "fast::dequantize");
        expect(reference::encode(q).status(), "reference::encode");
        expect(fast::encode(q).status(), "fast::encode");
        const std::vector<std::uint8_t> bytes(16, 0);
        expect(reference::decode(s, sh, bytes).status(), "reference::decode");
        expect(fast::decode(s, sh, bytes).status(), "fast::decode");
        // Caller-owned buffers must stay untouched.
        std::vector<std::int32_t> codes(kCanaryLen, 0x5A5A5A5A);
        std::vector<std::uint32_t> sbits(kCanaryLen, 0x5A5A5A5A);
        std::uint32_t gbits = 0x5A5A5A5A;
        expect(fast::quantize_into(s, sh, x.data(), std::min<std::size_t>(x.size(), kCanaryLen), {}, codes.data(),
                                   sbits.data(), &gbits),
               "fast::quantize_into");
        if (codes != std::vector<std::int32_t>(kCanaryLen, 0x5A5A5A5A) ||
            sbits != std::vector<std::uint32_t>(kCanaryLen, 0x5A5A5A5A) || gbits != 0x5A5A5A5A) {
          fail(s, sh, "fast::quantize_into wrote to its outputs");
        }
        std::vector<float> fout(kCanaryLen, 1234.5f);
        expect(fast::dequantize_into(q, fout.data(), std::min<std::size_t>(x.size(), kCanaryLen)), "fast::dequantize_into");
        if (fout != std::vector<float>(kCanaryLen, 1234.5f)) fail(s, sh, "fast::dequantize_into wrote to its output");
        // C API: status code equal to the ErrorCode, outputs untouched.
        std::vector<std::uint8_t> out(kCanaryLen, kCanary);
        std::size_t out_len = 0xC0FFEE;
        std::uint64_t idx = 0;
        const int cq = qscheme_fast_quantize(text.c_str(), sh.data(), sh.size(), x.data(), x.size(), nullptr,
                                             out.data(), out.size(), &out_len, &idx);
        if (cq != static_cast<int>(code)) fail(s, sh, std::string("C quantize returned ") + qscheme_status_name(cq));
        if (out != std::vector<std::uint8_t>(kCanaryLen, kCanary) || out_len != 0xC0FFEE) {
          fail(s, sh, "C quantize wrote to its outputs");
        }
        std::vector<float> cf(kCanaryLen, 1234.5f);
        out_len = 0xC0FFEE;
        const int cd = qscheme_fast_dequantize(text.c_str(), sh.data(), sh.size(), bytes.data(), bytes.size(),
                                               QSCHEME_PROFILE_EXACT, cf.data(), cf.size(), &out_len, &idx);
        if (cd != static_cast<int>(code)) fail(s, sh, std::string("C dequantize returned ") + qscheme_status_name(cd));
        if (cf != std::vector<float>(kCanaryLen, 1234.5f) || out_len != 0xC0FFEE) {
          fail(s, sh, "C dequantize wrote to its outputs");
        }
        std::size_t nbytes = 0xC0FFEE;
        const int cs = qscheme_fast_bytes_size(text.c_str(), sh.data(), sh.size(), &nbytes, &idx);
        if (cs != static_cast<int>(code) || nbytes != 0xC0FFEE) fail(s, sh, "C bytes_size disagrees or wrote");
      } catch (const std::exception& e) {
        fail(s, sh, std::string("threw: ") + e.what());
      } catch (...) {
        fail(s, sh, "threw");
      }
    }
  }

  // The CLI, one (tuple, shape) per distinct error code: a process each.
  std::uint64_t cli_checked = 0;
#ifdef QSCHEME_CLI_PATH
  const auto dir = std::filesystem::temp_directory_path() / ("qscheme_enum_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const auto& [code, sample] : cli_sample) {
    const auto& [s, sh] = sample;
    const auto in = dir / "x.npy", out = dir / "out.bin", err = dir / "stderr.txt";
    std::filesystem::remove(out);
    write_npy(in, sh, data_for(product(sh)));
    const std::string cmd = std::string("'") + QSCHEME_CLI_PATH + "' quantize --scheme '" + format_scheme(s) +
                            "' --input '" + in.string() + "' --output '" + out.string() + "' 2>'" + err.string() +
                            "' >/dev/null";
    const int rc = std::system(cmd.c_str());
    const std::string msg = read_file(err);
    const std::string want = "error: " + std::string(to_code(code)) + ":";
    BOOST_CHECK_MESSAGE(rc != 0 && msg.find(want) != std::string::npos,
                        "CLI on " << format_scheme(s) << " " << shape_str(sh) << ": exit " << rc << ", stderr: " << msg
                                  << " (want " << want << ")");
    BOOST_CHECK_MESSAGE(!std::filesystem::exists(out), "CLI wrote " << out << " for a rejected tuple");
    ++cli_checked;
  }
  std::filesystem::remove_all(dir);
#endif

  std::cout << "enumeration: " << tuples.size() << " tuples (" << tuples_supported << " pass validate_scheme) x "
            << shapes.size() << " shapes = " << tuples.size() * shapes.size() << " pairs: " << accepted
            << " accepted (both engines quantize, encode, decode, dequantize, identical), " << rejected
            << " rejected cleanly by every entry point\n";
  for (const auto& [code, n] : by_code) std::cout << "  " << to_code(code) << ": " << n << "\n";
  std::cout << "  CLI processes checked: " << cli_checked << " (one per distinct error code)\n";
  BOOST_CHECK_EQUAL(failures, 0u);
  BOOST_CHECK_EQUAL(accepted + rejected, tuples.size() * shapes.size());
#ifdef QSCHEME_CLI_PATH
  BOOST_CHECK_EQUAL(cli_checked, by_code.size());
#endif
}
