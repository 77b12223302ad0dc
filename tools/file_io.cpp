#include "tools/file_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace qscheme::cli {

Result<std::vector<std::uint8_t>> read_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status(ErrorCode::io_error, "cannot read '" + path + "': it is a directory");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status(ErrorCode::io_error, "cannot open '" + path + "': " + std::strerror(errno));
  std::vector<std::uint8_t> out;
  std::uint8_t buf[1 << 16];
  while (true) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f);
    out.insert(out.end(), buf, buf + n);
    if (n < sizeof buf) break;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Status(ErrorCode::io_error, "cannot read '" + path + "': read error");
  return out;
}

Status write_bytes(const std::string& path, std::span<const std::uint8_t> bytes) {
  const std::filesystem::path target(path);
  if (target.filename().empty()) return {ErrorCode::io_error, "cannot write '" + path + "': not a file name"};
  const std::filesystem::path tmp =
      target.parent_path() / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return {ErrorCode::io_error, "cannot write '" + path + "': " + std::strerror(errno)};
  const bool written = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    std::remove(tmp.c_str());
    return {ErrorCode::io_error, "cannot write '" + path + "': write failed (disk full?)"};
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return {ErrorCode::io_error, "cannot write '" + path + "': " + ec.message()};
  }
  return {};
}

}  // namespace qscheme::cli
