//===- ColumnSchedule.h - a column kernel's sweep over rows, as data ------===//
//
// What the column emitter (ColumnEmitter.cpp) prints, decided before
// anything is printed: lanes along the contiguous dim (VEC points each),
// each block's share of the rows (SPLIT blocks per outer tile), how every
// input is read in the row sweep (a scalar load, one vector access, or raw
// vectors fetched rows ahead, the slices of one stack sharing their slots),
// and the reductions combined over threadIdx.y and, with SPLIT > 1, across
// the tile's blocks. Tests read it without parsing CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_COLUMNSCHEDULE_H
#define DMC_CODEGEN_COLUMNSCHEDULE_H

#include "codegen/EmitSupport.h"

#include <map>

namespace dmc::codegen {

/// How the row sweep reads one kernel input.
enum class ColumnRead {
  None,          ///< not read in the sweep
  Scalar,        ///< one element per point at off_in<n>
  Vector,        ///< one vector access per row (vectorLoad)
  Fetched,       ///< raw vectors fetched `depth` rows ahead into pf<n>[]
  FetchedShared, ///< the same, in slots shared by the slices of one stack
};

struct ColumnSchedule {
  char laneDim = 0;      ///< the contiguous dim the lanes run along
  int vec = 1, split = 1;
  std::string outer;     ///< outer dims, outermost first, the lane dim innermost
  KernelSpace chunks;    ///< the space with the lane dim counted in vectors
  int64_t outerChunks = 0;
  int64_t rows = 0;      ///< rows of one block (rowPoints / split)
  int64_t gridX = 0;     ///< blocks along the outer chunks
  std::vector<int> reductions;
  std::set<int> draws;   ///< dropout draws of the row sweep
  /// Rows per thread when every thread takes the same number (0: not);
  /// inputs are fetched ahead only for 2 <= iters <= kMaxFetchIterations.
  int64_t iters = 0;
  int depth = 0;         ///< rows fetched ahead (min(kFetchDepth, iters))
  /// Rows of the fetching sweep unrolled at once (KernelConfig::unroll; 0:
  /// all of them).
  int unroll = 0;
  std::vector<ColumnRead> reads;  ///< per kernel input
  std::vector<unsigned> fetched;  ///< inputs read Fetched or FetchedShared
  /// Draws reading saved keep bits along the lane dim (Draw::bitsInput):
  /// their words are fetched `depth` rows ahead too, into pfb<k>[].
  std::vector<int> fetchedBits;
  bool fetchesAhead() const { return !fetched.empty() || !fetchedBits.empty(); }
  /// Per stacked dim: the fetched slices sharing one set of slots (the
  /// first fetches for all); one element type and row layout each.
  std::map<char, std::vector<unsigned>> sharedSlots;
  /// Every fetched input (and keep-bits word) is addressed as row * stride
  /// (no row decode).
  bool allLinear = true;
  /// Outputs (positions) stored per point in the sweep, and those of one
  /// value per outer point stored after the reductions.
  std::vector<unsigned> rowStores, outerStores;
};


/// The schedule of `kernel` (lowered into `g` for `space`) under `config`, a
/// column configuration (isColumnConfig).
ColumnSchedule scheduleColumnKernel(dm::KernelOp kernel, const KernelSpace &space,
                                    const NodeGraph &g, const KernelConfig &config);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_COLUMNSCHEDULE_H
