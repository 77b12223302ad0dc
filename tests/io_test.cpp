// File formats of the command line: .npy (io/npy.hpp) and Q.json (io/qjson.hpp), plus the
// all-or-nothing file writes (io/file_io.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "reference/pack.hpp"
#include "reference/reference.hpp"
#include "scheme/errors.hpp"
#include "scheme/float_bits.hpp"
#include "scheme/layout.hpp"
#include "scheme/space.hpp"
#include "scheme/text.hpp"
#include "scheme/validate.hpp"
#include "io/file_io.hpp"
#include "io/npy.hpp"
#include "io/qjson.hpp"
#include "io/scale_numbers.hpp"

using namespace qscheme;
using namespace qscheme::io;
using Bytes = std::vector<std::uint8_t>;

namespace {

void expect_code(const Status& st, ErrorCode code) {
  BOOST_TEST(to_code(st.code()) == to_code(code), st.to_string());
  BOOST_TEST(!st.message().empty());
}

// A .npy file with an arbitrary header text and payload, as a writer other than ours makes it.
Bytes npy_file(const std::string& header, const Bytes& payload, int major = 1) {
  Bytes out{0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(major), 0};
  const std::size_t n = header.size();
  if (major == 1) {
    out.push_back(static_cast<std::uint8_t>(n));
    out.push_back(static_cast<std::uint8_t>(n >> 8));
  } else {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::string header(const std::string& descr, const std::string& shape, const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

Bytes f32_payload(std::initializer_list<float> values) {
  Bytes out;
  for (float v : values) {
    const auto b = qscheme::f32_bits(v);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(b >> (8 * i)));
  }
  return out;
}

Scheme scheme_of(const std::string& text) {
  auto s = parse_scheme(text);
  BOOST_REQUIRE_MESSAGE(s.ok(), text);
  return *s;
}

// A random valid quantized tensor (codes and scales straight from their validity rules).
QuantizedTensor random_q(const Scheme& s, const std::vector<std::uint64_t>& shape, std::mt19937_64& rng) {
  const Layout l = make_layout(s, shape).value();
  QuantizedTensor q;
  q.scheme = s;
  q.shape = shape;
  q.profile = rng() % 2 ? Profile::burn : Profile::exact;
  const ValueInfo& vi = info(s.value);
  for (std::uint64_t i = 0; i < l.elements; ++i) {
    std::int32_t c;
    do {
      c = vi.is_float ? static_cast<std::int32_t>(rng() % (1u << vi.bits))
                      : vi.lo + static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(vi.hi - vi.lo + 1));
    } while (qscheme::code_problem(s.value, c));
    q.codes.push_back(c);
  }
  const auto scale = [&](ScaleDtype d) {
    const int width = info(d).bytes * 8;
    std::uint32_t b;
    do b = static_cast<std::uint32_t>(rng()) & (width == 32 ? ~0u : (1u << width) - 1);
    while (qscheme::scale_problem(d, b));
    return b;
  };
  for (std::uint64_t i = 0; i < l.scales; ++i) q.scale_bits.push_back(scale(s.scale_dtype()));
  if (s.two_level()) q.global_bits = scale(ScaleDtype::f32);
  for (std::uint64_t i = 0; s.affine() && i < l.scales; ++i) {
    q.zero_points.push_back(vi.lo + static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(vi.hi - vi.lo + 1)));
  }
  return q;
}

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("qscheme_io_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// A two-level tensor whose ue4m3 scales (0.5, 0.125) and global (3.0) print as short numbers.
QuantizedTensor two_level_example() {
  QuantizedTensor t;
  t.scheme = scheme_of("q8f:block[4]=ue4m3:tensor=f32");
  t.shape = {8};
  t.codes = {0, 25, 51, 76, 102, 127, -128, -1};
  t.scale_bits = {0x30, 0x20};
  t.global_bits = qscheme::f32_bits(3.0f);
  return t;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// .npy

BOOST_AUTO_TEST_CASE(npy_round_trips_every_rank_and_bit_pattern) {
  std::mt19937_64 rng(1);
  const std::vector<std::vector<std::uint64_t>> shapes{{},        {0},       {1},          {7},       {3, 5},
                                                       {5, 0},    {0, 5},    {2, 3, 4},    {1, 1, 1, 1, 1},
                                                       {2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1}, {2, 2, 2, 2, 2, 2, 2, 2}};
  for (const auto& shape : shapes) {
    std::uint64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<float> values(n);
    for (auto& v : values) v = qscheme::f32_from_bits(static_cast<std::uint32_t>(rng()));  // NaNs, -0, subnormals
    if (n > 0) values[0] = -0.0f;
    auto bytes = npy::serialize_f32(shape, values);
    BOOST_REQUIRE(bytes.ok());
    BOOST_TEST((bytes->size() - 4 * n) % 64 == 0u);  // data starts on a 64-byte boundary
    auto a = npy::parse(*bytes);
    BOOST_REQUIRE_MESSAGE(a.ok(), a.status().to_string());
    BOOST_TEST((a->dtype == npy::Dtype::f32));
    BOOST_TEST(a->shape == shape, boost::test_tools::per_element());
    BOOST_REQUIRE(a->f32.size() == n);
    for (std::size_t i = 0; i < n; ++i) {
      BOOST_TEST(qscheme::f32_bits(a->f32[i]) == qscheme::f32_bits(values[i]));
    }
  }
  // The exact header text NumPy writes for the common cases.
  const auto scalar = npy::serialize_f32({}, std::vector<float>{1.0f}).value();
  BOOST_TEST(std::string(scalar.begin() + 10, scalar.begin() + 65) ==
             "{'descr': '<f4', 'fortran_order': False, 'shape': (), }");
  const auto vec = npy::serialize_f32(std::vector<std::uint64_t>{3}, std::vector<float>{1, 2, 3}).value();
  BOOST_TEST(std::string(vec.begin() + 10, vec.begin() + 67) ==
             "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }");
  BOOST_TEST(vec[127] == '\n');
  // serialize_f32 refuses a shape that disagrees with the values.
  expect_code(npy::serialize_f32(std::vector<std::uint64_t>{2}, std::vector<float>{1}).status(), ErrorCode::invalid_argument);
}

BOOST_AUTO_TEST_CASE(npy_reads_other_writers_headers) {
  // Versions 2.0 and 3.0, double quotes, no trailing comma, no padding, Python 2 longs, keys in
  // another order.
  const Bytes payload = f32_payload({1.5f, -2.0f});
  for (int major : {1, 2, 3}) {
    auto a = npy::parse(npy_file(header("<f4", "(2,)"), payload, major));
    BOOST_REQUIRE_MESSAGE(a.ok(), a.status().to_string());
    BOOST_TEST(a->f32 == (std::vector<float>{1.5f, -2.0f}), boost::test_tools::per_element());
  }
  for (const std::string h : {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}",
                              "{'shape': (2L,), 'fortran_order': False, 'descr': '<f4'}",
                              "{'descr':'<f4','fortran_order':False,'shape':(1,2)}   \n"}) {
    auto a = npy::parse(npy_file(h, payload));
    BOOST_TEST(a.ok(), h << ": " << a.status().to_string());
  }
}

BOOST_AUTO_TEST_CASE(npy_reads_integer_arrays) {
  auto i32 = npy::parse(npy_file(header("<i4", "(3,)"), {0xFF, 0xFF, 0xFF, 0xFF, 5, 0, 0, 0, 0, 0, 0, 0x80}));
  BOOST_REQUIRE(i32.ok());
  BOOST_TEST((i32->dtype == npy::Dtype::i32));
  BOOST_TEST(i32->ints == (std::vector<std::int64_t>{-1, 5, INT32_MIN}), boost::test_tools::per_element());
  auto u32 = npy::parse(npy_file(header("<u4", "(2,)"), {0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 0, 0}));
  BOOST_REQUIRE(u32.ok());
  BOOST_TEST(u32->ints == (std::vector<std::int64_t>{4294967295ll, 0x201}), boost::test_tools::per_element());
  auto i8 = npy::parse(npy_file(header("|i1", "(2, 2)"), {0x80, 0x7F, 0xFF, 0}));
  BOOST_REQUIRE(i8.ok());
  BOOST_TEST(i8->ints == (std::vector<std::int64_t>{-128, 127, -1, 0}), boost::test_tools::per_element());
  BOOST_TEST(i8->shape == (std::vector<std::uint64_t>{2, 2}), boost::test_tools::per_element());
  auto u8 = npy::parse(npy_file(header("|u1", "()"), {0xFE}));
  BOOST_REQUIRE(u8.ok());
  BOOST_TEST(u8->ints == std::vector<std::int64_t>{254}, boost::test_tools::per_element());
  BOOST_TEST(u8->shape.empty());
}

// Files every reader must reject as unsupported-npy, by name.
std::vector<std::pair<std::string, Bytes>> bad_npy_files() {
  const Bytes two = f32_payload({1, 2});
  std::vector<std::pair<std::string, Bytes>> bad{
      {"short", Bytes{0x93, 'N', 'U'}},
      {"magic", Bytes(64, 'x')},
      {"empty", Bytes{}},
      {"big-endian", npy_file(header(">f4", "(2,)"), two)},
      {"f8", npy_file(header("<f8", "(1,)"), Bytes(8, 0))},
      {"f2", npy_file(header("<f2", "(4,)"), two)},
      {"i2", npy_file(header("<i2", "(4,)"), two)},
      {"bool", npy_file(header("|b1", "(8,)"), two)},
      {"complex", npy_file(header("<c8", "(1,)"), two)},
      {"object", npy_file(header("|O", "(1,)"), Bytes(8, 0))},
      {"struct", npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", two)},
      {"fortran", npy_file(header("<f4", "(1, 2)", "True"), two)},
      {"fortran-value", npy_file(header("<f4", "(2,)", "0"), two)},
      {"truncated data", npy_file(header("<f4", "(3,)"), two)},
      {"trailing data", npy_file(header("<f4", "(1,)"), two)},
      {"negative", npy_file(header("<f4", "(-2,)"), two)},
      {"not a tuple", npy_file(header("<f4", "(2)"), two)},
      {"list", npy_file(header("<f4", "[2]"), two)},
      {"rank 9", npy_file(header("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 2)"), two)},
      {"missing shape", npy_file("{'descr': '<f4', 'fortran_order': False}", two)},
      {"missing descr", npy_file("{'fortran_order': False, 'shape': (2,)}", two)},
      {"unknown key", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", two)},
      {"duplicate key", npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", two)},
      {"unterminated", npy_file("{'descr': '<f4", two)},
      {"garbage", npy_file("hello", two)},
      {"no close", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", two)},
      {"after dict", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", two)},
      {"escape", npy_file("{'descr': '<f\\4', 'fortran_order': False, 'shape': (2,)}", two)},
      {"version 4", npy_file(header("<f4", "(2,)"), two, 4)},
      {"version 0", npy_file(header("<f4", "(2,)"), two, 0)},
  };
  // Version 1.1, and a header length pointing past the end.
  Bytes minor = npy_file(header("<f4", "(2,)"), two);
  minor[7] = 1;
  bad.emplace_back("version 1.1", minor);
  Bytes longer = npy_file(header("<f4", "(2,)"), two);
  longer[8] = 0xFF;
  longer[9] = 0xFF;
  bad.emplace_back("header past the end", longer);
  Bytes v2 = npy_file(header("<f4", "(2,)"), two, 2);
  v2[11] = 0x80;  // header length ~2^31
  bad.emplace_back("v2 header past the end", v2);
  return bad;
}

// Files whose shape no tensor can have: shape-overflow, the code make_layout and the Q.json
// reader give the same shapes (docs/ARCHITECTURE.md: every extent fits in 63 bits).
std::vector<std::pair<std::string, Bytes>> overflowing_npy_files() {
  const Bytes two = f32_payload({1, 2});
  return {
      {"elements", npy_file(header("<f4", "(4294967296, 4294967296)"), two)},
      {"bytes", npy_file(header("<f4", "(4611686018427387904,)"), two)},
      {"extent past 64 bits", npy_file(header("<f4", "(99999999999999999999,)"), two)},
      {"2^64-1 after a 0", npy_file(header("<f4", "(0, 18446744073709551615)"), Bytes{})},
      {"2^64-1 before a 0", npy_file(header("<f4", "(18446744073709551615, 0)"), Bytes{})},
      {"2^63 beside a 0", npy_file(header("<u1", "(0, 9223372036854775808)"), Bytes{})},
      {"2^63 as the last", npy_file(header("|u1", "(0, 0, 0, 9223372036854775808)"), Bytes{})},
      {"products past 2^63 before a 0", npy_file(header("|u1", "(4611686018427387904, 2, 0)"), Bytes{})},
  };
}

BOOST_AUTO_TEST_CASE(npy_rejects_everything_else) {
  for (const auto& [what, bytes] : bad_npy_files()) {
    BOOST_TEST_CONTEXT(what) { expect_code(npy::parse(bytes).status(), ErrorCode::unsupported_npy); }
  }
}

BOOST_AUTO_TEST_CASE(npy_rejects_shapes_past_63_bits_as_shape_overflow) {
  for (const auto& [what, bytes] : overflowing_npy_files()) {
    BOOST_TEST_CONTEXT(what) { expect_code(npy::parse(bytes).status(), ErrorCode::shape_overflow); }
  }
  // 2^63 - 1 beside a zero is a shape (an empty one).
  auto ok = npy::parse(npy_file(header("<f4", "(0, 9223372036854775807)"), Bytes{}));
  BOOST_REQUIRE_MESSAGE(ok.ok(), ok.status().to_string());
  BOOST_TEST(ok->size() == 0u);
  // The writer refuses what the reader would refuse.
  expect_code(npy::serialize_f32(std::vector<std::uint64_t>{0, std::uint64_t{1} << 63}, std::vector<float>{}).status(),
              ErrorCode::shape_overflow);
}

BOOST_AUTO_TEST_CASE(npy_never_reads_past_the_buffer) {
  // Every prefix of a valid file is rejected (the file is exactly its data), and random byte
  // flips either parse or are rejected; under ASan an over-read would abort.
  const Bytes good = npy::serialize_f32(std::vector<std::uint64_t>{2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}).value();
  for (std::size_t n = 0; n < good.size(); ++n) {
    // Copy into an exactly-sized heap buffer so ASan sees the end.
    const Bytes prefix(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    BOOST_TEST_CONTEXT("prefix " << n) { expect_code(npy::parse(prefix).status(), ErrorCode::unsupported_npy); }
  }
  std::mt19937_64 rng(3);
  int parsed = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    Bytes m = good;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) m[rng() % m.size()] = static_cast<std::uint8_t>(rng());
    auto a = npy::parse(m);
    if (a.ok()) ++parsed;
    else BOOST_REQUIRE(a.status().code() == ErrorCode::unsupported_npy);
  }
  BOOST_TEST(parsed > 0);
}

BOOST_AUTO_TEST_CASE(npy_files) {
  const auto dir = temp_dir();
  expect_code(npy::read_file((dir / "missing.npy").string()).status(), ErrorCode::io_error);
  expect_code(npy::read_file(dir.string()).status(), ErrorCode::io_error);
  const auto path = (dir / "x.npy").string();
  const Bytes bytes = npy::serialize_f32(std::vector<std::uint64_t>{2}, std::vector<float>{0.1f, -3.0f}).value();
  BOOST_REQUIRE(write_bytes(path, bytes).ok());
  auto a = npy::read_file(path);
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(a->f32 == (std::vector<float>{0.1f, -3.0f}), boost::test_tools::per_element());
  // A bad file names itself in the message.
  BOOST_REQUIRE(write_bytes(path, Bytes{1, 2, 3}).ok());
  const Status st = npy::read_file(path).status();
  expect_code(st, ErrorCode::unsupported_npy);
  BOOST_TEST(st.message().find(path) != std::string::npos);
  // Writes into a directory that does not exist fail and leave nothing behind.
  expect_code(write_bytes((dir / "no" / "such" / "x.npy").string(), bytes), ErrorCode::io_error);
  // No temporary files are left.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  BOOST_TEST(files == 1);
  std::filesystem::remove_all(dir);
}

// read_file reads the header first and a float32 tensor's data straight into its vector; it
// must accept and reject exactly what parse does, with parse's message after the path, and give
// the same values. Every prefix of good files (all versions, dtypes, other writers' headers)
// and every bad file, from a regular file and (for some) from a pipe.
BOOST_AUTO_TEST_CASE(npy_read_file_agrees_with_parse) {
  const auto dir = temp_dir();
  const auto path = (dir / "x.npy").string();
  std::vector<std::pair<std::string, Bytes>> files = bad_npy_files();
  for (auto& f : overflowing_npy_files()) files.push_back(std::move(f));
  const Bytes payload = f32_payload({1.5f, -2.0f, 0.0f, -0.0f, qscheme::f32_from_bits(0x7FC00001u), 3e38f});
  const std::size_t first_good = files.size();
  for (int major : {1, 2, 3}) files.emplace_back("f32 v" + std::to_string(major), npy_file(header("<f4", "(2, 3)"), payload, major));
  files.emplace_back("other writer", npy_file("{'shape': (6L,), 'fortran_order': False, 'descr': '<f4'}", payload));
  files.emplace_back("scalar", npy_file(header("<f4", "()"), f32_payload({7.0f})));
  files.emplace_back("empty tensor", npy_file(header("<f4", "(0, 3)"), Bytes{}));
  files.emplace_back("i32", npy_file(header("<i4", "(3,)"), {0xFF, 0xFF, 0xFF, 0xFF, 5, 0, 0, 0, 0, 0, 0, 0x80}));
  files.emplace_back("u8", npy_file(header("|u1", "(2,)"), {0xFE, 1}));
  files.emplace_back("serialized", npy::serialize_f32(std::vector<std::uint64_t>{3}, std::vector<float>{1, 2, 3}).value());
  const std::size_t whole = files.size();
  for (std::size_t f = first_good; f < whole; ++f) {  // every prefix of the good ones
    for (std::size_t n = 0; n < files[f].second.size(); ++n) {
      files.emplace_back(files[f].first + " prefix " + std::to_string(n),
                         Bytes(files[f].second.begin(), files[f].second.begin() + static_cast<std::ptrdiff_t>(n)));
    }
  }
  auto same = [&](const std::string& what, const Result<npy::Array>& got, const Result<npy::Array>& want) {
    BOOST_TEST_CONTEXT(what) {
      BOOST_TEST_REQUIRE(got.ok() == want.ok(), (got.ok() ? std::string("ok") : got.status().to_string()));
      if (!want.ok()) {
        BOOST_TEST(to_code(got.status().code()) == to_code(want.status().code()));
        BOOST_TEST(got.status().message() == path + ": " + want.status().message());
        return;
      }
      BOOST_TEST((got->dtype == want->dtype));
      BOOST_TEST(got->shape == want->shape, boost::test_tools::per_element());
      BOOST_TEST(got->ints == want->ints, boost::test_tools::per_element());
      BOOST_TEST_REQUIRE(got->f32.size() == want->f32.size());
      for (std::size_t i = 0; i < got->f32.size(); ++i) {
        BOOST_TEST(qscheme::f32_bits(got->f32[i]) == qscheme::f32_bits(want->f32[i]));
      }
    }
  };
  int good = 0;
  for (const auto& [what, bytes] : files) {
    BOOST_REQUIRE(write_bytes(path, bytes).ok());
    const auto want = npy::parse(bytes);
    good += want.ok();
    same(what, npy::read_file(path), want);
  }
  BOOST_TEST(good == static_cast<int>(whole - first_good));
  // A pipe has no size: read to its end, then parsed.
  const auto fifo = (dir / "pipe.npy").string();
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (std::size_t f : {std::size_t{0}, first_good, whole - 1}) {
    std::thread writer([&] {
      std::FILE* w = std::fopen(fifo.c_str(), "wb");
      if (!w) return;
      std::fwrite(files[f].second.data(), 1, files[f].second.size(), w);
      std::fclose(w);
    });
    auto got = npy::read_file(fifo);
    writer.join();
    auto want = npy::parse(files[f].second);
    BOOST_TEST_CONTEXT("pipe " << files[f].first) {
      BOOST_TEST_REQUIRE(got.ok() == want.ok());
      if (got.ok()) BOOST_TEST(got->f32.size() == want->f32.size());
      else BOOST_TEST(got.status().message() == fifo + ": " + want.status().message());
    }
  }
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Q.json

BOOST_AUTO_TEST_CASE(scale_numbers_convert_exactly_both_ways) {
  std::uint64_t checked = 0;
  for (ScaleDtype d : kAllScaleDtypes) {
    const std::uint64_t end = d == ScaleDtype::f32 ? (1ull << 32) : (1ull << (8 * info(d).bytes));
    const std::uint64_t step = d == ScaleDtype::f32 ? 4099 : 1;
    for (std::uint64_t b = 0; b < end; b += step) {
      const auto bits = static_cast<std::uint32_t>(b);
      auto f = qjson::scale_to_float(d, bits);
      BOOST_REQUIRE(f.ok() == !qscheme::scale_problem(d, bits));
      if (!f) continue;
      auto back = qjson::float_to_scale_bits(d, *f);
      BOOST_REQUIRE_MESSAGE(back.ok() && *back == bits, to_string(d) << " " << bits);
      ++checked;
    }
  }
  BOOST_TEST(checked > 100000u);
  for (const auto& [d, v] : std::vector<std::pair<ScaleDtype, float>>{{ScaleDtype::f16, 0.3f},
                                                                      {ScaleDtype::f16, 65520.0f},
                                                                      {ScaleDtype::bf16, 0.1f},
                                                                      {ScaleDtype::ue4m3, 500.0f},
                                                                      {ScaleDtype::ue4m3, 0.3f},
                                                                      {ScaleDtype::ue8m0, 0.0f},
                                                                      {ScaleDtype::ue8m0, 3.0f},
                                                                      {ScaleDtype::f32, -1.0f},
                                                                      {ScaleDtype::f32, -0.0f},
                                                                      {ScaleDtype::f32, INFINITY},
                                                                      {ScaleDtype::f32, NAN}}) {
    BOOST_TEST_CONTEXT(to_string(d) << " " << v) {
      expect_code(qjson::float_to_scale_bits(d, v).status(), ErrorCode::corrupt_bytes);
    }
  }
}

BOOST_AUTO_TEST_CASE(qjson_round_trips_every_supported_scheme) {
  std::mt19937_64 rng(5);
  int round_trips = 0;
  std::vector<Scheme> schemes = tuple_space();
  schemes.insert(schemes.end(), extension_space().begin(), extension_space().end());
  for (const Scheme& s : schemes) {
    if (!validate_scheme(s).ok()) continue;
    for (const auto& shape : std::vector<std::vector<std::uint64_t>>{{3, 17}, {}, {0}, {2, 3, 4}}) {
      if (!validate(s, shape).ok()) continue;
      const QuantizedTensor q = random_q(s, shape, rng);
      auto text = qjson::write(q);
      BOOST_REQUIRE_MESSAGE(text.ok(), text.status().to_string());
      auto back = qjson::read(*text);
      BOOST_REQUIRE_MESSAGE(back.ok(), format_scheme(s) << ": " << back.status().to_string() << "\n" << *text);
      BOOST_REQUIRE_MESSAGE(*back == q, format_scheme(s) << "\n" << *text);
      ++round_trips;
    }
  }
  BOOST_TEST(round_trips > 3000);
}

// Affine mode: "zero_points" after "global_scale", read back into the bytes; a missing, extra,
// miscounted or out-of-range zero point is refused.
BOOST_AUTO_TEST_CASE(qjson_affine_zero_points) {
  QuantizedTensor q;
  q.scheme = scheme_of("q4f:affine:block[2]=f32");
  q.shape = {3};
  q.codes = {-8, 7, 0};
  q.scale_bits = {qscheme::f32_bits(1.0f), qscheme::f32_bits(0.5f)};
  q.zero_points = {-3, 7};
  const std::string text = qjson::write(q).value();
  BOOST_TEST(text.find("\"global_scale\": null,\n \"zero_points\": [-3,7],\n \"bytes\": \"f807000000803f0000003ffd07\"") !=
                 std::string::npos,
             text);
  auto back = qjson::read(text);
  BOOST_TEST_REQUIRE(back.ok(), back.status().to_string());
  BOOST_TEST((*back == q));
  auto replaced = [&](std::string_view from, std::string_view to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return qjson::read(t).status();
  };
  BOOST_TEST((replaced("[-3,7]", "[-3,8]").code() == ErrorCode::corrupt_bytes));
  BOOST_TEST((replaced("[-3,7]", "[-3]").code() == ErrorCode::size_mismatch));
  BOOST_TEST((replaced("[-3,7]", "null").code() == ErrorCode::invalid_argument));
  BOOST_TEST((replaced("[-3,7]", "[-3,1.5]").code() == ErrorCode::corrupt_bytes));
  BOOST_TEST((replaced(",\n \"zero_points\": [-3,7]", "").code() == ErrorCode::invalid_argument));
  // The bytes must agree with the zero points too.
  BOOST_TEST((replaced("3ffd07", "3ffd06").code() == ErrorCode::corrupt_bytes));
  // A sym scheme takes none.
  BOOST_TEST((replaced("q4f:affine:block[2]=f32", "q4f:block[2]=f32").code() == ErrorCode::invalid_argument));
}

// 16-bit and unsigned codes: written as numbers, read back through their two-byte fields, and
// a code outside the kind's range refused by the reader.
BOOST_AUTO_TEST_CASE(qjson_extension_codes) {
  QuantizedTensor q;
  q.scheme = scheme_of("i16");
  q.shape = {3};
  q.codes = {-32768, 32767, -1};
  q.scale_bits = {qscheme::f32_bits(1.0f)};
  std::string text = qjson::write(q).value();
  BOOST_TEST(text.find("\"codes\": [-32768,32767,-1]") != std::string::npos, text);
  BOOST_TEST(text.find("\"bytes\": \"0080ff7fffff0000803f\"") != std::string::npos, text);
  auto back = qjson::read(text);
  BOOST_TEST_REQUIRE(back.ok(), back.status().to_string());
  BOOST_TEST((*back == q));
  q.scheme = scheme_of("u16");
  q.codes = {65535, 0, 1};
  text = qjson::write(q).value();
  BOOST_TEST(text.find("\"codes\": [65535,0,1]") != std::string::npos, text);
  back = qjson::read(text);
  BOOST_TEST_REQUIRE(back.ok(), back.status().to_string());
  BOOST_TEST((*back == q));
  const auto at = text.find("65535");
  text.replace(at, 5, "65536");
  expect_code(qjson::read(text).status(), ErrorCode::corrupt_bytes);
  text.replace(at, 5, "-1   ");
  expect_code(qjson::read(text).status(), ErrorCode::corrupt_bytes);
}

BOOST_AUTO_TEST_CASE(qjson_writes_short_exact_numbers) {
  QuantizedTensor q;
  q.scheme = scheme_of("q8s:block[2]=f32");
  q.shape = {4};
  q.codes = {1, -2, 3, 127};
  q.scale_bits = {qscheme::f32_bits(0.1f), qscheme::f32_bits(1e-45f)};
  const std::string text = qjson::write(q).value();
  BOOST_TEST(text.find("\"block_scales\": [0.1,1e-45]") != std::string::npos, text);
  BOOST_TEST(text.find("0.100000") == std::string::npos, text);
  BOOST_TEST(text.find("\"global_scale\": null") != std::string::npos, text);
  BOOST_TEST(text.find("\"codes\": [1,-2,3,127]") != std::string::npos, text);
  BOOST_TEST(text.find("\"scheme\": \"q8s:block[2]=f32\"") != std::string::npos, text);
  BOOST_TEST(text.find("\"profile\": \"exact\"") != std::string::npos, text);
  BOOST_TEST(text.find("\"bytes\": \"01fe037fcdcccc3d01000000\"") != std::string::npos, text);
  // Two-level: the global as a number, the ue4m3 scales as their values.
  QuantizedTensor t = two_level_example();
  const std::string tt = qjson::write(t).value();
  BOOST_TEST(tt.find("\"block_scales\": [0.5,0.125]") != std::string::npos, tt);
  BOOST_TEST(tt.find("\"global_scale\": 3.0") != std::string::npos, tt);
  // Invalid tensors are not written.
  t.codes[0] = 200;
  expect_code(qjson::write(t).status(), ErrorCode::corrupt_bytes);
}

BOOST_AUTO_TEST_CASE(qjson_reads_numbers_written_by_hand) {
  // Integers, exponents and more digits than needed all denote exact f32 values.
  auto q = qjson::read(R"({"scheme": "q8s:block[2]=f16", "shape": [4], "codes": [1, 2, 3, 4],
                          "block_scales": [1, 2.5e-1], "global_scale": null})");
  BOOST_REQUIRE_MESSAGE(q.ok(), q.status().to_string());
  BOOST_TEST(q->scale_bits == (std::vector<std::uint32_t>{0x3C00, 0x3400}), boost::test_tools::per_element());
  BOOST_TEST((q->profile == Profile::exact));
  auto f = qjson::read(R"({"scheme": "q8s", "shape": [1], "codes": [1],
                          "block_scales": [0.100000001490116119384765625], "global_scale": null, "profile": "burn"})");
  BOOST_REQUIRE(f.ok());
  BOOST_TEST(f->scale_bits == std::vector<std::uint32_t>{qscheme::f32_bits(0.1f)}, boost::test_tools::per_element());
  BOOST_TEST((f->profile == Profile::burn));
}

BOOST_AUTO_TEST_CASE(qjson_rejects_malformed_documents) {
  // A valid base document, then one field broken at a time.
  const std::string base_scheme = "q8s:block[2]=ue4m3:tensor=f32";
  QuantizedTensor q;
  q.scheme = scheme_of(base_scheme);
  q.shape = {4};
  q.codes = {1, 2, 3, 4};
  q.scale_bits = {0x38, 0x30};
  q.global_bits = qscheme::f32_bits(0.25f);
  const std::string good = qjson::write(q).value();
  BOOST_REQUIRE(qjson::read(good).ok());
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, from);
    return s.replace(at, from.size(), to);
  };
  struct Case {
    std::string what;
    std::string text;
    ErrorCode code;
  };
  const std::vector<Case> cases{
      {"not json", "{\"scheme\": ", ErrorCode::invalid_argument},
      {"empty", "", ErrorCode::invalid_argument},
      {"array", "[1, 2]", ErrorCode::invalid_argument},
      {"unknown key", with("\"profile\"", "\"profil\""), ErrorCode::invalid_argument},
      {"missing scheme", with("\"scheme\": \"" + base_scheme + "\",", ""), ErrorCode::invalid_argument},
      {"missing codes", with("\"codes\": [1,2,3,4],", ""), ErrorCode::invalid_argument},
      {"missing global", with("\"global_scale\": 0.25,", ""), ErrorCode::invalid_argument},
      {"scheme type", with("\"" + base_scheme + "\"", "7"), ErrorCode::invalid_argument},
      {"bad scheme", with(base_scheme, "q9s"), ErrorCode::malformed_scheme},
      {"rejected scheme", with(base_scheme, "q8s:block[2]=f32:tensor=f32"), ErrorCode::two_level_block_dtype},
      {"profile", with("\"exact\"", "\"fast\""), ErrorCode::invalid_argument},
      {"profile type", with("\"exact\"", "1"), ErrorCode::invalid_argument},
      {"shape type", with("\"shape\": [4]", "\"shape\": 4"), ErrorCode::invalid_argument},
      {"shape negative", with("\"shape\": [4]", "\"shape\": [-4]"), ErrorCode::invalid_argument},
      {"shape float", with("\"shape\": [4]", "\"shape\": [4.0]"), ErrorCode::invalid_argument},
      {"shape rank", with("\"shape\": [4]", "\"shape\": [1,1,1,1,1,1,1,1,4]"), ErrorCode::rank_too_large},
      {"shape overflow", with("\"shape\": [4]", "\"shape\": [4294967296,4294967296]"), ErrorCode::shape_overflow},
      {"codes short", with("[1,2,3,4]", "[1,2,3]"), ErrorCode::size_mismatch},
      {"codes long", with("[1,2,3,4]", "[1,2,3,4,5]"), ErrorCode::size_mismatch},
      {"codes type", with("[1,2,3,4]", "\"1234\""), ErrorCode::invalid_argument},
      {"code out of range", with("[1,2,3,4]", "[1,2,-128,4]"), ErrorCode::corrupt_bytes},
      {"code huge", with("[1,2,3,4]", "[1,2,99999999999,4]"), ErrorCode::corrupt_bytes},
      {"code fraction", with("[1,2,3,4]", "[1,2,3.5,4]"), ErrorCode::corrupt_bytes},
      {"code string", with("[1,2,3,4]", "[1,2,\"3\",4]"), ErrorCode::corrupt_bytes},
      {"scales short", with("[1.0,0.5]", "[1.0]"), ErrorCode::size_mismatch},
      {"scales type", with("[1.0,0.5]", "{}"), ErrorCode::invalid_argument},
      {"scale off grid", with("[1.0,0.5]", "[1.0,0.3]"), ErrorCode::corrupt_bytes},
      {"scale too big", with("[1.0,0.5]", "[1.0,500]"), ErrorCode::corrupt_bytes},
      {"scale negative", with("[1.0,0.5]", "[1.0,-0.5]"), ErrorCode::corrupt_bytes},
      {"scale -0", with("[1.0,0.5]", "[1.0,-0.0]"), ErrorCode::corrupt_bytes},
      {"scale string", with("[1.0,0.5]", "[1.0,\"0.5\"]"), ErrorCode::corrupt_bytes},
      {"scale null", with("[1.0,0.5]", "[1.0,null]"), ErrorCode::corrupt_bytes},
      {"global null", with("\"global_scale\": 0.25", "\"global_scale\": null"), ErrorCode::invalid_argument},
      {"global negative", with("\"global_scale\": 0.25", "\"global_scale\": -0.25"), ErrorCode::corrupt_bytes},
      {"global string", with("\"global_scale\": 0.25", "\"global_scale\": \"x\""), ErrorCode::corrupt_bytes},
      {"global inexact int", with("\"global_scale\": 0.25", "\"global_scale\": 16777217"), ErrorCode::corrupt_bytes},
      {"global overflow", with("\"global_scale\": 0.25", "\"global_scale\": 1e39"), ErrorCode::corrupt_bytes},
      {"bytes mismatch", with("\"bytes\": \"01", "\"bytes\": \"02"), ErrorCode::corrupt_bytes},
      {"bytes odd", with("\"bytes\": \"01", "\"bytes\": \"0"), ErrorCode::invalid_argument},
      {"bytes hex", with("\"bytes\": \"01", "\"bytes\": \"0g"), ErrorCode::invalid_argument},
      {"bytes short", with("\"bytes\": \"01", "\"bytes\": \""), ErrorCode::size_mismatch},
      {"bytes type", with("\"bytes\": \"", "\"bytes\": [\""), ErrorCode::invalid_argument},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.what << ": " << c.text) { expect_code(qjson::read(c.text).status(), c.code); }
  }
  // One-level scheme with a global scale.
  expect_code(qjson::read(R"({"scheme": "q8s", "shape": [1], "codes": [1], "block_scales": [1], "global_scale": 1})")
                  .status(),
              ErrorCode::invalid_argument);
  // Lookup mode is rejected by validate().
  expect_code(qjson::read(R"({"scheme": "q8s:lookup", "shape": [1], "codes": [1], "block_scales": [1], "global_scale": null})")
                  .status(),
              ErrorCode::lookup_table_missing);
}

// ---------------------------------------------------------------------------------------------
// Q.json read and written in pieces

namespace {

Result<QuantizedTensor> read_doc(std::string_view text, std::size_t step) {
  auto d = qjson::read(io::json::text_source(text, step), text.size());
  if (!d) return d.status();
  return reference::decode(d->scheme, d->shape, d->bytes, d->profile);
}

// The lines of a text written by qjson::write: "{", one `"key": value` a line, "}".
std::vector<std::string> field_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 2;  // after "{\n"
  while (true) {
    const std::size_t end = text.find('\n', at);
    std::string line = text.substr(at + 1, end - at - 1);  // without the indent
    if (text[at] == '}') break;
    if (!line.empty() && line.back() == ',') line.pop_back();
    out.push_back(line);
    at = end + 1;
  }
  return out;
}

std::string document_of(const std::vector<std::string>& lines) {
  std::string out = "{\n";
  for (std::size_t i = 0; i < lines.size(); ++i) out += " " + lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
  return out + "}\n";
}

// Tensors whose layouts exercise every path of the reader and writer: packing along an inner
// and an outer axis with partial words, native sub-byte codes, two levels, one-byte scales.
std::vector<QuantizedTensor> varied_tensors() {
  std::mt19937_64 rng(11);
  std::vector<QuantizedTensor> out;
  for (const auto& [text, shape] : std::vector<std::pair<std::string, std::vector<std::uint64_t>>>{
           {"q8s:block[4]=ue4m3:tensor=f32", {3, 9}},
           {"q4s:packed-u32(0):block[8]=f16", {5, 13}},
           {"q2s:packed-u32(1):block[3,2]=bf16", {7, 3, 5}},
           {"e2m1:packed-native(1)", {5, 4}},
           {"nvfp4", {2, 33}},
           {"mxfp8", {1, 64}},
           {"q4f", {11}},
           {"e5m2:block[2]=ue8m0", {2, 2, 3}},
           {"q8f:tensor=f16", {}},
           {"q8s:block[32]=f16", {0, 5}},
       }) {
    out.push_back(random_q(scheme_of(text), shape, rng));
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(scale_numbers_agree_with_the_reference_on_every_pattern) {
  // ScaleNumbers, the fast path of reader and writer, against scale_to_float and
  // float_to_scale_bits: every pattern of the narrow dtypes, a sample of f32's, and the f32
  // neighbours of every narrow value (which must not be taken for it).
  std::mt19937_64 rng(9);
  for (ScaleDtype d : kAllScaleDtypes) {
    const ScaleNumbers n(d);
    const std::uint64_t end = d == ScaleDtype::f32 ? (1ull << 32) : (1ull << (8 * info(d).bytes));
    const std::uint64_t step = d == ScaleDtype::f32 ? 65521 : 1;
    std::uint64_t valid = 0;
    for (std::uint64_t b = 0; b < end; b += step) {
      const auto bits = static_cast<std::uint32_t>(b);
      BOOST_REQUIRE_MESSAGE(n.valid(bits) == !qscheme::scale_problem(d, bits), to_string(d) << " " << bits);
      if (!n.valid(bits)) continue;
      ++valid;
      const float v = qjson::scale_to_float(d, bits).value();
      BOOST_REQUIRE_MESSAGE(qscheme::f32_bits(n.value(bits)) == qscheme::f32_bits(v),
                            to_string(d) << " " << bits);
      BOOST_REQUIRE_MESSAGE(n.pattern(v) == bits, to_string(d) << " " << bits);
      if (d == ScaleDtype::f32) continue;
      for (float near : {std::nextafter(v, INFINITY), std::nextafter(v, -INFINITY)}) {
        const auto want = qjson::float_to_scale_bits(d, near);
        const auto got = n.pattern(near);
        BOOST_REQUIRE_MESSAGE(got.has_value() == want.ok() && (!got || *got == *want), to_string(d) << " near " << bits);
      }
    }
    BOOST_TEST(valid > 100u);
    for (int i = 0; i < 20000; ++i) {
      const float v = qscheme::f32_from_bits(static_cast<std::uint32_t>(rng()));
      const auto want = qjson::float_to_scale_bits(d, v);
      const auto got = n.pattern(v);
      BOOST_REQUIRE_MESSAGE(got.has_value() == want.ok() && (!got || *got == *want), to_string(d) << " " << v);
    }
  }
}

BOOST_AUTO_TEST_CASE(qjson_text_of_a_two_level_tensor_is_byte_for_byte_the_documented_format) {
  // docs/QJSON.md's example, byte for byte: what the writer prints and the reader takes back.
  const std::string documented = "{\n"
                             " \"scheme\": \"q8f:block[4]=ue4m3:tensor=f32\",\n"
                             " \"profile\": \"exact\",\n"
                             " \"shape\": [8],\n"
                             " \"codes\": [0,25,51,76,102,127,-128,-1],\n"
                             " \"block_scales\": [0.5,0.125],\n"
                             " \"global_scale\": 3.0,\n"
                             " \"bytes\": \"0019334c667f80ff302000004040\"\n"
                             "}\n";
  const QuantizedTensor t = two_level_example();
  BOOST_TEST(qjson::write(t).value() == documented);
  auto back = qjson::read(documented);
  BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  BOOST_TEST((*back == t));
}

BOOST_AUTO_TEST_CASE(qjson_reads_the_same_in_pieces_of_any_size) {
  for (const QuantizedTensor& q : varied_tensors()) {
    const std::string text = qjson::write(q).value();
    for (std::size_t step : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{64}, text.size()}) {
      BOOST_TEST_CONTEXT(format_scheme(q.scheme) << " in pieces of " << step) {
        auto back = read_doc(text, step);
        BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
        BOOST_TEST((*back == q));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(qjson_reads_keys_in_any_order) {
  // Codes and scales documented the scheme or the shape are held until the layout is known; bytes
  // documented codes are compared at the end. Every order reads as the writer's does.
  std::mt19937_64 rng(13);
  for (const QuantizedTensor& q : varied_tensors()) {
    std::vector<std::string> lines = field_lines(qjson::write(q).value());
    BOOST_REQUIRE(lines.size() == 7u);
    std::sort(lines.begin(), lines.end());
    int orders = 0;
    do {
      if (orders++ % 17 != 0) continue;  // a spread of the 5040 orders
      const std::string doc = document_of(lines);
      auto back = read_doc(doc, 5);
      BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string() << "\n" << doc);
      BOOST_REQUIRE((*back == q));
    } while (std::next_permutation(lines.begin(), lines.end()));
    BOOST_TEST(orders == 5040);
    // And errors found in any order: a bad code before the scheme, a bad byte before the codes.
    std::shuffle(lines.begin(), lines.end(), rng);
    for (std::string& line : lines) {
      if (q.codes.size() > 1 && line.starts_with("\"codes\"")) line.replace(line.find('[') + 1, 0, "999,");
    }
    if (q.codes.size() > 1) expect_code(read_doc(document_of(lines), 3).status(), ErrorCode::corrupt_bytes);
  }
}

BOOST_AUTO_TEST_CASE(qjson_rejects_a_duplicate_of_every_key) {
  // The value read last used to win silently. Each key, repeated with the same value or
  // another one, before or after the rest, is invalid-argument naming the key.
  QuantizedTensor q = varied_tensors()[0];
  const std::vector<std::string> lines = field_lines(qjson::write(q).value());
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::string key = lines[k].substr(0, lines[k].find(':'));
    for (const std::string& again : {lines[k], key + ": null", key + ": [1]"}) {
      for (std::size_t at : {std::size_t{0}, k + 1, lines.size()}) {
        if (at == 0 && again != lines[k]) continue;  // a bad first value is reported as such
        std::vector<std::string> doc = lines;
        doc.insert(doc.begin() + static_cast<std::ptrdiff_t>(at), again);
        BOOST_TEST_CONTEXT(again << " at " << at) {
          const Status st = read_doc(document_of(doc), 4096).status();
          expect_code(st, ErrorCode::invalid_argument);
          BOOST_TEST(st.message().find("duplicate key " + key) != std::string::npos, st.message());
        }
      }
    }
  }
  // Also where the two are the only keys.
  expect_code(qjson::read(R"({"scheme": "q8s", "scheme": "q8s"})").status(), ErrorCode::invalid_argument);
}

BOOST_AUTO_TEST_CASE(qjson_shapes_past_63_bits_are_shape_overflow) {
  // As for .npy and make_layout: every extent fits in 63 bits, beside a zero extent too.
  const auto doc = [](const std::string& shape) {
    return R"({"scheme": "q8s", "shape": )" + shape + R"(, "codes": [], "block_scales": [1.0], "global_scale": null})";
  };
  for (const std::string shape : {"[0, 18446744073709551615]", "[18446744073709551615, 0]", "[0, 9223372036854775808]",
                                  "[0, 99999999999999999999]", "[0, 0, 123456789012345678901234567890]"}) {
    BOOST_TEST_CONTEXT(shape) { expect_code(qjson::read(doc(shape)).status(), ErrorCode::shape_overflow); }
  }
  auto empty = qjson::read(doc("[0, 9223372036854775807]"));
  BOOST_REQUIRE_MESSAGE(empty.ok(), empty.status().to_string());
  BOOST_TEST(empty->codes.empty());
}

BOOST_AUTO_TEST_CASE(qjson_refuses_a_shape_its_text_cannot_hold_before_allocating_it) {
  // 2^40 codes cannot be in a text of 100 bytes: size-mismatch at once, not a 1 TiB buffer.
  const std::string text = R"({"scheme": "q8s", "shape": [1099511627776], "codes": [1], "block_scales": [1.0], "global_scale": null})";
  const Status st = qjson::read(text).status();
  expect_code(st, ErrorCode::size_mismatch);
  BOOST_TEST(st.message().find("cannot fit in a text of") != std::string::npos, st.message());
}

BOOST_AUTO_TEST_CASE(qjson_rejects_invalid_json_in_any_field) {
  // The reader is a strict JSON reader, not a lenient scanner of the keys it knows.
  const std::string good = qjson::write(varied_tensors()[0]).value();
  BOOST_REQUIRE(qjson::read(good).ok());
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, from);
    return s.replace(at, from.size(), to);
  };
  for (const std::string& bad : {
           with("\"codes\": [", "\"codes\": [,"),
           with("],\n \"block_scales\"", ",],\n \"block_scales\""),
           with("\n}", ",\n}"),
           with("{", "{ // comment\n"),
           with("\"profile\": \"", "\"profile\": '"),
           with("\"profile\": \"", "\"profile\": \"\\q"),
           with("\"profile\": \"", "\"profile\": \"\x01"),
           with("\"profile\": \"", "\"profile\": \"\xC3"),
           good + "{}",
           good + "x",
           good.substr(0, good.size() - 3),
           with(": [", ": [01,"),
           with(": [", ": [NaN,"),
           with("\"global_scale\": ", "\"global_scale\": ."),
       }) {
    BOOST_TEST_CONTEXT(bad) {
      const Status st = qjson::read(bad).status();
      BOOST_TEST(!st.ok());
      // A broken number inside codes or scales may read as a bad code first; all else is invalid JSON.
      BOOST_TEST((st.code() == ErrorCode::invalid_argument || st.code() == ErrorCode::corrupt_bytes), st.to_string());
    }
  }
}

BOOST_AUTO_TEST_CASE(qjson_writer_streams_pieces_of_about_a_mebibyte) {
  std::mt19937_64 rng(17);
  const QuantizedTensor q = random_q(scheme_of("q8s:block[32]=f16"), {1000, 700}, rng);
  const Bytes bytes = reference::encode(q).value();
  std::vector<std::size_t> sizes;
  std::string text;
  const Status st = qjson::write(q.scheme, q.profile, q.shape, bytes, [&](std::span<const std::uint8_t> piece) {
    sizes.push_back(piece.size());
    text.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    return Status();
  });
  BOOST_REQUIRE_MESSAGE(st.ok(), st.to_string());
  BOOST_TEST(sizes.size() >= 3u);
  for (std::size_t n : sizes) BOOST_TEST(n <= (std::size_t{1} << 20) + 600);
  BOOST_TEST(text == qjson::write(q).value());
  auto back = qjson::read(text);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST((*back == q));
  // A sink error stops the writer: returned as is, no more pieces.
  int calls = 0;
  const Status failed = qjson::write(q.scheme, q.profile, q.shape, bytes, [&](std::span<const std::uint8_t>) {
    ++calls;
    return calls == 2 ? Status(ErrorCode::io_error, "disk full") : Status();
  });
  expect_code(failed, ErrorCode::io_error);
  BOOST_TEST(calls == 2);
}

BOOST_AUTO_TEST_CASE(qjson_writer_checks_the_bytes_as_decode_does_before_writing_anything) {
  // Corrupt serialized bytes: the writer's error is decode()'s (code and index), and the sink
  // sees nothing.
  for (QuantizedTensor q : varied_tensors()) {
    const Bytes good = reference::encode(q).value();
    const Layout l = make_layout(q.scheme, q.shape).value();
    std::vector<Bytes> bad;
    for (std::size_t at : {std::size_t{0}, static_cast<std::size_t>(l.value_bytes) - 1, static_cast<std::size_t>(l.value_bytes),
                           good.size() - 1}) {
      if (at >= good.size()) continue;
      for (std::uint8_t v : {std::uint8_t{0xFF}, std::uint8_t{0x7F}, std::uint8_t{0x80}, std::uint8_t{0xF0}}) {
        Bytes b = good;
        b[at] = v;
        bad.push_back(b);
      }
    }
    bad.push_back(Bytes(good.begin(), good.end() - (good.empty() ? 0 : 1)));
    for (const Bytes& b : bad) {
      const auto want = reference::decode(q.scheme, q.shape, b, q.profile);
      bool called = false;
      const Status got = qjson::write(q.scheme, q.profile, q.shape, b, [&](std::span<const std::uint8_t>) {
        called = true;
        return Status();
      });
      BOOST_TEST_CONTEXT(format_scheme(q.scheme)) {
        BOOST_TEST(got.ok() == want.ok());
        if (!want.ok()) {
          BOOST_TEST(got.to_string() == want.status().to_string());
          BOOST_TEST(got.index() == want.status().index());
          BOOST_TEST(!called);
        }
      }
    }
  }
}
