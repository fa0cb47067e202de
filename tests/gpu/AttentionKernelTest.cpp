//===- AttentionKernelTest.cpp - Fused attention kernels on a GPU ---------===//
//
// Every case compiles the forward, grad-KV and grad-Q kernels through NVRTC
// for this device, runs them and compares o, lse, dQ, dK and dV with the
// double-precision CPU reference (AttentionReference.h) computed from the
// same rounded inputs and the same dropout masks. On real outputs it then
// plants faults the comparison must catch: every output zeroed, every
// output x1.05, and (with dropout) o, dQ, dK, dV against a reference whose
// masks were drawn with dropout id + 1. The backward kernels run twice and
// must give the same bits (no atomics). Saved keep bits (keepBits): the
// forward's must equal the reference's exactly, the backward reads the
// reference's, and a flipped bit in either must be caught (checkKeepBits).
// Exit 0 only when every output matches and every planted fault is caught;
// 77 without a GPU.
//
//   dmc-attention-kernel-test            the correctness cases
//   dmc-attention-kernel-test --case I   case I only (e.g. under compute-sanitizer)
//   dmc-attention-kernel-test --bench    timings (AttentionBench.cpp)
//   dmc-attention-kernel-test --sweep    timings of every feasible tile choice
//   dmc-attention-kernel-test --sweep-kind KIND   of one kind (forward, grad-kv, grad-q)
//
//===----------------------------------------------------------------------===//

#include "tests/gpu/AttentionCases.h"
#include "tests/gpu/AttentionGpu.h"
#include "tests/gpu/AttentionReference.h"
#include "tests/gpu/GpuTestDevice.h"

#include "runtime/Comparison.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dmc::attention_test {
int runBench(dmrt::CudaDriver &driver, const cudaDeviceProp &prop, const std::string &arch,
             const std::string &sweep);
} // namespace dmc::attention_test

using namespace dmc::attention_test;
using dmcgen::AttentionKernelKind;
using dmcgen::AttentionProblem;

