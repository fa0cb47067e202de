//===- SaveDropoutBits.h - backward kernels read saved dropout masks ------===//
#ifndef DMC_PASSES_SAVEDROPOUTBITS_H
#define DMC_PASSES_SAVEDROPOUTBITS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace dmc {

/// dm-save-dropout-bits on `f` (Passes.td says what changes and when): also
/// run by `dmc compile --config` after the configuration's epilogues, where
/// the pass pipeline's config stage does not run, so that the keep bits'
/// tensors exist and take the names and layouts config.json gives them. With
/// `remarks`, each dropout drawn again gets a remark saying why. The dropouts
/// whose ids are in `drawn` are left drawing.
void saveDropoutBits(mlir::func::FuncOp f, bool remarks = false,
                     const std::set<int64_t> &drawn = {});

/// The name of dropout `id`'s keep bits, "dropout<id>.keep_bits" (its saved
/// view adds ".saved"): named after the dropout, so that a configuration
/// says which dropouts save their bits by listing these tensors.
std::string keepBitsName(int64_t id);
/// The dropout id of a keep bits' tensor name; none for any other name.
std::optional<int64_t> keepBitsDropout(llvm::StringRef tensorName);
/// The ids of the dropouts in `f`'s kernels that dm-save-dropout-bits can
/// save (drawn in one kernel and again in a later one, whole words along the
/// counter dim), in id order.
std::set<int64_t> savableDropouts(mlir::func::FuncOp f);

} // namespace dmc

#endif // DMC_PASSES_SAVEDROPOUTBITS_H
