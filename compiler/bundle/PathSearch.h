//===- PathSearch.h - dmc compile --db's choices of graph, one by one -*- C++ -*-===//
//
// Each optional pass gives a layer two graphs; `dmc compile --db` prices both
// from the tuning database (PathChoice.h) and keeps the faster, one choice
// after the other: the dropout masks saved or drawn again, first for every
// dropout at once and then for each alone; attention fused or not; column
// sums inside the row kernels or apart; addends in the GEMMs or in kernels;
// the bias gradients' three modes; stacks written in place or copied.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_PATHSEARCH_H
#define DMC_COMPILER_BUNDLE_PATHSEARCH_H

#include "compiler/bundle/BundleWriter.h"
#include "compiler/bundle/DatabaseKnobs.h"
#include "passes/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <set>
#include <string>

namespace dmc::bundle {

/// The path kept so far: its pipeline, its tuned configuration and prices.
struct PathState {
  PipelineOptions pipeline;
  dmrt::Configuration config;
  DatabaseView view;
  std::string shape;    ///< stepShape of its graph
  bool changed = false; ///< config differs from the default bundle's
};

/// Builds the layer's configured training graph for a pipeline.
using GraphBuilder =
    llvm::function_ref<llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>(const PipelineOptions &)>;

/// Every choice in turn, from `db` (`device`'s records; empty: its only
/// device): `state` starts as the default path and ends as the chosen one.
/// `dropouts`: the ids dm-save-dropout-bits can save that the command line
/// left to the search (each is then chosen alone). Each choice's line goes to `log`.
llvm::Error choosePaths(GraphBuilder build, const BundleOptions &options, const std::string &db,
                        const std::string &device, const std::set<int64_t> &dropouts,
                        PathState &state, llvm::raw_ostream &log);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_PATHSEARCH_H
