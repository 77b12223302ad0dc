#include "io/file_io.hpp"

#include "io/huge_pages.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace qscheme::io {

Result<ReadFile> open_for_read(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status(ErrorCode::io_error, "cannot read '" + path + "': it is a directory");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status(ErrorCode::io_error, "cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  const bool regular = ::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode);
  return ReadFile(path, f, regular ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(st.st_size)) : std::nullopt);
}

ReadFile::ReadFile(ReadFile&& o) noexcept : path_(std::move(o.path_)), f_(o.f_), size_(o.size_), short_(o.short_) {
  o.f_ = nullptr;
}

ReadFile::~ReadFile() {
  if (f_) std::fclose(f_);
}

bool ReadFile::read(std::uint8_t* out, std::size_t n) {
  if (n == 0) return true;
  const std::size_t got = std::fread(out, 1, n, f_);
  if (got != n && !std::ferror(f_)) short_ = true;
  return got == n;
}

bool ReadFile::seek(std::uint64_t offset) {
  return offset <= static_cast<std::uint64_t>(INT64_MAX) && ::fseeko(f_, static_cast<off_t>(offset), SEEK_SET) == 0;
}

bool ReadFile::at_end() {
  std::uint8_t b;
  return std::fread(&b, 1, 1, f_) == 0 && !std::ferror(f_);
}

Status ReadFile::error() const {
  return Status(ErrorCode::io_error, "cannot read '" + path_ + "': " +
                                         (short_ ? "it ended early (did it change while being read?)" : "read error"));
}

Result<std::vector<std::uint8_t>> ReadFile::read_all() {
  if (size_) {
    // A regular file: one buffer of its size, no regrowing (each regrowth copied the bytes read
    // so far and paged in a larger buffer).
    std::vector<std::uint8_t> out;
    resize_on_huge_pages(out, static_cast<std::size_t>(*size_));
    if (!read(out.data(), out.size())) return error();
    if (!at_end()) return Status(ErrorCode::io_error, "cannot read '" + path_ + "': it grew while being read");
    return out;
  }
  // A pipe or a device (/dev/stdin, a process substitution): read until it ends.
  std::vector<std::uint8_t> out;
  std::uint8_t buf[1 << 16];
  while (true) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f_);
    out.insert(out.end(), buf, buf + n);
    if (n < sizeof buf) break;
  }
  if (std::ferror(f_)) return error();
  return out;
}

Result<std::vector<std::uint8_t>> read_bytes(const std::string& path) {
  auto f = open_for_read(path);
  if (!f) return f.status();
  return f->read_all();
}

Status write_bytes(const std::string& path, std::span<const std::uint8_t> bytes) { return write_bytes(path, {bytes}); }

Status write_bytes(const std::string& path, std::initializer_list<std::span<const std::uint8_t>> parts) {
  const std::filesystem::path target(path);
  if (target.filename().empty()) return {ErrorCode::io_error, "cannot write '" + path + "': not a file name"};
  const std::filesystem::path tmp =
      target.parent_path() / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return {ErrorCode::io_error, "cannot write '" + path + "': " + std::strerror(errno)};
  bool written = true;
  for (const auto& bytes : parts) {
    written = written && (bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  }
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

}  // namespace qscheme::io
