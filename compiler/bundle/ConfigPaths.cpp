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

namespace {
/// The boolean paths by their config.json key (bias_grads, a string, apart):
/// one list for the module attribute both ways and for pathValue.
struct BoolPath {
  const char *key;
  bool dmrt::ConfigPaths::*member;
};
constexpr BoolPath kBoolPaths[] = {{"fused_attention", &dmrt::ConfigPaths::fusedAttention},
                                   {"column_fusion", &dmrt::ConfigPaths::columnFusion},
                                   {"gemm_addends", &dmrt::ConfigPaths::gemmAddends},
                                   {"stack_in_place", &dmrt::ConfigPaths::stackInPlace}};
} // namespace

void setPathsAttr(ModuleOp module, const dmrt::ConfigPaths &p) {
  Builder b(module.getContext());
  llvm::SmallVector<NamedAttribute> fields;
  for (const BoolPath &f : kBoolPaths)
    fields.push_back(b.getNamedAttr(f.key, b.getBoolAttr(p.*f.member)));
  fields.push_back(b.getNamedAttr("bias_grads", b.getStringAttr(p.biasGrads)));
  module->setAttr(kPathsAttr, b.getDictionaryAttr(fields));
}

std::optional<dmrt::ConfigPaths> pathsOf(ModuleOp module) {
  auto d = module ? module->getAttrOfType<DictionaryAttr>(kPathsAttr) : DictionaryAttr();
  if (!d)
    return std::nullopt;
  dmrt::ConfigPaths p;
  for (const BoolPath &f : kBoolPaths)
    if (auto a = d.getAs<BoolAttr>(f.key))
      p.*f.member = a.getValue();
  if (auto a = d.getAs<StringAttr>("bias_grads"))
    p.biasGrads = a.getValue().str();
  return p;
}

std::string pathValue(const dmrt::ConfigPaths &p, llvm::StringRef field) {
  if (field == "bias_grads")
    return p.biasGrads;
  for (const BoolPath &f : kBoolPaths)
    if (field == f.key)
      return p.*f.member ? "true" : "false";
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
