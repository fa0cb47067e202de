//===- ManifestBuild.cpp - `dmc compile` stage: the manifest from the IR --===//
#include "compiler/bundle/ManifestBuild.h"

#include "codegen/gemm/GemmMapping.h"
#include "compiler/bundle/Configuration.h"
#include "compiler/TensorIO.h"
#include "compiler/report/DataMovement.h"
#include "ir/IterationSpace.h"
#include "ir/StorageType.h"
#include "passes/LayoutRewrite.h"
#include "runtime/format/Checksum.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace dmc::bundle {
namespace {

int64_t bytes(Type t) { return cast<dm::TensorType>(t).getSizeInBytes(); }

std::vector<int64_t> ids(const TensorTable &table, ValueRange values) {
  std::vector<int64_t> out;
  for (Value v : values)
    out.push_back(table.idOf(v));
  return out;
}

/// Each kernel's and contraction's unit of the analysis (flop, bytes, phase).
using Units = llvm::DenseMap<Operation *, const report::WorkItem *>;

const char *phaseOf(const Units &units, Operation *op) {
  const report::WorkItem *w = units.lookup(op);
  return w && w->backward ? "backward" : "forward";
}

/// Kernel entries; flop and bytes from the analysis of each kernel op.
void addKernels(const TensorTable &table, const std::vector<BuiltKernel> &built,
                const Units &unitOf, dmrt::Manifest &m) {
  for (size_t n = 0; n < built.size(); ++n) {
    const BuiltKernel &b = built[n];
    dm::KernelOp op = b.op; // MLIR op handles are values; their accessors are not const
    const codegen::EmittedKernel &k = b.emitted;
    dmrt::BundleKernel bk;
    bk.id = int64_t(n);
    bk.name = op.getName().str();
    bk.entry = k.entry;
    bk.cubin = kernelFileStem(n) + ".cubin";
    bk.source = kernelFileStem(n) + ".cu";
    bk.grid[0] = k.grid;
    bk.grid[1] = k.gridY;
    bk.grid[2] = k.gridZ;
    bk.block[0] = k.blockX;
    bk.block[1] = k.blockY;
    bk.sharedBytes = k.sharedBytes;
    bk.cubinBytes = int64_t(b.compiled.cubin.size());
    bk.cubinChecksum = dmrt::fnv1a64(b.compiled.cubin.data(), b.compiled.cubin.size());
    bk.workspaceBytes = k.workspaceBytes;
    if (!k.finishEntry.empty()) {
      bk.finishEntry = k.finishEntry;
      bk.finishGrid[0] = k.finishGrid;
      bk.finishBlock[0] = k.finishBlockX;
      bk.finishBlock[1] = k.finishBlockY;
      bk.finishOutputs = k.finishOutputs;
    }
    bk.config = k.describe.empty() ? b.config.describe() : k.describe;
    bk.phase = phaseOf(unitOf, op);
    bk.inputs = ids(table, op.getInputs());
    bk.outputs = ids(table, op.getResults());
    if (const report::WorkItem *w = unitOf.lookup(op.getOperation())) {
      bk.flop = w->flop;
      bk.bytes = w->ioLowerBound;
    }
    m.kernels.push_back(std::move(bk));
  }
}

/// Contraction entries: each one's cuBLASLt descriptor, or why it has none.
void addContractions(func::FuncOp f, const TensorTable &table, const Units &unitOf,
                     dmrt::Manifest &m, llvm::raw_ostream &log) {
  for (auto c : f.getOps<dm::ContractOp>()) {
    dmcgen::Contraction spec = layout::contractionOf(c);
    dmrt::BundleContraction bc;
    bc.mappable = dmcgen::mapContraction(spec, bc.gemm, bc.unmappable);
    if (bc.mappable)
      bc.gemmDescription = bc.gemm.describe();
    else
      bc.gemm = {};
    bc.id = int64_t(m.contractions.size());
    bc.equation = equationOf(c);
    bc.phase = phaseOf(unitOf, c);
    bc.a = table.idOf(c.getLhs());
    bc.b = table.idOf(c.getRhs());
    bc.d = table.idOf(c.getResult());
    bc.alpha = spec.alpha;
    bc.epilogue = spec.epilogue;
    bc.algorithm = algorithmOf(c);
    if (Value vector = c.getBias() ? c.getBias() : c.getBiasGrad())
      bc.bias = table.idOf(vector);
    bc.flop = dm::analyticFlop(cast<dm::IterationSpaceOpInterface>(c.getOperation()));
    bc.bytes = 0; // every tensor read or written once: a, b, d and any bias vector
    for (Value v : c->getOperands())
      bc.bytes += bytes(v.getType());
    for (Value v : c->getResults())
      bc.bytes += bytes(v.getType());
    if (!bc.mappable)
      log << "dmc compile: warning: contraction " << bc.equation
          << " has no cuBLASLt form: " << bc.unmappable << "\n";
    m.contractions.push_back(std::move(bc));
  }
}

/// Tensor entries; arguments also say how dmc eval draws them.
llvm::Error addTensors(func::FuncOp f, const TensorTable &table, dmrt::Manifest &m) {
  for (const TensorInfo &t : table.tensors()) {
    auto tt = cast<dm::TensorType>(t.value.getType());
    std::optional<dmrt::DType> dtype = dm::storageDType(tt);
    if (!dtype || *dtype == dmrt::DType::F64)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "tensor " + t.name + ": element type " +
                                         llvm::formatv("{0}", tt.getElementType()) +
                                         " has no bundle dtype (bf16, f16, f32, i32)");
    dmrt::BundleTensor bt;
    bt.id = t.id;
    bt.name = t.name;
    bt.role = t.role;
    bt.dims = tt.getNames().str();
    bt.shape.assign(tt.getShape().begin(), tt.getShape().end());
    bt.dtype = *dtype;
    bt.bytes = bytes(tt);
    bt.isAlias = t.aliasOf >= 0;
    bt.aliasOf = t.aliasOf;
    bt.aliasOffset = t.aliasOffset;
    bt.aliasStrides = t.aliasStrides;
    if (auto arg = dyn_cast<BlockArgument>(t.value); arg && dmrt::isArgumentRole(t.role)) {
      ArgumentInit init = argumentInit(f, arg.getArgNumber()); // how dmc eval draws it
      bt.hasInit = true;
      std::tie(bt.initMean, bt.initRange, bt.initMax) = std::tie(init.mean, init.range, init.max);
    }
    m.tensors.push_back(std::move(bt));
  }
  return llvm::Error::success();
}

} // namespace

std::string kernelFileStem(size_t n) { return "kernels/k" + std::to_string(n); }

llvm::Expected<dmrt::Manifest> buildManifest(func::FuncOp f, const TensorTable &table,
                                             const std::vector<BuiltKernel> &built,
                                             const BundleOptions &options,
                                             llvm::raw_ostream &log) {
  dmrt::Manifest m;
  m.model = options.modelName;
  m.arch = options.arch;
  m.nvrtc = dmcgen::nvrtcVersion();
  report::GraphCost cost = report::costOf(f);
  Units unitOf;
  for (const report::WorkItem &w : cost.items)
    unitOf[w.op] = &w;
  addKernels(table, built, unitOf, m);
  addContractions(f, table, unitOf, m, log);
  if (llvm::Error e = addTensors(f, table, m))
    return e;
  int64_t k = 0, c = 0;
  for (Operation &op : f.getBody().front().without_terminator()) {
    if (isa<dm::KernelOp>(op))
      m.steps.push_back({dmrt::BundleStep::Kernel, k++});
    else if (isa<dm::ContractOp>(op))
      m.steps.push_back({dmrt::BundleStep::Contraction, c++});
  }
  return m;
}

} // namespace dmc::bundle
