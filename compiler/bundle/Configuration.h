//===- Configuration.h - the IR's configuration <-> config.json -----------===//
//
// Reads the configuration (runtime/format/Config.h) off a training graph at
// the config stage, and applies a configuration file to the graph at the fuse
// stage (tensor layouts, transpose kernels, kernel knobs), checking that it
// can run: every contraction mappable in the layouts given, every form and
// equation agreeing with them, every name known, every layout a permutation,
// every knob feasible. Rejections name the entry (JSON path and name).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_CONFIGURATION_H
#define DMC_COMPILER_BUNDLE_CONFIGURATION_H

#include "codegen/KernelSpace.h"
#include "compiler/bundle/TensorTable.h"
#include "runtime/format/Config.h"
#include "runtime/format/GemmAlgoConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace dmc::bundle {

/// The kernel knobs a configuration file set (`dm.knobs`).
inline constexpr llvm::StringLiteral kKnobsAttr = "dm.knobs";

/// A contraction's cuBLASLt algorithm a configuration file chose
/// (`algorithm` other than "heuristic"; runtime/format/GemmAlgoConfig.h's
/// text form), carried to the manifest. Absent: the heuristic's.
inline constexpr llvm::StringLiteral kAlgorithmAttr = "dm.algorithm";

/// The algorithm of `c` as config.json and the manifest spell it: its
/// `dm.algorithm`, else "heuristic".
std::string algorithmOf(dm::ContractOp c);

/// The names that key config.json, the kernels' entry points and the report:
/// the n-th kernel "k<n>_<kernel name>", the n-th contraction "c<n>" (in
/// the order of appearance), and an equation "bji,shpi->sbjhp".
std::string kernelName(size_t n, dm::KernelOp kernel);
std::string contractionName(size_t n);
std::string equationOf(dm::ContractOp c);

/// The knobs `kernel` is compiled with: its `dm.knobs`, else codegen's default.
codegen::KernelConfig knobsOf(dm::KernelOp kernel);
/// Sets `kernel`'s `dm.knobs` (what knobsOf then returns).
void setKnobs(dm::KernelOp kernel, const codegen::KernelConfig &knobs);

/// The cuBLASLt form of contraction `c` (the n-th) as laid out now, as
/// config.json records it; false with `why` when it has none.
bool formOf(dm::ContractOp c, size_t n, dmrt::ConfigContraction &out, std::string &why);

/// Knobs as config.json records them (entry `name`), and back.
dmrt::ConfigKernel toConfigKernel(const std::string &name, const codegen::KernelConfig &knobs);
codegen::KernelConfig fromConfigKernel(const dmrt::ConfigKernel &entry);

/// The configuration of `f` (after the config stage or applyConfiguration);
/// fails naming a contraction that has no cuBLASLt form.
llvm::Expected<dmrt::Configuration> extractConfiguration(mlir::func::FuncOp f,
                                                         llvm::StringRef model);
/// The same with `f`'s tensor table already built.
llvm::Expected<dmrt::Configuration> extractConfiguration(mlir::func::FuncOp f,
                                                         const TensorTable &table,
                                                         llvm::StringRef model);

/// Applies `config` (read from `file`) to `f`, a training graph at the fuse
/// stage. On failure `f` may be partly changed. With `checkForms` false, a
/// contraction's equation and cuBLASLt form are not compared with its entry
/// (they follow from the layouts; it must still map): for a configuration
/// whose layouts were moved by the tuner's selection or a layout candidate,
/// whose forms extractConfiguration then reads back. `stackInPlace`: stacks
/// move in place as the config stage's dm-stack-in-place moves them;
/// `dropoutBits`: the dropouts whose keep bits `config` lists
/// ("dropout<id>.keep_bits") save them as dm-save-dropout-bits saves them
/// (after the epilogues, so that their tensors take config.json's names and
/// layouts); the others, and every one without `dropoutBits`, draw again.
llvm::Error applyConfiguration(mlir::func::FuncOp f, const dmrt::Configuration &config,
                               llvm::StringRef file, bool checkForms = true,
                               bool stackInPlace = false, bool dropoutBits = true);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_CONFIGURATION_H
