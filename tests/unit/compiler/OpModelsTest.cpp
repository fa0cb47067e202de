//===- OpModelsTest.cpp - every dm op has its semantics behind interfaces -===//
//
// The interpreter evaluates ops through dm::EvaluableOpInterface and code
// generation lowers them through dm::PointwiseLoweringOpInterface, both
// external models (compiler/evaluation/, codegen/lowering/). Every op the
// dialect registers has an evaluation model (before attaching, none has:
// the check can fail); an op without one, or without a lowering, is an
// error that names it.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelEmitter.h"
#include "codegen/lowering/PointwiseLowering.h"
#include "compiler/Driver.h"
#include "compiler/Interpreter.h"
#include "compiler/evaluation/Evaluation.h"

#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

/// The ops of the dm dialect that `ctx` registers, but the kernel and its
/// terminator (the interpreter runs a kernel's body itself).
std::vector<RegisteredOperationName> dmOps(MLIRContext &ctx) {
  std::vector<RegisteredOperationName> ops;
  for (RegisteredOperationName name : ctx.getRegisteredOperations())
    if (name.getDialectNamespace() == "dm" && name.getStringRef() != "dm.kernel" &&
        name.getStringRef() != "dm.yield")
      ops.push_back(name);
  return ops;
}

TEST(OpModels, EveryDmOpHasAnEvaluationModel) {
  MLIRContext ctx;
  dmc::loadDmcDialects(ctx);
  std::vector<RegisteredOperationName> ops = dmOps(ctx);
  ASSERT_GT(ops.size(), 25u);
  // Not before the interpreter attaches them: the check below can fail.
  for (RegisteredOperationName name : ops)
    EXPECT_FALSE(name.hasInterface<dmc::dm::EvaluableOpInterface>()) << name.getStringRef().str();
  dmc::evaluation::attachEvaluationModels(ctx);
  dmc::evaluation::attachEvaluationModels(ctx); // again: a no-op
  for (RegisteredOperationName name : ops)
    EXPECT_TRUE(name.hasInterface<dmc::dm::EvaluableOpInterface>())
        << name.getStringRef().str() << " has no evaluation model (compiler/evaluation/)";
}

TEST(OpModels, PointwiseOpsHaveALoweringAndContractionsNone) {
  MLIRContext ctx;
  dmc::loadDmcDialects(ctx);
  dmc::codegen::attachPointwiseLowering(ctx);
  auto lowers = [&](llvm::StringRef op) {
    std::optional<RegisteredOperationName> name = RegisteredOperationName::lookup(op, &ctx);
    EXPECT_TRUE(name.has_value()) << op.str();
    return name && name->hasInterface<dmc::dm::PointwiseLoweringOpInterface>();
  };
  for (llvm::StringRef op : {"dm.add", "dm.bias_add", "dm.scale", "dm.activation",
                             "dm.activation_grad", "dm.dropout", "dm.causal_mask",
                             "dm.key_padding_mask", "dm.broadcast", "dm.transpose", "dm.stack",
                             "dm.softmax", "dm.softmax_grad", "dm.layernorm",
                             "dm.layernorm_grad_input", "dm.layernorm_grad_params",
                             "dm.reduce_sum"})
    EXPECT_TRUE(lowers(op)) << op.str();
  // Contractions go to cuBLASLt or a fused attention kernel, never to nodes.
  EXPECT_FALSE(lowers("dm.contract"));
}

TEST(OpModels, TheInterpreterNamesAnOpWithoutModel) {
  MLIRContext ctx;
  dmc::loadDmcDialects(ctx);
  const char *src = R"(
func.func private @other(!dm.tensor<[i=4], f32>) -> !dm.tensor<[i=4], f32>
func.func @f(%x: !dm.tensor<[i=4], f32>) -> !dm.tensor<[i=4], f32> {
  %0 = func.call @other(%x) : (!dm.tensor<[i=4], f32>) -> !dm.tensor<[i=4], f32>
  return %0 : !dm.tensor<[i=4], f32>
}
)";
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  auto f = cast<func::FuncOp>(m->lookupSymbol("f"));
  auto out = dmc::interpret(f, {dmc::HostTensor("i", {4})}, {dmc::Precision::F32, 1});
  ASSERT_FALSE(static_cast<bool>(out));
  std::string error = llvm::toString(out.takeError());
  EXPECT_NE(error.find("cannot evaluate 'func.call'"), std::string::npos) << error;
}

TEST(OpModels, CodegenNamesAnOpWithoutLowering) {
  MLIRContext ctx;
  dmc::loadDmcDialects(ctx);
  const char *src = R"(
func.func @f(%a: !dm.tensor<[i=8, k=4], f32>, %b: !dm.tensor<[k=4, j=8], f32>) -> !dm.tensor<[i=8, j=8], f32> {
  %0 = dm.kernel "product"(%a, %b) : (!dm.tensor<[i=8, k=4], f32>, !dm.tensor<[k=4, j=8], f32>) -> !dm.tensor<[i=8, j=8], f32> {
  ^bb0(%x: !dm.tensor<[i=8, k=4], f32>, %y: !dm.tensor<[k=4, j=8], f32>):
    %1 = dm.contract %x, %y : !dm.tensor<[i=8, k=4], f32>, !dm.tensor<[k=4, j=8], f32> -> !dm.tensor<[i=8, j=8], f32>
    dm.yield %1 : !dm.tensor<[i=8, j=8], f32>
  }
  return %0 : !dm.tensor<[i=8, j=8], f32>
}
)";
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  dmc::dm::KernelOp kernel = *cast<func::FuncOp>(m->lookupSymbol("f")).getOps<dmc::dm::KernelOp>().begin();
  dmc::codegen::KernelSpace space = dmc::codegen::spaceOf(kernel);
  dmc::codegen::NodeGraph graph;
  llvm::Error e = dmc::codegen::lowerKernel(kernel, space, graph);
  ASSERT_TRUE(static_cast<bool>(e));
  std::string error = llvm::toString(std::move(e));
  EXPECT_NE(error.find("kernel 'product': cannot generate code for 'dm.contract'"),
            std::string::npos)
      << error;
}

} // namespace
