//===- KernelBody.cpp - building a dm.kernel and its region ---------------===//
#include "passes/KernelBody.h"

using namespace mlir;

namespace dmc {

dm::KernelOp buildKernelOp(
    OpBuilder &b, Location loc, StringRef name, ValueRange inputs, TypeRange results,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, IRMapping &)> body) {
  auto kernel = b.create<dm::KernelOp>(loc, results, inputs, b.getStringAttr(name));
  Block *block = new Block();
  kernel.getBody().push_back(block);
  IRMapping map;
  for (Value v : inputs)
    map.map(v, block->addArgument(v.getType(), v.getLoc()));
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  SmallVector<Value> yielded = body(inner, map);
  inner.create<dm::YieldOp>(loc, yielded);
  return kernel;
}

} // namespace dmc
