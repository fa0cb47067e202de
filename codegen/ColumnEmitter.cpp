//===- ColumnEmitter.cpp - reductions over rows that are not contiguous ---===//
//
// For kernels whose contiguous dim d is an outer dim and whose reductions
// are final (bias, gamma and beta gradients, with the elementwise ops fused
// before them): thread (x, y) of block (bx, by) takes VEC consecutive points
// along d (one 16-byte access per tensor) of outer chunk bx * TX + x, and
// rows by * ROWS + y, + TY, ... of its block's share of the rows. Per-point
// outputs are stored as they are computed. Reductions combine over
// threadIdx.y; with SPLIT > 1, each block then writes its partial sums to
// the workspace and the last block of its tile to arrive (one atomic
// counter per tile) adds the SPLIT partials in a fixed order, so results do
// not depend on timing, stores the outputs and resets the counter to zero.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaPrelude.h"
#include "codegen/EmitSupport.h"
#include "codegen/KernelEmitter.h"

using namespace mlir;

namespace dmc::codegen {

llvm::Expected<EmittedKernel> emitColumnKernel(dm::KernelOp kernel, const KernelSpace &s,
                                               const NodeGraph &g, const KernelConfig &config,
                                               llvm::StringRef entry) {
  const char d = config.laneDim;
  const int vec = config.vec, split = config.split;
  std::string outer = s.outer;
  outer.erase(outer.find(d), 1);
  outer.push_back(d);
  KernelSpace chunks = s;
  chunks.sizes[d] /= vec;
  const int64_t outerChunks = s.outerPoints / vec, rows = s.rowPoints / split;
  std::vector<int> reductions;
  for (size_t id = 0; id < g.nodes.size(); ++id)
    if (g.nodes[id].reduce)
      reductions.push_back(static_cast<int>(id));
  const int64_t gridX = outerChunks / config.tx;

  std::string src;
  llvm::raw_string_ostream os(src);
  os << "// dm.kernel \"" << kernel.getName() << "\": outer " << outer << " (" << s.outerPoints
     << " points), rows " << s.row << " (" << s.rowPoints << " points); " << config.describe()
     << ", 1 pass(es)\n";
  os << kCudaPrelude << "\n";
  emitSignature(os, kernel, config.tx * config.ty, entry, /*workspace=*/split > 1);
  // The workspace's partials are indexed with Idx too.
  emitIndexType(os, kernel,
                std::max(s.outerPoints * s.rowPoints,
                         int64_t(reductions.size()) * split * s.outerPoints + gridX));
  os << "  constexpr int TX = " << config.tx << ", TY = " << config.ty << ", VEC = " << vec
     << ", SPLIT = " << split << ";\n"
     << "  constexpr Idx ROWS = " << rows << ", OUTER = " << s.outerPoints << ";\n";
  if (!reductions.empty())
    os << "  __shared__ float dmcSmem[(TX * TY + 31) / 32 * TX * VEC];\n";
  os << "  const Idx o = (Idx)blockIdx.x * TX + threadIdx.x;  // chunk of VEC points along "
     << d << "\n";
  decode(os, "  ", "o", outer, chunks);
  std::string di = std::string("i_") + d, first = std::string("first_") + d;
  os << "  const Idx " << first << " = " << di << " * VEC;\n";
  auto vectorized = [&](Type t) { return cast<dm::TensorType>(t).getNames().back() == d; };
  for (auto [n, v] : llvm::enumerate(kernel.getInputs()))
    os << "  const Idx base_in" << n << " = " << offsetExpr(v.getType(), outer, d) << ";\n";
  for (auto [n, t] : llvm::enumerate(kernel.getResultTypes()))
    os << "  const Idx base_out" << n << " = " << offsetExpr(t, outer, d) << ";\n";
  for (int id : reductions)
    os << "  float acc" << id << "[VEC];\n"
       << "#pragma unroll\n"
       << "  for (int v = 0; v < VEC; ++v) acc" << id << "[v] = " << g.nodes[id].init << ";\n";

  // The sweep over this block's rows.
  std::set<int> sweep; // the dropout words the row sweep draws
  for (size_t id = 0; id < g.nodes.size(); ++id)
    if (!g.nodes[id].outer)
      g.addDraws(id, sweep);
  os << "  const Idx rowBegin = (Idx)blockIdx.y * ROWS;\n"
     << "#pragma unroll 4\n"
     << "  for (Idx r = rowBegin + threadIdx.y; r < rowBegin + ROWS; r += TY) {\n";
  decode(os, "    ", "r", s.row, s);
  auto uses = [&](unsigned n) {
    return readsInput(g, n, [&](size_t id) { return !g.nodes[id].outer; });
  };
  for (auto [n, v] : llvm::enumerate(kernel.getInputs())) {
    if (!uses(n))
      continue;
    Type t = v.getType();
    if (vectorized(t))
      os << "    " << vectorLoad(t, n, vec, "in" + std::to_string(n) + " + base_in" +
                                             std::to_string(n) + " + " + offsetExpr(t, s.row), g, d);
    else
      os << "    const Idx off_in" << n << " = base_in" << n << " + " << offsetExpr(t, s.row)
         << ";\n";
  }
  auto isRowOutput = [&](int id) { return !g.nodes[id].outer; };
  for (auto [n, id] : llvm::enumerate(g.outputs))
    if (isRowOutput(id) && vectorized(kernel.getResultTypes()[n]))
      os << "    float vout" << n << "[VEC];\n";
  emitVectorDraws(os, "    ", sweep, g, s, d, vec);
  os << "#pragma unroll\n"
     << "    for (int v = 0; v < VEC; ++v) {\n"
     << "      const Idx " << di << " = " << first << " + v;\n";
  auto fromRegisters = [&](const std::string &code) {
    return renderLoads(code, kernel, vectorized);
  };
  for (size_t id = 0; id < g.nodes.size(); ++id) {
    if (g.nodes[id].outer)
      continue;
    std::set<int> used;
    g.addDraws(id, used);
    emitWords(os, "      ", used, g, s, d, vec);
    os << "      const float " << NodeGraph::name(id) << " = " << fromRegisters(g.nodes[id].code)
       << ";\n";
  }
  for (int id : reductions)
    os << "      acc" << id << "[v] = " << g.nodes[id].combine << "::apply(acc" << id
       << "[v], " << g.nodes[id].code << ");\n";
  for (auto [n, id] : llvm::enumerate(g.outputs)) {
    if (!isRowOutput(id))
      continue;
    Type t = kernel.getResultTypes()[n];
    if (vectorized(t))
      os << "      vout" << n << "[v] = " << NodeGraph::name(id) << ";\n";
    else
      os << "      "
         << storeCall(t, "out" + std::to_string(n),
                      "base_out" + std::to_string(n) + " + " + offsetExpr(t, s.row),
                      NodeGraph::name(id))
         << "\n";
  }
  os << "    }\n";
  for (auto [n, id] : llvm::enumerate(g.outputs))
    if (isRowOutput(id) && vectorized(kernel.getResultTypes()[n]))
      os << "    "
         << vectorStore(kernel.getResultTypes()[n], n,
                        "out" + std::to_string(n) + " + base_out" + std::to_string(n) + " + " +
                            offsetExpr(kernel.getResultTypes()[n], s.row));
  os << "  }\n";
  if (reductions.empty()) {
    os << "}\n";
  } else {
    // Combine over threadIdx.y, then (SPLIT > 1) across the tile's blocks.
    for (int id : reductions)
      os << "  dmcColumnReduce<" << g.nodes[id].combine << ", TX, TY, VEC>(acc" << id
         << ", dmcSmem);\n";
    if (split > 1) {
      os << "  float *part = static_cast<float *>(workspace);  // [" << reductions.size()
         << "][SPLIT][OUTER] partial results\n"
         << "  unsigned *arrived = reinterpret_cast<unsigned *>(part + "
         << reductions.size() << " * SPLIT * OUTER);  // one counter per tile\n"
         << "  if (threadIdx.y == 0) {\n";
      for (auto [k, id] : llvm::enumerate(reductions))
        os << "#pragma unroll\n"
           << "    for (int v = 0; v < VEC; ++v)\n"
           << "      part[(" << k << " * SPLIT + blockIdx.y) * OUTER + o * VEC + v] = acc" << id
           << "[v];\n";
      // The barrier orders every thread's partials before thread 0's fence,
      // which releases them all (fences are cumulative) before it counts in;
      // the last block's thread 0 fences again to acquire the others'.
      os << "  }\n"
         << "  __syncthreads();\n"
         << "  __shared__ bool dmcLast;\n"
         << "  if (threadIdx.x == 0 && threadIdx.y == 0) {\n"
         << "    asm volatile(\"fence.acq_rel.gpu;\" ::: \"memory\");\n"
         << "    dmcLast = atomicAdd(&arrived[blockIdx.x], 1u) == SPLIT - 1;\n"
         << "    if (dmcLast)\n"
         << "      asm volatile(\"fence.acq_rel.gpu;\" ::: \"memory\");\n"
         << "  }\n"
         << "  __syncthreads();\n"
         << "  if (!dmcLast)\n"
         << "    return;\n";
      for (auto [k, id] : llvm::enumerate(reductions))
        os << "#pragma unroll\n"
           << "  for (int v = 0; v < VEC; ++v) {\n"
           << "    acc" << id << "[v] = " << g.nodes[id].init << ";\n"
           << "#pragma unroll 1\n"
           << "    for (int p = threadIdx.y; p < SPLIT; p += TY)\n"
           << "      acc" << id << "[v] = " << g.nodes[id].combine << "::apply(acc" << id
           << "[v], __ldcg(&part[(" << k << " * SPLIT + p) * OUTER + o * VEC + v]));\n"
           << "  }\n"
           << "  dmcColumnReduce<" << g.nodes[id].combine << ", TX, TY, VEC>(acc" << id
           << ", dmcSmem);\n";
      os << "  if (threadIdx.x == 0 && threadIdx.y == 0)\n"
         << "    arrived[blockIdx.x] = 0;  // ready for the next launch\n";
    }
    // Per-outer-point outputs: the reductions and what is computed from them.
    os << "  if (threadIdx.y != 0)\n"
       << "    return;\n"
       << "#pragma unroll\n"
       << "  for (int v = 0; v < VEC; ++v) {\n"
       << "    const Idx " << di << " = " << first << " + v;\n";
    for (size_t id = 0; id < g.nodes.size(); ++id)
      if (g.nodes[id].reduce)
        os << "    const float " << NodeGraph::name(id) << " = acc" << id << "[v];\n";
      else if (g.nodes[id].outer)
        os << "    const float " << NodeGraph::name(id) << " = "
           << renderLoads(g.nodes[id].code, kernel, [](Type) { return false; }) << ";\n";
    for (auto [n, id] : llvm::enumerate(g.outputs))
      if (!isRowOutput(id)) {
        Type t = kernel.getResultTypes()[n];
        os << "    " << storeCall(t, "out" + std::to_string(n), offsetExpr(t, outer),
                                  NodeGraph::name(id))
           << "\n";
      }
    os << "  }\n}\n";
  }

  EmittedKernel k;
  k.entry = entry.str();
  k.source = std::move(src);
  k.blockX = config.tx;
  k.blockY = config.ty;
  k.grid = gridX;
  k.gridY = split;
  k.sharedBytes = 0; // static shared memory only
  k.passes = 1;
  if (split > 1)
    k.workspaceBytes = 4 * (int64_t(reductions.size()) * split * s.outerPoints + gridX);
  return k;
}

} // namespace dmc::codegen
