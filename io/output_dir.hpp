// A folder of outputs written all or nothing (`qscheme vectors`): the files go into a temporary
// folder beside the target (registered with io/temporaries.hpp, so SIGINT and SIGTERM remove
// it) and commit() renames it into place; without commit() it is removed with everything in
// it, so a failed run leaves nothing. The target must not exist yet or be an empty folder:
// nothing already there is ever replaced or mixed with the new files.
#pragma once

#include <string>

#include "io/temporaries.hpp"
#include "scheme/status.hpp"

namespace qscheme::io {

class OutputDir {
 public:
  // invalid-argument for `-` (standard output holds no folder); io-error when the path exists
  // and is not an empty folder, or the temporary folder cannot be made.
  static Result<OutputDir> create(const std::string& path);
  OutputDir(OutputDir&& o) noexcept;
  OutputDir& operator=(OutputDir&&) = delete;
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  // Without commit(): removes the temporary folder and what it holds.
  ~OutputDir();

  // The folder to write into until commit().
  const std::string& path() const { return temp_; }
  // Renames the temporary folder to the target (making the target's parent folders). Once only.
  Status commit();

 private:
  OutputDir() = default;
  Status fail(const std::string& why) const;

  std::string path_;    // as given, for messages
  std::string target_;  // symlinks followed
  std::string temp_;
  Temporary registered_;
};

}  // namespace qscheme::io
