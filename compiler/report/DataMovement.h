//===- DataMovement.h - flop and bytes moved, per op and per kernel -------===//
//
// The numbers behind `dmc report`: for every unit of work (an op of an
// unfused graph; a dm.kernel or contraction of a fused one) its flop, bytes
// read and written by element type, arithmetic intensity and class, the
// dataflow edges between units with their bytes, and totals per class.
// Views (renames, unstack slices, saves, stacked parameters) move no data.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_REPORT_DATAMOVEMENT_H
#define DMC_COMPILER_REPORT_DATAMOVEMENT_H

#include "compiler/report/Layouts.h"
#include "compiler/report/MemoryUse.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>
#include <vector>

namespace dmc::report {

/// One op inside a unit (a kernel has several).
struct Member {
  std::string name;    ///< short name, e.g. "layernorm"
  std::string opClass; ///< contraction | normalization | elementwise
  double flop = 0;
};

/// A unit of work: one launch on the GPU.
struct WorkItem {
  int id = 0;
  mlir::Operation *op = nullptr; ///< the kernel or op this unit is (valid while f lives)
  std::string name;    ///< kernel name, or the op's short name
  std::string opClass; ///< contraction | normalization | elementwise
  bool backward = false;
  bool fused = false;  ///< a kernel with its own emitter (fused attention: dm.fused)
  std::string space;   ///< iteration space, e.g. "b=8 j=512 i=1024"
  std::vector<Member> members;
  std::vector<std::string> epilogues; ///< contractions: cuBLASLt epilogue candidates
  double flop = 0;
  int64_t bytesRead = 0, bytesWritten = 0;
  std::map<std::string, int64_t> bytesByType; ///< "bf16" -> bytes read + written
  /// Bytes this unit must move at the least: each input read once, each output
  /// written once (the denominator of the moved-bytes efficiency, MUE).
  int64_t ioLowerBound = 0;

  int64_t bytes() const { return bytesRead + bytesWritten; }
  double intensity() const { return bytes() ? flop / double(bytes()) : 0.0; }
};

/// A tensor flowing from one unit to another; -1 is the function boundary
/// (arguments on the left, results on the right).
struct Edge {
  int from = -1, to = -1;
  std::string tensor; ///< its name where it has one (arguments, results)
  int64_t bytes = 0;
};

struct ClassTotals {
  int count = 0;
  double flop = 0;
  int64_t bytes = 0;
};

struct GraphCost {
  std::vector<WorkItem> items; ///< in execution order
  std::vector<Edge> edges;
  std::map<std::string, ClassTotals> byClass;
  double flop = 0;
  int64_t bytes = 0;
  int kernels(llvm::StringRef opClass) const; ///< units of one class
};

/// Costs every unit of `f` (views excluded).
GraphCost costOf(mlir::func::FuncOp f);

/// One model's three views: the training graph as built (each op a kernel),
/// after algebraic fusion (stacking), and after dm-fuse.
struct DataMovementReport {
  std::string model;
  std::string stage; ///< the last stage of `fused`
  GraphCost unfused, stacked, fused;
  /// The static memory plan of `fused` (planned only at the fuse stage).
  MemoryFigures memory;
  /// What the config stage changed (only at the config stage).
  LayoutFigures layouts;
  /// Fused attention against the same graph without it (--no-fused-attention),
  /// at the config stage when the graph has fused attention kernels.
  struct AttentionFigures {
    int kernels = 0;              ///< fused attention kernels (0: no comparison)
    int64_t unfusedBytes = 0;     ///< bytes moved without them
    MemoryFigures unfusedMemory;  ///< the memory plan without them
  } attention;
  /// 100 * (1 - fused / unfused bytes).
  double reductionPercent() const;
};

} // namespace dmc::report

#endif // DMC_COMPILER_REPORT_DATAMOVEMENT_H
