// report(): the one place a Status becomes an "error: <code>: <message>" line and an exit status.
#include <iostream>

#include "scheme/printable.hpp"
#include "tools/command.hpp"
#include "tools/progress.hpp"

namespace qscheme::cli {

int report(const Status& status) {
  // The message's own quotes stay; a control byte that slipped into it (from a message that
  // quoted a user's string without printable()) cannot reach the terminal or split the line.
  clear_progress_line();
  std::cerr << "error: " << printable(status.to_string(), Quotes::keep) << '\n';
  return status.code() == ErrorCode::internal ? kExitInternal : kExitUser;
}

}  // namespace qscheme::cli
