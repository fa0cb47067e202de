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
// Rows fetched ahead (codegen version 6): when a thread's rows are a fixed
// number of iterations (at most kMaxFetchIterations), the row loop is
// unrolled and the vector inputs that change from row to row are fetched
// kFetchDepth rows ahead as raw vectors (DmcRawVec), each slot refilled right
// after its row is converted. Inputs dense over the rows are addressed as
// r * stride (one base plus constants once unrolled). A guarded load (a
// stack's slice) is fetched under its guard when the guard does not change
// with the row, and the slices of one stack share their slots (a point reads
// one) and one conversion (each slice's vin refers to it: 32 registers
// under NVRTC, 48 with a conversion per slice). Without it a row's loads
// waited for the previous row's stores (one H200, bert-large B8 L512 at its
// tuned knobs: the stack of the q, k, v gradients with their bias sums
// 22.6 -> 18.35 us, the dropout-gelu gradient with its bias sum 37.7 ->
// 37.55 us; docs/column-sums.md).
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaPrelude.h"
#include "codegen/EmitSupport.h"
#include "codegen/KernelSchedule.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace dmc::codegen {

llvm::Expected<EmittedKernel> emitColumnKernel(dm::KernelOp kernel, const KernelSpace &s,
                                               const NodeGraph &g, const KernelConfig &config,
                                               const ColumnSchedule &c, llvm::StringRef entry) {
  const char d = c.laneDim;
  const int vec = c.vec, split = c.split;
  const std::string &outer = c.outer;
  const std::vector<int> &reductions = c.reductions;
  const int64_t gridX = c.gridX;

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
     << "  constexpr Idx ROWS = " << c.rows << ", OUTER = " << s.outerPoints << ";\n";
  if (!reductions.empty())
    os << "  __shared__ float dmcSmem[(TX * TY + 31) / 32 * TX * VEC];\n";
  os << "  const Idx o = (Idx)blockIdx.x * TX + threadIdx.x;  // chunk of VEC points along "
     << d << "\n";
  decode(os, "  ", "o", outer, c.chunks);
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
  auto address = [&](unsigned n) {
    return "in" + std::to_string(n) + " + base_in" + std::to_string(n) + " + " +
           offsetExpr(kernel.getInputs()[n].getType(), s.row);
  };
  const std::vector<unsigned> &fetched = c.fetched;
  // A fetched input's load condition ("" none), as vectorLoad would test it.
  auto guard = [&](unsigned n) { return loadGuard(g, n, d); };
  auto shared = [&](unsigned n) { return c.reads[n] == ColumnRead::FetchedShared; };
  auto sliceDim = [&](unsigned n) { return g.sliceOf(n).first; };
  auto groupFront = [&](unsigned n) { return c.sharedSlots.at(sliceDim(n)).front(); };
  auto slots = [&](unsigned n) {
    return shared(n) ? std::string("pfs_") + sliceDim(n) : "pf" + std::to_string(n);
  };
  // A fetch of row `row` (an expression) addresses an input linear in the
  // row as row * stride; the others need the row's indices decoded first.
  auto rowOffset = [&](unsigned n, const std::string &row) {
    Type t = kernel.getInputs()[n].getType();
    return c.allLinear ? "(" + row + ") * " + std::to_string(linearStride(t, s.row, s))
                       : offsetExpr(t, s.row);
  };
  auto fetch = [&](const std::string &indent, unsigned n, const std::string &slot,
                   const std::string &row) {
    if (!shared(n)) {
      os << indent << (guard(n).empty() ? "" : "if (" + guard(n) + ") ") << "dmcFetchVec<"
         << vec << ">(pf" << n << "[" << slot << "], in" << n << " + base_in" << n << " + "
         << rowOffset(n, row) << ");\n";
      return;
    }
    char sd = sliceDim(n);
    if (n == groupFront(n)) // the group's first slice fetches for all
      os << indent << "if (slice_" << sd << ") dmcFetchVec<" << vec << ">(pfs_" << sd << "["
         << slot << "], slice_" << sd << " + " << rowOffset(n, row) << ");\n";
  };
  const int depth = c.depth;
  // Keep-bits words fetched ahead like the inputs (ColumnSchedule::fetchedBits).
  std::map<int, std::string> bitsSlots;
  auto fetchBits = [&](const std::string &indent, const std::string &slot,
                       const std::string &row) {
    for (int k : c.fetchedBits) {
      const Draw &dr = g.draws[size_t(k)];
      int64_t stride =
          c.allLinear ? linearStride(kernel.getInputs()[unsigned(dr.bitsInput)].getType(), s.row, s)
                      : 0;
      os << indent << "pfb" << k << "[" << slot << "] = "
         << loadBitsWordOfRow(dr, first, s.row, c.allLinear ? row : "", stride) << ";\n";
    }
  };
  os << "  const Idx rowBegin = (Idx)blockIdx.y * ROWS;\n";
  if (!c.fetchesAhead()) {
    os << "#pragma unroll 4\n"
       << "  for (Idx r = rowBegin + threadIdx.y; r < rowBegin + ROWS; r += TY) {\n";
  } else {
    for (auto &[sd, group] : c.sharedSlots) {
      os << "  const " << elementType(kernel.getInputs()[group[0]].getType()) << " *slice_" << sd
         << " = ";
      for (unsigned m : group)
        os << guard(m) << " ? in" << m << " + base_in" << m << " : ";
      os << "nullptr;  // the slice this point reads\n";
    }
    for (unsigned n : fetched)
      if (!shared(n) || n == groupFront(n))
        os << "  DmcRawVec<" << vec << ", " << elementType(kernel.getInputs()[n].getType())
           << "> " << slots(n) << "[" << depth << "]" << (shared(n) ? " = {}" : "")
           << ";  // rows fetched ahead\n";
    for (int k : c.fetchedBits) {
      os << "  uint32_t pfb" << k << "[" << depth << "];  // keep-bits words fetched ahead\n";
      bitsSlots[k] = "fbw" + std::to_string(k);
    }
    os << "#pragma unroll\n"
       << "  for (int q = 0; q < " << depth << "; ++q) {\n"
       << "    const Idx r = rowBegin + threadIdx.y + (Idx)q * TY;\n";
    if (!c.allLinear)
      decode(os, "    ", "r", s.row, s);
    for (unsigned n : fetched)
      fetch("    ", n, "q", "r");
    fetchBits("    ", "q", "r");
    os << "  }\n"
       << "#pragma unroll" << (c.unroll > 0 ? " " + std::to_string(c.unroll) : "") << "\n"
       << "  for (int it = 0; it < " << c.iters << "; ++it) {\n"
       << "    const Idx r = rowBegin + threadIdx.y + (Idx)it * TY;\n";
  }
  decode(os, "    ", "r", s.row, s);
  for (auto [n, v] : llvm::enumerate(kernel.getInputs())) {
    Type t = v.getType();
    std::string slot = slots(unsigned(n)) + "[it % " + std::to_string(depth) + "]";
    switch (c.reads[n]) {
    case ColumnRead::None:
      break;
    case ColumnRead::FetchedShared: {
      // One conversion for the group; each slice's vin names it (the
      // stack's select then reads the same registers whichever slice).
      char sd = sliceDim(unsigned(n));
      if (unsigned(n) == groupFront(unsigned(n)))
        os << "    " << vectorConvert(t, n, vec, slot, "", std::string("vins_") + sd);
      os << "    float (&vin" << n << ")[" << vec << "] = vins_" << sd << ";\n";
      break;
    }
    case ColumnRead::Fetched:
      os << "    " << vectorConvert(t, n, vec, slot, guard(unsigned(n)));
      break;
    case ColumnRead::Vector:
      os << "    " << vectorLoad(t, n, vec, address(n), g, d);
      break;
    case ColumnRead::Scalar:
      os << "    const Idx off_in" << n << " = base_in" << n << " + " << offsetExpr(t, s.row)
         << ";\n";
      break;
    }
  }
  for (int k : c.fetchedBits) // read before the refill below overwrites the slot
    os << "    const uint32_t fbw" << k << " = pfb" << k << "[it % " << depth << "];\n";
  if (c.fetchesAhead()) {
    // Refill the slots just converted with the row `depth` iterations on.
    os << "    if (it + " << depth << " < " << c.iters << ") {\n";
    std::string next = "r + (Idx)" + std::to_string(depth) + " * TY";
    if (!c.allLinear) {
      os << "      const Idx rn = " << next << ";\n";
      decode(os, "      ", "rn", s.row, s);
    }
    for (unsigned n : fetched)
      fetch("      ", n, "it % " + std::to_string(depth), next);
    fetchBits("      ", "it % " + std::to_string(depth), next);
    os << "    }\n";
  }
  auto isRowOutput = [&](int id) { return !g.nodes[id].outer; };
  for (auto [n, id] : g.nodeOutputs())
    if (isRowOutput(id) && vectorized(kernel.getResultTypes()[n]))
      os << "    float vout" << n << "[VEC];\n";
  emitVectorDraws(os, "    ", c.draws, g, s, d, vec, bitsSlots);
  os << "#pragma unroll\n"
     << "    for (int v = 0; v < VEC; ++v) {\n"
     << "      const Idx " << di << " = " << first << " + v;\n";
  for (size_t id = 0; id < g.nodes.size(); ++id) {
    if (g.nodes[id].outer)
      continue;
    std::set<int> used;
    g.addDraws(id, used);
    emitWords(os, "      ", used, g, s, d, vec);
    os << "      const float " << NodeGraph::name(id) << " = "
       << nodeValue(g, id, kernel, vectorized) << ";\n";
  }
  for (int id : reductions)
    os << "      acc" << id << "[v] = " << g.nodes[id].combine << "::apply(acc" << id
       << "[v], " << g.value(id, nullptr) << ");\n";
  for (auto [n, id] : g.nodeOutputs()) {
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
  for (auto [n, id] : g.nodeOutputs())
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
      // A lane's VEC partials in 16-byte stores (dmcStorePartials), as the
      // last block loads them.
      for (auto [k, id] : llvm::enumerate(reductions))
        os << "    dmcStorePartials<VEC>(&part[(" << k << " * SPLIT + blockIdx.y) * OUTER + o * VEC], acc"
           << id << ");\n";
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
      // Thread y adds partials y, y + TY, ... in that order (the order the
      // results depend on), all of its loads issued before the first add:
      // one 16-byte access per 4 of its VEC columns. (Codegen version 6 ran
      // one dependent 4-byte load per column and partial: the last block's
      // chain of L2 round trips. One H200, bert-large, two runs each: the
      // dropout-gelu gradient with its bias sum at 16 splits 37.2 -> 35.8 us,
      // at 32 splits 40.0 -> 36.5; the q, k, v gradients' stack with its bias
      // sums at 16 splits 18.2 -> 17.6.)
      for (auto [k, id] : llvm::enumerate(reductions))
        os << "  {\n"
           << "    constexpr int kPartials = (SPLIT + TY - 1) / TY;\n"
           << "    float pv" << id << "[kPartials][VEC];\n"
           << "#pragma unroll\n"
           << "    for (int q = 0; q < kPartials; ++q)\n"
           << "      if (threadIdx.y + q * TY < SPLIT)\n"
           << "        dmcLoadPartials<VEC>(pv" << id << "[q], &part[(" << k
           << " * SPLIT + threadIdx.y + q * TY) * OUTER + o * VEC]);\n"
           << "#pragma unroll\n"
           << "    for (int v = 0; v < VEC; ++v) {\n"
           << "      acc" << id << "[v] = " << g.nodes[id].init << ";\n"
           << "#pragma unroll\n"
           << "      for (int q = 0; q < kPartials; ++q)\n"
           << "        if (threadIdx.y + q * TY < SPLIT)\n"
           << "          acc" << id << "[v] = " << g.nodes[id].combine << "::apply(acc" << id
           << "[v], pv" << id << "[q][v]);\n"
           << "    }\n"
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
           << nodeValue(g, id, kernel, [](Type) { return false; }) << ";\n";
    for (auto [n, id] : g.nodeOutputs())
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
  return k;
}

} // namespace dmc::codegen
