//===- RowFetch.cpp - a row kernel's next rows loaded ahead ---------------===//
//
// A row kernel with column sums (ColumnSums.cpp) walks perThread groups of
// rows one after another, and each group's sweep ends in block reductions
// (barriers) and stores: with about two blocks per SM, nothing would load
// while a block reduces. So the first sweep's vector inputs that change from
// row to row are fetched a row group ahead, as raw vectors (DmcRawVec in
// CudaPrelude.h): group 0 before the loop, group k + 1 right after the first
// sweep of group k has converted its own, before that sweep's reductions.
// H200, bert-large B8 L512, the fastest of each kernel's configurations in
// exhaustive sweeps (with the finish's loads issued together; codegen 4 ->
// 5): the two layer-norm backward kernels 22.30 -> 18.09 and 25.17 -> 21.98 us.
//
//===----------------------------------------------------------------------===//
#include "codegen/EmitSupport.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace dmc::codegen {

RowFetch chooseRowFetch(dm::KernelOp kernel, const NodeGraph &g, const std::string &outer,
                        char vd, int sweep, const std::vector<bool> &needed,
                        llvm::function_ref<bool(Type)> vectorized) {
  RowFetch f;
  f.sweep = sweep;
  for (auto [n, v] : llvm::enumerate(kernel.getInputs())) {
    llvm::StringRef names = cast<dm::TensorType>(v.getType()).getNames();
    bool rowToRow = llvm::any_of(outer, [&](char d) { return names.contains(d); });
    // A guarded load reads only where its guard holds: it stays in the sweep.
    if (rowToRow && vectorized(v.getType()) && !g.guardOf(n) &&
        readsInput(g, n, [&](size_t id) { return needed[id]; }))
      f.inputs.push_back(unsigned(n));
  }
  // Saved keep bits read in any pass: one word per row chunk, fetched with
  // the inputs (a later pass would otherwise wait for its load).
  for (auto [k, d] : llvm::enumerate(g.draws))
    if (d.bitsInput >= 0 && d.key() == vd)
      f.bits.push_back(int(k));
  return f;
}

void emitRowFetchRegisters(llvm::raw_ostream &os, const std::string &indent,
                           dm::KernelOp kernel, const RowFetch &f, const RowShape &r) {
  for (unsigned n : f.inputs)
    os << indent << "DmcRawVec<" << r.vec << ", "
       << elementType(kernel.getInputs()[n].getType()) << "> pf" << n << "[" << r.perRow
       << "];\n";
  for (int k : f.bits) // the next group's words; the current group's, kept for every pass
    os << indent << "uint32_t pfb" << k << "[" << r.perRow << "], bwc" << k << "["
       << r.perRow << "];  // keep-bits words\n";
}

void emitRowFetch(llvm::raw_ostream &os, const std::string &indent, dm::KernelOp kernel,
                  const NodeGraph &g, const RowFetch &f, const RowShape &r,
                  const KernelSpace &chunks, const std::string &group) {
  const std::string in = indent + "  ", in2 = indent + "    ";
  os << indent << "{  // the inputs of row group " << group << "\n"
     << in << "const Idx o = ((Idx)blockIdx.x * " << r.per << " + " << group
     << ") * TX + threadIdx.x;\n";
  decode(os, in, "o", r.outer, chunks);
  for (unsigned n : f.inputs)
    os << in << "const Idx base_in" << n << " = "
       << offsetExpr(kernel.getInputs()[n].getType(), r.outer, r.vd) << ";\n";
  os << "#pragma unroll\n"
     << in << "for (int it = 0; it < " << r.perRow << "; ++it) {\n"
     << in2 << "const Idx r = threadIdx.y + (Idx)it * TY;\n";
  if (r.rowChunks % r.ty)
    os << in2 << "if (r >= " << r.rowChunks << ") break;\n";
  decode(os, in2, "r", chunks.row, chunks);
  os << in2 << "const Idx first_" << r.vd << " = i_" << r.vd << " * " << r.vec << ";\n";
  for (unsigned n : f.inputs)
    os << in2 << "dmcFetchVec<" << r.vec << ">(pf" << n << "[it], in" << n << " + base_in" << n
       << " + " << offsetExpr(kernel.getInputs()[n].getType(), chunks.row, r.vd) << ");\n";
  for (int k : f.bits) // at the point's indices, decoded above
    os << in2 << "pfb" << k << "[it] = "
       << loadBitsWordOfRow(g.draws[size_t(k)], "first_" + std::string(1, r.vd), "", "", 0)
       << ";\n";
  os << in << "}\n" << indent << "}\n";
}

} // namespace dmc::codegen
