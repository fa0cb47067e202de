//===- ColumnSums.cpp - a row kernel's sums over its outer points ---------===//
//
// KernelSpace::columnSums: besides its row reductions, the kernel sums values
// over its outer points (the rows) into results with the row's dims. Each
// thread adds its rows' values per row point in registers (sum<id>[],
// KernelEmitter.cpp); at the end of the block the TX threads sharing a row
// point combine by warp shuffles, and thread x == 0 writes the block's
// partials, [sums][blocks][row points] fp32, to the workspace: its chunk of
// the row as one vector per sum (codegen 8: as single floats from a few
// lanes of each warp, every store took a 32-byte sector, and ncu counted 29%
// of the kernel's sectors excessive). A second
// launch (`<entry>_finish`, same parameters) adds them: each block takes 32
// consecutive (sum, row point) pairs, its 8 slices of threads each add every
// 8th block's partials (loading 32 of them at once), and slice 0 adds the 8
// slice totals. Every order is fixed: results do not depend on timing.
//
//===----------------------------------------------------------------------===//
#include "codegen/EmitSupport.h"

using namespace mlir;

namespace dmc::codegen {

void emitColumnPartials(llvm::raw_ostream &os, llvm::ArrayRef<int> sums, int64_t perRow,
                        int width, int64_t rowChunks, int64_t blocks, int64_t rowPoints) {
  // A thread's `width` consecutive partials of a sum (a vector's worth, a
  // power of two dividing the row) go out together (dmcStorePartials).
  const bool vector = width > 1;
  os << "  // Column sums: the block's rows combined over threadIdx.x, written as its partials.\n"
     << "  float *part = static_cast<float *>(workspace);  // [" << sums.size() << "]["
     << blocks << "][" << rowPoints << "]\n"
     << "#pragma unroll\n"
     << "  for (int it = 0; it < " << perRow << "; ++it) {\n"
     << "    const Idx r = threadIdx.y + (Idx)it * TY;\n";
  if (vector) {
    for (int id : sums)
      os << "    float t" << id << "[" << width << "];\n";
    os << "#pragma unroll\n"
       << "    for (int v = 0; v < " << width << "; ++v) {\n";
    for (int id : sums)
      os << "      t" << id << "[v] = sum" << id << "[it * " << width << " + v];\n"
         << "      for (int m = TX / 2; m > 0; m >>= 1)\n"
         << "        t" << id << "[v] += __shfl_xor_sync(0xffffffffu, t" << id << "[v], m);\n";
    os << "    }\n"
       << "    if (threadIdx.x == 0 && r < " << rowChunks << ") {\n";
    for (auto [k, id] : llvm::enumerate(sums))
      os << "      dmcStorePartials(part + ((Idx)" << k << " * " << blocks << " + blockIdx.x) * "
         << rowPoints << " + r * " << width << ", t" << id << ");\n";
    os << "    }\n  }\n";
    return;
  }
  os << "#pragma unroll\n"
     << "    for (int v = 0; v < " << width << "; ++v) {\n";
  for (auto [k, id] : llvm::enumerate(sums)) {
    os << "      float t" << id << " = sum" << id << "[it * " << width << " + v];\n"
       << "      for (int m = TX / 2; m > 0; m >>= 1)\n"
       << "        t" << id << " += __shfl_xor_sync(0xffffffffu, t" << id << ", m);\n"
       << "      if (threadIdx.x == 0 && r < " << rowChunks << ")\n"
       << "        part[((Idx)" << k << " * " << blocks << " + blockIdx.x) * " << rowPoints
       << " + r * " << width << " + v] = t" << id << ";\n";
  }
  os << "    }\n  }\n";
}

void emitColumnFinish(llvm::raw_ostream &os, dm::KernelOp kernel, const KernelSpace &s,
                      const NodeGraph &g, llvm::ArrayRef<int> sums, int64_t blocks,
                      const std::string &entry) {
  const int64_t pairs = int64_t(sums.size()) * s.rowPoints;
  // Blocks that do not fill the last group of loads: skip the missing ones.
  const std::string guard =
      blocks % (kFinishSlices * kFinishLoads)
          ? "if (b0 + t * " + std::to_string(kFinishSlices) + " < " + std::to_string(blocks) + ") "
          : "";
  os << "\n// The column sums finished: the blocks' partials added in a fixed order.\n";
  emitSignature(os, kernel, kFinishPoints * kFinishSlices, entry, /*workspace=*/true);
  emitIndexType(os, kernel, pairs * blocks);
  os << "  const float *part = static_cast<const float *>(workspace);\n"
     << "  __shared__ float slices[" << kFinishSlices << "][" << kFinishPoints + 1 << "];\n"
     << "  const Idx q = (Idx)blockIdx.x * " << kFinishPoints
     << " + threadIdx.x;  // (sum, row point)\n"
     << "  float acc = 0.f;\n"
     << "  if (q < " << pairs << ") {\n"
     << "    const Idx base = q / " << s.rowPoints << " * " << blocks << " * " << s.rowPoints
     << " + q % " << s.rowPoints << ";\n"
     // Loads kFinishLoads blocks' partials at once, then adds them in block
     // order: a loop of one load and one add was latency-bound (H200,
     // bert-large: the finishing launch about 2.5 us that way, 1.2 us so).
     << "    for (int b0 = threadIdx.y; b0 < " << blocks << "; b0 += " << kFinishSlices
     << " * " << kFinishLoads << ") {\n"
     << "      float vals[" << kFinishLoads << "];\n"
     << "#pragma unroll\n"
     << "      for (int t = 0; t < " << kFinishLoads << "; ++t)\n"
     << "        " << guard << "vals[t] = __ldcg(&part[base + (Idx)(b0 + t * "
     << kFinishSlices << ") * " << s.rowPoints << "]);\n"
     << "#pragma unroll\n"
     << "      for (int t = 0; t < " << kFinishLoads << "; ++t)\n"
     << "        " << guard << "acc += vals[t];\n"
     << "    }\n"
     << "  }\n"
     << "  slices[threadIdx.y][threadIdx.x] = acc;\n"
     << "  __syncthreads();\n"
     << "  if (threadIdx.y != 0 || q >= " << pairs << ")\n"
     << "    return;\n"
     << "  float total = slices[0][threadIdx.x];\n"
     << "#pragma unroll\n"
     << "  for (int y = 1; y < " << kFinishSlices << "; ++y)\n"
     << "    total += slices[y][threadIdx.x];\n"
     << "  const Idx rp = q % " << s.rowPoints << ";\n";
  decode(os, "  ", "rp", s.row, s);
  os << "  switch (q / " << s.rowPoints << ") {\n";
  for (auto [k, id] : llvm::enumerate(sums))
    for (auto [n, out] : llvm::enumerate(g.outputs))
      if (out == id) {
        Type t = kernel.getResultTypes()[n];
        os << "  case " << k << ": "
           << storeCall(t, "out" + std::to_string(n), offsetExpr(t, s.row), "total")
           << " break;\n";
      }
  os << "  }\n}\n";
}

} // namespace dmc::codegen
