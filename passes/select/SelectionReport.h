//===- SelectionReport.h - pricing and printing full assignments ---------===//
//
// The true cost function of ConfigProblem.h applied to one full assignment:
// the judge every solver's choice (and the default configuration) is priced
// by; and the two references the selection is reported against: the lower
// bound that ignores consistency between operators, and the forward-chain-only
// selection (ForwardChain.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_PASSES_SELECT_SELECTIONREPORT_H
#define DMC_PASSES_SELECT_SELECTIONREPORT_H

#include "passes/select/ConfigProblem.h"

namespace dmc::select {

struct TransposeCharge {
  int tensor = -1;
  int from = -1, to = -1; ///< layout indices
  double cost = 0;
  bool forResult = false; ///< to a result's fixed layout, not for a read
};

/// What one operator costs in an assignment: its configuration, and the
/// transposes of its reads and of the results it writes.
struct OpCharge {
  int config = -1;
  double configCost = 0;
  std::vector<TransposeCharge> transposes;
  double total = 0; ///< configCost plus the transposes, in that order
};

struct Evaluation {
  bool feasible = false;
  std::string reason; ///< why not, when infeasible
  double cost = 0;    ///< sum of the ops' totals, in op order
  std::vector<OpCharge> ops;
  /// Per tensor, the layout index it is stored in; -1 for unread arguments.
  std::vector<int> storedLayout;
};

/// Prices `assignment`. Errors: a malformed problem, or an assignment of the
/// wrong shape (sizes, indices out of range). An assignment that is well
/// formed but cannot run (an unavailable configuration, a forbidden
/// transpose) gives feasible = false and the reason.
Result<Evaluation> evaluate(const ConfigProblem &problem, const Assignment &assignment);

/// Sum over ops of each op's cheapest available configuration, ignoring
/// layouts and transposes: no consistent assignment costs less.
Result<double> lowerBound(const ConfigProblem &problem);

/// One line per op (configuration, its cost, each transpose paid), then the
/// total; or the reason an assignment is infeasible.
std::string formatEvaluation(const ConfigProblem &problem, const Evaluation &e);

// The forward-chain-only selection: what Substation's selection sees: a chain in which each operator only
// meets the layouts written by the operator immediately before it. Exactly:
// dynamic programming over (op, configuration) where the edge from
// configuration a of op i-1 to configuration b of op i costs
//   b's cost
//   + for each read of a tensor written by op i-1: the transpose from a's
//     written layout to b's read layout;
//   + for each read of an argument with a fixed layout: the transpose from it;
//   + the transposes of op i's results to their fixed layouts;
// while every other read (a residual or saved activation from further back,
// a free argument) is taken to be free. The chosen assignment is then priced
// "after the fact" by evaluate(): those reads pay the transpose from the
// layout their producer was given (free arguments get their cheapest layout),
// so the result is comparable with the exact shortest path, and may even be
// infeasible (a forbidden transpose the chain never saw).
struct ChainSelection {
  Assignment assignment; ///< configurations only: evaluate() picks arguments
  double chainCost = 0;  ///< what the chain model believed it costs
  Evaluation evaluation; ///< the true cost of `assignment`
};

/// Errors: a malformed problem, or no configuration of some op reachable from
/// the previous op's (transposes between neighbours forbidden).
Result<ChainSelection> forwardChainOnly(const ConfigProblem &problem);

/// A time for reports: %.6g ("12.5", "1e+06"), or "inf".
std::string formatMicros(double us);

} // namespace dmc::select

#endif
