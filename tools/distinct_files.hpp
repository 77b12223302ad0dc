// An output that is also an input would be destroyed by the run that reads it (quantize
// --input x.npy --output x.npy replaced the tensor with JSON): every command checks each of its
// outputs against each of its inputs before reading anything.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "scheme/status.hpp"

namespace qscheme::cli {

struct NamedPath {
  std::string_view option;  // e.g. "--input"
  const std::string* path;  // null: the option was not given
};

// invalid-argument when `output` is the same file as one of `inputs` (io::same_file: device
// and inode, not the text), naming both options.
Status output_differs_from_inputs(NamedPath output, std::initializer_list<NamedPath> inputs);

}  // namespace qscheme::cli
