//===- SvgTool.h - an external program that draws SVG, embedded in HTML ---===//
#ifndef DMC_COMPILER_REPORT_SVGTOOL_H
#define DMC_COMPILER_REPORT_SVGTOOL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace dmc::report {

/// Writes `input` to a temporary file (suffix `inputSuffix`), runs
/// `program args... -o OUT.svg IN` and returns the <svg> element alone: no XML
/// prolog, DOCTYPE, comments or xmlns attributes, so that it embeds in HTML
/// without naming any URL. Fails when the program does not succeed, with its
/// exit status (`exitCode`, -1 when it did not run) and its error output.
llvm::Expected<std::string> svgFromTool(const std::string &program,
                                        llvm::ArrayRef<std::string> args,
                                        llvm::StringRef input, llvm::StringRef inputSuffix,
                                        int *exitCode = nullptr);

} // namespace dmc::report

#endif // DMC_COMPILER_REPORT_SVGTOOL_H
