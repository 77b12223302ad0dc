#include "tools/file_formats.hpp"

#include <filesystem>

#include "scheme/printable.hpp"

namespace qscheme::cli {
namespace {

std::string lower_extension(std::string_view path) {
  std::string ext = std::filesystem::path(std::string(path)).extension().string();
  for (char& c : ext) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return ext;
}

// "a (x), b (y) or c (z)" over one field of each format.
std::string listed(std::span<const FileFormat> formats, std::string_view FileFormat::*field) {
  std::string out;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    if (i > 0) out += i + 1 == formats.size() ? " or " : ", ";
    out += std::string(formats[i].*field) + " (" + std::string(formats[i].what) + ")";
  }
  return out;
}

std::string names(std::span<const FileFormat> formats, std::string_view separator) {
  std::string out;
  for (const FileFormat& f : formats) out += (out.empty() ? "" : std::string(separator)) + std::string(f.name);
  return out;
}

}  // namespace

bool has_extension(std::string_view path, std::string_view extension) { return lower_extension(path) == extension; }

Result<FileFormat> output_format(std::string_view command, std::span<const FileFormat> formats,
                                 const std::string& output, const std::optional<std::string>& format) {
  const std::string ext = output == "-" ? std::string() : lower_extension(output);
  const FileFormat* by_extension = nullptr;
  for (const FileFormat& f : formats) {
    if (f.extension == ext) by_extension = &f;
  }
  const std::string named_output = output == "-" ? std::string("- (standard output)") : quote(output);
  if (format) {
    for (const FileFormat& f : formats) {
      if (f.name != *format) continue;
      if (by_extension && by_extension != &f) {
        return Status(ErrorCode::invalid_argument, "--output " + named_output + " is a " + ext + " name but --format is " +
                                                       std::string(f.name) + "; drop --format or rename the output");
      }
      return f;
    }
    return Status(ErrorCode::invalid_argument, "--format " + quote(*format) + ": " + std::string(command) + " writes " +
                                                   listed(formats, &FileFormat::name));
  }
  if (by_extension) return *by_extension;
  // A name without any extension ("-", /dev/stdout, a FIFO) is unambiguous for a lone format.
  if (ext.empty() && formats.size() == 1) return formats[0];
  return Status(ErrorCode::invalid_argument, "--output " + named_output + ": " + std::string(command) + " writes " +
                                                 listed(formats, &FileFormat::extension) + "; --format " +
                                                 names(formats, "|") + " names the format for - (standard output) and other names");
}

std::string format_option_help(std::span<const FileFormat> formats) {
  return names(formats, " or ") + ": the output's format where its name does not say it (- for standard output, a "
                                  "device, a FIFO); default: the extension, case-insensitive";
}

}  // namespace qscheme::cli
