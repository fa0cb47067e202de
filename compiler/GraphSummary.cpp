//===- GraphSummary.cpp - `dmc graph --emit=summary` ----------------------===//
#include "compiler/GraphSummary.h"

#include "ir/IterationSpace.h"
#include "ir/Signature.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;

namespace dmc {

llvm::DenseSet<Operation *> backwardOps(func::FuncOp f) {
  llvm::DenseSet<Value> tainted;
  for (auto [n, arg] : llvm::enumerate(f.getArguments()))
    if (dm::argRole(f, n) == dmrt::TensorRole::GradOutput)
      tainted.insert(arg);
  llvm::DenseSet<Operation *> ops;
  f.walk([&](Operation *op) {
    if (llvm::any_of(op->getOperands(), [&](Value v) { return tainted.contains(v); })) {
      ops.insert(op);
      tainted.insert(op->result_begin(), op->result_end());
    }
  });
  // The ops of a backward kernel's region are backward too (they read its
  // block arguments, not the gradient itself).
  for (Operation *op : llvm::to_vector(ops))
    if (auto kernel = dyn_cast<dm::KernelOp>(op))
      kernel.getBody().walk([&](Operation *inner) { ops.insert(inner); });
  return ops;
}

namespace {

int64_t bytes(Type t) { return cast<dm::TensorType>(t).getSizeInBytes(); }

std::string withCommas(int64_t n) {
  std::string s = std::to_string(n);
  for (int pos = static_cast<int>(s.size()) - 3; pos > 0; pos -= 3)
    s.insert(static_cast<size_t>(pos), ",");
  return s;
}

struct PhaseCount {
  int64_t fwd = 0, bwd = 0;
  double fwdFlop = 0, bwdFlop = 0;
};

} // namespace

void printSummary(func::FuncOp f, llvm::raw_ostream &os) {
  bool training = f->hasAttr(dm::kTrainingAttr);
  os << "layer @" << f.getSymName() << " (" << (training ? "training" : "forward")
     << " graph)\n";

  int64_t paramTensors = 0, paramElements = 0, paramBytes = 0;
  os << "\narguments:\n";
  for (auto [n, arg] : llvm::enumerate(f.getArguments())) {
    os << llvm::formatv("  {0,-11} {1,-16} {2}\n", dm::argRoleText(f, n), dm::argName(f, n),
                        arg.getType());
    if (dm::argRole(f, n) == dmrt::TensorRole::Param) {
      ++paramTensors;
      paramElements += cast<dm::TensorType>(arg.getType()).getNumElements();
      paramBytes += bytes(arg.getType());
    }
  }
  os << llvm::formatv("parameters: {0} tensors, {1} elements ({2:f1} MiB)\n", paramTensors,
                      withCommas(paramElements), paramBytes / 1048576.0);

  llvm::DenseSet<Operation *> bwd = backwardOps(f);
  std::map<std::string, PhaseCount> byKind, byClass;
  PhaseCount total;
  int64_t savedCount = 0, savedBytes = 0;
  f.walk([&](dm::IterationSpaceOpInterface op) {
    bool isBwd = bwd.contains(op.getOperation());
    double flop = dm::analyticFlop(op);
    std::string cls = dm::opClassName(dm::classify(op));
    for (PhaseCount *c : {&byKind[op->getName().getStringRef().str()], &byClass[cls], &total}) {
      (isBwd ? c->bwd : c->fwd) += 1;
      (isBwd ? c->bwdFlop : c->fwdFlop) += flop;
    }
    if (isa<dm::SaveOp>(op.getOperation())) {
      ++savedCount;
      savedBytes += bytes(op->getResult(0).getType());
    }
  });

  auto table = [&](StringRef title, const std::map<std::string, PhaseCount> &rows) {
    os << llvm::formatv("\n{0,-26} {1,5} {2,5} {3,12} {4,12} {5,7}\n", title, "fwd", "bwd",
                        "fwd GFLOP", "bwd GFLOP", "% flop");
    double all = total.fwdFlop + total.bwdFlop;
    for (const auto &[name, c] : rows)
      os << llvm::formatv("  {0,-24} {1,5} {2,5} {3,12:f3} {4,12:f3} {5,7:f2}\n", name, c.fwd,
                          c.bwd, c.fwdFlop / 1e9, c.bwdFlop / 1e9,
                          all > 0 ? 100.0 * (c.fwdFlop + c.bwdFlop) / all : 0.0);
  };
  table("ops by kind", byKind);
  table("ops by class", byClass);
  os << llvm::formatv("\n  {0,-24} {1,5} {2,5} {3,12:f3} {4,12:f3}\n", "total", total.fwd,
                      total.bwd, total.fwdFlop / 1e9, total.bwdFlop / 1e9);
  os << llvm::formatv("\nanalytic flop: forward {0:f1} GFLOP, backward {1:f1} GFLOP "
                      "({2:f2}x forward), step {3:f1} GFLOP\n",
                      total.fwdFlop / 1e9, total.bwdFlop / 1e9,
                      total.fwdFlop > 0 ? total.bwdFlop / total.fwdFlop : 0.0,
                      (total.fwdFlop + total.bwdFlop) / 1e9);
  if (training)
    os << llvm::formatv("saved activations: {0} tensors, {1:f1} MiB\n", savedCount,
                        savedBytes / 1048576.0);
}

} // namespace dmc
