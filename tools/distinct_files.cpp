#include "tools/distinct_files.hpp"

#include "io/file_io.hpp"
#include "scheme/printable.hpp"

namespace qscheme::cli {

Status output_differs_from_inputs(NamedPath output, std::initializer_list<NamedPath> inputs) {
  if (!output.path) return {};
  for (const NamedPath& in : inputs) {
    if (!in.path || !io::same_file(*output.path, *in.path)) continue;
    const std::string out_name = *output.path == "-" ? std::string("- (standard output)") : quote(*output.path);
    return Status(ErrorCode::invalid_argument, std::string(output.option) + " " + out_name + " is the same file as " +
                                                   std::string(in.option) + " " + quote(*in.path) +
                                                   ": writing it would destroy the input; choose another output");
  }
  return {};
}

}  // namespace qscheme::cli
