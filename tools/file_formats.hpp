// Which format a command writes to an output, and reads from an input, decided in one place:
// by the file name's extension, compared case-insensitively (x.BIN is a .bin), or by --format
// where the name has no extension the command writes (`-` for standard output, a device, a
// FIFO). An extension the command cannot write is refused, naming the ones it can.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "scheme/status.hpp"

namespace qscheme::cli {

struct FileFormat {
  std::string_view name;       // the --format value
  std::string_view extension;  // with its dot, lower case
  std::string_view what;       // for messages
};

// What each command writes, first the one a lone format defaults to.
inline constexpr FileFormat kQuantizeFormats[] = {
    {"json", ".json", "Q.json"},
    {"bin", ".bin", "Burn's bytes"},
};
inline constexpr FileFormat kDequantizeFormats[] = {
    {"npy", ".npy", "a float32 tensor"},
};

// Whether the last extension of `path` is `extension` (with its dot), ignoring ASCII case.
bool has_extension(std::string_view path, std::string_view extension);

// The format `command` writes to `output`: --format when given (invalid-argument for a name the
// command does not write, or one that contradicts an extension the command writes), else the
// output's extension. `-` takes a lone format without --format. invalid-argument otherwise,
// naming the extensions and the --format values.
Result<FileFormat> output_format(std::string_view command, std::span<const FileFormat> formats,
                                 const std::string& output, const std::optional<std::string>& format);

// The help text of --format for `formats`, e.g. "json or bin: the output's format, ...".
std::string format_option_help(std::span<const FileFormat> formats);

}  // namespace qscheme::cli
