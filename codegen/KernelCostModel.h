//===- KernelCostModel.h - an analytic price for a kernel's knobs -*- C++ -*-===//
//
// Ranks the configurations of one generated kernel before (or instead of)
// measuring them, as the cuBLASLt cost model ranks algorithms
// (runtime/GemmAlgoConfigs.cpp). Not a prediction of absolute time across
// kernels: the rates are nominal; what matters is how each configuration's
// launch fills the GPU.
//
//   memory-bound kernels: bytes / rate, divided by
//     - the wave efficiency: blocks / (ceil(blocks / slots) x slots), slots =
//       SMs x resident blocks per SM (threads per SM, blocks per SM);
//     - the latency efficiency: bytes each SM keeps in flight (resident
//       threads x the bytes one thread loads before it waits: vector width x
//       the inputs' element sizes x independent points) over the bytes
//       Little's law asks for (kInflightBytesPerSM), at most 1;
//     plus a launch per kernel part and the workspace's round trip; a
//     column sweep unrolled whole past kWholeSweepFlopLimit (rows per thread
//     x the body's flop per point) times code / limit (the instruction cache),
//     one unrolled by the fetch depth below it 2% more;
//   fused attention: the region's contraction flop / rate, divided by the
//     wave efficiency (resident blocks from shared memory and threads), the
//     tile's arithmetic intensity BM BN / (BM + BN) against 64 x 128's, and
//     the resident warps' share of 16 per SM, each at most 1.
//
// Its rank correlation with the measured times, per op kind, is what
// `dmc compile --db` reports (compiler/bundle/KernelModelReport.h).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_KERNELCOSTMODEL_H
#define DMC_CODEGEN_KERNELCOSTMODEL_H

#include "codegen/KernelSchedule.h"
#include "codegen/KernelSpace.h"
#include "codegen/target/GpuTarget.h"

#include <optional>

namespace dmc::codegen {

/// Bytes each SM should keep in flight to cover the memory latency (about
/// 5 TB/s x 0.8 us over 132 SMs, rounded up).
inline constexpr double kInflightBytesPerSM = 32 * 1024;

/// The model's price in microseconds of `kernel` in `config`, launched as
/// `launch` (its schedule's, codegen/KernelSchedule.h) on `target`.
double modelKernelUs(dm::KernelOp kernel, const KernelSpace &space, const KernelConfig &config,
                     const KernelLaunch &launch, const dmcgen::GpuTarget &target);

/// The same for `config` of `kernel` on the GPU its module targets, its
/// launch from its schedule (a fused attention kernel's from its emitter);
/// none when the knobs are infeasible.
std::optional<double> priceConfiguration(dm::KernelOp kernel, const KernelSpace &space,
                                         const KernelConfig &config);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_KERNELCOSTMODEL_H
