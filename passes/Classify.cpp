//===- Classify.cpp - dm-classify: tag ops by their iteration space -------===//
#include "passes/Passes.h"

#include "ir/IterationSpace.h"

namespace dmc {
#define GEN_PASS_DEF_DMCLASSIFY
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

struct DmClassifyPass : impl::DmClassifyBase<DmClassifyPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](dm::IterationSpaceOpInterface op) {
      op->setAttr(dm::kClassAttr, b.getStringAttr(dm::opClassName(dm::classify(op))));
    });
  }
};

} // namespace
} // namespace dmc
