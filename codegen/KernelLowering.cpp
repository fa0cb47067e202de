//===- KernelLowering.cpp - dm ops of a kernel -> node graph ---------------===//
//
// Walks a kernel's body and lowers each op through its
// PointwiseLoweringOpInterface model (codegen/lowering/): the per-op
// arithmetic lives there, beside the interpreter's (compiler/evaluation/).
//
//===----------------------------------------------------------------------===//
#include "codegen/lowering/LoweringModels.h"
#include "ir/IterationSpace.h"
#include "ir/StorageType.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace dmc::codegen {

dmrt::DType storageOf(Type t) {
  std::optional<dmrt::DType> s = dm::storageDType(t);
  return s == dmrt::DType::BF16 || s == dmrt::DType::F16 || s == dmrt::DType::I32
             ? *s
             : dmrt::DType::F32;
}

void attachPointwiseLowering(MLIRContext &ctx) {
  ctx.getOrLoadDialect<dm::DmDialect>();
  // Once per context: every kernel's lowering asks.
  if (RegisteredOperationName::lookup(dm::AddOp::getOperationName(), &ctx)
          ->hasInterface<dm::PointwiseLoweringOpInterface>())
    return;
  attachElementwiseLowering(ctx);
  attachNormalizationLowering(ctx);
}

llvm::Error lowerKernel(dm::KernelOp kernel, const KernelSpace &space, NodeGraph &graph) {
  attachPointwiseLowering(*kernel->getContext());
  return dm::PointwiseLowering(kernel, space, graph).run();
}

} // namespace dmc::codegen

namespace dmc::dm {

llvm::Error PointwiseLowering::run() {
  auto fail = [&](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kernel '" + kernel.getName() + "': " + msg);
  };
  Block &body = kernel.getBody().front();
  for (Operation &op : body.without_terminator()) {
    auto lowerable = dyn_cast<PointwiseLoweringOpInterface>(op);
    if (!lowerable)
      return fail("cannot generate code for '" + op.getName().getStringRef() + "'");
    problem.clear();
    if (failed(lowerable.lowerToNodes(*this)) || !problem.empty())
      return fail(problem.empty() ? "cannot generate code for '" + op.getName().getStringRef() + "'"
                                  : problem);
  }
  for (Value v : body.getTerminator()->getOperands()) {
    if (auto it = packedDraw.find(v); it != packedDraw.end()) {
      if (g.draws[size_t(it->second)].bitsOutput >= 0)
        return fail("the keep bits of one dropout are yielded twice");
      g.draws[size_t(it->second)].bitsOutput = int(g.outputs.size());
      g.outputs.push_back(codegen::NodeGraph::kPacked);
      continue;
    }
    g.outputs.push_back(get(v));
  }
  return llvm::Error::success();
}

int PointwiseLowering::get(Value v) {
  if (auto it = valueNode.find(v); it != valueNode.end())
    return it->second;
  codegen::Node node;
  g.unguardedLoads.insert(cast<BlockArgument>(v).getArgNumber());
  unsigned arg = cast<BlockArgument>(v).getArgNumber();
  node.load = true;
  node.expr = codegen::PointExpr::load(arg);
  node.loads = {arg};
  int id = g.add(std::move(node));
  valueNode[v] = id;
  return id;
}

LogicalResult PointwiseLowering::rows(Operation *op, llvm::StringRef dims) {
  std::string a = dims.str(), b = space.row;
  llvm::sort(a);
  llvm::sort(b);
  if (a == b)
    return success();
  return fail(op->getName().getStringRef() + " reduces over '" + dims +
              "' but the kernel's rows are '" + space.row + "'");
}

int PointwiseLowering::sum(Operation *op, int of) {
  std::string dims = cast<IterationSpaceOpInterface>(op).getReductionDims(), outer = space.outer;
  llvm::sort(dims);
  llvm::sort(outer);
  if (space.columnSums && dims == outer) {
    if (g.nodes[of].outer)
      problem = (op->getName().getStringRef() +
                 " sums a value with no row dims over the outer dims")
                    .str();
    return g.columnSum(of);
  }
  return reduce("DmcSum", "0.f", of);
}

} // namespace dmc::dm
