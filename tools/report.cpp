// report(): the one place a Status becomes an "error: <code>: <message>" line and an exit status.
#include <iostream>

#include "tools/command.hpp"

namespace qscheme::cli {

int report(const Status& status) {
  std::cerr << "error: " << status.to_string() << '\n';
  return status.code() == ErrorCode::internal ? kExitInternal : kExitUser;
}

}  // namespace qscheme::cli
