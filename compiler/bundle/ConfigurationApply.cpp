//===- ConfigurationApply.cpp - a configuration file applied to the IR ----===//
//
// Order: epilogues (folded as dm-gemm-epilogues folds them, so tensors and
// kernels get the names config.json uses), tensor layouts (moving each
// storage class as dm-default-layouts would), then transposes (inserted
// where the pass inserts them, so kernels get the same k<n> names), then
// every contraction checked against its entry and the cuBLASLt mapping
// (epilogue included), then stacks moved in place (dm-stack-in-place), then
// kernel knobs.
//
//===----------------------------------------------------------------------===//
#include "compiler/bundle/Configuration.h"

#include "compiler/bundle/TensorTable.h"
#include "passes/EpilogueRewrite.h"
#include "passes/LayoutRewrite.h"
#include "passes/SaveDropoutBits.h"
#include "passes/StackInPlace.h"

#include "mlir/IR/Builders.h"

#include <map>
#include <optional>
#include <set>

using namespace mlir;

namespace dmc::bundle {
namespace {

std::string namesOf(Value v) { return cast<dm::TensorType>(v.getType()).getNames().str(); }

std::string quoted(llvm::StringRef s) { return ("\"" + s + "\"").str(); }

} // namespace

llvm::Error applyConfiguration(func::FuncOp f, const dmrt::Configuration &config,
                               llvm::StringRef file, bool checkForms, bool stackInPlace,
                               bool dropoutBits) {
  auto reject = [&](const std::string &path, llvm::StringRef entry, const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   file + ": " + path + " (" + quoted(entry) + "): " + why);
  };
  std::map<std::string, dm::ContractOp> contractions;
  for (auto [n, c] : llvm::enumerate(f.getOps<dm::ContractOp>()))
    contractions[contractionName(n)] = c;

  // Epilogues first: folding one removes tensors, and the configuration
  // names tensors as the graph has them after. Their cuBLASLt mapping is
  // checked below, in the configured layouts.
  for (auto [i, e] : llvm::enumerate(config.contractions)) {
    std::string path = "contractions[" + std::to_string(i) + "]";
    auto it = contractions.find(e.name);
    if (e.epilogue == "none" || it == contractions.end())
      continue;
    dmrt::Epilogue kind;
    epilogue::Candidate cand;
    std::string why;
    if (!dmrt::parseEpilogue(e.epilogue, kind))
      return reject(path, e.name, "unknown epilogue " + quoted(e.epilogue));
    if (!epilogue::findCandidate(it->second, kind, cand, why, {/*mustMap=*/false,
                                                              /*mustSave=*/false}))
      return reject(path, e.name, "epilogue " + quoted(e.epilogue) + ": " + why);
    it->second = epilogue::apply(cand);
  }
  // Keep bits as the config stage saves them, last there too: their tensors
  // are named after the epilogues' and have layouts in the configuration,
  // which lists those of the dropouts that save them; the others draw again.
  if (dropoutBits) {
    std::set<int64_t> drawn = savableDropouts(f);
    for (const dmrt::ConfigTensor &t : config.tensors)
      if (std::optional<int64_t> id = keepBitsDropout(t.name))
        drawn.erase(*id);
    saveDropoutBits(f, /*remarks=*/false, drawn);
  }

  auto table = TensorTable::build(f);
  if (!table)
    return table.takeError();
  std::map<std::string, const TensorInfo *> byName;
  for (const TensorInfo &t : table->tensors())
    byName[t.name] = &t;

  // Layouts. Values survive relayout (only types change), so `byName` stays valid.
  for (auto [i, t] : llvm::enumerate(config.tensors)) {
    std::string path = "tensors[" + std::to_string(i) + "]";
    auto it = byName.find(t.name);
    if (it == byName.end())
      return reject(path, t.name, "unknown tensor (not a tensor of this layer; "
                                  "`dmc compile --print-config` lists them)");
    const TensorInfo &info = *it->second;
    std::string now = namesOf(info.value);
    if (!layout::isPermutation(t.dims, now))
      return reject(path, t.name, quoted(t.dims) + " is not a permutation of the tensor's dims " +
                                      quoted(now));
    if (info.aliasOf >= 0)
      return reject(path, t.name, "a view of " + quoted(table->tensors()[info.aliasOf].name) +
                                      ": its layout follows that tensor's");
    if (t.dims == now)
      continue;
    layout::StorageClass cls = layout::storageClassOf(info.value);
    if (!cls.fixed.empty())
      return reject(path, t.name, "cannot change layout from " + quoted(now) + " to " +
                                      quoted(t.dims) + ": " + cls.fixed);
    layout::relayout(info.value, t.dims);
  }

  // Transposes.
  for (auto [i, t] : llvm::enumerate(config.transposes)) {
    std::string path = "transposes[" + std::to_string(i) + "]";
    auto c = contractions.find(t.contraction);
    if (c == contractions.end())
      return reject(path, t.contraction, "unknown contraction (the layer has c0 to c" +
                                             std::to_string(contractions.size() - 1) + ")");
    auto tensor = byName.find(t.tensor);
    if (tensor == byName.end())
      return reject(path, t.tensor, "unknown tensor");
    Value v = tensor->second->value;
    if (t.operand == "d") {
      if (c->second.getResult() != v)
        return reject(path, t.tensor, "is not the result of contraction " + t.contraction);
    } else if (c->second->getOperand(t.operand == "a" ? 0 : 1) != v) {
      return reject(path, t.tensor,
                    "is not operand " + t.operand + " of contraction " + t.contraction);
    }
    if (!layout::isPermutation(t.dims, namesOf(v)))
      return reject(path, t.tensor, quoted(t.dims) + " is not a permutation of the tensor's dims " +
                                        quoted(namesOf(v)));
    if (t.operand == "d")
      layout::insertTransposeAfter(c->second, t.dims);
    else
      layout::insertTransposeKernel(c->second->getOpOperand(t.operand == "a" ? 0 : 1), t.dims);
  }

