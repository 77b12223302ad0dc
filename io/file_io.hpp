// Whole-file reads and all-or-nothing writes for the command line. A write to a file goes to a
// temporary file beside the target and is renamed over it only once complete, so a failed
// command never leaves a partial or truncated output behind.
#pragma once

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/temporaries.hpp"
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

// Whether a and b are the same file: device and inode, so a symlink, a hard link or another
// spelling of a path counts; `-` is standard output. False when either cannot be stat'ed (a
// path not created yet).
bool same_file(const std::string& a, const std::string& b);

// An output being written. For a regular file or a new path the bytes go to a temporary file
// beside the target (io/temporaries.hpp: registered, so a SIGINT or SIGTERM removes it) and
// commit() renames it over the target: until then the target is untouched, and a failed or
// abandoned write leaves it as it was. A symlink is followed: its target gets the new content
// (a dangling one: its target is created) and the link stays as it was. Anything else (a device
// such as /dev/null or /dev/full, a FIFO, a terminal, `-` for standard output, a descriptor's
// link such as /dev/stdout, which appends) is written through: those bytes cannot be taken
// back, and a write error (ENOSPC from /dev/full) is an io-error. Writes are buffered; errors
// name `path`, never the temporary. Move-only.
class OutputFile {
 public:
  // "-" is standard output. io-error when the path is a directory, names a folder that does not
  // exist or cannot be written, or cannot be opened.
  static Result<OutputFile> open(const std::string& path);
  OutputFile(OutputFile&& o) noexcept;
  OutputFile& operator=(OutputFile&& o) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Without commit(): removes the temporary; nothing at the target changes.
  ~OutputFile();

  // May be called many times; the first error sticks (later writes and commit() return it).
  Status write(std::span<const std::uint8_t> bytes);
  // A regular file or new path: close the temporary and rename it over the target (no fsync).
  // Anything else: flush and check for errors. Once only.
  Status commit();

 private:
  OutputFile() = default;
  Status flush();
  Status fail(int err);
  void discard();

  std::string path_;    // as given, for messages
  std::string target_;  // the name the temporary is renamed to (symlinks followed); empty: written through
  std::string temp_;
  Temporary registered_;
  int fd_ = -1;
  bool owns_fd_ = false;  // false for standard output, which stays open
  std::vector<std::uint8_t> buffer_;
  Status error_;
};

// Writes `bytes` to `path` through an OutputFile: all or nothing for a regular file.
Status write_bytes(const std::string& path, std::span<const std::uint8_t> bytes);
// The same for a file made of several parts, written one after the other (a header and a large
// body that is not copied next to it).
Status write_bytes(const std::string& path, std::initializer_list<std::span<const std::uint8_t>> parts);

}  // namespace qscheme::io
