//===- ConfigPaths.cpp - The path choices a configuration was built with --===//
#include "compiler/bundle/ConfigPaths.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace dmc::bundle {

using namespace mlir;

dmrt::ConfigPaths configPaths(const PipelineOptions &o) {
  dmrt::ConfigPaths p;
  p.fusedAttention = o.fusedAttention;
  p.columnFusion = o.columnFusion;
  p.biasGrads = o.biasGrads;
  p.gemmAddends = o.gemmAddends;
  p.stackInPlace = o.stackInPlace;
  return p;
}

void applyConfigPaths(const dmrt::ConfigPaths &p, PipelineOptions &o) {
  o.fusedAttention = p.fusedAttention;
  o.columnFusion = p.columnFusion;
  o.biasGrads = p.biasGrads;
  o.gemmAddends = p.gemmAddends;
  o.stackInPlace = p.stackInPlace;
}

void setPathsAttr(ModuleOp module, const dmrt::ConfigPaths &p) {
  Builder b(module.getContext());
  module->setAttr(kPathsAttr,
                  b.getDictionaryAttr({b.getNamedAttr("fused_attention",
                                                      b.getBoolAttr(p.fusedAttention)),
                                       b.getNamedAttr("column_fusion",
                                                      b.getBoolAttr(p.columnFusion)),
                                       b.getNamedAttr("bias_grads",
                                                      b.getStringAttr(p.biasGrads)),
                                       b.getNamedAttr("gemm_addends",
                                                      b.getBoolAttr(p.gemmAddends)),
                                       b.getNamedAttr("stack_in_place",
                                                      b.getBoolAttr(p.stackInPlace))}));
}

std::optional<dmrt::ConfigPaths> pathsOf(ModuleOp module) {
  auto d = module ? module->getAttrOfType<DictionaryAttr>(kPathsAttr) : DictionaryAttr();
  if (!d)
    return std::nullopt;
  auto flag = [&](StringRef key, bool &out) {
    if (auto a = d.getAs<BoolAttr>(key))
      out = a.getValue();
  };
  dmrt::ConfigPaths p;
  flag("fused_attention", p.fusedAttention);
  flag("column_fusion", p.columnFusion);
  if (auto a = d.getAs<StringAttr>("bias_grads"))
    p.biasGrads = a.getValue().str();
  flag("gemm_addends", p.gemmAddends);
  flag("stack_in_place", p.stackInPlace);
  return p;
}

std::string pathValue(const dmrt::ConfigPaths &p, llvm::StringRef field) {
  auto text = [](bool v) { return std::string(v ? "true" : "false"); };
  if (field == "fused_attention")
    return text(p.fusedAttention);
  if (field == "column_fusion")
    return text(p.columnFusion);
  if (field == "bias_grads")
    return p.biasGrads;
  if (field == "gemm_addends")
    return text(p.gemmAddends);
  if (field == "stack_in_place")
    return text(p.stackInPlace);
  return "";
}

llvm::Error checkPathFlags(const dmrt::ConfigPaths &paths, const std::string &file,
                           const std::vector<PathFlag> &flags) {
  for (const PathFlag &f : flags) {
    const std::string inFile = pathValue(paths, f.field);
    if (f.given && f.value != inFile)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          f.flag + " and --config " + file + ": the configuration was compiled "
              "with paths." + f.field + " " + inFile + " (the flag asks for " + f.value +
              "); leave the flag out, or compile the other path without --config");
  }
  return llvm::Error::success();
}

} // namespace dmc::bundle
