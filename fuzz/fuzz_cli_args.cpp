// fuzz_cli_args: arbitrary argument vectors (tokens separated by NUL bytes) to the qscheme command line's parser (tools/command_line.hpp) and the option parsers every subcommand shares.
// Failure: a crash or an exception out of parsing, an outcome other than one subcommand, --help/--version or an invalid-argument error with a message, two parses of the same argv that disagree, a rejected option value without a typed error and message, or validate exiting with anything but 0 or 2.
#include <optional>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "scheme/text.hpp"
#include "tools/command_line.hpp"
#include "tools/engine_options.hpp"
#include "tools/file_formats.hpp"
#include "tools/float_args.hpp"
#include "tools/shape_arg.hpp"

namespace {

// Tuning knobs.
// More tokens than any command takes; a longer argv only repeats options.
constexpr std::size_t kMaxTokens = 32;

using qscheme::ErrorCode;
using qscheme::Status;

void expect_rejection(const Status& st, std::initializer_list<ErrorCode> allowed, const std::string& token) {
  bool listed = false;
  for (ErrorCode c : allowed) listed = listed || st.code() == c;
  FUZZ_ASSERT_MSG(listed, st.to_string() + " for '" + token + "'");
  FUZZ_ASSERT_MSG(!st.message().empty(), token);
}

// The parsers behind --shape, --scales/--global, --threads, --scheme and the output name, on
// one token. A name ending in .npy would make parse_f32_list read a file: not here.
void parse_as_every_option(const std::string& token) {
  using namespace qscheme::cli;
  if (auto s = parse_shape(token); !s) expect_rejection(s.status(), {ErrorCode::invalid_argument, ErrorCode::shape_overflow}, token);
  if (auto f = parse_f32(token, "--global"); !f) expect_rejection(f.status(), {ErrorCode::invalid_argument}, token);
  if (!has_extension(token, ".npy")) {
    if (auto l = parse_f32_list(token, "--scales"); !l) expect_rejection(l.status(), {ErrorCode::invalid_argument}, token);
  }
  if (auto t = parse_threads(token); !t) expect_rejection(t.status(), {ErrorCode::invalid_argument}, token);
  if (auto s = qscheme::parse_scheme(token); !s) expect_rejection(s.status(), {ErrorCode::malformed_scheme}, token);
  for (const std::optional<std::string>& format : {std::optional<std::string>{}, std::optional<std::string>{token}}) {
    if (auto o = output_format("quantize", kQuantizeFormats, token, format); !o) {
      expect_rejection(o.status(), {ErrorCode::invalid_argument}, token);
    }
  }
}

struct Summary {
  std::string command;
  std::optional<int> exit;
  std::string error;
  bool operator==(const Summary&) const = default;
};

Summary summarize(const qscheme::cli::ParseOutcome& p) {
  return {p.command ? p.command->app->get_name() : "", p.exit, p.error.ok() ? "" : p.error.to_string()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace qscheme::cli;
  std::vector<std::string> tokens{"qscheme"};
  std::string current;
  for (std::size_t i = 0; i < size && tokens.size() <= kMaxTokens; ++i) {
    if (data[i] == 0) {
      tokens.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (tokens.size() <= kMaxTokens && (size == 0 || data[size - 1] != 0)) tokens.push_back(std::move(current));
  // argv as a shell hands it over: NUL-terminated strings, each in its own allocation.
  std::vector<const char*> argv;
  for (const std::string& t : tokens) argv.push_back(t.c_str());

  for (std::size_t i = 1; i < tokens.size(); ++i) parse_as_every_option(tokens[i]);

  CommandLine cli;
  const ParseOutcome parsed = cli.parse(static_cast<int>(argv.size()), argv.data());
  const int outcomes = (parsed.command != nullptr) + parsed.exit.has_value() + !parsed.error.ok();
  FUZZ_ASSERT_MSG(outcomes == 1, "parse gave " + std::to_string(outcomes) + " outcomes");
  if (parsed.exit) FUZZ_ASSERT(*parsed.exit == 0);
  if (!parsed.error.ok()) {
    FUZZ_ASSERT_MSG(parsed.error.code() == ErrorCode::invalid_argument, parsed.error.to_string());
    FUZZ_ASSERT(!parsed.error.message().empty());
  }
  CommandLine again;
  FUZZ_ASSERT_MSG(summarize(again.parse(static_cast<int>(argv.size()), argv.data())) == summarize(parsed),
                  "the same argv parsed twice disagrees");
  FUZZ_TRACE("trace: argv of %zu -> %s\n", tokens.size(),
             parsed.command ? parsed.command->app->get_name().c_str() : parsed.exit ? "exit" : "error");

  // validate reads and writes no file: run it to the end. The other subcommands touch files
  // named in argv, so only their parsing is fuzzed.
  if (parsed.command && parsed.command->app->get_name() == "validate") {
    const int status = parsed.command->run();
    FUZZ_ASSERT_MSG(status == kExitOk || status == kExitUser, "validate exited " + std::to_string(status));
  }
  return 0;
}
