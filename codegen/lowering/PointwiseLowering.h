//===- PointwiseLowering.h - what an op's lowering sees of its kernel -----===//
//
// The ops of a generated row or elementwise kernel become nodes of its
// NodeGraph (codegen/NodeGraph.h) through dm::PointwiseLoweringOpInterface
// (ir/DmInterfaces.td), implemented by external models in this folder, one
// file per kind of op: ElementwiseLowering.cpp, NormalizationLowering.cpp.
// Their arithmetic follows the interpreter's models (compiler/evaluation/)
// in fp32, constant for constant, except exp and the exact GELU and its
// derivative (dmcExp, dmcGelu, dmcGeluGrad: the normal CDF within about 1e-7,
// far below the 16-bit rounding of the outputs); dropout uses the same
// Philox counters.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_LOWERING_POINTWISELOWERING_H
#define DMC_CODEGEN_LOWERING_POINTWISELOWERING_H

#include "codegen/NodeGraph.h"
#include "ir/DmDialect.h"

#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace dmc::dm {

/// One kernel's lowering to nodes, op by op in block order.
class PointwiseLowering {
public:
  PointwiseLowering(KernelOp kernel, const codegen::KernelSpace &space, codegen::NodeGraph &graph)
      : kernel(kernel), space(space), g(graph) {}

  /// Lowers every op of the kernel's body and records its outputs; an op
  /// without a model, or whose model fails, is an error naming the kernel.
  llvm::Error run();

  // For the models.
  /// The node of operand `n` of `op` (a load for a kernel input).
  int operand(mlir::Operation *op, unsigned n) { return get(op->getOperand(n)); }
  /// The node of `v`: a load for kernel inputs.
  int get(mlir::Value v);
  void set(mlir::Value v, int node) { valueNode[v] = node; }
  /// Pointwise math over `deps` (PointExpr::operand(n) is deps[n]);
  /// `pointwise`: reads the point's indices (dropout draws, masks), so never
  /// an outer value.
  int map(codegen::PointExpr expr, std::vector<int> deps, bool pointwise = false) {
    return g.map(std::move(expr), std::move(deps), pointwise);
  }
  /// Node `of` combined over the kernel's rows.
  int reduce(const char *combine, std::string init, int of) {
    return g.reduce(combine, std::move(init), of);
  }
  /// A sum of node `of` over `op`'s reduced dims: over the rows, or (column
  /// sums) over the outer points.
  int sum(mlir::Operation *op, int of);
  /// Succeeds when `dims`, the dims `op` reduces over, are exactly the
  /// kernel's rows; fails saying why otherwise.
  mlir::LogicalResult rows(mlir::Operation *op, llvm::StringRef dims);
  /// The kernel's row points as an fp32 literal ("1024.f").
  codegen::PointExpr rowCount() const {
    return codegen::PointExpr::literal(std::to_string(space.rowPoints) + ".f");
  }
  codegen::NodeGraph &graph() { return g; }
  /// `v` is no node: the keep bits draw `k` packs (an output of the kernel).
  void setPacked(mlir::Value v, int k) { packedDraw[v] = k; }
  /// Fails with `why` (the error run() reports).
  mlir::LogicalResult fail(const llvm::Twine &why) {
    problem = why.str();
    return mlir::failure();
  }

private:
  KernelOp kernel;
  const codegen::KernelSpace &space;
  codegen::NodeGraph &g;
  llvm::DenseMap<mlir::Value, int> valueNode;
  llvm::DenseMap<mlir::Value, int> packedDraw;
  std::string problem; ///< why the op being lowered cannot be
};

} // namespace dmc::dm

namespace dmc::codegen {

/// Attaches every op's PointwiseLoweringOpInterface model to `ctx`;
/// attaching again is a no-op.
void attachPointwiseLowering(mlir::MLIRContext &ctx);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_LOWERING_POINTWISELOWERING_H
