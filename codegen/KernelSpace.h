//===- KernelSpace.h - the loop nest of a fused kernel and its configs ----===//
//
// A dm.kernel iterates over one space S. Its reducing members share the
// outer dims O; the row dims R = S \ O are reduced (R is empty for purely
// elementwise kernels). A configuration maps O to blocks and lanes, R to
// the threads of a block, and picks the loop orders; the emitter turns a
// kernel plus one configuration into CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_KERNELSPACE_H
#define DMC_CODEGEN_KERNELSPACE_H

#include "codegen/target/GpuTarget.h"
#include "ir/DmDialect.h"

#include <map>
#include <string>
#include <vector>

namespace dmc::codegen {

struct KernelSpace {
  std::string outer, row;   ///< O and R, in the main tensor's memory order
  std::map<char, int64_t> sizes;
  std::string mainLayout;   ///< dims of the largest tensor, outermost first
  int64_t outerPoints = 1, rowPoints = 1;
  /// Dims (layout) and element bytes of every input, then every output.
  std::vector<std::pair<std::string, int>> tensors;
  size_t inputs = 0; ///< how many of `tensors` are inputs
  /// Every reducing op's results lack the row dims and only leave the
  /// kernel: one sweep computes everything, so blocks may split the rows.
  bool finalReductions = false;
  /// The kernel also sums values over its outer dims into results that
  /// only leave it (dm-fuse-column-reductions: layer-norm parameter
  /// gradients beside the input gradient's rows). Each block then takes
  /// perThread x tx outer points, keeps per-row-point partial sums in
  /// registers, writes them to its workspace, and a second launch (the
  /// entry's "_finish") adds the blocks' partials in a fixed order.
  bool columnSums = false;
  /// SMs of the GPU the kernel is compiled for (the module's dm.target).
  int sms = 132;
  /// Arithmetic of the body per point: its ops' getFlopPerPoint() summed
  /// (an activation gradient 12, a dropout or a sum 1), a measure of the
  /// code one point's work takes.
  double flopPerPoint = 0;
  /// Whether tensors[n] has a dim outside the space: dropout keep bits
  /// packed 32 points per word, which the kernel's draws write or read
  /// (NodeGraph's Draw), not its loops.
  bool isPacked(size_t n) const {
    for (char c : tensors[n].first)
      if (!sizes.count(c))
        return true;
    return false;
  }
};

/// The GPU `op`'s module is compiled for (its dm.target; the default target
/// when it has none).
dmcgen::GpuTarget targetOf(mlir::Operation *op);
/// The architecture `op`'s module is compiled for: its `dm.arch`, else its
/// target's (e.g. "sm_90a").
std::string archOf(mlir::Operation *op);

/// The space of `kernel`, read from its members' iteration spaces.
KernelSpace spaceOf(dm::KernelOp kernel);

struct KernelConfig {
  /// An outer dim mapped to threadIdx.x (0: none); consecutive lanes take
  /// consecutive positions along it.
  char laneDim = 0;
  int tx = 1; ///< lanes along laneDim (or along all outer points when R is empty)
  int ty = 1; ///< threads sharing one row (the reduction)
  /// Elementwise kernels: outer points per thread (independent loads in
  /// flight); consecutive threads still take consecutive points. Kernels
  /// with column sums: the outer points (rows) each thread takes in turn.
  int perThread = 1;
  /// Elementwise kernels: consecutive points along the contiguous dim handled
  /// together with one vector load/store per tensor (1: scalar).
  int vec = 1;
  /// Blocks sharing each outer tile's rows (gridDim.y); above 1, partial
  /// sums meet in a workspace and the tile's last block combines them.
  /// With a lane dim, `vec` runs along it (the contiguous dim).
  int split = 1;
  /// A fused attention kernel's tiles (isFusedKernel; 0 elsewhere): query
  /// and key positions per tile and warps per block (dmcgen::AttentionTiles).
  int blockM = 0, blockN = 0, warps = 0;
  /// A fused attention kernel's products as sm_90a warpgroup MMA
  /// (dmcgen::AttentionTiles::wgmma); false elsewhere.
  bool wgmma = false;
  /// A fused attention kernel's blocks an SM for ptxas to fit
  /// (dmcgen::AttentionTiles::minBlocks); 0: the kernel's own hint.
  int minBlocks = 0;
  /// Column kernels whose sweep fetches rows ahead (ColumnSchedule): rows
  /// unrolled at once. 0: every row (the whole sweep straight-line); the
  /// fetch depth: a loop, whose body stays in the instruction cache where
  /// it is large (an H200, gpt2-medium's dropout_dgelu_tanh_reduce_sum:
  /// 147.4 us unrolled whole, 61.3 us unrolled by 2).
  int unroll = 0;
  std::string describe() const;
};

/// A column kernel's sweep (ColumnSchedule.h): the rows fetched ahead, and
/// the most rows per thread for which the sweep is unrolled to fetch them.
inline constexpr int kFetchDepth = 2;
inline constexpr int64_t kMaxFetchIterations = 32;

/// Every configuration of `space` worth benchmarking; `rejected` gets one
/// line per infeasible candidate and why.
std::vector<KernelConfig> enumerateConfigs(const KernelSpace &space,
                                           std::vector<std::string> *rejected = nullptr);
/// The heuristic used until the tuner has measured: reduce over the rows with
/// a block when the innermost dim is reduced, lanes along it otherwise.
KernelConfig defaultConfig(const KernelSpace &space);
/// A column sweep's rows per thread times its body's flop per point above
/// which the default unrolls the sweep by kFetchDepth instead of whole: H200
/// records of bert-large and gpt2-medium, rows x flop (ratio whole / by 2):
/// dropout_dgelu_tanh_reduce_sum 32 x 14 (2.4; vectors of 4: 1.06),
/// dropout_dgelu_reduce_sum 32 x 14 (1.12 to 1.24) and 16 x 14 (0.98),
/// dropout_reduce_sum 16 x 2 (1.12), reduce_sum 32 x 1 (0.81), 16 x 1 (0.89).
inline constexpr double kWholeSweepFlopLimit = 256;
/// A column configuration's rows per thread times the body's flop per point:
/// what unrolling its sweep whole lays out as straight-line code.
inline double sweepCode(const KernelSpace &s, const KernelConfig &c) {
  return c.split > 0 && c.ty > 0 ? double(s.rowPoints / c.split / c.ty) * s.flopPerPoint : 0;
}
/// Elementwise kernels whose tensors disagree on the contiguous dim
/// (TileEmitter.cpp): the dim every output is contiguous along (0 when
/// they differ or the kernel reduces), and the inputs to stage through
/// shared memory for lane dim `a`: those contiguous along `a` that also
/// have the outputs' dim.
char tiledWriteDim(const KernelSpace &space);
std::vector<unsigned> tiledInputs(const KernelSpace &space, char a);
/// True when `config` tiles an elementwise kernel through shared memory:
/// a lane dim on a kernel without rows (TileEmitter.cpp).
bool isTiledConfig(const KernelSpace &space, const KernelConfig &config);

/// True when `config` is emitted by the column emitter: lanes along the
/// contiguous dim with vectors, or rows split across blocks.
bool isColumnConfig(const KernelConfig &config);
/// Empty when `config` is feasible for `space`, else why not.
std::string whyInfeasible(const KernelSpace &space, const KernelConfig &config);

/// Whether `kernel` has an emitter of its own (`dm.fused`, set by
/// dm-fuse-attention) instead of the loop-nest emitter: it has no KernelSpace
/// and takes tiles (KernelConfig::blockM, blockN, warps) as its knobs.
bool isFusedKernel(dm::KernelOp kernel);
/// A fused kernel's configurations: its tiles (blockM, blockN, warps), the
/// feasible candidates (infeasible ones into `rejected` with why), the
/// default for its head dim, or why `config`'s tiles cannot run it.
std::vector<KernelConfig> enumerateFusedConfigs(dm::KernelOp kernel,
                                                std::vector<std::string> *rejected = nullptr);
KernelConfig defaultFusedConfig(dm::KernelOp kernel);
std::string whyInfeasibleFused(dm::KernelOp kernel, const KernelConfig &config);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_KERNELSPACE_H
