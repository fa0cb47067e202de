//===- ModelTarget.cpp - model.json -> frontend -> passes up to dm-fuse ----===//
//
// An invalid description must be rejected with an error naming the file; a
// valid one must build its training graph and pass every stage up to dm-fuse
// (the verifier runs after each pass). "Valid" is whatever parseModelConfig
// accepts, so a size the frontend lets through and a pass then chokes on is a
// finding, as is a crash or a hang anywhere on the way.
//
//===----------------------------------------------------------------------===//
#include "tests/fuzz/FuzzTarget.h"

#include "compiler/Driver.h"
#include "compiler/ModelConfig.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

namespace dmc::fuzz {

int runModel(const uint8_t *data, size_t size) {
  static const char kTarget[] = "model", kName[] = "fuzz-model.json";
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<ModelConfig> config = parseModelConfig(text, kName);
  if (!config) {
    requireNamed(llvm::toString(config.takeError()), kName, kTarget);
    return 0;
  }
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  auto module = buildGraph(ctx, *config, kName, /*train=*/true, Stage::Fuse);
  if (!module)
    require(false, kTarget,
            "a description parseModelConfig accepts does not compile up to dm-fuse: " +
                llvm::toString(module.takeError()));
  return 0;
}

} // namespace dmc::fuzz
