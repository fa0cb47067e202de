//===- AttentionBench.cpp - Timings of the fused attention kernels --------===//
//
// `dmc-attention-kernel-test --bench`: forward, grad-KV and grad-Q of
//   B8 H16 L512 D64 bf16, dropout 0.1, no mask          (BERT-large)
//   B8 H16 L1024 D64 bf16, dropout 0.1, causal          (GPT-2 medium)
// both again with saved keep bits (the forward writes the dropout mask as
// bits, the backward reads them instead of drawing Philox words), and both
// without dropout (what the masks cost), with the default tiles, each the median of 100 launches (CUDA events,
// after 10 warm-up launches), in ms and TFLOP/s: forward 4 B H Lq Lk D flop,
// backward 2.5x that, halved under a causal mask. The backward kernels read
// the forward's o, lse (and keep bits). `--sweep` also times every feasible tile choice
// (blockM, blockN >= 32; "b4": 4 blocks an SM asked of ptxas) of each kernel and names
// the fastest; `--sweep-kind KIND` of one kernel kind only (e.g. grad-kv).
//
//===----------------------------------------------------------------------===//

#include "tests/gpu/AttentionGpu.h"
#include "tests/gpu/AttentionReference.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace dmc::attention_test {

using dmcgen::AttentionKernelKind;
using dmcgen::AttentionProblem;
using dmcgen::AttentionTiles;

