//===- PathSearch.cpp - dmc compile --db's choices of graph, one by one ---===//
#include "compiler/bundle/PathSearch.h"

#include "compiler/Driver.h"
#include "compiler/bundle/PathChoice.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace dmc::bundle {
namespace {

/// What the search needs besides the path kept.
struct Search {
  GraphBuilder build;
  const BundleOptions &options;
  const std::string &db, &device;
  raw_ostream &log;

  /// Prices `alternative` against the path kept and keeps the faster (or
  /// the only one priced): the line goes to `log`.
  Error consider(const PipelineOptions &alternative, const PathNames &names, PathState &state) {
    auto module = build(alternative);
    if (!module)
      return module.takeError();
    auto f = layerFunction(**module);
    std::string shape = stepShape(f);
    if (shape == state.shape)
      return Error::success(); // the pass found nothing: one path only
    SmallString<128> tmp;
    if (std::error_code ec = sys::fs::createUniqueDirectory("dmc-alternative", tmp))
      return createStringError(ec, "cannot make a temporary folder: " + ec.message());
    BundleOptions o = options;
    o.reference = false;
    WrittenBundle written;
    std::string quietLog;
    raw_string_ostream quiet(quietLog);
    bool changed = false;
    dmrt::Configuration config;
    DatabaseView view;
    Error e = writeBundle(f, (tmp + "/alternative.dmlib").str(), o, quiet, &written);
    if (!e)
      e = knobsFromDatabase(written, db, device, config, changed, quiet, &view);
    sys::fs::remove_directories(tmp);
    if (e)
      return e;
    PathChoice choice = choosePath(names, state.view, view);
    log << "dmc compile: " << choice.line << "\n";
    if (choice.alternative)
      state = {alternative, std::move(config), std::move(view), std::move(shape), true};
    return Error::success();
  }

  /// Each dropout of `ids` alone: its mask saved if the path kept draws it,
  /// else drawn again.
  Error eachDropout(const std::set<int64_t> &ids, PathState &state) {
    for (int64_t id : ids) {
      PipelineOptions off = state.pipeline;
      bool saved = off.dropoutBits && !llvm::is_contained(off.drawnDropouts, id);
      if (!off.dropoutBits) { // every mask drawn: all but this one stay so
        off.dropoutBits = true;
        off.drawnDropouts.insert(off.drawnDropouts.end(), ids.begin(), ids.end());
      }
      if (saved)
        off.drawnDropouts.push_back(id);
      else
        llvm::erase(off.drawnDropouts, id);
      std::string what = "dropout " + std::to_string(id) + "'s mask";
      const char *savedName = "saved for the backward", *drawnName = "drawn again";
      if (Error e = consider(off, {what.c_str(), saved ? savedName : drawnName,
                                   saved ? drawnName : savedName},
                             state))
        return e;
    }
    return Error::success();
  }
};

const char *biasGradsName(const std::string &mode) {
  return mode == "all"    ? "in every GEMM that computes them"
         : mode == "none" ? "in kernels"
                          : "in the GEMMs where they save bytes";
}

} // namespace

Error choosePaths(GraphBuilder build, const BundleOptions &options, const std::string &db,
                  const std::string &device, const std::set<int64_t> &dropouts,
                  PathState &state, raw_ostream &log) {
  Search search{build, options, db, device, log};
  struct Alternative {
    bool PipelineOptions::*pass; ///< null: biasGrads becomes `mode`
    const char *what, *on, *off;
    const char *mode = nullptr;
  };
  for (const Alternative &alt :
       {// First: saving keep bits changes the signatures of the kernels every other
        // choice prices (gpt2-medium, H200: decided last, it kept the bits under
        // bias gradients in every GEMM, 1.772 ms measured; first, drawing and
        // bias gradients in kernels, 1.708 ms).
        Alternative{&PipelineOptions::dropoutBits, "dropout masks", "saved for the backward",
                    "drawn again"},
        Alternative{&PipelineOptions::fusedAttention, "attention", "fused", "unfused"},
        Alternative{&PipelineOptions::columnFusion, "column sums", "in the row kernels", "apart"},
        Alternative{&PipelineOptions::gemmAddends, "addends", "in the GEMMs (C)", "in kernels"},
        Alternative{nullptr, "bias gradients", nullptr, nullptr, "all"},
        Alternative{nullptr, "bias gradients", nullptr, nullptr, "none"},
        Alternative{&PipelineOptions::stackInPlace, "stacks", "written in place", "copied"}}) {
    PipelineOptions off = state.pipeline;
    PathNames names{alt.what, alt.on, alt.off};
    if (alt.pass) {
      if (!(state.pipeline.*alt.pass))
        continue;
      off.*alt.pass = false;
    } else {
      if (!state.pipeline.epilogues || state.pipeline.biasGrads == alt.mode)
        continue;
      off.biasGrads = alt.mode;
      names.current = biasGradsName(state.pipeline.biasGrads);
      names.alternative = biasGradsName(alt.mode);
    }
    if (Error e = search.consider(off, names, state))
      return e;
    // Then each dropout alone, from the path the first choice kept: one
    // mask may be worth saving where another is not.
    if (alt.pass == &PipelineOptions::dropoutBits && dropouts.size() > 1)
      if (Error e = search.eachDropout(dropouts, state))
        return e;
  }
  return Error::success();
}

} // namespace dmc::bundle
