//===- Layouts.cpp - the configuration's layouts, for `dmc report` --------===//
#include "compiler/report/Layouts.h"

#include "compiler/bundle/Configuration.h"
#include "compiler/bundle/TensorTable.h"
#include "passes/LayoutRewrite.h"

#include <map>

using namespace mlir;

namespace dmc::report {
namespace {

int unmappable(func::FuncOp f) {
  int n = 0;
  for (auto c : f.getOps<dm::ContractOp>())
    n += !layout::isMappable(c);
  return n;
}

/// "k<n>_<name>" for kernels, "c<n>" for contractions, "argument" else.
std::map<Operation *, std::string> producerNames(func::FuncOp f) {
  std::map<Operation *, std::string> names;
  int k = 0, c = 0;
  for (Operation &op : f.getBody().front().without_terminator()) {
    if (auto kernel = dyn_cast<dm::KernelOp>(op))
      names[&op] = bundle::kernelName(k++, kernel);
    else if (isa<dm::ContractOp>(op))
      names[&op] = bundle::contractionName(c++);
  }
  return names;
}

} // namespace

int64_t LayoutFigures::transposeBytes() const {
  int64_t sum = 0;
  for (const InsertedTranspose &t : transposes)
    sum += t.bytes;
  return sum;
}

llvm::Expected<LayoutFigures> layoutsOf(func::FuncOp fused, func::FuncOp configured) {
  LayoutFigures figures;
  figures.chosen = true;
  auto contractions = configured.getOps<dm::ContractOp>();
  figures.contractions = int(std::distance(contractions.begin(), contractions.end()));
  figures.unmappableBefore = unmappable(fused);
  figures.unmappableAfter = unmappable(configured);
  auto before = bundle::TensorTable::build(fused);
  if (!before)
    return before.takeError();
  auto after = bundle::TensorTable::build(configured);
  if (!after)
    return after.takeError();
  std::map<std::string, std::string> frontend;
  for (const bundle::TensorInfo &t : before->tensors())
    frontend[t.name] = cast<dm::TensorType>(t.value.getType()).getNames().str();
  auto producers = producerNames(configured);
  for (const bundle::TensorInfo &t : after->tensors()) {
    auto type = cast<dm::TensorType>(t.value.getType());
    Operation *def = t.value.getDefiningOp();
    auto it = frontend.find(t.name);
    if (t.aliasOf >= 0 || (def && def->hasAttr(layout::kInsertedAttr)) || it == frontend.end() ||
        it->second == type.getNames())
      continue;
    figures.changed.push_back(
        {t.name, def ? producers[def] : "argument", it->second, type.getNames().str(),
         type.getSizeInBytes()});
  }
  figures.epilogues = epiloguesOf(configured);
  if (figures.unmappableAfter == 0) {
    auto config = bundle::extractConfiguration(configured, *after, "");
    if (!config)
      return config.takeError();
    for (const dmrt::ConfigTranspose &t : config->transposes)
      figures.transposes.push_back({t.contraction, t.operand, t.tensor, t.dims, t.bytes});
  }
  return figures;
}

} // namespace dmc::report