namespace {

constexpr int kWarmup = 10, kReps = 100;

/// Median ms of `reps` launches of `launch`, each between two events.
bool medianMs(const std::function<bool()> &launch, double &ms, std::string &error) {
  cudaEvent_t start, stop;
  if (!cudaOk(cudaEventCreate(&start), "cudaEventCreate", error) ||
      !cudaOk(cudaEventCreate(&stop), "cudaEventCreate", error))
    return false;
  std::vector<float> times;
  bool ok = true;
  for (int i = 0; ok && i < kWarmup + kReps; ++i) {
    ok = cudaOk(cudaEventRecord(start), "cudaEventRecord", error) && launch() &&
         cudaOk(cudaEventRecord(stop), "cudaEventRecord", error) &&
         cudaOk(cudaEventSynchronize(stop), "kernel", error);
    float t = 0;
    if (ok && i >= kWarmup && cudaEventElapsedTime(&t, start, stop) == cudaSuccess)
      times.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!ok || times.empty())
    return false;
  std::sort(times.begin(), times.end());
  ms = times[times.size() / 2];
  return true;
}

struct Shape {
  const char *name;
  AttentionProblem p;
};

struct Buffers {
  DeviceBuffer q, k, v, o, dO, lse, drow, bits, dQ, dK, dV;
  std::vector<void *> fwd, kv, gq;
};

bool setUp(const AttentionProblem &p, Buffers &b, std::string &error) {
  HostTensors t;
  fillInputs(p, 7, {}, t);
  const size_t qBytes = t.q.size() * 2, kBytes = t.k.size() * 2;
  const size_t lseBytes = (size_t)spanOf(p.lse, p.B, p.H, p.Lq) * 4;
  if (!(b.q.allocate(qBytes, error) && b.q.upload(t.q.data(), qBytes, error) &&
        b.k.allocate(kBytes, error) && b.k.upload(t.k.data(), kBytes, error) &&
        b.v.allocate(kBytes, error) && b.v.upload(t.v.data(), kBytes, error) &&
        b.dO.allocate(qBytes, error) && b.dO.upload(t.dO.data(), qBytes, error) &&
        b.o.allocate(qBytes, error) && b.lse.allocate(lseBytes, error) &&
        b.drow.allocate((size_t)spanOf(p.drow, p.B, p.H, p.Lq) * 4, error) &&
        b.dQ.allocate(qBytes, error) && b.dK.allocate(kBytes, error) &&
        b.dV.allocate(kBytes, error)))
    return false;
  const bool keep = dmcgen::usesKeepBits(p);
  if (keep && !b.bits.allocate((size_t)keepBitsSpan(p) * 4, error))
    return false;
  b.fwd = {b.q.get(), b.k.get(), b.v.get(), b.o.get(), b.lse.get()};
  b.gq = {b.q.get(), b.k.get(), b.v.get(), b.o.get(), b.dO.get(), b.lse.get()};
  b.kv = {b.q.get(), b.k.get(), b.v.get(), b.dO.get(), b.lse.get(), b.drow.get()};
  if (keep) { // the forward's output, the backward's input after lse (grad-kv: Drow)
    b.fwd.push_back(b.bits.get());
    b.kv.push_back(b.bits.get());
    b.gq.push_back(b.bits.get());
  }
  b.kv.insert(b.kv.end(), {b.dK.get(), b.dV.get()});
  b.gq.insert(b.gq.end(), {b.dQ.get(), b.drow.get()});
  return true;
}

const std::vector<void *> &argsFor(const Buffers &b, AttentionKernelKind kind) {
  return kind == AttentionKernelKind::Forward ? b.fwd
         : kind == AttentionKernelKind::GradKV ? b.kv
                                                : b.gq;
}

/// Times every feasible tile choice of `kind`; prints them, fastest first.
bool sweepKind(dmrt::CudaDriver &driver, const Shape &s, const std::string &arch,
               AttentionKernelKind kind, const Buffers &b, std::string &error) {
  std::vector<AttentionKernelKind> kinds;
  std::vector<AttentionTiles> tiles;
  const dmcgen::TileLimits limits{dmcgen::kMaxSharedBytesSm90, arch == "sm_90a"};
  for (const dmcgen::TileCandidate &c : dmcgen::tileCandidates(s.p, kind, limits))
    if (c.rejected.empty() && c.tiles.blockM >= 32 && c.tiles.blockN >= 32) {
      kinds.push_back(kind);
      tiles.push_back(c.tiles);
    }
  std::vector<LoadedKernel> kernels;
  bool ok = buildKernels(driver, s.p, kinds, tiles, arch, kernels, error);
  std::vector<std::pair<double, AttentionTiles>> times;
  for (size_t i = 0; ok && i < kernels.size(); ++i) {
    double ms = 0;
    ok = medianMs([&] { return launchKernel(driver, kernels[i], argsFor(b, kind), 1, nullptr,
                                            error); },
                  ms, error);
    times.push_back({ms, kernels[i].tiles});
  }
  unloadKernels(driver, kernels);
  std::sort(times.begin(), times.end(),
            [](const auto &x, const auto &y) { return x.first < y.first; });
  std::printf("  sweep %-8s", dmcgen::kernelKindName(kind));
  for (const auto &[ms, t] : times)
    std::printf(" %dx%dx%d%s%s:%.4f", t.blockM, t.blockN, t.warps, t.wgmma ? "w" : "",
                t.minBlocks > 0 ? ("b" + std::to_string(t.minBlocks)).c_str() : "", ms);
  std::printf("\n");
  return ok;
}

bool benchShape(dmrt::CudaDriver &driver, const Shape &s, const std::string &arch,
                const std::string &sweep,
                std::string &error) {
  const AttentionProblem &p = s.p;
  Buffers b;
  if (!setUp(p, b, error))
    return false;
  const std::vector<AttentionKernelKind> kinds = {
      AttentionKernelKind::Forward, AttentionKernelKind::GradKV, AttentionKernelKind::GradQ};
  std::vector<AttentionTiles> tiles;
  for (AttentionKernelKind k : kinds)
    tiles.push_back(dmcgen::defaultTiles(p, k));
  std::vector<LoadedKernel> kernels;
  if (!buildKernels(driver, p, kinds, tiles, arch, kernels, error))
    return false;
  double ms[3] = {0, 0, 0};
  bool ok = true;
  for (int i = 0; ok && i < 3; ++i) // forward first: its o and lse feed the backward
    ok = medianMs([&] { return launchKernel(driver, kernels[i], argsFor(b, kinds[i]), 1,
                                            nullptr, error); },
                  ms[i], error);
  unloadKernels(driver, kernels);
  if (!ok)
    return false;
  const double fwdFlop =
      4.0 * p.B * p.H * p.Lq * p.Lk * p.D * (p.causal ? 0.5 : 1.0), bwdFlop = 2.5 * fwdFlop;
  const double bwd = ms[1] + ms[2];
  std::printf("%s\n  forward  %8.4f ms %7.1f TFLOP/s  (%dx%dx%d)\n", s.name, ms[0],
              fwdFlop / ms[0] * 1e-9, tiles[0].blockM, tiles[0].blockN, tiles[0].warps);
  std::printf("  grad-kv  %8.4f ms  (%dx%dx%d)\n  grad-q   %8.4f ms  (%dx%dx%d)\n", ms[1],
              tiles[1].blockM, tiles[1].blockN, tiles[1].warps, ms[2], tiles[2].blockM,
              tiles[2].blockN, tiles[2].warps);
  std::printf("  backward %8.4f ms %7.1f TFLOP/s\n  fwd+bwd  %8.4f ms\n", bwd,
              bwdFlop / bwd * 1e-9, ms[0] + bwd);
  // sm_90a: each kind's wgmma tiles beside its default's, and the three
  // kernels at their fastest wgmma tiles.
  const dmcgen::TileLimits limits{dmcgen::kMaxSharedBytesSm90, arch == "sm_90a"};
  double best[3] = {0, 0, 0};
  for (int i = 0; ok && i < 3; ++i)
    for (const dmcgen::TileCandidate &c : dmcgen::tileCandidates(p, kinds[i], limits)) {
      if (!c.tiles.wgmma || !c.rejected.empty())
        continue;
      std::vector<LoadedKernel> one;
      double wms = 0;
      ok = buildKernels(driver, p, {kinds[i]}, {c.tiles}, arch, one, error) &&
           medianMs([&] { return launchKernel(driver, one[0], argsFor(b, kinds[i]), 1, nullptr,
                                              error); },
                    wms, error);
      unloadKernels(driver, one);
      if (!ok)
        return false;
      std::printf("  %-8s %8.4f ms  (%dx%dx4 wgmma: %.3fx the default's time)\n",
                  dmcgen::kernelKindName(kinds[i]), wms, c.tiles.blockM, c.tiles.blockN,
                  wms / ms[i]);
      if (best[i] == 0 || wms < best[i])
        best[i] = wms;
    }
  if (best[0] > 0 && best[1] > 0 && best[2] > 0) {
    std::printf("  fwd+bwd  %8.4f ms  (fastest wgmma tiles: %.3fx the default tiles' time)\n",
                best[0] + best[1] + best[2], (best[0] + best[1] + best[2]) / (ms[0] + bwd));
    double mixed = 0;
    for (int i = 0; i < 3; ++i)
      mixed += std::min(best[i], ms[i]);
    std::printf("  fwd+bwd  %8.4f ms  (each kernel the faster of wgmma and the default tiles)\n",
                mixed);
  }
  for (size_t i = 0; ok && i < kinds.size(); ++i)
    if (sweep == "all" || sweep == dmcgen::kernelKindName(kinds[i]))
      ok = sweepKind(driver, s, arch, kinds[i], b, error);
  return ok;
}

} // namespace