namespace {

constexpr unsigned long long kSeed = 0x0123456789ABCDEFull;

struct Tally {
  int cases = 0, outputs = 0, expectedOutputs = 0, planted = 0, caught = 0, failed = 0;
};

/// Keep-bit words start as this (cudaMemset bytes), so one the forward
/// leaves unwritten fails the exact compare.
constexpr int kPoisonByte = 0xA5;

/// Counts a planted fault, caught or not.
void planted(Tally &tally, bool caught, const std::string &what) {
  ++tally.planted;
  tally.caught += caught;
  if (!caught)
    std::printf("  NOT CAUGHT: planted fault %s\n", what.c_str());
}

/// A planted fault: `got` altered (or `ref` wrong) must fail the comparison.
void plant(Tally &tally, const std::string &what, const std::vector<double> &ref,
           std::vector<double> got, dmrt::PlantedFault f, double rtol) {
  if (f != dmrt::PlantedFault::None)
    dmrt::plantFault(got, f);
  planted(tally, !dmrt::compareOutput(ref, got, rtol).pass, what);
}

/// Checks one output against its reference and prints the line; counted.
void check(Tally &tally, const char *name, const std::vector<double> &ref,
           const std::vector<double> &got, double rtol) {
  dmrt::Comparison cmp = dmrt::compareOutput(ref, got, rtol);
  ++tally.outputs;
  tally.failed += !cmp.pass;
  std::printf("  %s %-4s %s\n", cmp.pass ? "ok  " : "FAIL", name,
              dmrt::describeComparison(cmp).c_str());
}

template <class T> bool fetch(const DeviceBuffer &b, std::vector<T> &out, std::string &error) {
  return b.download(out.data(), out.size() * sizeof(T), error);
}

/// The keep-bit checks of a case (p.keepBits): the forward's words `got`
/// against `refBits` exactly, and a flipped bit planted there; then the
/// backward again from the reference bits with the heaviest kept element's
/// bit flipped: dK, dV, dQ must match the reference of the flipped bits and
/// (a planted fault) fail the true reference. Four outputs.
bool checkKeepBits(dmrt::CudaDriver &driver, const std::vector<LoadedKernel> &kernels,
                   const std::vector<void *> &kvArgs, const std::vector<void *> &qArgs,
                   const Case &c, const HostTensors &t, const Outputs &ref,
                   const std::vector<uint32_t> &refBits, const std::vector<uint32_t> &got,
                   DeviceBuffer &bitsIn, const DeviceBuffer &dK, const DeviceBuffer &dV,
                   const DeviceBuffer &dQ, Tally &tally, std::string &error) {
  const AttentionProblem &p = c.p;
  const std::vector<uint32_t> want = gatherKeepBits(p, refBits);
  std::vector<uint32_t> have = gatherKeepBits(p, got);
  const std::string diff = compareKeepBits(p, want, have);
  ++tally.outputs;
  tally.failed += !diff.empty();
  std::printf("  %s bits %zu words %s\n", diff.empty() ? "ok  " : "FAIL", have.size(),
              diff.empty() ? "identical" : diff.c_str());
  have[have.size() / 2] ^= 1u << 7;
  planted(tally, !compareKeepBits(p, want, have).empty(), c.name + " bits one bit flipped");

  const KeptElement e = heaviestKeptElement(p, t, refBits);
  if (e.probability <= 0) {
    error = "no kept element to flip";
    return false;
  }
  std::vector<uint32_t> flipped = refBits;
  flipped[e.word] ^= e.mask;
  Outputs wrong;
  referenceBackward(p, t, kSeed, p.dropoutId, wrong, &flipped);
  std::vector<uint16_t> hDK(spanOf(p.dK, p.B, p.H, p.Lk, p.D)),
      hDV(spanOf(p.dV, p.B, p.H, p.Lk, p.D)), hDQ(spanOf(p.dQ, p.B, p.H, p.Lq, p.D));
  if (!(bitsIn.upload(flipped.data(), flipped.size() * 4, error) &&
        launchKernel(driver, kernels[2], qArgs, kSeed, nullptr, error) &&
        launchKernel(driver, kernels[1], kvArgs, kSeed, nullptr, error) &&
        cudaOk(cudaDeviceSynchronize(), "kernels", error) && fetch(dK, hDK, error) &&
        fetch(dV, hDV, error) && fetch(dQ, hDQ, error)))
    return false;
  std::printf("  flipped keep bit (b %lld, h %lld, j %lld, k %lld), P = %.3f:\n",
              (long long)e.b, (long long)e.h, (long long)e.j, (long long)e.k, e.probability);
  const struct {
    const char *name;
    const std::vector<double> &flippedRef, &trueRef;
    std::vector<double> got;
  } outs[] = {{"dK", wrong.dK, ref.dK, gather(p, hDK, p.dK, p.Lk)},
              {"dV", wrong.dV, ref.dV, gather(p, hDV, p.dV, p.Lk)},
              {"dQ", wrong.dQ, ref.dQ, gather(p, hDQ, p.dQ, p.Lq)}};
  bool changed = false;
  for (const auto &out : outs) {
    const double rtol = comparisonRtol(p, out.name);
    check(tally, out.name, out.flippedRef, out.got, rtol);
    changed |= !dmrt::compareOutput(out.trueRef, out.got, rtol).pass;
  }
  planted(tally, changed, c.name + " flipped keep bit in the backward");
  return true;
}

bool runCase(dmrt::CudaDriver &driver, const std::string &arch, const Case &c, int index,
             Tally &tally, std::string &error) {
  const AttentionProblem &p = c.p;
  HostTensors t;
  fillInputs(p, 0xC0FFEE + index, c.lens, t);
  Outputs ref;
  referenceForward(p, t, kSeed, p.dropoutId, ref);
  storeForward(p, ref, t); // the backward kernels' o and lse
  referenceBackward(p, t, kSeed, p.dropoutId, ref);

  const std::vector<AttentionKernelKind> kinds = {
      AttentionKernelKind::Forward, AttentionKernelKind::GradKV, AttentionKernelKind::GradQ};
  std::vector<dmcgen::AttentionTiles> tiles;
  for (AttentionKernelKind k : kinds)
    tiles.push_back(k == AttentionKernelKind::GradKV && c.gradKV.warps > 0    ? c.gradKV
                    : k == AttentionKernelKind::Forward && c.forward.warps > 0 ? c.forward
                    : k == AttentionKernelKind::GradQ && c.gradQ.warps > 0     ? c.gradQ
                                                                              : dmcgen::defaultTiles(p, k));
  std::vector<LoadedKernel> kernels;
  struct Unload {
    dmrt::CudaDriver &d;
    std::vector<LoadedKernel> &k;
    ~Unload() { unloadKernels(d, k); }
  } unload{driver, kernels};
  if (!buildKernels(driver, p, kinds, tiles, arch, kernels, error))
    return false;

  const bool keep = dmcgen::usesKeepBits(p);
  const std::vector<uint32_t> refBits =
      keep ? referenceKeepBits(p, c.lens, kSeed, p.dropoutId) : std::vector<uint32_t>{};
  std::vector<uint32_t> hBits(refBits.size());
  DeviceBuffer q, k, v, o, dO, lse, lens, oOut, lseOut, dQ, dK, dV, bitsOut, bitsIn, drow;
  if (keep && !(bitsOut.allocate(refBits.size() * 4, error) &&
                cudaOk(cudaMemset(bitsOut.get(), kPoisonByte, refBits.size() * 4),
                       "cudaMemset", error) &&
                bitsIn.allocate(refBits.size() * 4, error) &&
                bitsIn.upload(refBits.data(), refBits.size() * 4, error)))
    return false;
  const auto bytes16 = [](const std::vector<uint16_t> &x) { return x.size() * 2; };
  std::vector<uint16_t> hO(t.o.size()), hDQ(spanOf(p.dQ, p.B, p.H, p.Lq, p.D)),
      hDK(spanOf(p.dK, p.B, p.H, p.Lk, p.D)), hDV(spanOf(p.dV, p.B, p.H, p.Lk, p.D));
  std::vector<float> hLse(t.lse.size()), hDrow(spanOf(p.drow, p.B, p.H, p.Lq));
  if (!(q.allocate(bytes16(t.q), error) && q.upload(t.q.data(), bytes16(t.q), error) &&
        k.allocate(bytes16(t.k), error) && k.upload(t.k.data(), bytes16(t.k), error) &&
        v.allocate(bytes16(t.v), error) && v.upload(t.v.data(), bytes16(t.v), error) &&
        o.allocate(bytes16(t.o), error) && o.upload(t.o.data(), bytes16(t.o), error) &&
        dO.allocate(bytes16(t.dO), error) && dO.upload(t.dO.data(), bytes16(t.dO), error) &&
        lse.allocate(hLse.size() * 4, error) &&
        lse.upload(t.lse.data(), hLse.size() * 4, error) &&
        lens.allocate(t.lens.size() * 4, error) &&
        (t.lens.empty() || lens.upload(t.lens.data(), t.lens.size() * 4, error)) &&
        oOut.allocate(bytes16(hO), error) && lseOut.allocate(hLse.size() * 4, error) &&
        dQ.allocate(bytes16(hDQ), error) && dK.allocate(bytes16(hDK), error) &&
        dV.allocate(bytes16(hDV), error) && drow.allocate(hDrow.size() * 4, error) &&
        cudaOk(cudaMemset(drow.get(), 0xFF, hDrow.size() * 4), "cudaMemset", error)))
    return false;
  // grad-q: q, k, v, o, dO, lse[, bits][, lens] -> dQ, Drow; grad-kv, after
  // it: q, k, v, dO, lse, Drow[, bits][, lens] -> dK, dV.
  std::vector<void *> fwdArgs = {q.get(), k.get(), v.get()}, qArgs = fwdArgs, kvArgs = fwdArgs;
  qArgs.insert(qArgs.end(), {o.get(), dO.get(), lse.get()});
  kvArgs.insert(kvArgs.end(), {dO.get(), lse.get(), drow.get()});
  for (std::vector<void *> *args : {&qArgs, &kvArgs}) {
    if (keep)
      args->push_back(bitsIn.get());
    if (p.keyPadding)
      args->push_back(lens.get());
  }
  if (p.keyPadding)
    fwdArgs.push_back(lens.get());
  fwdArgs.insert(fwdArgs.end(), {oOut.get(), lseOut.get()});
  if (keep)
    fwdArgs.push_back(bitsOut.get());
  kvArgs.insert(kvArgs.end(), {dK.get(), dV.get()});
  qArgs.insert(qArgs.end(), {dQ.get(), drow.get()});

  auto runAll = [&]() {
    return launchKernel(driver, kernels[0], fwdArgs, kSeed, nullptr, error) &&
           launchKernel(driver, kernels[2], qArgs, kSeed, nullptr, error) &&
           launchKernel(driver, kernels[1], kvArgs, kSeed, nullptr, error) &&
           cudaOk(cudaDeviceSynchronize(), "kernels", error);
  };
  if (!(runAll() && fetch(oOut, hO, error) && fetch(lseOut, hLse, error) &&
        fetch(dQ, hDQ, error) && fetch(dK, hDK, error) && fetch(dV, hDV, error) &&
        fetch(drow, hDrow, error) &&
        (!keep || fetch(bitsOut, hBits, error))))
    return false;
  // Deterministic: a second run gives the same bits.
  std::vector<uint16_t> again(hDK.size()), againQ(hDQ.size());
  if (!(runAll() && fetch(dK, again, error) && fetch(dQ, againQ, error)))
    return false;
  const bool same = again == hDK && againQ == hDQ;

  ++tally.cases;
  tally.expectedOutputs += keep ? 10 : 6;
  std::printf("case %d: %s\n", index, c.name.c_str());
  const struct {
    const char *name;
    const std::vector<double> &ref;
    std::vector<double> got;
    bool masked; // depends on the dropout mask
  } outs[] = {{"o", ref.o, gather(p, hO, p.o, p.Lq), true},
              {"lse", ref.lse, gatherLse(p, hLse), false},
              {"dQ", ref.dQ, gather(p, hDQ, p.dQ, p.Lq), true},
              {"dK", ref.dK, gather(p, hDK, p.dK, p.Lk), true},
              {"dV", ref.dV, gather(p, hDV, p.dV, p.Lk), true},
              {"drow", ref.drow, gatherRows(p, hDrow, p.drow), false}};
  if (!same) {
    ++tally.failed;
    std::printf("  FAIL backward not deterministic: a second run changed dK or dQ\n");
  }
  Outputs wrong;
  if (p.dropout > 0) {
    referenceForward(p, t, kSeed, p.dropoutId + 1, wrong);
    referenceBackward(p, t, kSeed, p.dropoutId + 1, wrong);
  }
  for (const auto &out : outs) {
    const double rtol = comparisonRtol(p, out.name);
    check(tally, out.name, out.ref, out.got, rtol);
    const std::string where = c.name + " " + out.name;
    plant(tally, where + " zeroed", out.ref, out.got, dmrt::PlantedFault::Zero, rtol);
    plant(tally, where + " x1.05", out.ref, out.got, dmrt::PlantedFault::Scale, rtol);
    if (p.dropout > 0 && out.masked) {
      const std::vector<double> &w = out.name[0] == 'o'    ? wrong.o
                                     : out.name[1] == 'Q' ? wrong.dQ
                                     : out.name[1] == 'K' ? wrong.dK
                                                          : wrong.dV;
      plant(tally, where + " dropout id + 1", w, out.got, dmrt::PlantedFault::None, rtol);
    }
  }
  return !keep || checkKeepBits(driver, kernels, kvArgs, qArgs, c, t, ref, refBits, hBits,
                                bitsIn, dK, dV, dQ, tally, error);
}

/// Runs every case, or only case `only` (>= 0).
int runCorrectness(dmrt::CudaDriver &driver, const std::string &arch, int only) {
  Tally tally;
  const std::vector<Case> all = cases(arch);
  if (only >= (int)all.size()) {
    std::printf("FATAL: --case %d: there are %zu cases (0 .. %zu)\n", only, all.size(),
                all.size() - 1);
    return 2;
  }
  int errors = 0;
  const int expected = only >= 0 ? 1 : (int)all.size();
  for (size_t i = 0; i < all.size(); ++i) {
    if (only >= 0 && (int)i != only)
      continue;
    std::string error;
    if (!runCase(driver, arch, all[i], (int)i, tally, error)) {
      ++errors;
      std::printf("case %zu: %s: ERROR %s\n", i, all[i].name.c_str(), error.c_str());
      cudaGetLastError();
    }
  }
  std::printf("SUMMARY: %d cases ran, %d outputs compared, %d planted faults caught (of %d "
              "planted); %d outputs failed, %d cases could not run\n",
              tally.cases, tally.outputs, tally.caught, tally.planted, tally.failed, errors);
  const bool pass = errors == 0 && tally.cases == expected && tally.failed == 0 &&
                    tally.caught == tally.planted && tally.outputs == tally.expectedOutputs;
  std::printf("%s\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  bool bench = false;
  std::string sweep; // "", "all" or a kernel kind's name
  int only = -1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--bench"))
      bench = true;
    else if (!std::strcmp(argv[i], "--sweep")) {
      bench = true;
      sweep = "all";
    } else if (!std::strcmp(argv[i], "--sweep-kind") && i + 1 < argc &&
               (!std::strcmp(argv[i + 1], "forward") || !std::strcmp(argv[i + 1], "grad-kv") ||
                !std::strcmp(argv[i + 1], "grad-q"))) {
      bench = true;
      sweep = argv[++i];
    }
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc && std::isdigit(*argv[i + 1]))
      only = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--case I | --bench | --sweep | --sweep-kind "
                   "forward|grad-kv|grad-q]\n  bad argument '%s'\n",
                   argv[0], argv[i]);
      return 2;
    }
  }
  if (int status = dmc::test::checkGpuDevice("the fused attention kernel tests"))
    return status;
  dmrt::CudaDriver driver;
  std::string error;
  if (!driver.open(0, error)) {
    std::printf("%s: %s\n", driver.noDevice() ? "SKIP" : "FATAL", error.c_str());
    return dmrt::deviceFailureExitCode(driver.noDevice());
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("FATAL: cudaGetDeviceProperties failed\n");
    return 1;
  }
  const std::string arch = archFor(prop.major, prop.minor);
  if (arch.empty()) {
    std::printf("FATAL: compute capability %d.%d: the attention kernels need sm_80, sm_89, "
                "sm_90 or sm_100\n", prop.major, prop.minor);
    return 1;
  }
  std::printf("kernels for %s\n", arch.c_str());
  return bench ? runBench(driver, prop, arch, sweep) : runCorrectness(driver, arch, only);
}
