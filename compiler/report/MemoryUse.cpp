//===- MemoryUse.cpp - the static memory plan's figures, for `dmc report` -===//
#include "compiler/report/MemoryUse.h"

#include "codegen/KernelEmitter.h"
#include "compiler/GraphSummary.h"
#include "compiler/bundle/Configuration.h"
#include "compiler/bundle/MemoryPlan.h"
#include "compiler/bundle/TensorTable.h"
#include "ir/DmDialect.h"
#include "runtime/format/ArenaPlan.h"

using namespace mlir;

namespace dmc::report {

llvm::Expected<MemoryFigures> memoryOf(func::FuncOp f) {
  auto table = bundle::TensorTable::build(f);
  if (!table)
    return table.takeError();
  llvm::DenseSet<Operation *> bwd = backwardOps(f);
  auto phase = [&](Operation *op) { return bwd.contains(op) ? "backward" : "forward"; };
  auto ids = [&](ValueRange values) {
    std::vector<int64_t> out;
    for (Value v : values)
      out.push_back(table->idOf(v));
    return out;
  };
  // Only what the plan reads: as compiler/bundle/BundleWriter.cpp fills it.
  dmrt::Manifest m;
  for (const bundle::TensorInfo &t : table->tensors()) {
    dmrt::BundleTensor bt;
    bt.id = t.id;
    bt.name = t.name;
    bt.role = t.role;
    bt.bytes = cast<dm::TensorType>(t.value.getType()).getSizeInBytes();
    bt.isAlias = t.aliasOf >= 0;
    bt.aliasOf = t.aliasOf;
    bt.aliasOffset = t.aliasOffset;
    m.tensors.push_back(std::move(bt));
  }
  for (Operation &op : f.getBody().front().without_terminator()) {
    if (auto kernel = dyn_cast<dm::KernelOp>(op)) {
      dmrt::BundleKernel k;
      k.id = int64_t(m.kernels.size());
      k.name = kernel.getName().str();
      k.phase = phase(kernel);
      k.inputs = ids(kernel.getInputs());
      k.outputs = ids(kernel.getResults());
      auto emitted = codegen::emitKernel(
          kernel, bundle::knobsOf(kernel), "k" + k.name);
      if (!emitted)
        return emitted.takeError();
      k.workspaceBytes = emitted->workspaceBytes;
      m.steps.push_back({dmrt::BundleStep::Kernel, k.id});
      m.kernels.push_back(std::move(k));
    } else if (auto c = dyn_cast<dm::ContractOp>(op)) {
      dmrt::BundleContraction bc;
      bc.id = int64_t(m.contractions.size());
      bc.phase = phase(c);
      bc.a = table->idOf(c.getLhs());
      bc.b = table->idOf(c.getRhs());
      bc.d = table->idOf(c.getResult());
      m.steps.push_back({dmrt::BundleStep::Contraction, bc.id});
      m.contractions.push_back(std::move(bc));
    }
  }
  bundle::planMemory(m);
  dmrt::ArenaSummary s = dmrt::summarizeArena(m);
  MemoryFigures out;
  out.planned = true;
  out.arenaBytes = s.arenaBytes;
  out.inferenceArenaBytes = s.inferenceArenaBytes;
  out.inferencePeakLiveBytes = s.inferencePeakLiveBytes;
  out.peakLiveBytes = s.peakLiveBytes;
  out.intermediateBytes = s.intermediateBytes;
  out.savedActivationBytes = s.savedActivationBytes;
  out.workspaceBytes = s.workspaceBytes;
  return out;
}

} // namespace dmc::report
