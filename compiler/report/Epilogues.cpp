//===- Epilogues.cpp - the epilogues of a configuration, for `dmc report` -===//
//
// For every contraction dm-fuse marked with candidates: the epilogue it runs
// and the bytes that saved (dm.epilogue_saved), or, for each candidate not
// taken, why (passes/EpilogueRewrite.h, asked again on the configured graph;
// activation epilogues are not folded by this compiler).
//
//===----------------------------------------------------------------------===//
#include "compiler/report/Layouts.h"

#include "compiler/bundle/Configuration.h"
#include "passes/EpilogueRewrite.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace dmc::report {
namespace {

/// Why no epilogue of the kinds behind `mark` was folded into `c`.
std::string whyNot(dm::ContractOp c, llvm::StringRef mark) {
  std::vector<dmrt::Epilogue> kinds;
  if (mark == "bias")
    kinds = {dmrt::Epilogue::Bias};
  else if (mark == "bgrad")
    kinds = {dmrt::Epilogue::BGradA, dmrt::Epilogue::BGradB};
  else if (mark == "accumulate")
    kinds = {dmrt::Epilogue::Accumulate};
  else
    return mark.str() + ": activation epilogues are not folded (the activation kernels stay)";
  std::vector<std::string> reasons;
  for (dmrt::Epilogue kind : kinds) {
    epilogue::Candidate cand;
    std::string why;
    if (epilogue::findCandidate(c, kind, cand, why))
      why = "legal and saving, but another epilogue was chosen";
    reasons.push_back(dmrt::epilogueManifestName(kind) + ": " + why);
  }
  return llvm::join(reasons, "; ");
}

} // namespace

std::vector<EpilogueUse> epiloguesOf(func::FuncOp configured) {
  std::vector<EpilogueUse> uses;
  for (auto [n, c] : llvm::enumerate(configured.getOps<dm::ContractOp>())) {
    auto marks = c->getAttrOfType<ArrayAttr>("dm.epilogue");
    if (!marks)
      continue;
    EpilogueUse use;
    use.contraction = bundle::contractionName(n);
    use.equation = bundle::equationOf(c);
    std::vector<std::string> names, reasons;
    for (Attribute a : marks)
      names.push_back(cast<StringAttr>(a).getValue().str());
    use.candidates = llvm::join(names, ",");
    use.chosen = c.getEpilogue().str();
    if (auto saved = c->getAttrOfType<IntegerAttr>(epilogue::kSavedAttr))
      use.bytesSaved = saved.getInt();
    if (use.chosen == "none") {
      for (const std::string &mark : names)
        reasons.push_back(whyNot(c, mark));
      use.whyNot = llvm::join(reasons, "; ");
    }
    uses.push_back(std::move(use));
  }
  return uses;
}

int64_t LayoutFigures::epilogueBytesSaved() const {
  int64_t sum = 0;
  for (const EpilogueUse &e : epilogues)
    sum += e.bytesSaved;
  return sum;
}

} // namespace dmc::report
