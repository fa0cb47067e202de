//===- Configuration.cpp - the IR's configuration <-> config.json ---------===//
#include "compiler/bundle/Configuration.h"
#include "compiler/bundle/ConfigPaths.h"

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
    return codegen::isFusedKernel(kernel) ? codegen::defaultFusedConfig(kernel)
                                          : codegen::defaultConfig(codegen::spaceOf(kernel));
  codegen::KernelConfig c;
  auto get = [&](const char *key) { return int(cast<IntegerAttr>(knobs.get(key)).getInt()); };
  if (knobs.get("warps")) {
    c.blockM = get("block_m");
    c.blockN = get("block_n");
    c.warps = get("warps");
    c.wgmma = knobs.get("wgmma") != nullptr;
    if (knobs.get("min_blocks"))
      c.minBlocks = get("min_blocks");
  }
  llvm::StringRef lane = cast<StringAttr>(knobs.get("lane_dim")).getValue();
  c.laneDim = lane.empty() ? 0 : lane[0];
  c.tx = get("tx");
  c.ty = get("ty");
  c.perThread = get("per_thread");
  c.vec = get("vec");
  c.split = get("split");
  if (knobs.get("unroll"))
    c.unroll = get("unroll");
  return c;
}

void setKnobs(dm::KernelOp kernel, const codegen::KernelConfig &k) {
  Builder b(kernel.getContext());
  std::string lane = k.laneDim ? std::string(1, k.laneDim) : "";
  SmallVector<NamedAttribute> knobs = {
      b.getNamedAttr("lane_dim", b.getStringAttr(lane)),
      b.getNamedAttr("tx", b.getI64IntegerAttr(k.tx)),
      b.getNamedAttr("ty", b.getI64IntegerAttr(k.ty)),
      b.getNamedAttr("per_thread", b.getI64IntegerAttr(k.perThread)),
      b.getNamedAttr("vec", b.getI64IntegerAttr(k.vec)),
      b.getNamedAttr("split", b.getI64IntegerAttr(k.split))};
  if (k.warps > 0) {
    knobs.push_back(b.getNamedAttr("block_m", b.getI64IntegerAttr(k.blockM)));
    knobs.push_back(b.getNamedAttr("block_n", b.getI64IntegerAttr(k.blockN)));
    knobs.push_back(b.getNamedAttr("warps", b.getI64IntegerAttr(k.warps)));
    if (k.wgmma)
      knobs.push_back(b.getNamedAttr("wgmma", b.getUnitAttr()));
    if (k.minBlocks > 0)
      knobs.push_back(b.getNamedAttr("min_blocks", b.getI64IntegerAttr(k.minBlocks)));
  }
  if (k.unroll > 0)
    knobs.push_back(b.getNamedAttr("unroll", b.getI64IntegerAttr(k.unroll)));
  kernel->setAttr(kKnobsAttr, b.getDictionaryAttr(knobs));
}

dmrt::ConfigKernel toConfigKernel(const std::string &name, const codegen::KernelConfig &k) {
  dmrt::ConfigKernel e;
  e.name = name;
  e.laneDim = k.laneDim ? std::string(1, k.laneDim) : "";
  e.tx = k.tx;
  e.ty = k.ty;
  e.perThread = k.perThread;
  e.vec = k.vec;
  e.split = k.split;
  e.blockM = k.blockM;
  e.blockN = k.blockN;
  e.warps = k.warps;
  e.wgmma = k.wgmma;
  e.minBlocks = k.minBlocks;
  e.unroll = k.unroll;
  e.describe = k.describe();
  return e;
}

codegen::KernelConfig fromConfigKernel(const dmrt::ConfigKernel &e) {
  codegen::KernelConfig k;
  k.laneDim = e.laneDim.empty() ? 0 : e.laneDim[0];
  k.tx = int(e.tx);
  k.ty = int(e.ty);
  k.perThread = int(e.perThread);
  k.vec = int(e.vec);
  k.split = int(e.split);
  k.blockM = int(e.blockM);
  k.blockN = int(e.blockN);
  k.warps = int(e.warps);
  k.wgmma = e.wgmma;
  k.minBlocks = int(e.minBlocks);
  k.unroll = int(e.unroll);
  return k;
}

std::string algorithmOf(dm::ContractOp c) {
  auto a = c->getAttrOfType<StringAttr>(kAlgorithmAttr);
  return a ? a.getValue().str() : std::string(dmrt::kHeuristicAlgorithm);
}

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
  out.epilogue = c.getEpilogue().str();
  out.algorithm = algorithmOf(c);
  return true;
}

llvm::Expected<dmrt::Configuration> extractConfiguration(func::FuncOp f, llvm::StringRef model) {
  auto table = TensorTable::build(f);
  if (!table)
    return table.takeError();
  return extractConfiguration(f, *table, model);
}

llvm::Expected<dmrt::Configuration> extractConfiguration(func::FuncOp f, const TensorTable &table,
                                                         llvm::StringRef model) {
  dmrt::Configuration config;
  config.model = model.str();
  if (auto paths = pathsOf(f->getParentOfType<ModuleOp>())) {
    config.hasPaths = true;
    config.paths = *paths;
  }
  for (const TensorInfo &t : table.tensors()) {
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
    config.kernels.push_back(toConfigKernel(kernelName(n, k), knobsOf(k)));
    if (!k->hasAttr(layout::kInsertedAttr))
      continue;
    Value in = k.getInputs()[0], out = k.getResult(0);
    int64_t bytes = 2 * cast<dm::TensorType>(in.getType()).getSizeInBytes();
    std::string source = table.tensors()[table.idOf(in)].name;
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
