#include "io/file_io.hpp"

#include "io/huge_pages.hpp"
#include "scheme/printable.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
    return Status(ErrorCode::io_error, "cannot read " + quote(path) + ": it is a directory");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status(ErrorCode::io_error, "cannot open " + quote(path) + ": " + std::strerror(errno));
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
  return Status(ErrorCode::io_error, "cannot read " + quote(path_) + ": " +
                                         (short_ ? "it ended early (did it change while being read?)" : "read error"));
}

Result<std::vector<std::uint8_t>> ReadFile::read_all() {
  if (size_) {
    // A regular file: one buffer of its size, no regrowing (each regrowth copied the bytes read
    // so far and paged in a larger buffer).
    std::vector<std::uint8_t> out;
    resize_on_huge_pages(out, static_cast<std::size_t>(*size_));
    if (!read(out.data(), out.size())) return error();
    if (!at_end()) return Status(ErrorCode::io_error, "cannot read " + quote(path_) + ": it grew while being read");
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

bool same_file(const std::string& a, const std::string& b) {
  const auto stat_of = [](const std::string& p, struct stat& st) {
    return p == "-" ? ::fstat(STDOUT_FILENO, &st) == 0 : ::stat(p.c_str(), &st) == 0;
  };
  struct stat sa {};
  struct stat sb {};
  return stat_of(a, sa) && stat_of(b, sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

namespace {

constexpr std::size_t kOutputBuffer = std::size_t{1} << 16;

// A descriptor's link in /proc (/proc/self/fd/1, /proc/123/task/123/fd/4): it stands for an
// open file, not for a name, and its text may name nothing (pipe:[123], "x (deleted)").
bool is_descriptor_link(const std::filesystem::path& p) {
  const std::string n = p.filename().string();
  return p.string().starts_with("/proc/") && p.parent_path().filename() == "fd" && !n.empty() &&
         n.find_first_not_of("0123456789") == std::string::npos;
}

// Where `path` leads through its symlinks: the name a rename must replace for the content to
// change there (`path` itself unless it is a symlink; a dangling link's final target), and
// whether a descriptor's link is on the way (/dev/stdout -> /proc/self/fd/1).
struct Links {
  std::string target;
  bool via_descriptor = false;
};

Result<Links> follow_links(const std::string& path) {
  std::filesystem::path p(path);
  bool via_descriptor = false;
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return Links{p.string(), via_descriptor};
    via_descriptor = via_descriptor || is_descriptor_link(p);
    std::error_code ec;
    const std::filesystem::path to = std::filesystem::read_symlink(p, ec);
    if (ec) return Status(ErrorCode::io_error, "cannot write " + quote(path) + ": " + ec.message());
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return Status(ErrorCode::io_error, "cannot write " + quote(path) + ": " + std::strerror(ELOOP));
}

}  // namespace

Result<OutputFile> OutputFile::open(const std::string& path) {
  OutputFile f;
  f.path_ = path;
  if (path == "-") {
    f.fd_ = STDOUT_FILENO;
    return f;
  }
  if (path.empty()) return Status(ErrorCode::io_error, "cannot write '': give a file name, or - for standard output");
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return f.fail(errno);
  if (exists && S_ISDIR(st.st_mode)) return Status(ErrorCode::io_error, "cannot write " + quote(path) + ": it is a directory");
  auto through = [&f](int flags) -> Result<OutputFile> {
    f.fd_ = ::open(f.path_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | flags);
    if (f.fd_ < 0) return f.fail(errno);
    f.owns_fd_ = true;
    return std::move(f);
  };
  // A device, FIFO or socket: replacing it with a file would break it for everyone else.
  if (exists && !S_ISREG(st.st_mode)) return through(0);
  auto links = follow_links(path);
  if (!links) return links.status();
  // An open file's stand-in (/dev/stdout redirected to a file): written where the process's
  // descriptor writes, at the end; so `>>` appends as it does for `-`.
  if (exists && links->via_descriptor) return through(O_APPEND);
  if (std::filesystem::path(links->target).filename().empty()) {
    return Status(ErrorCode::io_error, "cannot write " + quote(path) + ": not a file name");
  }
  f.target_ = std::move(links->target);
  for (int attempt = 0; attempt < 8 && f.fd_ < 0; ++attempt) {
    f.temp_ = temporary_name(f.target_);
    f.registered_ = Temporary(f.temp_, TemporaryKind::file);
    // O_EXCL | O_NOFOLLOW: never write through whatever already has the name (a stale
    // temporary, someone's symlink).
    f.fd_ = ::open(f.temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (f.fd_ < 0 && errno != EEXIST) break;
  }
  if (f.fd_ < 0) {
    const int err = errno;
    f.temp_.clear();
    f.registered_.release();
    return f.fail(err);
  }
  f.owns_fd_ = true;
  // The replaced file keeps its permissions.
  if (exists) (void)::fchmod(f.fd_, st.st_mode & 07777);
  return f;
}

OutputFile::OutputFile(OutputFile&& o) noexcept
    : path_(std::move(o.path_)),
      target_(std::move(o.target_)),
      temp_(std::move(o.temp_)),
      registered_(std::move(o.registered_)),
      fd_(o.fd_),
      owns_fd_(o.owns_fd_),
      buffer_(std::move(o.buffer_)),
      error_(std::move(o.error_)) {
  o.fd_ = -1;
  o.owns_fd_ = false;
  o.temp_.clear();
}

OutputFile& OutputFile::operator=(OutputFile&& o) noexcept {
  if (this != &o) {
    discard();
    path_ = std::move(o.path_);
    target_ = std::move(o.target_);
    temp_ = std::move(o.temp_);
    registered_ = std::move(o.registered_);
    fd_ = o.fd_;
    owns_fd_ = o.owns_fd_;
    buffer_ = std::move(o.buffer_);
    error_ = std::move(o.error_);
    o.fd_ = -1;
    o.owns_fd_ = false;
    o.temp_.clear();
  }
  return *this;
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
  owns_fd_ = false;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  // After the unlink: a signal in between finds the name registered and unlinks it too.
  registered_.release();
}

Status OutputFile::fail(int err) {
  const std::string where = path_ == "-" ? std::string("standard output") : quote(path_);
  error_ = Status(ErrorCode::io_error, "cannot write " + where + ": " + std::strerror(err));
  return error_;
}

Status OutputFile::write(std::span<const std::uint8_t> bytes) {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status(ErrorCode::internal, "OutputFile::write after commit()");
  if (bytes.empty()) return {};
  if (buffer_.size() + bytes.size() <= kOutputBuffer) {
    if (buffer_.capacity() < kOutputBuffer) buffer_.reserve(kOutputBuffer);
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    return {};
  }
  QSCHEME_RETURN_IF_ERROR(flush());
  if (bytes.size() < kOutputBuffer) return write(bytes);
  // Large pieces go straight to the file, not through the buffer.
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), std::min<std::size_t>(bytes.size(), std::size_t{1} << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(n < 0 ? errno : EIO);
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
  return {};
}

Status OutputFile::flush() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(n < 0 ? errno : EIO);
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
  return {};
}

Status OutputFile::commit() {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status(ErrorCode::internal, "OutputFile::commit() called twice");
  QSCHEME_RETURN_IF_ERROR(flush());
  if (owns_fd_) {
    const int closed = ::close(fd_);
    fd_ = -1;
    owns_fd_ = false;
    if (closed != 0) return fail(errno);
  }
  fd_ = -1;
  if (!target_.empty()) {
    if (::rename(temp_.c_str(), target_.c_str()) != 0) return fail(errno);
    temp_.clear();
    registered_.release();
  }
  return {};
}

Status write_bytes(const std::string& path, std::span<const std::uint8_t> bytes) { return write_bytes(path, {bytes}); }

Status write_bytes(const std::string& path, std::initializer_list<std::span<const std::uint8_t>> parts) {
  auto f = OutputFile::open(path);
  if (!f) return f.status();
  for (const auto& bytes : parts) QSCHEME_RETURN_IF_ERROR(f->write(bytes));
  return f->commit();
}

}  // namespace qscheme::io
