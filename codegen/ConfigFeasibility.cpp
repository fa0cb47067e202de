//===- ConfigFeasibility.cpp - why a configuration cannot run a kernel ----===//
//
// whyInfeasible (KernelSpace.h): the reason a knob configuration cannot run
// a fused kernel's loop nest, checked before anything is emitted; tiled
// elementwise kernels and kernels with column sums have rules of their own.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelSpace.h"

#include "llvm/Support/FormatVariadic.h"

namespace dmc::codegen {

/// A tile of T x T points, T = 32 x vec, of lane dim a (the staged inputs'
/// contiguous dim) and the outputs' contiguous dim b; 32 x ty threads.
static std::string whyInfeasibleTiled(const KernelSpace &s, const KernelConfig &c) {
  const char a = c.laneDim, b = tiledWriteDim(s);
  if (!b)
    return "a tile through shared memory needs outputs contiguous along one dim";
  if (s.outer.find(a) == std::string::npos)
    return llvm::formatv("lane dim '{0}' is not an outer dim ({1})", a, s.outer);
  if (a == b)
    return llvm::formatv("lane dim '{0}' is the outputs' contiguous dim: nothing to transpose", a);
  std::vector<unsigned> staged = tiledInputs(s, a);
  if (staged.empty())
    return llvm::formatv("no input is contiguous along lane dim '{0}' and has the outputs' "
                         "contiguous dim '{1}'",
                         a, b);
  if (c.tx != 32)
    return llvm::formatv("a tile's rows take a warp's 32 lanes (tx 32, not {0})", c.tx);
  if (c.vec != 1 && c.vec != 2)
    return llvm::formatv("tiles are 32 or 64 points wide: vectors of 1 or 2, not {0}", c.vec);
  const int t = 32 * c.vec;
  if (c.ty < 1 || t % c.ty)
    return llvm::formatv("{0} rows of threads do not divide a tile of {1}", c.ty, t);
  if (c.perThread != 1 || c.split != 1)
    return "a tile takes one point per thread and row (per_thread and split 1)";
  for (char d : {a, b})
    if (s.sizes.at(d) % t)
      return llvm::formatv("dim '{0}' of size {1} is not a multiple of the tile's {2}", d,
                           s.sizes.at(d), t);
  if (int64_t bytes = int64_t(staged.size()) * t * (t + 1) * 4; bytes > 48 * 1024)
    return llvm::formatv("{0} staged inputs need {1} bytes of shared memory (48 KiB at most)",
                         staged.size(), bytes);
  return "";
}

/// A kernel with column sums: tx rows per block side by side, perThread
/// rows after each other, no lane dim; every block takes whole rows, and
/// each thread keeps at most 4 chunks of a row (its column partial sums
/// live in registers).
static std::string whyInfeasibleColumnSums(const KernelSpace &s, const KernelConfig &c) {
  if (c.laneDim)
    return "a kernel with column sums takes whole rows per block (no lane dim)";
  if (c.perThread < 1 || c.tx < 1 || 32 % c.tx)
    return llvm::formatv("{0} rows per block side by side must divide a warp's 32", c.tx);
  int64_t rows = int64_t(c.tx) * c.perThread;
  if (s.outerPoints % rows)
    return llvm::formatv("{0} rows do not divide into blocks of {1} x {2}", s.outerPoints, c.tx,
                         c.perThread);
  int64_t chunks = s.rowPoints / std::max(c.vec, 1);
  if ((chunks + c.ty - 1) / c.ty > 4)
    return llvm::formatv("{0} threads take more than 4 chunks each of a {1}-point row", c.ty,
                         s.rowPoints);
  return "";
}

std::string whyInfeasible(const KernelSpace &s, const KernelConfig &c) {
  if (c.unroll != 0) {
    if (!isColumnConfig(c) || s.row.empty())
      return "unroll applies to column configurations (lanes with vectors or split rows) of "
             "kernels that reduce rows";
    if (c.unroll != kFetchDepth)
      return llvm::formatv("the sweep is unrolled whole (0) or by the rows fetched ahead ({0}), "
                           "not {1}",
                           kFetchDepth, c.unroll);
    if (c.split < 1 || c.ty < 1)
      return "split and ty must be at least 1";
    int64_t rows = s.rowPoints / c.split, iters = rows % c.ty ? 0 : rows / c.ty;
    if (iters <= c.unroll || iters > kMaxFetchIterations || iters % c.unroll)
      return llvm::formatv("{0} rows per thread: the sweep fetches ahead (and unrolls) only "
                           "for 3 to {1}, a multiple of {2}",
                           iters, kMaxFetchIterations, c.unroll);
  }
  if (c.tx * c.ty > 1024)
    return llvm::formatv("{0}x{1} = {2} threads exceed the 1024 of a block", c.tx, c.ty,
                         c.tx * c.ty);
  if (c.tx * c.ty % 32 != 0)
    return llvm::formatv("{0} threads are not a whole number of warps", c.tx * c.ty);
  if (isTiledConfig(s, c))
    return whyInfeasibleTiled(s, c);
  if (s.row.empty() && c.ty != 1)
    return "an elementwise kernel has no row to share between threads (ty must be 1)";
  if (s.columnSums) {
    if (std::string why = whyInfeasibleColumnSums(s, c); !why.empty())
      return why;
  } else if (c.perThread < 1 || (!s.row.empty() && c.perThread != 1)) {
    return "several points per thread apply to elementwise kernels only";
  }
  if (!s.row.empty() && c.ty > 32 && c.ty * c.vec > s.rowPoints)
    return c.vec > 1 ? llvm::formatv("{0} threads x vectors of {1} exceed the row's {2} points",
                                     c.ty, c.vec, s.rowPoints)
                           .str()
                     : llvm::formatv("{0} threads per row but the row has {1} points", c.ty,
                                     s.rowPoints)
                           .str();
  if (c.split < 1)
    return "split must be at least 1";
  if (c.split > 1) {
    if (s.row.empty() || !c.laneDim)
      return "splitting rows across blocks needs a reduction and a lane dim";
    if (s.rowPoints % c.split || s.rowPoints / c.split < c.ty)
      return llvm::formatv("{0} rows do not split into {1} parts of at least {2}", s.rowPoints,
                           c.split, c.ty);
  }
  if (isColumnConfig(c) && !s.finalReductions)
    return "a reduction feeds other ops in the kernel: the column strategy (lane vectors, split "
           "rows) needs one sweep";
  if (c.vec != 1) {
    char d = s.mainLayout.back();
    if (c.vec < 1 || (c.vec & (c.vec - 1)))
      return "vectors come in powers of two";
    if (!s.row.empty() && c.laneDim && c.laneDim != d)
      return llvm::formatv("lane vectors need lanes along the contiguous dim '{0}'", d);
    if (!s.row.empty() && !c.laneDim && s.row.find(d) == std::string::npos)
      return llvm::formatv("row vectors need the contiguous dim '{0}' among the reduced dims", d);
    if (c.laneDim && s.sizes.at(d) % (int64_t(c.vec) * c.tx))
      return llvm::formatv("the lane dim '{0}' of size {1} is not a multiple of {2} lanes x "
                           "vectors of {3}",
                           d, s.sizes.at(d), c.tx, c.vec);
    if (s.sizes.at(d) % c.vec)
      return llvm::formatv("the contiguous dim '{0}' of size {1} is not a multiple of {2}", d,
                           s.sizes.at(d), c.vec);
    for (size_t n = 0; n < s.tensors.size(); ++n) {
      const auto &[dims, bytes] = s.tensors[n];
      if (s.isPacked(n))
        continue;
      if (dims.find(d) != std::string::npos && dims.back() != d)
        return llvm::formatv("a tensor with dims '{0}' has the vector dim '{1}' but not "
                             "innermost",
                             dims, d);
      if (dims.back() == d && c.vec * bytes > 16)
        return llvm::formatv("{0} elements of {1} bytes exceed a 16-byte access", c.vec, bytes);
    }
  }
  if (c.laneDim) {
    if (s.outer.find(c.laneDim) == std::string::npos)
      return llvm::formatv("lane dim '{0}' is not an outer dim ({1})", c.laneDim, s.outer);
    if (s.sizes.at(c.laneDim) % c.tx != 0)
      return llvm::formatv("lane dim '{0}' of size {1} is not a multiple of {2} lanes",
                           c.laneDim, s.sizes.at(c.laneDim), c.tx);
  } else if (!s.row.empty() && c.tx != 1 && !s.columnSums) {
    return "several lanes per block need a lane dim";
  }
  return "";
}

} // namespace dmc::codegen
