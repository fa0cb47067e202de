//===- RowSchedule.h - a row kernel's loops and passes, as data -----------===//
//
// What the row emitter (KernelEmitter.cpp) prints, decided before anything
// is printed: the loops a thread runs (`per` outer points after each other,
// the row's chunks `it` < perRow, the vector's points `v` < vec), the passes
// over each row (one per reduction level), and per pass which nodes are
// computed, taken from registers cached by an earlier pass, reduced, summed
// into column sums and stored. The emitter walks this record and decides
// nothing; tests read it without parsing CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_ROWSCHEDULE_H
#define DMC_CODEGEN_ROWSCHEDULE_H

#include "codegen/EmitSupport.h"

namespace dmc::codegen {

/// One pass over the row (PassPlan::sweeps: a loop over the thread's row
/// chunks) and what happens around it.
struct PassPlan {
  /// Per-outer-point maps defined before the sweep (their inputs are
  /// reductions of earlier passes).
  std::vector<int> outerValues;
  /// The row loop runs (some node is needed in this pass).
  bool sweeps = false;
  /// Reductions accumulated in the sweep (acc<id>), combined across the
  /// block after it (dmcBlockReduce).
  std::vector<int> reductions;
  /// Every node the sweep needs, in node order: read back from a register of
  /// an earlier pass (`fromCache`) or computed here.
  std::vector<int> nodes;
  std::vector<bool> fromCache; ///< parallel to `nodes`
  /// Kernel inputs the computed nodes read: at off_in<n> (scalar) or as one
  /// vector access per chunk (vector), in input order.
  std::vector<unsigned> scalarInputs, vectorInputs;
  /// Inputs read as one vector along the outer vector dim (outerVec: the
  /// emitter loads them per outer chunk, before the row loop).
  std::vector<unsigned> outerVectorInputs;
  /// Column sums (KernelSpace::columnSums) added in the sweep.
  std::vector<int> sums;
  /// Kernel outputs (positions in the kernel's results) stored in the sweep.
  std::vector<unsigned> stores;
  /// The dropout draws the computed nodes read (NodeGraph::addDraws).
  std::set<int> draws;
};

struct RowSchedule {
  std::string outer; ///< outer dims, outermost first, the lane dim innermost
  int passes = 1;
  bool reduces = false;   ///< some node reduces over the row (shared memory)
  std::vector<int> sums;  ///< column-sum nodes
  int per = 1, vec = 1;   ///< outer points per thread; points per vector
  char vd = 0;            ///< the vector dim (0: scalar)
  bool rowVec = false;    ///< vd is the innermost row dim
  bool outerVec = false;  ///< vd is an outer dim (elementwise kernels)
  KernelSpace chunks;     ///< the space with vd counted in vectors
  int64_t outerChunks = 0, rowChunks = 0;
  int64_t perRow = 1;     ///< row chunks per thread
  int rowVecWidth = 1;    ///< points per row chunk
  int64_t blocks = 0;     ///< blocks with column sums index their partials by
  int threads = 0, minBlocks = 1;
  bool whole = false;     ///< no thread of a block leaves early
  bool caching = false;   ///< rows short enough to keep values in registers
  std::vector<bool> cached; ///< per node: kept in c<id>[] for a later pass
  std::vector<PassPlan> passPlans;
  RowFetch fetch;         ///< inputs of one sweep fetched a row group ahead
  /// Outputs (positions) of one value per outer point, stored after the
  /// passes by threadIdx.y == 0.
  std::vector<unsigned> outerStores;
  int64_t grid = 0;
};

/// The schedule of `kernel` (lowered into `g` for `space`) under `config`,
/// a row-emitter configuration (neither tiled nor column).
RowSchedule scheduleRowKernel(dm::KernelOp kernel, const KernelSpace &space,
                              const NodeGraph &g, const KernelConfig &config);

/// Whether input or output type `t` moves as one vector per chunk under `r`:
/// its contiguous dim is the vector dim.
bool movesAsVector(const RowSchedule &r, mlir::Type t);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_ROWSCHEDULE_H
