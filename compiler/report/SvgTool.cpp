//===- SvgTool.cpp - an external program that draws SVG, embedded in HTML -===//
#include "compiler/report/SvgTool.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <vector>

namespace dmc::report {
namespace {

/// Removes a temporary file when it goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

llvm::Expected<std::string> svgFromTool(const std::string &program,
                                        llvm::ArrayRef<std::string> args,
                                        llvm::StringRef input, llvm::StringRef inputSuffix,
                                        int *exitCode) {
  if (exitCode)
    *exitCode = -1;
  TempFile in, out, err;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("dmc-report", inputSuffix, fd, in.path))
    return failure("cannot create a temporary file: " + ec.message());
  {
    llvm::raw_fd_ostream file(fd, /*shouldClose=*/true);
    file << input;
  }
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("dmc-report", "svg", out.path))
    return failure("cannot create a temporary file: " + ec.message());
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("dmc-report", "err", err.path))
    return failure("cannot create a temporary file: " + ec.message());

  std::vector<llvm::StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  argv.insert(argv.end(), {"-o", out.path, in.path});
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(err.path),
                                                llvm::StringRef(err.path)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/120, 0, &message);
  if (exitCode)
    *exitCode = rc;
  if (rc != 0) {
    std::string detail = message;
    if (auto buf = llvm::MemoryBuffer::getFile(err.path);
        buf && !(*buf)->getBuffer().trim().empty())
      detail += (detail.empty() ? "" : ": ") + (*buf)->getBuffer().trim().str();
    return failure("'" + program + "' failed (exit " + llvm::Twine(rc) + ")" +
                   (detail.empty() ? "" : ": " + detail));
  }
  auto buf = llvm::MemoryBuffer::getFile(out.path);
  if (!buf)
    return failure("cannot read the output of '" + program + "': " + buf.getError().message());

  llvm::StringRef svg = (*buf)->getBuffer();
  size_t start = svg.find("<svg");
  if (start == llvm::StringRef::npos)
    return failure("'" + program + "' produced no <svg> element");
  std::string element = svg.drop_front(start).trim().str();
  // Namespace attributes name URLs and are implied for <svg> inside HTML.
  llvm::Regex xmlns(" xmlns(:[a-z]+)?=\"[^\"]*\"");
  while (xmlns.match(element))
    element = xmlns.sub("", element);
  return element;
}

} // namespace dmc::report
