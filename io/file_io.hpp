// Whole-file reads and all-or-nothing writes for the command line. A write goes to a temporary
// file beside the target and is renamed over it only once complete, so a failed command never
// leaves a partial or truncated output behind.
#pragma once

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scheme/status.hpp"

namespace qscheme::io {

// io-error when the file cannot be opened or read (the message names the path and the reason).
Result<std::vector<std::uint8_t>> read_bytes(const std::string& path);

// A file open for reading, for readers that take a file in pieces (npy::read_file reads a
// tensor's data straight into its vector). Closed by the destructor.
class ReadFile {
 public:
  ReadFile(ReadFile&& o) noexcept;
  ReadFile& operator=(ReadFile&&) = delete;
  ~ReadFile();
  // The size of a regular file; none for a pipe or a device, which can only be read to its end.
  std::optional<std::uint64_t> size() const { return size_; }
  // Exactly n bytes into out; false on a read error or a short read (then error() says which).
  bool read(std::uint8_t* out, std::size_t n);
  // Everything from here to the end (what read_bytes returns when called first).
  Result<std::vector<std::uint8_t>> read_all();
  bool seek(std::uint64_t offset);
  // Whether nothing is left to read.
  bool at_end();
  Status error() const;

 private:
  friend Result<ReadFile> open_for_read(const std::string& path);
  ReadFile(std::string path, std::FILE* f, std::optional<std::uint64_t> size)
      : path_(std::move(path)), f_(f), size_(size) {}
  std::string path_;
  std::FILE* f_ = nullptr;
  std::optional<std::uint64_t> size_;
  bool short_ = false;
};

// io-error as read_bytes.
Result<ReadFile> open_for_read(const std::string& path);

// Writes `bytes` to `path` atomically (temporary file + rename); io-error on failure, in which
// case `path` is untouched.
Status write_bytes(const std::string& path, std::span<const std::uint8_t> bytes);
// The same for a file made of several parts, written one after the other (a header and a large
// body that is not copied next to it).
Status write_bytes(const std::string& path, std::initializer_list<std::span<const std::uint8_t>> parts);

}  // namespace qscheme::io
