//===- GemmEpilogueTest.cpp - GemmRunner epilogues vs the CPU emulator -----===//
//
// GPU test (label gpu). For every epilogue of dmrt::Epilogue, small shapes
// (m in {64,128}, n = 96, k in {32,80}, batch 1 and 2), opA/opB N and T, bf16
// and fp32 data, with and without padded leading dimensions / batch strides,
// beta 0 and 0.5: builds a GemmDescriptor (validateDescriptor decides which
// are valid), fills A, B, C (= D's initial contents), bias and the aux input
// with seeded random values, runs dmrt::GemmRunner with each of the
// heuristic's first algorithms and compares D, the aux output (ReLU bit-mask
// or GELU input) and the bias gradient with dmctest::emulateMatmul.
//
// Tolerances: |gpu - ref| <= rtol * (|ref| + 0.5 * max|ref|) with
// rtol 2e-2 for bf16 data, 2e-3 for fp32 (cuBLASLt's GELU is the tanh
// approximation, as the emulator's, but may use fast tanh); a ReLU aux bit may
// differ only where the pre-activation is within that tolerance of 0; a bias
// gradient within rtolSum * (|ref| + the sum of the magnitudes it adds up),
// rtolSum 1e-2 for bf16, 2e-3 for fp32. The padding of D (rows m..ld) must
// be left untouched. An all-zero reference fails. The cases and their
// descriptors are EpilogueCase.h; running and checking one is EpilogueTester.
//
// A configuration cuBLASLt has no kernel for (the heuristic says
// CUBLAS_STATUS_NOT_SUPPORTED or finds no algorithm) is counted as
// unsupported, not as a failure; the summary lists them per epilogue and
// counts them ("SUMMARY: N cases ran, M unsupported by this cuBLASLt, ...").
// Any other error, or a mismatch, fails the test; so does a run in which no
// case ran at all, or in which an epilogue dmc proposes (DEFAULT included;
// EpilogueSummary.h requiredEpilogues) never ran: it never passes vacuously.
//
// Exit status: 0 pass, 1 fail, 77 no GPU (ctest SKIP_RETURN_CODE).
// Options: --epilogue NAME (only that one, e.g. RELU_AUX), --algos N (how
// many heuristic algorithms per case, default 3), --verbose (a line per case),
// --strict (also fail when an epilogue has no supported case at all),
// --emulated-device (no GPU: checks the check itself, with the emulator's
// results, in device layout and types, standing in for the GPU's; every case
// must pass), --emulated-device=corrupt (the same with one element of each
// case's results made wrong; every case must fail),
// --emulated-device=unsupported:NAME (the same, with every case of epilogue
// NAME reported unsupported: checks the summary's verdict).
//
//===----------------------------------------------------------------------===//
#include "EpilogueSummary.h"
#include "EpilogueTester.h"
#include "GpuTestDevice.h"
#include "runtime/GemmRunner.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace dmctest;

namespace {

bool parseArgs(int argc, char **argv, Options &opt) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--epilogue" && i + 1 < argc) {
      opt.only = argv[++i];
    } else if (a == "--algos" && i + 1 < argc) {
      opt.algos = std::atoi(argv[++i]);
      if (opt.algos < 1)
        return false;
    } else if (a == "--verbose") {
      opt.verbose = true;
    } else if (a == "--strict") {
      opt.strict = true;
    } else if (a == "--emulated-device") {
      opt.emulated = true;
    } else if (a == "--emulated-device=corrupt") {
      opt.emulated = opt.corrupt = true;
    } else if (a.rfind("--emulated-device=unsupported:", 0) == 0) {
      opt.emulated = true;
      opt.unsupported = a.substr(a.find(':') + 1);
    } else {
      return false;
    }
  }
  for (const std::string *name : {&opt.only, &opt.unsupported}) {
    if (name->empty())
      continue;
    bool known = false;
    for (Epilogue e : kEpilogues)
      known |= *name == dmrt::epilogueName(e);
    if (!known) {
      std::fprintf(stderr, "unknown epilogue %s\n", name->c_str());
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  if (!parseArgs(argc, argv, opt)) {
    std::fprintf(stderr,
                 "usage: %s [--epilogue NAME] [--algos N] [--verbose] "
                 "[--strict] [--emulated-device[=corrupt|=unsupported:NAME]]\n",
                 argv[0]);
    return 2;
  }
  cublasLtHandle_t lt = nullptr;
  DevBuf workspace;
  cudaStream_t stream = nullptr;
  if (opt.emulated) {
    std::printf("emulated device: the emulator's results stand in for the "
                "GPU's (%s)\n",
                opt.corrupt ? "each case corrupted: every case must fail"
                            : "every case must pass");
  } else {
    if (int status = dmc::test::checkGpuDevice("GemmRunner epilogues"))
      return status;
    cublasStatus_t cs = cublasLtCreate(&lt);
    if (cs != CUBLAS_STATUS_SUCCESS) {
      std::printf("FATAL: cublasLtCreate failed: %s\n",
                  dmrt::cublasStatusName(cs));
      return 1;
    }
    alloc(workspace, dmrt::GemmRunner::kWorkspaceBytes);
    CUDA_OK(cudaStreamCreate(&stream));
  }

  Tester tester(opt, lt, workspace.p, stream);
  std::map<Epilogue, Stats> stats;
  uint64_t index = 0;
  const int64_t ms[] = {64, 128}, ks[] = {32, 80};
  const int32_t batches[] = {1, 2};
  const DType dtypes[] = {DType::BF16, DType::F32};
  for (Epilogue e : kEpilogues) {
    if (!opt.only.empty() && opt.only != dmrt::epilogueName(e))
      continue;
    Stats &st = stats[e];
    for (int im = 0; im < 2; ++im)
      for (int ik = 0; ik < 2; ++ik)
        for (int ib = 0; ib < 2; ++ib)
          for (int ta = 0; ta < 2; ++ta)
            for (int tb = 0; tb < 2; ++tb)
              for (int id = 0; id < 2; ++id) {
                Case c;
                c.epi = e;
                c.dtype = dtypes[id];
                c.m = ms[im];
                c.n = 96;
                c.k = ks[ik];
                c.batch = batches[ib];
                c.ta = ta;
                c.tb = tb;
                // Spread beta, padding and the bias batch stride evenly
                // over the 64 layouts of each epilogue.
                bool odd = (im + ik + ib + ta + tb + id) % 2;
                c.beta = odd ? 0.5 : 0.0;
                c.alpha = odd ? 0.75 : 1.0;
                c.pad = (ik + ta + id) % 2;
                c.perBatchBias = (im + tb) % 2;
                tester.runCase(c, 0x5eed0000ull + index++, st);
              }
  }

  if (stream)
    CUDA_OK(cudaStreamDestroy(stream));
  if (lt)
    cublasLtDestroy(lt);
  if (opt.corrupt) {
    // Every case was corrupted: each must have been caught.
    int caught = 0, missed = 0;
    for (auto &kv : stats) {
      caught += kv.second.failed;
      missed += kv.second.ran;
    }
    std::printf("%s: the check caught %d of %d corruptions\n",
                missed || !caught ? "FAIL" : "PASS", caught, caught + missed);
    return missed || !caught ? 1 : 0;
  }

  dmc::test::EpilogueVerdict v = dmc::test::summarizeEpilogues(
      stats, std::vector<Epilogue>(std::begin(kEpilogues), std::end(kEpilogues)),
      opt.strict);
  std::printf("\n");
  for (const std::string &l : v.lines)
    std::printf("%s\n", l.c_str());
  return v.pass ? 0 : 1;
}
