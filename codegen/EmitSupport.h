//===- EmitSupport.h - pieces shared by the kernel emitters ---------------===//
//
// Both emitters (KernelEmitter.cpp: rows per block; ColumnEmitter.cpp: rows
// split across blocks, lanes along the contiguous dim) write the same
// signature, index arithmetic, loads, stores and dropout words.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_EMITSUPPORT_H
#define DMC_CODEGEN_EMITSUPPORT_H

#include "codegen/NodeGraph.h"

#include "llvm/Support/raw_ostream.h"

namespace dmc::codegen {

/// "const uint16_t *__restrict__" and the like for a tensor type.
std::string pointerType(mlir::Type t, bool input);
/// The C++ type of one stored element of `t`: float, int or uint16_t.
std::string elementType(mlir::Type t);
/// A store of fp32 `v` at ptr[off] converted to the storage of `t`.
std::string storeCall(mlir::Type t, const std::string &ptr, const std::string &off,
                      const std::string &v);
/// "b=8 j=512 i=1024 bf16" for shape comments.
std::string shapeOf(mlir::Type t);
/// sum of i_<d> * stride(d) over the dims `dims` that tensor type `t` has;
/// dim `chunkDim` (vectorized: a thread's chunk of points along it) is at
/// its chunk's first point, first_<chunkDim>.
std::string offsetExpr(mlir::Type t, llvm::StringRef dims, char chunkDim = 0);
/// The elements `t` advances per step of the linear index over `order`
/// (innermost last, sizes in `s`) when its offset over those dims is that
/// index times one stride (the dims dense in that order); -1 otherwise.
int64_t linearStride(mlir::Type t, llvm::StringRef order, const KernelSpace &s);
/// Index variables i_<dim> from the linear index `var` over `order`
/// (innermost last), with the sizes in `s`.
void decode(llvm::raw_ostream &os, const std::string &indent, const std::string &var,
            llvm::StringRef order, const KernelSpace &s);

/// Declares float vin<n>[vec] and fills it from `address` (one access of
/// input n's storage, converted to fp32), only where `guard` holds when the
/// graph reads input n under a condition that does not involve the vector
/// dim `vd`.
std::string vectorLoad(mlir::Type t, unsigned n, int vec, const std::string &address,
                       const NodeGraph &g, char vd);
/// The condition under which vectorLoad reads input n ("" : always).
std::string loadGuard(const NodeGraph &g, unsigned n, char vd);
/// The same vin<n> (or the array `into`) from raw elements fetched earlier
/// (dmcFetchVec into `raw`), converted only where `guard` holds (the fetch
/// was made under it too).
std::string vectorConvert(mlir::Type t, unsigned n, int vec, const std::string &raw,
                          const std::string &guard = "", const std::string &into = "");
/// Writes float vout<n>[] to `address`, converted to the storage of `t`.
std::string vectorStore(mlir::Type t, unsigned n, const std::string &address);
/// Kernel input n's element at the point: vin<n>[v], the register of its
/// vector, when the input is vectorized, else a load at offset off_in<n> in
/// its storage, converted to fp32.
std::string loadOf(dm::KernelOp kernel, unsigned n,
                   llvm::function_ref<bool(mlir::Type)> vectorized);
/// Node `id`'s value (NodeGraph::value) with its loads spelled by loadOf.
std::string nodeValue(const NodeGraph &g, size_t id, dm::KernelOp kernel,
                      llvm::function_ref<bool(mlir::Type)> vectorized);
/// Whether a node of `g` for which `inSweep` holds reads input `n`.
bool readsInput(const NodeGraph &g, unsigned n, llvm::function_ref<bool(size_t)> inSweep);

/// The extern "C" head of the kernel: inputs, outputs, [workspace], seed.
/// `minBlocks` > 1 asks ptxas to fit that many blocks of `threads` on an SM
/// (__launch_bounds__'s second argument: a register limit).
void emitSignature(llvm::raw_ostream &os, dm::KernelOp kernel, int threads,
                   llvm::StringRef entry, bool workspace, int minBlocks = 1);
/// `typedef int Idx` when no index of the kernel reaches 2^31 (cheap
/// division by constants), else long long; `points` is the largest linear
/// index the loops form besides the tensors' sizes.
void emitIndexType(llvm::raw_ostream &os, dm::KernelOp kernel, int64_t points);

/// The dropout counter's element index: row-major over the draw's order,
/// with the vector dim `vd` (if any) at its chunk's first point, first_<vd>.
std::string counterIndex(const Draw &d, const KernelSpace &s, char vd);
/// Defines the words array wv<w> (and the vector's first counter index n<w>)
/// for every draw in `used` (NodeGraph::addDraws) that a vector of `vec` (a
/// multiple of 4) along `vd` serves with one Philox call per group of eight
/// elements.
/// A draw reading saved keep bits loads the vector's word, or takes it from
/// `fetchedBits` (draw -> expression: a word fetched rows ahead).
void emitVectorDraws(llvm::raw_ostream &os, const std::string &indent, const std::set<int> &used,
                     const NodeGraph &g, const KernelSpace &s, char vd, int vec,
                     const std::map<int, std::string> &fetchedBits = {});
/// The load of the keep-bits word of draw `d` (Draw::bitsInput) holding key
/// `keyIndex`: at the point's indices i_<dim>, or, with `row` (an expression),
/// at row `row` as row * `rowStride` and the other dims than `rowDims`.
std::string loadBitsWordOfRow(const Draw &d, const std::string &keyIndex, llvm::StringRef rowDims,
                              const std::string &row, int64_t rowStride);
/// Defines the 16-bit draw of each dropout in `used`: from the array
/// emitVectorDraws made (inside the loop over v), else with its own Philox call.
void emitWords(llvm::raw_ostream &os, const std::string &indent, const std::set<int> &used,
               const NodeGraph &g, const KernelSpace &s, char vd, int vec);

/// Column sums (ColumnSums.cpp, KernelSpace::columnSums): the finishing
/// launch's blocks take kFinishPoints (sum, row point) pairs with
/// kFinishSlices threads each.
inline constexpr int kFinishPoints = 32, kFinishSlices = 8;
/// Partials a finishing thread loads before adding them (in block order).
inline constexpr int kFinishLoads = 32;
/// After a row kernel's loop over its rows: combines each column sum's
/// registers sum<id>[perRow * width] over threadIdx.x and writes the block's
/// partials to the workspace, [sums][blocks][rowPoints] fp32.
void emitColumnPartials(llvm::raw_ostream &os, llvm::ArrayRef<int> sums, int64_t perRow,
                        int width, int64_t rowChunks, int64_t blocks, int64_t rowPoints);
/// The second entry, `entry` (same parameters as the kernel's): adds the
/// `blocks` partials of each column sum in a fixed order and stores the
/// kernel's outputs that are column sums.
void emitColumnFinish(llvm::raw_ostream &os, dm::KernelOp kernel, const KernelSpace &s,
                      const NodeGraph &g, llvm::ArrayRef<int> sums, int64_t blocks,
                      const std::string &entry);

/// How a row kernel's threads take rows: `per` groups of rows after each
/// other, `perRow` chunks of `vec` points along the row dim `vd` per thread
/// (`ty` threads per row, `rowChunks` chunks in a row), outer dims `outer`.
struct RowShape {
  std::string outer;
  int per = 1, ty = 1, vec = 1;
  int64_t perRow = 1, rowChunks = 1;
  char vd = 0;
};
/// Inputs a row kernel with column sums fetches a row group ahead
/// (RowFetch.cpp): read by the sweep of pass `sweep`, vectorized, unguarded,
/// and changing from row to row.
struct RowFetch {
  std::vector<unsigned> inputs;
  /// Draws reading saved keep bits along the row vectors' dim, in any pass:
  /// their words are fetched too, into pfb<k>[perRow], and the sweep keeps
  /// its group's in bwc<k>[perRow] for the later passes.
  std::vector<int> bits;
  int sweep = -1;
};
/// The inputs that the sweep of pass `sweep` (its nodes: `needed`) reads and
/// that qualify.
RowFetch chooseRowFetch(dm::KernelOp kernel, const NodeGraph &g, const std::string &outer,
                        char vd, int sweep, const std::vector<bool> &needed,
                        llvm::function_ref<bool(mlir::Type)> vectorized);
/// Declares the raw vectors pf<n>[perRow] of the fetched inputs.
void emitRowFetchRegisters(llvm::raw_ostream &os, const std::string &indent,
                           dm::KernelOp kernel, const RowFetch &f, const RowShape &r);
/// Fetches row group `group` (an expression) of the inputs into pf<n>[];
/// `chunks` is the kernel's space with the vector dim counted in chunks.
void emitRowFetch(llvm::raw_ostream &os, const std::string &indent, dm::KernelOp kernel,
                  const NodeGraph &g, const RowFetch &f, const RowShape &r,
                  const KernelSpace &chunks, const std::string &group);


} // namespace dmc::codegen

#endif // DMC_CODEGEN_EMITSUPPORT_H
