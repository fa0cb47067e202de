//===- TuneBundles.h - dmrt-tune: the candidate bundles and their runs ----===//
//
// Private to dmrt-tune (tuning-db/tools/dmrt-tune.cpp): which bundles a
// candidates folder holds and in which order, a layout candidate's
// tune-steps, the child process that measures one, and the fastest
// candidate of each problem seen so far. MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TUNINGDB_TOOLS_TUNEBUNDLES_H
#define DMC_TUNINGDB_TOOLS_TUNEBUNDLES_H

#include "tuning-db/Record.h"

#include <map>
#include <string>
#include <vector>

namespace dmc::tuningdb {

std::string folderOf(const std::string &path);
/// The folder of the running executable (argv0's when /proc says nothing).
std::string selfFolder(const char *argv0);
bool isFile(const std::string &p);

/// A bundle of another path of the whole graph (dmc tune writes them:
/// unfused, apart, bgrad, nobgrad, noaddend).
bool isPathBundle(const std::string &name);

/// default.dmlib, unfused.dmlib, then the other path bundles (by name), then
/// cN.dmlib by N, then any other bundle by name.
std::vector<std::string> bundlesOf(const std::string &dir);

/// A layout candidate's `tune-steps` (docs/bundle-format.md): the steps it
/// changed, "kernels 3,5" and "contractions 1" ("-": none). False when the
/// file is absent (`error` empty) or malformed (`error` says why).
bool readTuneSteps(const std::string &path, std::string &kernels, std::string &contractions,
                   std::string &error);

/// Runs `args` with stdout and stderr to `log`; the exit status (-1: not run).
/// Safe from several threads at once: the child only opens, dups and execs.
int runChild(const std::vector<std::string> &args, const std::string &log);

/// The fastest checked candidate of each problem seen in this run, and the
/// problems a bundle made faster ("faster: NAME 252.6 -> 233.3 us (c12.dmlib)").
class BestSoFar {
public:
  std::string update(const std::vector<Record> &records, const std::string &bundle);
  size_t problems() const { return best_.size(); }

private:
  std::map<std::string, double> best_;
};

/// "0,1,3" -> {0, 1, 3}: device ordinals, each once; false with `error`
/// naming the value otherwise.
bool parseDevices(const std::string &list, std::vector<int> &devices, std::string &error);

} // namespace dmc::tuningdb

#endif // DMC_TUNINGDB_TOOLS_TUNEBUNDLES_H
