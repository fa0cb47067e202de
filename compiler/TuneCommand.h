//===- TuneCommand.h - dmc tune: candidates, dry run, measurement ---------===//
//
//   dmc tune MODEL.json --dry-run
//   dmc tune MODEL.json --emit-candidates DIR [--candidates N] [--layout-candidates N]
//   dmc tune MODEL.json --db DB [--emit-candidates DIR] [--candidates N] [--time-budget S]
//            [--layout-candidates N]
//
// The kernel-knob tuner's compiler side: how many candidates each kernel has
// (--dry-run, nothing compiled), the candidate bundles (the default
// configuration with interpreter references, and N bundles each compiling
// every kernel in its N-th feasible knob configuration, sharing those
// references; layout candidates l<n>_<i>.dmlib, one contraction's tensor
// moved to another mappable layout, with references of their own for the
// steps they change: bundle/LayoutCandidates.h), and on a machine with a
// GPU the measurement itself (dmrt-tune beside dmc: dmrt-bench per bundle, checked, into DB). Without a GPU the
// candidates stay in DIR for tuning-db/tune-device.sh on a GPU machine.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_TUNECOMMAND_H
#define DMC_COMPILER_TUNECOMMAND_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"

namespace dmc {

llvm::cl::SubCommand &tuneSubCommand();
llvm::cl::OptionCategory &tuneCategory();
/// Runs `dmc tune` with the parsed options; the process exit status.
int runTune(mlir::MLIRContext &ctx, const char *argv0);

} // namespace dmc

#endif // DMC_COMPILER_TUNECOMMAND_H
