//===- StorageModeTest.cpp - the interpreter's storage precision ----------===//
//
// Precision::Storage rounds every tensor the GPU stores (the results of the
// ops of the fused function body) to the model's dtype. A bf16 layer's
// outputs are then exactly bf16 and differ from fp32 mode; a planted fault (one
// op's results left unrounded) is caught by the representability check
// (firstUnrepresentable) when it is a layer output, and by the comparison
// with the correct run when it is an intermediate tensor.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver.h"
#include "compiler/Interpreter.h"
#include "compiler/LayerBuilder.h"
#include "compiler/ModelConfig.h"
#include "compiler/TensorIO.h"
#include "ir/DmDialect.h"
#include "ir/Signature.h"

#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace mlir;

namespace {

constexpr uint64_t kSeed = 5;

/// The fused training graph of a tiny encoder (dropout on) of `dtype`.
OwningOpRef<ModuleOp> fusedLayer(MLIRContext &ctx, const std::string &dtype) {
  std::string text = R"({"kind": "encoder", "batch": 2, "seq": 8, "hidden": 32, "heads": 4,
      "ffn": 48, "dropout": 0.1, "key_padding": true, "dtype": ")" +
                     dtype + "\"}";
  auto config = dmc::parseModelConfig(text, "storage-test.json");
  EXPECT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  OwningOpRef<ModuleOp> m = dmc::buildForwardGraph(ctx, *config);
  PassManager pm(&ctx);
  dmc::buildPipeline(pm, dmc::Stage::Fuse, /*train=*/true);
  EXPECT_TRUE(succeeded(pm.run(*m)));
  return m;
}

std::vector<dmc::HostTensor> run(func::FuncOp f, dmc::Precision precision,
                                 int plant = -1) {
  std::vector<dmc::HostTensor> args;
  for (unsigned n = 0; n < f.getNumArguments(); ++n)
    args.push_back(dmc::generateArgument(f, n, kSeed, dmc::Precision::Storage));
  dmc::InterpreterOptions options{precision, kSeed, plant};
  auto results = dmc::interpret(f, args, options);
  EXPECT_TRUE(static_cast<bool>(results)) << llvm::toString(results.takeError());
  return results ? *results : std::vector<dmc::HostTensor>{};
}

/// Names of the results `firstUnrepresentable` reports.
std::vector<std::string> unrepresentable(func::FuncOp f,
                                         const std::vector<dmc::HostTensor> &results) {
  std::vector<std::string> names;
  for (unsigned n = 0; n < results.size(); ++n)
    if (dmc::firstUnrepresentable(results[n], f.getResultTypes()[n]) >= 0)
      names.push_back(dmc::dm::resultName(f, n).str());
  return names;
}

/// Names of the results that differ (any element) between `a` and `b`.
std::vector<std::string> differing(func::FuncOp f, const std::vector<dmc::HostTensor> &a,
                                   const std::vector<dmc::HostTensor> &b) {
  std::vector<std::string> names;
  for (unsigned n = 0; n < a.size() && n < b.size(); ++n)
    if (a[n].data != b[n].data)
      names.push_back(dmc::dm::resultName(f, n).str());
  return names;
}

/// Index in the function body of the op defining `v`.
int indexOfDefiningOp(func::FuncOp f, Value v) {
  int index = 0;
  for (Operation &op : f.getBody().front()) {
    if (&op == v.getDefiningOp())
      return index;
    ++index;
  }
  return -1;
}

TEST(StorageMode, Bf16LayerStoresBf16AndDiffersFromFp32) {
  MLIRContext ctx;
  auto m = fusedLayer(ctx, "bf16");
  func::FuncOp f = dmc::layerFunction(*m);
  auto storage = run(f, dmc::Precision::Storage);
  auto fp32 = run(f, dmc::Precision::F32);
  ASSERT_EQ(storage.size(), f.getNumResults());
  EXPECT_TRUE(unrepresentable(f, storage).empty());
  // fp32 mode keeps more bits: most results are not bf16, and all differ.
  EXPECT_GT(unrepresentable(f, fp32).size(), f.getNumResults() / 2);
  EXPECT_GT(differing(f, storage, fp32).size(), f.getNumResults() / 2);
}

TEST(StorageMode, Fp32LayerIsFp32Mode) {
  MLIRContext ctx;
  auto m = fusedLayer(ctx, "f32");
  func::FuncOp f = dmc::layerFunction(*m);
  EXPECT_TRUE(differing(f, run(f, dmc::Precision::Storage), run(f, dmc::Precision::F32))
                  .empty());
}

TEST(StorageMode, PlantedUnroundedOutputIsReported) {
  MLIRContext ctx;
  auto m = fusedLayer(ctx, "bf16");
  func::FuncOp f = dmc::layerFunction(*m);
  Operation *ret = f.getBody().front().getTerminator();
  int producer = indexOfDefiningOp(f, ret->getOperand(0)); // y
  ASSERT_GE(producer, 0);
  auto faulty = run(f, dmc::Precision::Storage, producer);
  std::vector<std::string> reported = unrepresentable(f, faulty);
  EXPECT_NE(std::find(reported.begin(), reported.end(), "y"), reported.end())
      << "leaving y's kernel unrounded must leave y unrepresentable in bf16";
}

TEST(StorageMode, PlantedUnroundedIntermediateChangesTheRun) {
  MLIRContext ctx;
  auto m = fusedLayer(ctx, "bf16");
  func::FuncOp f = dmc::layerFunction(*m);
  auto correct = run(f, dmc::Precision::Storage);
  // Every contraction stores a sum of products: leaving any one unrounded
  // changes what later kernels read, and so some result, while every result
  // stays bf16 (later kernels round again).
  int index = 0, planted = 0;
  for (Operation &op : f.getBody().front()) {
    if (isa<dmc::dm::ContractOp>(op)) {
      auto faulty = run(f, dmc::Precision::Storage, index);
      EXPECT_FALSE(differing(f, correct, faulty).empty())
          << "contraction at index " << index << " left unrounded went unnoticed";
      ++planted;
    }
    ++index;
  }
  EXPECT_GT(planted, 5);
}

} // namespace
