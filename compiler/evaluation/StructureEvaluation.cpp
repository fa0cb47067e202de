//===- StructureEvaluation.cpp - reference semantics of contractions and ---===//
//                               ops that move elements
//
// Contractions with their cuBLASLt epilogues (unrounded in between, as in
// cuBLASLt), copies that broadcast or permute, renames, stacks.
//
//===----------------------------------------------------------------------===//
#include "compiler/Interpreter.h"
#include "compiler/evaluation/EvaluationModels.h"

using namespace mlir;

namespace dmc::evaluation {
namespace {

void contract(dm::ContractOp o, dm::Evaluation &e) {
  double scale = o.getScale().convertToDouble();
  const HostTensor &lhs = e.operand(o.getLhs()), &rhs = e.operand(o.getRhs());
  withKernels(e, [&](auto K) {
    switch (o.getEpilogueKind()) {
    case dmrt::Epilogue::Bias:
    case dmrt::Epilogue::Accumulate: { // an addend is a bias with every dim
      HostTensor product = allocateFor(o.getResult().getType());
      K.contract(lhs, rhs, scale, product);
      K.biasAdd(product, e.operand(o.getBias()), e.result(o));
      return;
    }
    case dmrt::Epilogue::BGradA:
    case dmrt::Epilogue::BGradB:
      K.contract(lhs, rhs, scale, e.result(o));
      K.reduceSum(o.getEpilogueKind() == dmrt::Epilogue::BGradA ? lhs : rhs, e.result(o, 1));
      return;
    default: // the verifier admits no other
      K.contract(lhs, rhs, scale, e.result(o));
    }
  });
}
template <class OpT> void copy(OpT o, dm::Evaluation &e) {
  withKernels(e, [&](auto K) { K.copyInto(e.operand(o.getX()), e.result(o)); });
}
/// Same elements in the same order; only the names may change.
template <class OpT> void rename(OpT o, dm::Evaluation &e) {
  const HostTensor &x = e.operand(o.getX());
  e.result(o).data = x.data;
}
void stack(dm::StackOp o, dm::Evaluation &e) {
  std::vector<const HostTensor *> parts;
  for (Value v : o.getInputs())
    parts.push_back(&e.operand(v));
  withKernels(e, [&](auto K) { K.stack(parts, o.getDim()[0], e.result(o)); });
}
void unstack(dm::UnstackOp o, dm::Evaluation &e) {
  std::vector<HostTensor *> parts;
  for (unsigned n = 0; n < o.getNumResults(); ++n)
    parts.push_back(&e.result(o, n));
  withKernels(e, [&](auto K) { K.unstack(e.operand(o.getX()), o.getDim()[0], parts); });
}

} // namespace

void attachStructureEvaluation(MLIRContext &ctx) {
  attach<dm::ContractOp, contract>(ctx);
  attach<dm::BroadcastOp, copy<dm::BroadcastOp>>(ctx);
  attach<dm::TransposeOp, copy<dm::TransposeOp>>(ctx);
  attach<dm::RenameOp, rename<dm::RenameOp>>(ctx);
  attach<dm::SaveOp, rename<dm::SaveOp>>(ctx);
  attach<dm::StackOp, stack>(ctx);
  attach<dm::UnstackOp, unstack>(ctx);
}

} // namespace dmc::evaluation
