//===- KernelCostModel.cpp - an analytic price for a kernel's knobs -------===//
#include "codegen/KernelCostModel.h"

#include "ir/IterationSpace.h"
#include "ir/StorageType.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace dmc::codegen {
namespace {

constexpr double kBytesPerUs = 4.0e6;    ///< nominal: 4 TB/s
constexpr double kFlopPerUs = 6.0e8;     ///< nominal: 600 TFLOP/s
constexpr double kLaunchUs = 2.0;        ///< one kernel part on a CUDA graph
constexpr int kThreadsPerSM = 2048, kBlocksPerSM = 32;
constexpr double kSharedPerSM = 228 * 1024;

double bytesOf(Type t) {
  auto tensor = cast<dm::TensorType>(t);
  int64_t n = 1;
  for (int64_t s : tensor.getShape())
    n *= s;
  return double(n) * double(dmrt::dtypeSize(dm::storageDType(t).value_or(dmrt::DType::F32)));
}

/// blocks / (waves x slots): 1 when the last wave is full.
double waveEfficiency(double blocks, double slots) {
  if (blocks <= 0 || slots <= 0)
    return 1;
  return blocks / (std::ceil(blocks / slots) * slots);
}

} // namespace

double modelKernelUs(dm::KernelOp kernel, const KernelSpace &space, const KernelConfig &config,
                     const KernelLaunch &launch, const dmcgen::GpuTarget &target) {
  const double threads = double(launch.blockX) * launch.blockY;
  const double blocks = double(launch.grid) * launch.gridY * launch.gridZ;
  const double sms = std::max(1, target.sms);
  double perSM = std::min<double>(kBlocksPerSM, std::floor(kThreadsPerSM / std::max(1.0, threads)));
  if (launch.sharedBytes > 0)
    perSM = std::min(perSM, std::floor(kSharedPerSM / launch.sharedBytes));
  // A fused attention kernel's registers: as many blocks as its launch
  // bounds ask for (min_blocks), else blocks of the usual registers.
  if (isFusedKernel(kernel))
    perSM = std::min(perSM, double(config.minBlocks > 0
                                       ? config.minBlocks
                                       : dmcgen::blocksAtRegisters(std::max(1, config.warps),
                                                                   dmcgen::kUsualRegisters)));
  perSM = std::max(1.0, perSM);
  // Full waves past the first: the last one's idle slots. Fewer blocks than
  // slots leave SMs idle, which for column sweeps (one long sweep per
  // block) the bytes in flight below account for.
  // Row and elementwise kernels keep a row's chain of loads, reductions and
  // stores per block: slots left empty are latency nothing else hides.
  // Column sweeps and row kernels with column sums take many rows per block
  // by design (their partials grow with the blocks).
  const double waves = blocks > sms * perSM || (!isColumnConfig(config) && !space.columnSums)
                           ? waveEfficiency(blocks, sms * perSM)
                           : 1.0;
  const double activeSMs = std::min(sms, blocks);
  const double resident = std::min(perSM, std::ceil(blocks / sms)); // per active SM
  double launches = launch.finishes ? 2 : 1;

  if (isFusedKernel(kernel)) {
    double flop = 0;
    kernel.getBody().walk([&](dm::ContractOp c) {
      flop += dm::analyticFlop(cast<dm::IterationSpaceOpInterface>(c.getOperation()));
    });
    const double bm = config.blockM, bn = config.blockN;
    const double tile = bm > 0 && bn > 0 ? std::min(1.0, (bm * bn / (bm + bn)) / (64.0 * 128 / 192))
                                         : 1.0;
    const double warps = std::min(1.0, resident * std::max(1, config.warps) / 16.0) *
                         std::min(1.0, activeSMs / sms);
    // Warpgroup MMA: 0.68-0.93x mma.sync's time at the same tiles on an
    // H200 (AttentionProblem.cpp defaultTiles), most often about 0.85x.
    const double mma = config.wgmma ? 0.85 : 1.0;
    return mma * flop / kFlopPerUs / (waves * tile * warps) + launches * kLaunchUs;
  }

  double bytes = 0, pointBytes = 0;
  size_t pointInputs = 0; // inputs read at every point (packed keep bits aside)
  for (auto [n, v] : llvm::enumerate(kernel.getInputs())) {
    bytes += bytesOf(v.getType());
    if (space.isPacked(n)) { // a word serves many points
      pointBytes += bytesOf(v.getType()) / double(space.outerPoints * space.rowPoints);
      continue;
    }
    pointBytes += double(dmrt::dtypeSize(dm::storageDType(v.getType()).value_or(dmrt::DType::F32)));
    ++pointInputs;
  }
  for (Type t : kernel.getResultTypes())
    bytes += bytesOf(t);
  const bool tiled = isTiledConfig(space, config);
  // Elementwise kernels walk the outer dims with the last innermost: a
  // tensor contiguous along another dim takes a 32-byte sector per element
  // (a transpose without tiles).
  if (space.row.empty() && !tiled && !space.outer.empty()) {
    auto strided = [&](Type t) {
      llvm::StringRef dims = cast<dm::TensorType>(t).getNames();
      return dims.contains(space.outer.back()) && dims.back() != space.outer.back();
    };
    auto inflate = [&](Type t) {
      double element = double(dmrt::dtypeSize(dm::storageDType(t).value_or(dmrt::DType::F32)));
      if (strided(t))
        bytes += bytesOf(t) * (32.0 / element - 1);
    };
    for (Value v : kernel.getInputs())
      inflate(v.getType());
    for (Type t : kernel.getResultTypes())
      inflate(t);
  }
  // Points one thread loads before it waits: its vector, times independent
  // points (elementwise kernels: per_thread of them, or a tile's rows of
  // threads; row kernels: the row chunks it holds, unrolled; rows taken in
  // turn wait in between). The column emitter keeps about 4 rows in flight
  // (its row loop unrolled by 4, or 2 rows fetched ahead of the current).
  double points = std::max(1, config.vec);
  if (tiled)
    points *= 32.0 * config.vec / std::max(1, config.ty);
  else if (space.row.empty())
    points *= std::max(1, config.perThread);
  else if (isColumnConfig(config))
    points *= 4;
  else {
    double chunks = double(space.rowPoints) / std::max(1, config.vec);
    points *= std::max(1.0, std::ceil(chunks / std::max(1, config.ty)));
  }
  const double inflight = resident * threads * points * pointBytes;
  const double latency = std::min(1.0, activeSMs * inflight / (sms * kInflightBytesPerSM));
  // Consecutive threads walk the contiguous dim, except in row kernels
  // whose rows lack it: each access then takes a 32-byte sector of its own.
  const char contiguous = space.mainLayout.empty() ? 0 : space.mainLayout.back();
  double coalescing = 1;
  if (!space.row.empty() && !isColumnConfig(config) &&
      space.row.find(contiguous) == std::string::npos)
    coalescing = std::min(1.0, pointBytes / std::max<size_t>(1, pointInputs) *
                                   std::max(1, config.vec) / 32.0);
  // Row kernels with column sums take their rows in groups, each group
  // waiting at the block's barriers (its row reductions): a block above 256
  // threads keeps more warps waiting at each, and vectors under 16 bytes
  // issue more accesses per byte; the bytes in flight above are ample either
  // way. Exponents from the codegen-8 sweeps of the layer norms' gradients
  // (Spearman with the measured times, H200 bert-large's 44 configurations:
  // -0.04 without, 0.85 with; its H100 partial sweep 0.20 -> 0.74).
  double grouped = 1;
  if (space.columnSums && !isColumnConfig(config)) {
    const char contiguous = space.mainLayout.empty() ? 0 : space.mainLayout.back();
    int element = 4;
    for (const auto &[dims, size] : space.tensors)
      if (!dims.empty() && dims.back() == contiguous)
        element = std::min(element, size);
    grouped = std::pow(std::max(1.0, threads / 256.0), 0.5) *
              std::pow(std::max(1.0, 16.0 / (std::max(1, config.vec) * element)), 0.3);
  }
  // A column sweep unrolled whole grows with its rows per thread times its
  // body (kWholeSweepFlopLimit): past the limit its code outgrows the
  // instruction cache, in proportion; below it, the loop unrolled by the
  // fetch depth costs a little more (its branch), so twins do not tie.
  double sweep = 1;
  if (isColumnConfig(config)) {
    const double code = sweepCode(space, config);
    if (config.unroll == 0 && code > kWholeSweepFlopLimit)
      sweep = code / kWholeSweepFlopLimit;
    else if (config.unroll != 0 && code <= kWholeSweepFlopLimit)
      sweep = 1.02;
  }
  const double workspace = 2.0 * double(launch.workspaceBytes);
  return (bytes + workspace) / kBytesPerUs / (waves * latency * coalescing) * grouped * sweep +
         launches * kLaunchUs;
}

std::optional<double> priceConfiguration(dm::KernelOp kernel, const KernelSpace &space,
                                         const KernelConfig &config) {
  if (isFusedKernel(kernel)) {
    llvm::Expected<KernelSchedule> schedule = scheduleAttention(kernel, config);
    if (!schedule) {
      llvm::consumeError(schedule.takeError());
      return std::nullopt;
    }
    return modelKernelUs(kernel, space, config, schedule->launch, targetOf(kernel));
  }
  KernelSpace s;
  NodeGraph g;
  if (llvm::Error e = lowerForConfig(kernel, config, s, g)) {
    llvm::consumeError(std::move(e));
    return std::nullopt;
  }
  return modelKernelUs(kernel, space, config, scheduleKernel(kernel, s, g, config).launch,
                       targetOf(kernel));
}

} // namespace dmc::codegen
