#include "tools/float_args.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "io/npy.hpp"
#include "scheme/printable.hpp"
#include "tools/file_formats.hpp"

namespace qscheme::cli {

Result<float> parse_f32(std::string_view text, std::string_view what) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const float v = s.empty() ? 0.0f : std::strtof(s.c_str(), &end);
  // strtof skips leading white space and stops at the first character it cannot take: both would
  // let a typo through as a different number.
  if (s.empty() || end != s.c_str() + s.size() || std::isspace(static_cast<unsigned char>(s[0]))) {
    return Status(ErrorCode::invalid_argument, std::string(what) + ": " + quote(s) + " is not a number");
  }
  return v;
}

Result<std::vector<float>> parse_f32_list(const std::string& arg, std::string_view what) {
  if (has_extension(arg, ".npy")) {
    auto a = io::npy::read_file(arg);
    if (!a) return a.status();
    if (a->dtype != io::npy::Dtype::f32) {
      return Status(ErrorCode::unsupported_npy, printable(arg) + ": " + std::string(what) + " takes a float32 ('<f4') array, got '" +
                                                    std::string(io::npy::descr(a->dtype)) + "'");
    }
    return a->f32;
  }
  std::vector<float> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = arg.find(',', pos);
    auto v = parse_f32(std::string_view(arg).substr(pos, comma == std::string::npos ? std::string::npos : comma - pos),
                       what);
    if (!v) return v.status();
    out.push_back(*v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

Result<std::vector<std::int32_t>> parse_int_list(const std::string& arg, std::string_view what) {
  auto values = parse_f32_list(arg, what);
  if (!values) return values.status();
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < values->size(); ++i) {
    const float v = (*values)[i];
    // Every integer a value kind holds is exact in f32; a fraction or a value past int32 is not one.
    if (!(v >= -2147483648.0f && v < 2147483648.0f) || static_cast<float>(static_cast<std::int32_t>(v)) != v) {
      return Status(ErrorCode::invalid_argument,
                    std::string(what) + ": entry " + std::to_string(i) + " is not an integer", i);
    }
    out.push_back(static_cast<std::int32_t>(v));
  }
  return out;
}

}  // namespace qscheme::cli
