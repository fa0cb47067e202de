//===- TileEmitter.cpp - elementwise kernels that transpose in shared memory ===//
//
// For elementwise kernels whose inputs and outputs are contiguous along
// different dims (a transpose between two layouts, or any map that reads a
// tensor in another order): a block takes one T x T tile of two dims, a (the
// lane dim: the staged inputs' contiguous dim) and b (the outputs'), T = 32 x
// vec, at one point of the other outer dims. First the lanes run along a,
// each with vec consecutive points (one access per staged input), the rows
// of threads along b: the staged inputs go to shared memory, converted to
// fp32, as [b][a] with one column of padding. Then the lanes run along b:
// each thread computes vec consecutive points of a row of a, reading staged
// inputs from shared memory and the others from global memory, and writes
// each output with one access. Both global sides are coalesced; the generic
// loop (one thread per point in the outputs' order) reads a staged input
// with one 32-byte sector per element.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaPrelude.h"
#include "codegen/EmitSupport.h"
#include "codegen/KernelSchedule.h"

using namespace mlir;

namespace dmc::codegen {

llvm::Expected<EmittedKernel> emitTiledKernel(dm::KernelOp kernel, const KernelSpace &s,
                                              const NodeGraph &g, const KernelConfig &config,
                                              const TileSchedule &ts, llvm::StringRef entry) {
  const int vec = ts.vec, tile = ts.tile;
  const std::string A(1, ts.a), B(1, ts.b);
  auto reads = [&](unsigned n) { return ts.reads[n] != TileRead::None; };
  // Read as vin<n>[v] in the second phase: staged, or a vector along b
  // (loadOf asks by type; inputs of one type are read alike).
  auto vectorized = [&](Type t) {
    for (auto [n, v] : llvm::enumerate(kernel.getInputs()))
      if (v.getType() == t)
        return ts.reads[n] == TileRead::Staged || ts.reads[n] == TileRead::Vector;
    return false;
  };

  std::string src;
  llvm::raw_string_ostream os(src);
  os << "// dm.kernel \"" << kernel.getName() << "\": outer " << s.outer << " (" << s.outerPoints
     << " points), tiles of " << tile << " " << A << " x " << tile << " " << B
     << " through shared memory; " << config.describe() << "\n";
  os << kCudaPrelude << "\n";
  emitSignature(os, kernel, 32 * config.ty, entry, /*workspace=*/false);
  emitIndexType(os, kernel, s.outerPoints);
  os << "  constexpr int T = " << tile << ", TY = " << config.ty << ", VEC = " << vec << ";\n";
  for (unsigned n : ts.staged)
    if (reads(n))
      os << "  __shared__ float stage" << n << "[T][T + 1];  // in" << n << " as [" << B << "]["
         << A << "]\n";
  os << "  Idx t_tile = blockIdx.x;\n"
     << "  const Idx tile_" << B << " = t_tile % " << ts.tilesB << ";\n"
     << "  t_tile /= " << ts.tilesB << ";\n"
     << "  const Idx tile_" << A << " = t_tile % " << ts.tilesA << ";\n"
     << "  t_tile /= " << ts.tilesA << ";\n";
  if (!ts.others.empty()) {
    os << "  const Idx rest = t_tile;\n";
    decode(os, "  ", "rest", ts.others, s);
  }

  // Phase 1: the staged inputs into shared memory, lanes along a.
  os << "#pragma unroll\n"
     << "  for (int k = 0; k < T / TY; ++k) {\n"
     << "    const Idx i_" << B << " = tile_" << B << " * T + threadIdx.y + k * TY;\n"
     << "    const Idx first_" << A << " = tile_" << A << " * T + threadIdx.x * VEC;\n";
  for (unsigned n : ts.staged) {
    if (!reads(n))
      continue;
    Type t = kernel.getInputs()[n].getType();
    os << "    " << vectorLoad(t, n, vec, "in" + std::to_string(n) + " + " +
                                           offsetExpr(t, s.outer, ts.a), g, ts.a);
    os << "#pragma unroll\n"
       << "    for (int v = 0; v < VEC; ++v)\n"
       << "      stage" << n << "[threadIdx.y + k * TY][threadIdx.x * VEC + v] = vin" << n
       << "[v];\n";
  }
  os << "  }\n"
     << "  __syncthreads();\n";

  // Phase 2: every node at vec consecutive points along b, lanes along b.
  os << "#pragma unroll\n"
     << "  for (int k = 0; k < T / TY; ++k) {\n"
     << "    const Idx i_" << A << " = tile_" << A << " * T + threadIdx.y + k * TY;\n"
     << "    const Idx first_" << B << " = tile_" << B << " * T + threadIdx.x * VEC;\n";
  const std::string ind = "    ", in2 = "      ";
  for (auto [n, v] : llvm::enumerate(kernel.getInputs())) {
    Type t = v.getType();
    if (ts.reads[n] == TileRead::Staged)
      os << ind << "float vin" << n << "[VEC];\n"
         << "#pragma unroll\n"
         << ind << "for (int v = 0; v < VEC; ++v)\n"
         << ind << "  vin" << n << "[v] = stage" << n << "[threadIdx.x * VEC + v][threadIdx.y + k * TY];\n";
    else if (ts.reads[n] == TileRead::Vector)
      os << ind << vectorLoad(t, n, vec, "in" + std::to_string(n) + " + " +
                                             offsetExpr(t, s.outer, ts.b), g, ts.b);
  }
  for (auto [n, id] : g.nodeOutputs())
    os << ind << "float vout" << n << "[VEC];\n";
  os << "#pragma unroll\n"
     << ind << "for (int v = 0; v < VEC; ++v) {\n"
     << in2 << "const Idx i_" << B << " = first_" << B << " + v;\n";
  for (auto [n, v] : llvm::enumerate(kernel.getInputs()))
    if (ts.reads[n] == TileRead::Scalar)
      os << in2 << "const Idx off_in" << n << " = " << offsetExpr(v.getType(), s.outer) << ";\n";
  for (size_t id = 0; id < g.nodes.size(); ++id) {
    std::set<int> used;
    g.addDraws(id, used);
    emitWords(os, in2, used, g, s, 0, 1); // one Philox call per point
    os << in2 << "const float " << NodeGraph::name(id) << " = "
       << nodeValue(g, id, kernel, vectorized) << ";\n";
  }
  for (auto [n, id] : g.nodeOutputs())
    os << in2 << "vout" << n << "[v] = " << NodeGraph::name(id) << ";\n";
  os << ind << "}\n";
  for (auto [n, id] : g.nodeOutputs()) {
    Type t = kernel.getResultTypes()[n];
    os << ind << vectorStore(t, n, "out" + std::to_string(n) + " + " +
                                       offsetExpr(t, s.outer, ts.b));
  }
  os << "  }\n"
     << "}\n";

  EmittedKernel k;
  k.entry = entry.str();
  k.source = std::move(src);
  return k;
}

} // namespace dmc::codegen
