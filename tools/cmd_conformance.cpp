// `qscheme conformance DIR`: run the ONNX QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear node tests in DIR (oracle/onnx/conformance.hpp) with both engines under
// profile onnx and print the table, which lists every other case as skipped with the reason.
// Exit 0 when every expressible case passes (in both engines, or in the reference where the fast
// engine refuses the scheme with unsupported-engine), 3 when one fails, 2 for a bad directory or one
// where no case ran (all skipped or outside the scheme model: then nothing was checked).
#include <iostream>
#include <memory>
#include <string>

#include "scheme/printable.hpp"
#include "tools/command.hpp"
#include "oracle/onnx/conformance.hpp"

namespace qscheme::cli {

void add_conformance(CLI::App& root, std::vector<Command>& out) {
  auto dir = std::make_shared<std::string>();
  CLI::App* app = root.add_subcommand(
      "conformance", "Run the ONNX QuantizeLinear/DequantizeLinear/DynamicQuantizeLinear conformance cases in DIR (profile onnx, "
      "both engines); other cases are listed as skipped");
  app->add_option("dir", *dir, "folder of ONNX node-test case folders (test_*/model.onnx, test_data_set_0/)")->required();
  out.push_back({app, [dir] {
                   auto r = oracle::run_conformance(*dir);
                   if (!r) return report(r.status());
                   std::cout << oracle::conformance_table(*r);
                   if (r->run() == 0) {
                     // Nothing checked is not a pass: say so, and why, rather than exit 0.
                     return report({ErrorCode::invalid_argument,
                                    "ran none of the " + std::to_string(r->cases.size()) + " case(s) in " +
                                        printable(*dir) +
                                        ": each is skipped or outside the scheme model (the reasons are in the table above)"});
                   }
                   return r->passed() + r->reference_only() == r->run() ? kExitOk : 3;
                 }});
}

}  // namespace qscheme::cli
