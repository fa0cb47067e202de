//===- KernelEmitter.cpp - CUDA C++ for one fused kernel and config -------===//
//
// Threads: blockIdx.x * TX + threadIdx.x enumerates outer points (the lane
// dim innermost), threadIdx.y strides over the row. The kernel sweeps each
// row once per pass, recomputing from the inputs what the pass needs (the
// re-reads of a row hit L1/L2: DRAM sees each input once), combines the
// pass's reductions across threadIdx.y, and stores each output in the first
// pass that has it; per-outer-point outputs are stored by threadIdx.y == 0.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelEmitter.h"

#include "codegen/CudaPrelude.h"
#include "codegen/EmitSupport.h"
#include "codegen/KernelSchedule.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dmc::codegen {

llvm::Expected<EmittedKernel> emitKernel(dm::KernelOp kernel, const KernelConfig &config,
                                         llvm::StringRef entry) {
  if (isFusedKernel(kernel))
    return emitAttentionKernel(kernel, config, entry);
  KernelSpace s;
  NodeGraph g;
  if (llvm::Error e = lowerForConfig(kernel, config, s, g))
    return e;
  return emitSchedule(kernel, s, g, config, scheduleKernel(kernel, s, g, config), entry);
}

llvm::Expected<EmittedKernel> emitRowKernel(dm::KernelOp kernel, const KernelSpace &s,
                                            const NodeGraph &g, const KernelConfig &config,
                                            const RowSchedule &r, llvm::StringRef entry) {
  const std::string &outer = r.outer;
  const int per = r.per, vec = r.vec;
  const char vd = r.vd;
  std::string src;
  llvm::raw_string_ostream os(src);
  os << "// dm.kernel \"" << kernel.getName() << "\": outer " << (outer.empty() ? "-" : outer)
     << " (" << s.outerPoints << " points), rows " << (s.row.empty() ? "-" : s.row) << " ("
     << s.rowPoints << " points); " << config.describe() << ", " << r.passes << " pass(es)\n";
  os << kCudaPrelude << "\n";
  emitSignature(os, kernel, r.threads, entry, /*workspace=*/!r.sums.empty(), r.minBlocks);
  emitIndexType(os, kernel,
                std::max(s.outerPoints * s.rowPoints + int64_t(config.tx) * config.perThread,
                         int64_t(r.sums.size()) * r.blocks * s.rowPoints));
  os << "  constexpr int TX = " << config.tx << ", TY = " << config.ty << ";\n";
  if (r.reduces)
    os << "  __shared__ float dmcSmem[TX * TY];\n";
  // Column sums: per row point of this thread, over the rows it takes.
  for (int id : r.sums)
    os << "  float sum" << id << "[" << r.perRow * r.rowVecWidth << "] = {};  // "
       << NodeGraph::name(g.nodes[id].deps[0]) << " summed over this thread's rows\n";
  std::string vdIndex = vd ? "i_" + std::string(1, vd) : "";
  auto base = [&](Type t) {
    // A tensor laid out exactly as the outer loop (elementwise kernels): its
    // offset is the chunk index itself, with no dims to decode.
    if (s.row.empty() && cast<dm::TensorType>(t).getNames() == outer)
      return "o * " + std::to_string(r.outerVec ? vec : 1);
    return offsetExpr(t, outer, vd); // the vector dim at its chunk's first point
  };
  auto vectorized = [&](Type t) { return movesAsVector(r, t); };
  RowShape shape{outer, per, config.ty, vec, r.perRow, r.rowChunks, vd};
  const RowFetch &fetch = r.fetch;
  std::string ind = "  ";
  if (!fetch.inputs.empty()) {
    emitRowFetchRegisters(os, ind, kernel, fetch, shape);
    emitRowFetch(os, ind, kernel, g, fetch, shape, r.chunks, "0");
  }
  if (per > 1) {
    os << (r.sums.empty() ? "#pragma unroll\n" : "#pragma unroll 1\n")
       << "  for (int k = 0; k < " << per << "; ++k) {\n";
    os << "  const Idx o = ((Idx)blockIdx.x * " << per
       << " + k) * TX + threadIdx.x;\n";
    if (!r.whole)
      os << "  if (o >= " << r.outerChunks << ") break;\n";
  } else {
    os << "  const Idx o = (Idx)blockIdx.x * TX + threadIdx.x;\n";
    if (!r.whole)
      os << "  if (o >= " << r.outerChunks << ") return;  // never inside a block that reduces\n";
  }
  decode(os, ind, "o", outer, r.chunks);
  if (r.outerVec)
    os << ind << "const Idx first_" << vd << " = " << vdIndex << " * " << vec << ";\n";
  for (auto [n, v] : llvm::enumerate(kernel.getInputs()))
    os << ind << "const Idx base_in" << n << " = " << base(v.getType()) << ";\n";
  for (auto [n, t] : llvm::enumerate(kernel.getResultTypes()))
    os << ind << "const Idx base_out" << n << " = " << base(t) << ";\n";
  if (r.outerVec) {
    // Loaded once per outer chunk: what any pass reads (its schedule says).
    std::set<unsigned> loaded;
    for (const PassPlan &plan : r.passPlans)
      loaded.insert(plan.outerVectorInputs.begin(), plan.outerVectorInputs.end());
    for (unsigned n : loaded)
      os << ind << vectorLoad(kernel.getInputs()[n].getType(), n, vec,
                              "in" + std::to_string(n) + " + base_in" + std::to_string(n), g, vd);
    for (auto [n, t] : llvm::enumerate(kernel.getResultTypes()))
      if (vectorized(t))
        os << ind << "float vout" << n << "[" << vec << "];\n";
    std::set<int> all;
    for (size_t id = 0; id < g.nodes.size(); ++id)
      g.addDraws(id, all);
    emitVectorDraws(os, ind, all, g, s, vd, vec);
    os << "#pragma unroll\n"
       << ind << "for (int v = 0; v < " << vec << "; ++v) {\n"
       << ind << "const Idx " << vdIndex << " = first_" << vd << " + v;\n";
  }

  for (size_t id = 0; id < g.nodes.size(); ++id)
    if (r.cached[id])
      os << ind << "float c" << id << "[" << r.perRow * r.rowVecWidth << "];  // "
         << NodeGraph::name(id) << " along this thread's row points\n";

  for (int p = 0; p < r.passes; ++p) {
    const PassPlan &plan = r.passPlans[size_t(p)];
    os << ind << "// pass " << p << "\n";
    for (int id : plan.outerValues)
      os << ind << "const float " << NodeGraph::name(id) << " = "
         << nodeValue(g, size_t(id), kernel, [](Type) { return false; }) << ";\n";
    if (!plan.sweeps)
      continue;
    for (int id : plan.reductions)
      os << ind << "float acc" << id << " = " << g.nodes[id].init << ";\n";
    // Unrolled only when short: long rows keep a loop (code size, compile time).
    os << ind << (r.perRow <= 16 ? "#pragma unroll\n" : "#pragma unroll 1\n")
       << ind << "for (int it = 0; it < " << r.perRow << "; ++it) {\n"
       << ind << "  const Idx r = threadIdx.y + (Idx)it * TY;\n";
    if (r.rowChunks % config.ty)
      os << ind << "  if (r >= " << r.rowChunks << ") break;\n";
    std::string in2 = ind + "  ";
    if (!s.row.empty())
      decode(os, in2, "r", s.row, r.chunks);
    if (r.rowVec)
      os << in2 << "const Idx first_" << vd << " = " << vdIndex << " * " << vec << ";\n";
    // The inputs the computed nodes read: scalar loads at off_in<n>,
    // vectorized ones from their registers.
    for (unsigned n : plan.scalarInputs)
      os << in2 << "const Idx off_in" << n << " = base_in" << n << " + "
         << offsetExpr(kernel.getInputs()[n].getType(), s.row) << ";\n";
    std::string in3 = in2, slot = "it";
    if (r.rowVec) {
      // Whole chunks of the row: one vector access per tensor, then the points.
      for (unsigned n : plan.vectorInputs) {
        Type t = kernel.getInputs()[n].getType();
        if (p == fetch.sweep && llvm::is_contained(fetch.inputs, n))
          os << in2 << vectorConvert(t, n, vec, "pf" + std::to_string(n) + "[it]");
        else
          os << in2 << vectorLoad(t, n, vec, "in" + std::to_string(n) + " + base_in" +
                                                 std::to_string(n) + " + " +
                                                 offsetExpr(t, s.row, vd), g, vd);
      }
      for (unsigned n : plan.stores)
        if (vectorized(kernel.getResultTypes()[n]))
          os << in2 << "float vout" << n << "[" << vec << "];\n";
      std::map<int, std::string> fetchedBits; // words of this row chunk, fetched ahead
      if (fetch.sweep >= 0 && p >= fetch.sweep)
        for (int k : fetch.bits) {
          if (p == fetch.sweep) // before the refill after this sweep
            os << in2 << "bwc" << k << "[it] = pfb" << k << "[it];\n";
          fetchedBits[k] = "bwc" + std::to_string(k) + "[it]";
        }
      emitVectorDraws(os, in2, plan.draws, g, s, vd, vec, fetchedBits);
      os << in2 << "#pragma unroll\n"
         << in2 << "for (int v = 0; v < " << vec << "; ++v) {\n";
      in3 = in2 + "  ";
      os << in3 << "const Idx " << vdIndex << " = first_" << vd << " + v;\n";
      slot = "it * " + std::to_string(vec) + " + v";
    }
    for (auto [id, cachedBefore] : llvm::zip(plan.nodes, plan.fromCache)) {
      if (cachedBefore) {
        os << in3 << "const float " << NodeGraph::name(id) << " = c" << id << "[" << slot
           << "];\n";
        continue;
      }
      std::set<int> used;
      g.addDraws(size_t(id), used);
      emitWords(os, in3, used, g, s, vd, vec);
      os << in3 << "const float " << NodeGraph::name(id) << " = "
         << nodeValue(g, size_t(id), kernel, vectorized) << ";\n";
      if (r.cached[size_t(id)])
        os << in3 << "c" << id << "[" << slot << "] = " << NodeGraph::name(id) << ";\n";
    }
    for (int id : plan.reductions)
      os << in3 << "acc" << id << " = " << g.nodes[id].combine << "::apply(acc" << id << ", "
         << g.value(size_t(id), nullptr) << ");\n";
    for (int id : plan.sums)
      os << in3 << "sum" << id << "[" << slot << "] += " << g.value(size_t(id), nullptr) << ";\n";
    for (unsigned n : plan.stores) {
      Type t = kernel.getResultTypes()[n];
      std::string value = NodeGraph::name(g.outputs[n]);
      if (vectorized(t))
        os << in3 << "vout" << n << "[v] = " << value << ";\n";
      else
        os << in3 << storeCall(t, "out" + std::to_string(n),
                               "base_out" + std::to_string(n) + " + " + offsetExpr(t, s.row),
                               value)
           << "\n";
    }
    if (r.rowVec) {
      os << in2 << "}\n";
      for (unsigned n : plan.stores)
        if (vectorized(kernel.getResultTypes()[n]))
          os << in2 << vectorStore(kernel.getResultTypes()[n], n,
                                   "out" + std::to_string(n) + " + base_out" +
                                       std::to_string(n) + " + " +
                                       offsetExpr(kernel.getResultTypes()[n], s.row, vd));
    }
    os << ind << "}\n";
    if (p == fetch.sweep && !fetch.inputs.empty()) {
      os << ind << "if (k + 1 < " << per << ")\n";
      emitRowFetch(os, ind, kernel, g, fetch, shape, r.chunks, "k + 1");
    }
    for (int id : plan.reductions)
      os << ind << "const float " << NodeGraph::name(id) << " = dmcBlockReduce<"
         << g.nodes[id].combine << ", TX, TY>(acc" << id << ", dmcSmem);\n";
  }
  // Outer outputs (reductions and values derived from them).
  for (unsigned n : r.outerStores)
    os << ind << "if (threadIdx.y == 0) "
       << storeCall(kernel.getResultTypes()[n], "out" + std::to_string(n),
                    "base_out" + std::to_string(n), NodeGraph::name(g.outputs[n]))
       << "\n";
  if (r.outerVec) {
    os << ind << "}\n";
    for (auto [n, t] : llvm::enumerate(kernel.getResultTypes()))
      if (vectorized(t))
        os << ind << vectorStore(t, n, "out" + std::to_string(n) + " + base_out" +
                                           std::to_string(n));
  }
  if (per > 1)
    os << "  }\n";
  if (!r.sums.empty())
    emitColumnPartials(os, r.sums, r.perRow, r.rowVecWidth, r.rowChunks, r.blocks, s.rowPoints);
  os << "}\n";
  if (!r.sums.empty())
    emitColumnFinish(os, kernel, s, g, r.sums, r.blocks, entry.str() + "_finish");

  EmittedKernel k;
  k.entry = entry.str();
  k.source = std::move(src);
  return k;
}

} // namespace dmc::codegen
