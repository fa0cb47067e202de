//===- TileSchedule.h - a tiled elementwise kernel's phases, as data ------===//
//
// What the tile emitter (TileEmitter.cpp) prints, decided before anything is
// printed: the two dims of a block's tile (a, the staged inputs' contiguous
// dim and the lanes' in phase 1; b, the outputs' and the lanes' in phase 2),
// its size, the tiles along each and the other outer dims, which inputs go
// through shared memory, and how phase 2 reads every input.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_TILESCHEDULE_H
#define DMC_CODEGEN_TILESCHEDULE_H

#include "codegen/EmitSupport.h"

namespace dmc::codegen {

/// How phase 2 (lanes along b) reads one kernel input.
enum class TileRead {
  None,    ///< not read
  Staged,  ///< from its shared-memory tile, filled in phase 1
  Vector,  ///< one vector access along b
  Scalar,  ///< one element per point at off_in<n>
};

struct TileSchedule {
  char a = 0, b = 0;    ///< the lane dims of phase 1 and phase 2
  int vec = 1, tile = 32; ///< points per vector; tile edge (32 lanes x vec)
  std::string others;   ///< the outer dims besides a and b, outermost first
  int64_t tilesA = 0, tilesB = 0;
  int64_t blocks = 0;   ///< one per tile and point of the other dims
  std::vector<unsigned> staged; ///< inputs staged (read or not: tiledInputs)
  std::vector<TileRead> reads;  ///< per kernel input
};

/// The schedule of `kernel` (lowered into `g` for `space`) under `config`, a
/// tiled configuration (isTiledConfig).
TileSchedule scheduleTiledKernel(dm::KernelOp kernel, const KernelSpace &space,
                                 const NodeGraph &g, const KernelConfig &config);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_TILESCHEDULE_H
