//===- GemmEpilogues.cpp - dm-gemm-epilogues: neighbours into cuBLASLt ----===//
//
// Takes, contraction by contraction, the best epilogue candidate that
// passes/EpilogueRewrite.h finds (legal in the current layouts, saving
// bytes) and folds it in. Candidates are looked for afresh for every
// contraction, since folding one reshapes the kernels the next one reads.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "passes/EpilogueRewrite.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dm-gemm-epilogues"

namespace dmc {
#define GEN_PASS_DEF_DMGEMMEPILOGUES
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

struct DmGemmEpiloguesPass : impl::DmGemmEpiloguesBase<DmGemmEpiloguesPass> {
  using DmGemmEpiloguesBase::DmGemmEpiloguesBase;
  void runOnOperation() override {
    epilogue::BiasGrads mode = epilogue::BiasGrads::Saving;
    if (biasGrads == "all")
      mode = epilogue::BiasGrads::All;
    else if (biasGrads == "none")
      mode = epilogue::BiasGrads::None;
    else if (biasGrads != "saving") {
      getOperation().emitError() << "dm-gemm-epilogues: bias-grads is '" << biasGrads
                                 << "': expected saving, all or none";
      return signalPassFailure();
    }
    Block &block = getOperation().getBody().front();
    SmallVector<dm::ContractOp> contractions(block.getOps<dm::ContractOp>());
    for (dm::ContractOp c : contractions) {
      epilogue::Candidate cand;
      LLVM_DEBUG({
        for (dmrt::Epilogue kind : epilogue::kEpilogueKinds) {
          std::string why;
          if (!epilogue::findCandidate(c, kind, cand, why))
            llvm::dbgs() << "dm-gemm-epilogues: " << c.getLoc() << ": no "
                         << dmrt::epilogueManifestName(kind) << ": " << why << "\n";
        }
      });
      if (!epilogue::bestCandidate(c, cand, mode, addends))
        continue;
      LLVM_DEBUG(llvm::dbgs() << "dm-gemm-epilogues: " << dmrt::epilogueManifestName(cand.kind)
                              << " from kernel " << cand.kernel.getName() << " saves "
                              << cand.bytesSaved << " bytes\n");
      epilogue::apply(cand);
    }
  }
};

} // namespace
} // namespace dmc
