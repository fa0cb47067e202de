//===- ShortestPath.h - exact global configuration by shortest path ------===//
//
// The cuts between consecutive operators are the stages of a layered graph.
// A state at cut c is the tuple of stored layouts of every tensor live across
// c (live[c] in PreparedProblem.h): written before c, or an argument, and read
// at or after c. Residual connections and activations saved for the backward
// pass therefore stay in the state for as long as they are needed, unlike
// Substation, which kept only the previous operator's outputs.
//
// An edge from a state at cut c is an available configuration of op c: it
// pays the configuration's cost plus a transpose for each read whose layout
// differs from the stored one (forbidden transposes: no edge) plus the
// transposes of results to their fixed layouts; it leads to the state at cut
// c+1 made of the surviving layouts and the layouts op c writes. Start
// states enumerate the free arguments' layouts (fixed ones have one), the
// end cut has a single empty state. Dynamic programming over the cuts, with
// a backpointer per state, gives the exact shortest path.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_PASSES_SELECT_SHORTESTPATH_H
#define DMC_PASSES_SELECT_SHORTESTPATH_H

#include "passes/select/ConfigProblem.h"

#include <cstddef>

namespace dmc::select {

struct SolveOptions {
  /// > 0: keep the k best layouts per tensor (see prepare() in
  /// PreparedProblem.h) to bound the number of states. 0: unlimited.
  int maxLayoutsPerTensor = 0;
};

struct Solution {
  /// A configuration per op and the chosen layout of every read argument
  /// without a fixed layout; evaluate() prices it at exactly `cost`.
  Assignment assignment;
  double cost = 0; ///< predicted microseconds
  size_t states = 0; ///< over all cuts
  size_t edges = 0;  ///< allowed edges relaxed (forbidden ones not counted)
  std::vector<size_t> statesPerCut; ///< #ops + 1 entries
  size_t peakStates = 0;
  /// Whether pruning removed a layout. Then the path is optimal only over the
  /// pruned space: the true optimum may be cheaper.
  bool pruned = false;
  bool exact = true; ///< !pruned
};

/// Errors: a malformed problem, or no feasible path (naming the op where the
/// frontier became empty and an example of the forbidden transpose).
Result<Solution> solveShortestPath(const ConfigProblem &problem,
                                   const SolveOptions &options = {});

/// The statistics and exactness of `s`, then formatEvaluation() of its
/// assignment.
std::string formatSolution(const ConfigProblem &problem, const Solution &s);

} // namespace dmc::select

#endif
