//===- PreparedProblem.h - a validated, indexed ConfigProblem ------------===//
//
// Every solver starts here: the problem is checked (errors as values, naming
// the op, configuration and tensor), layouts become small indices, transpose
// costs a table per tensor, and liveness gives the tensors crossing each cut.
// Optionally the layouts a tensor may be stored in are pruned to the k best.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_PASSES_SELECT_PREPAREDPROBLEM_H
#define DMC_PASSES_SELECT_PREPAREDPROBLEM_H

#include "passes/select/ConfigProblem.h"

#include <cstdint>

namespace dmc::select {

struct PreparedConfig {
  int index = -1;                 ///< into the source op's configs
  double cost = 0;
  std::vector<uint8_t> readLayout;  ///< per op read, layout index
  std::vector<uint8_t> writeLayout; ///< per op write, layout index
};

struct PreparedOp {
  std::vector<int> reads, writes;
  std::vector<bool> transposable; ///< per read (Op::transposable, filled in)
  std::vector<PreparedConfig> configs; ///< available (and not pruned) only
};

struct PreparedProblem {
  const ConfigProblem *source = nullptr;
  std::vector<int> producer;  ///< per tensor: op index, -1 for arguments
  std::vector<int> lastRead;  ///< per tensor: last reading op, -1 if unread
  std::vector<int> fixed;     ///< per tensor: fixed layout index or -1
  /// Per tensor, the layouts it may be stored in, best first when pruned.
  std::vector<std::vector<uint8_t>> storable;
  std::vector<PreparedOp> ops;
  /// live[c]: tensors stored across the cut before op c (c = 0..#ops),
  /// ascending ids: produced before c (or arguments) and read at or after c.
  std::vector<std::vector<int>> live;
  bool pruned = false;
  int maxLayoutsPerTensor = 0;

  /// Transpose cost of tensor t between layout indices (0 when equal).
  double transpose(int t, int from, int to) const {
    if (from == to)
      return 0;
    size_t n = source->tensors[t].layouts.size();
    return transposeTable[t][from * n + to];
  }
  /// Transpose cost of read r of op i from stored layout `from` to `to`:
  /// transpose(), or kForbidden for a read that may not be transposed.
  double readTranspose(int i, size_t r, int from, int to) const {
    if (from == to)
      return 0;
    return ops[i].transposable[r] ? transpose(ops[i].reads[r], from, to) : kForbidden;
  }
  const std::string &layoutName(int t, int layout) const {
    return source->tensors[t].layouts[layout];
  }
  const std::string &tensorName(int t) const { return source->tensors[t].name; }
  std::string opName(int op) const;

  std::vector<std::vector<double>> transposeTable; ///< per tensor, n x n
};

/// Validates and indexes `problem` (which must outlive the result).
/// maxLayoutsPerTensor > 0 keeps, per tensor, the k layouts whose cheapest
/// producer configuration writing them is cheapest (ties: configuration
/// order), and drops the configurations writing any other layout; arguments
/// without a fixed layout are ranked by their readers' cheapest configurations
/// reading each layout. A dropped layout may still be read, through a
/// transpose. The operator's cheapest configuration always survives.
Result<PreparedProblem> prepare(const ConfigProblem &problem,
                                int maxLayoutsPerTensor = 0);

} // namespace dmc::select

#endif