int runBench(dmrt::CudaDriver &driver, const cudaDeviceProp &prop, const std::string &arch,
             const std::string &sweep) {
  std::printf("attention benchmark on %s (%d SMs), median of %d after %d warm-up\n", prop.name,
              prop.multiProcessorCount, kReps, kWarmup);
  std::vector<Shape> shapes;
  AttentionProblem bert = dmcgen::contiguousProblem(dmrt::DType::BF16, 8, 16, 512, 512, 64);
  bert.dropout = 0.1;
  shapes.push_back({"B8 H16 L512 D64 bf16 dropout 0.1", bert});
  AttentionProblem gpt = dmcgen::contiguousProblem(dmrt::DType::BF16, 8, 16, 1024, 1024, 64);
  gpt.dropout = 0.1;
  gpt.causal = true;
  shapes.push_back({"B8 H16 L1024 D64 bf16 dropout 0.1 causal", gpt});
  bert.keepBits = gpt.keepBits = true;
  shapes.push_back({"B8 H16 L512 D64 bf16 dropout 0.1, saved keep bits", bert});
  shapes.push_back({"B8 H16 L1024 D64 bf16 dropout 0.1 causal, saved keep bits", gpt});
  // The same with the words query-contiguous, (b, h, w, j): a warp's stores
  // and loads of the words of consecutive queries fall into whole sectors.
  const auto queryContiguous = [](AttentionProblem p) {
    p.bits = dmcgen::queryContiguousKeepBits(p);
    return p;
  };
  shapes.push_back({"B8 H16 L512 D64 bf16 dropout 0.1, saved keep bits (b, h, w, j)",
                    queryContiguous(bert)});
  shapes.push_back({"B8 H16 L1024 D64 bf16 dropout 0.1 causal, saved keep bits (b, h, w, j)",
                    queryContiguous(gpt)});
  bert.keepBits = gpt.keepBits = false;
  bert.dropout = gpt.dropout = 0;
  shapes.push_back({"B8 H16 L512 D64 bf16 dropout 0", bert});
  shapes.push_back({"B8 H16 L1024 D64 bf16 dropout 0 causal", gpt});
  for (const Shape &s : shapes) {
    std::string error;
    if (!benchShape(driver, s, arch, sweep, error)) {
      std::printf("%s: ERROR %s\n", s.name, error.c_str());
      return 1;
    }
  }
  return 0;
}

} // namespace dmc::attention_test
