#include "io/output_dir.hpp"

#include <filesystem>

#include "scheme/printable.hpp"

namespace qscheme::io {

namespace fs = std::filesystem;

Status OutputDir::fail(const std::string& why) const {
  return Status(ErrorCode::io_error, "cannot write the folder " + quote(path_) + ": " + why);
}

Result<OutputDir> OutputDir::create(const std::string& path) {
  OutputDir d;
  d.path_ = path;
  if (path == "-") {
    return Status(ErrorCode::invalid_argument, "'-' (standard output) cannot hold a folder of files; give a folder name");
  }
  if (path.empty()) return d.fail("give a folder name");
  fs::path target(path);
  if (target.filename().empty()) target = target.parent_path();  // "out/"
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) return d.fail("it exists and is not a folder");
    if (!fs::is_empty(target, ec) || ec) return d.fail("it exists and is not empty; name a new or an empty folder");
    // A symlink to a folder stays a symlink: the folder it names is the one replaced.
    target = fs::canonical(target, ec);
    if (ec) return d.fail(ec.message());
  }
  d.target_ = target.string();
  // The temporary goes into the nearest folder that exists, so that the target's missing parent
  // folders are made only by commit() and the rename stays within one file system.
  fs::path base = target.parent_path();
  while (!base.empty() && !fs::exists(base, ec)) base = base.parent_path();
  for (int attempt = 0; attempt < 8 && d.temp_.empty(); ++attempt) {
    const std::string temp = temporary_name((base / target.filename()).string());
    d.registered_ = Temporary(temp, TemporaryKind::tree);
    if (fs::create_directory(temp, ec)) d.temp_ = temp;
    else if (ec) break;  // not an existing name: no point in trying another
  }
  if (d.temp_.empty()) {
    d.registered_.release();
    return d.fail(ec ? ec.message() : "no free temporary name");
  }
  return d;
}

OutputDir::OutputDir(OutputDir&& o) noexcept
    : path_(std::move(o.path_)),
      target_(std::move(o.target_)),
      temp_(std::move(o.temp_)),
      registered_(std::move(o.registered_)) {
  o.temp_.clear();
}

OutputDir::~OutputDir() {
  if (temp_.empty()) return;
  std::error_code ec;
  fs::remove_all(temp_, ec);
  registered_.release();
}

Status OutputDir::commit() {
  if (temp_.empty()) return Status(ErrorCode::internal, "OutputDir::commit() called twice");
  std::error_code ec;
  const fs::path parent = fs::path(target_).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return fail(ec.message());
  fs::rename(temp_, target_, ec);
  if (ec) return fail(ec.message());
  temp_.clear();
  registered_.release();
  return {};
}

}  // namespace qscheme::io