  // Contractions: the entry agrees with the layouts and the mapping.
  std::map<std::string, bool> listed;
  for (auto [i, e] : llvm::enumerate(config.contractions)) {
    std::string path = "contractions[" + std::to_string(i) + "]";
    auto it = contractions.find(e.name);
    if (it == contractions.end())
      return reject(path, e.name, "unknown contraction (the layer has c0 to c" +
                                      std::to_string(contractions.size() - 1) + ")");
    listed[e.name] = true;
    dm::ContractOp c = it->second;
    if (checkForms && e.equation != equationOf(c))
      return reject(path, e.name, "equation " + quoted(e.equation) +
                                      " disagrees with the layouts of its tensors " +
                                      quoted(equationOf(c)));
    dmrt::ConfigContraction mapped;
    std::string why;
    if (!formOf(c, 0, mapped, why))
      return reject(path, e.name, "no cuBLASLt form in these layouts: " + why);
    // The algorithm (parseConfig checked its form): the manifest carries it.
    if (e.algorithm == dmrt::kHeuristicAlgorithm)
      c->removeAttr(kAlgorithmAttr);
    else
      c->setAttr(kAlgorithmAttr, StringAttr::get(c.getContext(), e.algorithm));
    if (!checkForms)
      continue; // the form follows from the layouts
    auto check = [&](const char *field, const std::string &got,
                     const std::string &mapped) -> llvm::Error {
      if (got == mapped)
        return llvm::Error::success();
      return reject(path, e.name, llvm::Twine(field) + " " + got +
                                      " disagrees with the mapping of these layouts (" +
                                      mapped + ")");
    };
    auto str = [](int64_t v) { return std::to_string(v); };
    auto strides = [&](const dmrt::ConfigContraction &x) {
      return str(x.strideA) + "," + str(x.strideB) + "," + str(x.strideD);
    };
    if (llvm::Error err = check("swap", e.swap ? "true" : "false",
                                mapped.swap ? "true" : "false"))
      return err;
    if (llvm::Error err = check("transa", e.transa, mapped.transa))
      return err;
    if (llvm::Error err = check("transb", e.transb, mapped.transb))
      return err;
    if (llvm::Error err = check("batch", str(e.batch), str(mapped.batch)))
      return err;
    if (llvm::Error err = check("batch_strides", strides(e), strides(mapped)))
      return err;
  }
  for (auto &[name, c] : contractions) {
    std::string why;
    if (!listed.count(name) && !layout::isMappable(c, &why))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     file + ": contraction " + quoted(name) + " (" +
                                         equationOf(c) +
                                         ", not in the configuration) has no cuBLASLt "
                                         "form in the configured layouts: " + why);
  }

  // Stacks written in place, as the config stage's dm-stack-in-place moves
  // them (after the layouts): the kernels then have the names config.json uses.
  if (stackInPlace)
    moveStacksInPlace(f);

  // Knobs, by the kernels' names after the transposes went in.
  std::map<std::string, dm::KernelOp> kernels;
  for (auto [n, k] : llvm::enumerate(f.getOps<dm::KernelOp>()))
    kernels[kernelName(n, k)] = k;
  for (auto [i, e] : llvm::enumerate(config.kernels)) {
    std::string path = "kernels[" + std::to_string(i) + "]";
    auto it = kernels.find(e.name);
    if (it == kernels.end())
      return reject(path, e.name,
                    "unknown kernel (`dmc compile --print-config` lists them; a configuration "
                    "without `paths` (version 2 or older) needs the path flags it was compiled "
                    "with, such as --bias-grads, --no-column-fusion or --no-gemm-addends)");
    codegen::KernelConfig knobs = fromConfigKernel(e);
    if (codegen::isFusedKernel(it->second)) {
      if (knobs.warps == 0) // no tiles given: the default for its head dim
        knobs = codegen::defaultFusedConfig(it->second);
      if (knobs.laneDim || knobs.tx != 1 || knobs.ty != 1 || knobs.perThread != 1 ||
          knobs.vec != 1 || knobs.split != 1 || knobs.unroll != 0)
        return reject(path, e.name,
                      "a fused attention kernel takes tiles (block_m, block_n, warps), not "
                      "loop-nest knobs: leave lane_dim \"\" and tx, ty, per_thread, vec, split at 1, "
                      "without unroll");
      if (std::string why = codegen::whyInfeasibleFused(it->second, knobs); !why.empty())
        return reject(path, e.name, "infeasible tiles (" + knobs.describe() + "): " + why);
      setKnobs(it->second, knobs);
      continue;
    }
    codegen::KernelSpace space = codegen::spaceOf(it->second);
    if (knobs.laneDim && space.outer.find(knobs.laneDim) == std::string::npos)
      return reject(path, e.name, "lane_dim " + quoted(e.laneDim) +
                                      " is not an outer dim of the kernel (" +
                                      quoted(space.outer) + ")");
    std::string why = codegen::whyInfeasible(space, knobs);
    if (!why.empty())
      return reject(path, e.name, "infeasible knobs (" + knobs.describe() + "): " + why);
    setKnobs(it->second, knobs);
  }
  return llvm::Error::success();
}

} // namespace dmc::bundle
