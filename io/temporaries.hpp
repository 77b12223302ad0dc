// The one registry of temporary files and directories that exist only until an output is
// renamed into place (OutputFile, the vectors folder). A run stopped by SIGINT, SIGTERM or SIGHUP
// removes them before it dies; SIGKILL cannot be caught, so every temporary carries a name that
// no input or output detection matches (temporary_name below) and is created exclusively: a
// stale one is never written through, renamed into place or read as a result, only left over.
#pragma once

#include <string>

namespace qscheme::io {

// `.NAME.qscheme-tmp.<pid>.<16 hex digits>` in the folder of `target` (the random part from the
// kernel's generator); NAME is shortened so the whole name fits in 255 bytes.
std::string temporary_name(const std::string& target);

enum class TemporaryKind : unsigned char { file, tree };

// Holds one registered path while it lives: a signal handler installed by
// remove_temporaries_on_signals() unlinks it (a tree: its files and folders, three levels deep
// at most). Registration happens before the path is created, removal after it is renamed or
// removed, so no window leaves one behind. Paths past PATH_MAX, or more than 64 live at once,
// are not registered (a signal then leaves them, as SIGKILL does). Move-only.
class Temporary {
 public:
  Temporary() = default;
  Temporary(const std::string& path, TemporaryKind kind);
  Temporary(Temporary&& o) noexcept : slot_(o.slot_) { o.slot_ = -1; }
  Temporary& operator=(Temporary&& o) noexcept;
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  // Unregisters; the path itself is the owner's to rename or remove.
  ~Temporary() { release(); }
  void release();

 private:
  int slot_ = -1;
};

// Installs the handler for SIGINT, SIGTERM and SIGHUP (not for one the process inherited as
// ignored): it unlinks every registered temporary, then the signal is raised again with the
// default action, so the exit status still says "killed by signal". For programs (the command
// line), not for libraries that share a process with someone else's handlers.
void remove_temporaries_on_signals();

}  // namespace qscheme::io
