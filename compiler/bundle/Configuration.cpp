//===- Configuration.cpp - the IR's configuration <-> config.json ---------===//
#include "compiler/bundle/Configuration.h"

#include "compiler/bundle/TensorTable.h"
#include "passes/LayoutRewrite.h"

#include "mlir/IR/Builders.h"

#include <map>

using namespace mlir;

namespace dmc::bundle {
namespace {

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::vector<dm::KernelOp> kernelsOf(func::FuncOp f) {
  return std::vector<dm::KernelOp>(f.getOps<dm::KernelOp>().begin(),
                                   f.getOps<dm::KernelOp>().end());
}
std::vector<dm::ContractOp> contractionsOf(func::FuncOp f) {
  return std::vector<dm::ContractOp>(f.getOps<dm::ContractOp>().begin(),
                                     f.getOps<dm::ContractOp>().end());
}
/// The cuBLASLt form of `c` as laid out now, or why it has none.
bool formOf(dm::ContractOp c, size_t n, dmrt::ConfigContraction &out, std::string &why) {
  dmrt::GemmDescriptor g;
  if (!dmcgen::mapContraction(layout::contractionOf(c), g, why))
    return false;
  out.name = contractionName(n);
  out.equation = equationOf(c);
  out.swap = g.swapOperands;
  out.transa = g.transA == dmrt::Transpose::T ? "T" : "N";
  out.transb = g.transB == dmrt::Transpose::T ? "T" : "N";
  out.batch = g.batchCount;
  out.strideA = g.a.batchStride;
  out.strideB = g.b.batchStride;
  out.strideD = g.d.batchStride;
  return true;
}

std::string namesOf(Value v) { return cast<dm::TensorType>(v.getType()).getNames().str(); }

} // namespace

std::string kernelName(size_t n, dm::KernelOp k) {
  return "k" + std::to_string(n) + "_" + k.getName().str();
}

std::string contractionName(size_t n) { return "c" + std::to_string(n); }

std::string equationOf(dm::ContractOp c) {
  return namesOf(c.getLhs()) + "," + namesOf(c.getRhs()) + "->" + namesOf(c.getResult());
}

codegen::KernelConfig knobsOf(dm::KernelOp kernel) {
  auto knobs = kernel->getAttrOfType<DictionaryAttr>(kKnobsAttr);
  if (!knobs)
    return codegen::defaultConfig(codegen::spaceOf(kernel));
  codegen::KernelConfig c;
  auto get = [&](const char *key) { return int(cast<IntegerAttr>(knobs.get(key)).getInt()); };
  llvm::StringRef lane = cast<StringAttr>(knobs.get("lane_dim")).getValue();
  c.laneDim = lane.empty() ? 0 : lane[0];
  c.tx = get("tx");
  c.ty = get("ty");
  c.perThread = get("per_thread");
  c.vec = get("vec");
  c.split = get("split");
  return c;
}

llvm::Expected<dmrt::Configuration> extractConfiguration(func::FuncOp f, llvm::StringRef model) {
  auto table = TensorTable::build(f);
  if (!table)
    return table.takeError();
  dmrt::Configuration config;
  config.model = model.str();
  for (const TensorInfo &t : table->tensors()) {
    Operation *def = t.value.getDefiningOp();
    if (t.aliasOf < 0 && !(def && def->hasAttr(layout::kInsertedAttr)))
      config.tensors.push_back({t.name, namesOf(t.value)});
  }
  auto contractions = contractionsOf(f);
  llvm::DenseMap<Operation *, std::string> names;
  for (auto [n, c] : llvm::enumerate(contractions)) {
    dmrt::ConfigContraction form;
    std::string why;
    if (!formOf(c, n, form, why))
      return fail("contraction c" + llvm::Twine(n) + " (" + equationOf(c) +
                  ") has no cuBLASLt form: " + why);
    names[c] = form.name;
    config.contractions.push_back(form);
  }
  for (auto [n, k] : llvm::enumerate(kernelsOf(f))) {
    codegen::KernelConfig knobs = knobsOf(k);
    config.kernels.push_back({kernelName(n, k), knobs.laneDim ? std::string(1, knobs.laneDim) : "",
                              knobs.tx, knobs.ty, knobs.perThread, knobs.vec, knobs.split,
                              knobs.describe()});
    if (!k->hasAttr(layout::kInsertedAttr))
      continue;
    Value in = k.getInputs()[0], out = k.getResult(0);
    int64_t bytes = 2 * cast<dm::TensorType>(in.getType()).getSizeInBytes();
    std::string source = table->tensors()[table->idOf(in)].name;
    auto kind = k->getAttrOfType<StringAttr>(layout::kInsertedAttr);
    if (kind && kind.getValue() == layout::kInsertedForResult) {
      if (auto producer = in.getDefiningOp<dm::ContractOp>())
        config.transposes.push_back({names.lookup(producer), "d", source, namesOf(in), bytes});
      continue;
    }
    for (OpOperand &use : out.getUses())
      if (auto c = dyn_cast<dm::ContractOp>(use.getOwner()))
        config.transposes.push_back({names.lookup(c), use.getOperandNumber() ? "b" : "a",
                                     source, namesOf(out), bytes});
  }
  std::stable_sort(config.transposes.begin(), config.transposes.end(),
                   [](const dmrt::ConfigTranspose &a, const dmrt::ConfigTranspose &b) {
                     return std::stoi(a.contraction.substr(1)) < std::stoi(b.contraction.substr(1));
                   });
  return config;
}

} // namespace dmc::bundle
