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

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dmc::codegen {

llvm::Expected<EmittedKernel> emitKernel(dm::KernelOp kernel, const KernelConfig &config,
                                         llvm::StringRef entry) {
  if (isFusedKernel(kernel))
    return emitAttentionKernel(kernel, config, entry);
  KernelSpace s = spaceOf(kernel);
  if (std::string why = whyInfeasible(s, config); !why.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kernel '" + kernel.getName() + "': configuration " +
                                       config.describe() + " is infeasible: " + why);
  NodeGraph g;
  if (llvm::Error e = lowerKernel(kernel, s, g))
    return e;
  if (isTiledConfig(s, config))
    return emitTiledKernel(kernel, s, g, config, entry);
  if (isColumnConfig(config))
    return emitColumnKernel(kernel, s, g, config, entry);

  // The lane dim goes innermost among the outer dims.
  std::string outer = s.outer;
  if (config.laneDim) {
    outer.erase(outer.find(config.laneDim), 1);
    outer.push_back(config.laneDim);
  }
  int passes = 1;
  for (const Node &n : g.nodes)
    passes = std::max(passes, n.pass + 1);
  bool reduces = llvm::any_of(g.nodes, [](const Node &n) { return n.reduce; });
  std::vector<int> sums; // column sums (KernelSpace::columnSums)
  for (size_t id = 0; id < g.nodes.size(); ++id)
    if (g.nodes[id].column)
      sums.push_back(int(id));

  std::string src;
  llvm::raw_string_ostream os(src);
  os << "// dm.kernel \"" << kernel.getName() << "\": outer " << (outer.empty() ? "-" : outer)
     << " (" << s.outerPoints << " points), rows " << (s.row.empty() ? "-" : s.row) << " ("
     << s.rowPoints << " points); " << config.describe() << ", " << passes << " pass(es)\n";
  os << kCudaPrelude << "\n";
  // With column sums the partials are indexed with Idx too.
  const int64_t blocks = s.outerPoints / (int64_t(config.tx) * config.perThread);
  // Column sums with more blocks than SMs: two blocks of up to 256 threads
  // per SM (registers <= 128), or the rows fetched ahead push a thread past
  // 128 registers and halve the blocks an SM holds (gpt2-medium's layer-norm
  // backward: 165 registers, no faster than without the fetch; at 128, no spills).
  const int threads = config.tx * config.ty;
  const int minBlocks = !sums.empty() && blocks > s.sms && threads <= 256 ? 2 : 1;
  emitSignature(os, kernel, threads, entry, /*workspace=*/!sums.empty(), minBlocks);
  unsigned numIn = kernel.getInputs().size();
  emitIndexType(os, kernel,
                std::max(s.outerPoints * s.rowPoints + int64_t(config.tx) * config.perThread,
                         int64_t(sums.size()) * blocks * s.rowPoints));
  os << "  constexpr int TX = " << config.tx << ", TY = " << config.ty << ";\n";
  if (reduces)
    os << "  __shared__ float dmcSmem[TX * TY];\n";
  // Each thread handles `per` outer points (elementwise kernels), the k-th
  // at (blockIdx.x * per + k) * TX + threadIdx.x: coalesced for every k. With
  // vectors, a point is a chunk of `vec` along the contiguous dim `vd`.
  int per = config.perThread, vec = config.vec;
  char vd = vec > 1 ? s.mainLayout.back() : 0;
  // The vector dim is an outer dim (elementwise kernels) or the innermost
  // row dim (each thread then takes whole chunks of its rows).
  bool rowVec = vd && s.row.find(vd) != std::string::npos;
  bool outerVec = vd && !rowVec;
  KernelSpace chunks = s;
  if (vd)
    chunks.sizes[vd] /= vec;
  int64_t outerChunks = outerVec ? s.outerPoints / vec : s.outerPoints;
  int64_t rowChunks = rowVec ? s.rowPoints / vec : s.rowPoints;
  // Row points per thread; rows of a few points per thread stay in registers
  // between passes instead of being recomputed.
  int64_t perRow = (rowChunks + config.ty - 1) / config.ty; // row chunks per thread
  int rowVecWidth = rowVec ? vec : 1;
  // Column sums: per row point of this thread, over the rows it takes.
  for (int id : sums)
    os << "  float sum" << id << "[" << perRow * rowVecWidth << "] = {};  // "
       << NodeGraph::name(g.nodes[id].deps[0]) << " summed over this thread's rows\n";
  // Blocks with column sums take whole rows (whyInfeasible): no thread leaves early.
  bool whole = !sums.empty() && outerChunks % (int64_t(config.tx) * per) == 0;
  std::string vdIndex = vd ? "i_" + std::string(1, vd) : "";
  auto base = [&](Type t) {
    // A tensor laid out exactly as the outer loop (elementwise kernels): its
    // offset is the chunk index itself, with no dims to decode.
    if (s.row.empty() && cast<dm::TensorType>(t).getNames() == outer)
      return "o * " + std::to_string(outerVec ? vec : 1);
    return offsetExpr(t, outer, vd); // the vector dim at its chunk's first point
  };
  // Tensors whose contiguous dim is the vector dim move as one vector each.
  auto vectorized = [&](Type t) {
    return vd && cast<dm::TensorType>(t).getNames().back() == vd;
  };
  bool caching = !s.row.empty() && perRow <= 16;
  auto isOutputAt = [&](int id, int pass) {
    return !g.nodes[id].outer && !g.nodes[id].column && g.nodes[id].pass == pass;
  };
  // The passes each node is read in (by a reduction, a store or a later node).
  std::vector<int> lastUse(g.nodes.size(), -1);
  for (size_t id = 0; id < g.nodes.size(); ++id)
    for (int d : g.nodes[id].deps)
      lastUse[d] = std::max(lastUse[d], g.nodes[id].pass);
  for (auto [n, id] : llvm::enumerate(g.outputs))
    lastUse[id] = std::max(lastUse[id], g.nodes[id].pass);
  std::vector<bool> cached(g.nodes.size(), false);
  for (size_t id = 0; id < g.nodes.size(); ++id)
    cached[id] = caching && !g.nodes[id].outer && lastUse[id] > g.nodes[id].pass;
  // What pass p's sweep computes: its reductions' and stores' inputs, down
  // to loads or values cached by an earlier pass.
  auto neededIn = [&](int p) {
    std::vector<bool> needed(g.nodes.size(), false);
    std::vector<int> work;
    for (size_t id = 0; id < g.nodes.size(); ++id)
      if (g.nodes[id].reduce && g.nodes[id].pass == p)
        work.push_back(g.nodes[id].deps[0]);
    for (int id : g.outputs)
      if (isOutputAt(id, p))
        work.push_back(id);
    for (int id : sums)
      if (g.nodes[id].pass == p)
        work.push_back(g.nodes[id].deps[0]);
    for (size_t id = 0; id < g.nodes.size(); ++id)
      if (cached[id] && g.nodes[id].pass == p)
        work.push_back(id);
    while (!work.empty()) {
      int id = work.back();
      work.pop_back();
      if (needed[id] || g.nodes[id].outer)
        continue;
      needed[id] = true;
      if (!(cached[id] && g.nodes[id].pass < p))
        work.insert(work.end(), g.nodes[id].deps.begin(), g.nodes[id].deps.end());
    }
    return needed;
  };
  std::vector<std::vector<bool>> neededBy;
  for (int p = 0; p < passes; ++p)
    neededBy.push_back(neededIn(p));
  // Column sums with several rows per thread: the first sweep's row inputs
  // are fetched a row group ahead (RowFetch.cpp).
  RowShape shape{outer, per, config.ty, vec, perRow, rowChunks, vd};
  RowFetch fetch;
  if (!sums.empty() && per > 1 && rowVec)
    for (int p = 0; p < passes && fetch.sweep < 0; ++p)
      if (llvm::is_contained(neededBy[p], true))
        fetch = chooseRowFetch(kernel, g, outer, p, neededBy[p], vectorized);
  std::string ind = "  ";
  if (!fetch.inputs.empty()) {
    emitRowFetchRegisters(os, ind, kernel, fetch, shape);
    emitRowFetch(os, ind, kernel, fetch, shape, chunks, "0");
  }
  if (per > 1) {
    os << (sums.empty() ? "#pragma unroll\n" : "#pragma unroll 1\n")
       << "  for (int k = 0; k < " << per << "; ++k) {\n";
    os << "  const Idx o = ((Idx)blockIdx.x * " << per
       << " + k) * TX + threadIdx.x;\n";
    if (!whole)
      os << "  if (o >= " << outerChunks << ") break;\n";
  } else {
    os << "  const Idx o = (Idx)blockIdx.x * TX + threadIdx.x;\n";
    if (!whole)
      os << "  if (o >= " << outerChunks << ") return;  // never inside a block that reduces\n";
  }
  decode(os, ind, "o", outer, chunks);
  if (outerVec)
    os << ind << "const Idx first_" << vd << " = " << vdIndex << " * " << vec << ";\n";
  for (auto [n, v] : llvm::enumerate(kernel.getInputs()))
    os << ind << "const Idx base_in" << n << " = " << base(v.getType()) << ";\n";
  for (auto [n, t] : llvm::enumerate(kernel.getResultTypes()))
    os << ind << "const Idx base_out" << n << " = " << base(t) << ";\n";
  if (outerVec) {
    for (auto [n, v] : llvm::enumerate(kernel.getInputs()))
      if (vectorized(v.getType()))
        os << ind << vectorLoad(v.getType(), n, vec, "in" + std::to_string(n) + " + base_in" +
                                                        std::to_string(n), g, vd);
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
    if (cached[id])
      os << ind << "float c" << id << "[" << perRow * rowVecWidth << "];  // " << NodeGraph::name(id)
         << " along this thread's row points\n";

  for (int p = 0; p < passes; ++p) {
    os << ind << "// pass " << p << "\n";
    for (size_t id = 0; id < g.nodes.size(); ++id)
      if (g.nodes[id].outer && !g.nodes[id].reduce && g.nodes[id].pass == p)
        os << ind << "const float " << NodeGraph::name(id) << " = "
           << nodeValue(g, id, kernel, [](Type) { return false; }) << ";\n";
    const std::vector<bool> &needed = neededBy[p];
    if (llvm::none_of(needed, [](bool b) { return b; }))
      continue;
    for (size_t id = 0; id < g.nodes.size(); ++id)
      if (g.nodes[id].reduce && g.nodes[id].pass == p)
        os << ind << "float acc" << id << " = " << g.nodes[id].init << ";\n";
    // Unrolled only when short: long rows keep a loop (code size, compile time).
    os << ind << (perRow <= 16 ? "#pragma unroll\n" : "#pragma unroll 1\n")
       << ind << "for (int it = 0; it < " << perRow << "; ++it) {\n"
       << ind << "  const Idx r = threadIdx.y + (Idx)it * TY;\n";
    if (rowChunks % config.ty)
      os << ind << "  if (r >= " << rowChunks << ") break;\n";
    std::string in2 = ind + "  ";
    if (!s.row.empty())
      decode(os, in2, "r", s.row, chunks);
    if (rowVec)
      os << in2 << "const Idx first_" << vd << " = " << vdIndex << " * " << vec << ";\n";
    // The nodes computed here, and the inputs they read: scalar loads at
    // off_in<n>, vectorized ones from their registers.
    auto computedHere = [&](size_t id) {
      return needed[id] && !(cached[id] && g.nodes[id].pass < p);
    };
    std::set<int> sweep; // the dropout words they draw
    for (size_t id = 0; id < g.nodes.size(); ++id)
      if (computedHere(id))
        g.addDraws(id, sweep);
    auto readHere = [&](unsigned n) { return readsInput(g, n, computedHere); };
    for (unsigned n = 0; n < numIn; ++n)
      if (readHere(n) && !vectorized(kernel.getInputs()[n].getType()))
        os << in2 << "const Idx off_in" << n << " = base_in" << n << " + "
           << offsetExpr(kernel.getInputs()[n].getType(), s.row) << ";\n";
    std::string in3 = in2, slot = "it";
    if (rowVec) {
      // Whole chunks of the row: one vector access per tensor, then the points.
      for (unsigned n = 0; n < numIn; ++n)
        if (readHere(n) && vectorized(kernel.getInputs()[n].getType())) {
          Type t = kernel.getInputs()[n].getType();
          if (p == fetch.sweep && llvm::is_contained(fetch.inputs, n))
            os << in2 << vectorConvert(t, n, vec, "pf" + std::to_string(n) + "[it]");
          else
            os << in2 << vectorLoad(t, n, vec, "in" + std::to_string(n) + " + base_in" +
                                                   std::to_string(n) + " + " +
                                                   offsetExpr(t, s.row, vd), g, vd);
        }
      for (auto [n, id] : llvm::enumerate(g.outputs))
        if (isOutputAt(id, p) && vectorized(kernel.getResultTypes()[n]))
          os << in2 << "float vout" << n << "[" << vec << "];\n";
      emitVectorDraws(os, in2, sweep, g, s, vd, vec);
      os << in2 << "#pragma unroll\n"
         << in2 << "for (int v = 0; v < " << vec << "; ++v) {\n";
      in3 = in2 + "  ";
      os << in3 << "const Idx " << vdIndex << " = first_" << vd << " + v;\n";
      slot = "it * " + std::to_string(vec) + " + v";
    }
    for (size_t id = 0; id < g.nodes.size(); ++id) {
      if (!needed[id])
        continue;
      if (cached[id] && g.nodes[id].pass < p) {
        os << in3 << "const float " << NodeGraph::name(id) << " = c" << id << "[" << slot
           << "];\n";
        continue;
      }
      std::set<int> used;
      g.addDraws(id, used);
      emitWords(os, in3, used, g, s, vd, vec);
      os << in3 << "const float " << NodeGraph::name(id) << " = "
         << nodeValue(g, id, kernel, vectorized) << ";\n";
      if (cached[id])
        os << in3 << "c" << id << "[" << slot << "] = " << NodeGraph::name(id) << ";\n";
    }
    for (size_t id = 0; id < g.nodes.size(); ++id)
      if (g.nodes[id].reduce && g.nodes[id].pass == p)
        os << in3 << "acc" << id << " = " << g.nodes[id].combine << "::apply(acc" << id << ", "
           << g.value(id, nullptr) << ");\n";
    for (int id : sums)
      if (g.nodes[id].pass == p)
        os << in3 << "sum" << id << "[" << slot << "] += " << g.value(id, nullptr) << ";\n";
    for (auto [n, id] : llvm::enumerate(g.outputs))
      if (isOutputAt(id, p)) {
        Type t = kernel.getResultTypes()[n];
        if (vectorized(t))
          os << in3 << "vout" << n << "[v] = " << NodeGraph::name(id) << ";\n";
        else
          os << in3 << storeCall(t, "out" + std::to_string(n),
                                 "base_out" + std::to_string(n) + " + " + offsetExpr(t, s.row),
                                 NodeGraph::name(id))
             << "\n";
      }
    if (rowVec) {
      os << in2 << "}\n";
      for (auto [n, id] : llvm::enumerate(g.outputs))
        if (isOutputAt(id, p) && vectorized(kernel.getResultTypes()[n]))
          os << in2 << vectorStore(kernel.getResultTypes()[n], n,
                                   "out" + std::to_string(n) + " + base_out" +
                                       std::to_string(n) + " + " +
                                       offsetExpr(kernel.getResultTypes()[n], s.row, vd));
    }
    os << ind << "}\n";
    if (p == fetch.sweep && !fetch.inputs.empty()) {
      os << ind << "if (k + 1 < " << per << ")\n";
      emitRowFetch(os, ind, kernel, fetch, shape, chunks, "k + 1");
    }
    for (size_t id = 0; id < g.nodes.size(); ++id)
      if (g.nodes[id].reduce && g.nodes[id].pass == p)
        os << ind << "const float " << NodeGraph::name(id) << " = dmcBlockReduce<"
           << g.nodes[id].combine << ", TX, TY>(acc" << id << ", dmcSmem);\n";
  }
  // Outer outputs (reductions and values derived from them).
  for (auto [n, id] : llvm::enumerate(g.outputs))
    if (g.nodes[id].outer)
      os << ind << "if (threadIdx.y == 0) "
         << storeCall(kernel.getResultTypes()[n], "out" + std::to_string(n),
                      "base_out" + std::to_string(n), NodeGraph::name(id))
         << "\n";
  if (outerVec) {
    os << ind << "}\n";
    for (auto [n, t] : llvm::enumerate(kernel.getResultTypes()))
      if (vectorized(t))
        os << ind << vectorStore(t, n, "out" + std::to_string(n) + " + base_out" +
                                           std::to_string(n));
  }
  if (per > 1)
    os << "  }\n";
  if (!sums.empty())
    emitColumnPartials(os, sums, perRow, rowVecWidth, rowChunks, blocks, s.rowPoints);
  os << "}\n";
  if (!sums.empty())
    emitColumnFinish(os, kernel, s, g, sums, blocks, entry.str() + "_finish");

  EmittedKernel k;
  k.entry = entry.str();
  k.source = std::move(src);
  k.blockX = config.tx;
  k.blockY = config.ty;
  k.grid = (outerChunks + int64_t(config.tx) * per - 1) / (int64_t(config.tx) * per);
  k.sharedBytes = 0; // static shared memory only
  k.passes = passes;
  if (!sums.empty()) {
    k.workspaceBytes = 4 * int64_t(sums.size()) * blocks * s.rowPoints;
    k.finishEntry = entry.str() + "_finish";
    k.finishGrid = (int64_t(sums.size()) * s.rowPoints + kFinishPoints - 1) / kFinishPoints;
    k.finishBlockX = kFinishPoints;
    k.finishBlockY = kFinishSlices;
    for (auto [n, id] : llvm::enumerate(g.outputs))
      if (g.nodes[id].column)
        k.finishOutputs.push_back(int64_t(n));
  }
  return k;
}

} // namespace dmc::codegen
