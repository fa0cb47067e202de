//===- Layouts.h - the configuration's layouts, for `dmc report` ----------===//
//
// What the config stage changed against the fused graph in the frontend's
// layouts: the tensors whose layout changed (and who writes them), the
// transpose kernels inserted and their bytes, the contractions without a
// cuBLASLt form before and after, and the epilogues folded into contractions
// with the bytes they save (or why a candidate was not taken).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_REPORT_LAYOUTS_H
#define DMC_COMPILER_REPORT_LAYOUTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dmc::report {

struct LayoutChange {
  std::string tensor;   ///< the bundle's name (compiler/bundle/TensorTable.h)
  std::string producer; ///< "k3_softmax_dropout" or "c2" (a contraction)
  std::string frontend, chosen; ///< layouts before and after
  int64_t bytes = 0;
};

struct InsertedTranspose {
  std::string contraction, operand, tensor, dims; ///< as in config.json
  int64_t bytes = 0; ///< read + written
};

/// A contraction the fuse pass marked with epilogue candidates (`dm.epilogue`).
struct EpilogueUse {
  std::string contraction, equation; ///< "c3", "bji,uji->bju"
  std::string candidates;            ///< the marks, "bias,bgrad"
  std::string chosen = "none";       ///< the epilogue it runs
  int64_t bytesSaved = 0;            ///< by the chosen one
  std::string whyNot;                ///< when none: why each candidate was not taken
};

struct LayoutFigures {
  bool chosen = false; ///< false before the config stage
  int contractions = 0, unmappableBefore = 0, unmappableAfter = 0;
  std::vector<LayoutChange> changed;
  std::vector<InsertedTranspose> transposes;
  std::vector<EpilogueUse> epilogues;
  int64_t transposeBytes() const;
  int64_t epilogueBytesSaved() const;
};

/// The epilogue candidates of `configured` and what became of them.
std::vector<EpilogueUse> epiloguesOf(mlir::func::FuncOp configured);

/// Compares `fused` (the fuse stage) with `configured` (the config stage).
llvm::Expected<LayoutFigures> layoutsOf(mlir::func::FuncOp fused, mlir::func::FuncOp configured);

} // namespace dmc::report

#endif // DMC_COMPILER_REPORT_LAYOUTS_H
