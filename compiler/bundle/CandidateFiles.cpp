//===- CandidateFiles.cpp - The files of dmc tune's candidate bundles -----===//
#include "compiler/bundle/CandidateFiles.h"
#include "compiler/bundle/PathKnobs.h"

#include "compiler/Driver.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace dmc::bundle {

namespace {
llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

llvm::Expected<std::string> writeGraph(mlir::func::FuncOp f, const std::string &dir,
                                       const BundleOptions &options, WrittenBundle *written) {
  std::string log;
  llvm::raw_string_ostream os(log);
  if (llvm::Error e = writeBundle(f, dir, options, os, written))
    return std::move(e);
  return stepShape(f);
}

llvm::Error copyReferences(const std::string &from, const std::string &to) {
  llvm::sys::fs::remove_directories(to);
  if (std::error_code ec = llvm::sys::fs::create_directories(to))
    return fail(to + ": " + ec.message());
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(from, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::SmallString<256> dest(to);
    llvm::sys::path::append(dest, llvm::sys::path::filename(it->path()));
    if (std::error_code c = llvm::sys::fs::copy_file(it->path(), dest))
      return fail(dest + ": " + c.message());
  }
  return ec ? fail(from + ": " + ec.message()) : llvm::Error::success();
}

llvm::Error writeTuneSteps(const std::string &path, const std::vector<std::string> &steps) {
  std::string kernels, contractions;
  for (const std::string &s : steps) {
    std::string &list = s[0] == 'k' ? kernels : contractions;
    list += (list.empty() ? "" : ",") + s.substr(1);
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fail(path + ": cannot write: " + ec.message());
  os << "kernels " << (kernels.empty() ? "-" : kernels) << "\ncontractions "
     << (contractions.empty() ? "-" : contractions) << "\n";
  return llvm::Error::success();
}

llvm::Error emitPathKnobs(mlir::func::FuncOp f, const std::string &dir, const std::string &file,
                          const WrittenBundle &path, const WrittenBundle &base,
                          BundleOptions options, int n, int limit) {
  if (n == 1)
    return llvm::Error::success();
  std::vector<size_t> own = kernelsOnlyIn(path.manifest, base.manifest);
  const std::string stem = file.substr(0, file.size() - std::string(".dmlib").size());
  options.reference = false;
  options.referenceCache = nullptr;
  std::vector<std::map<size_t, int>> bundles = pathKnobBundles(f, own, n, limit);
  for (size_t j = 0; j < bundles.size(); ++j) {
    options.kernelConfigs = bundles[j];
    std::vector<std::string> steps;
    std::string which;
    for (auto [k, i] : bundles[j]) {
      steps.push_back("k" + std::to_string(k));
      which += (which.empty() ? "" : ", ") + steps.back() + " #" + std::to_string(i);
    }
    std::string b = dir + "/" + stem + "-k" + std::to_string(j) + ".dmlib";
    if (auto written = writeGraph(f, b, options); !written)
      return written.takeError();
    if (llvm::Error e = copyReferences(dir + "/" + file + "/reference", b + "/reference"))
      return e;
    if (llvm::Error e = writeTuneSteps(b + "/tune-steps", steps))
      return e;
    llvm::errs() << "dmc tune: " << b << " (" << file << "'s own kernels in other knobs: "
                 << which << ")\n";
  }
  return llvm::Error::success();
}

} // namespace dmc::bundle
