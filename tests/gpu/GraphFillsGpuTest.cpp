//===- GraphFillsGpuTest.cpp - memset nodes as fill kernels, on the GPU ---===//
//
//   dmc-graph-fills-test [--bench]
//
// A graph of a copy, then memset nodes of every kind GraphFills handles (byte
// fills stored as words, halves, bytes at odd addresses, 2-D rows with a
// pitch, 2- and 4-byte elements, a large fill over a bounded grid; some
// overlapping, so their order matters), then a copy out, is run as built and
// with its memsets replaced by fill kernels: both results must equal the host's
// reference byte for byte. A planted wrong byte in the reference must be
// caught. --bench then times a chain of kernel -> memset pairs as memset nodes
// and as fill kernels (what a memset node costs between two kernels).
//
// Exit: 0 passed, 1 failed, 77 no GPU.
//
//===----------------------------------------------------------------------===//
#include "GpuTestDevice.h"
#include "runtime/GraphFills.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace dmrt;

namespace {

#define CHECK_CUDA(call)                                                                    \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                \
      std::printf("FAIL: %s: %s\n", #call, cudaGetErrorString(e_));                          \
      return false;                                                                         \
    }                                                                                       \
  } while (0)

constexpr size_t kBytes = size_t(16) << 20;

struct Fill {
  size_t offset;
  size_t pitch;
  unsigned value, elementSize;
  size_t width, height;
};

/// The memsets of the test graph, in order (later ones overlap earlier ones).
const std::vector<Fill> kFills = {
    {0, 0, 0xAB, 1, 4096, 1},             // bytes as words
    {1, 0, 0x5C, 1, 1001, 1},             // odd address: bytes
    {4098, 0, 0x3D, 1, 30, 1},            // halves
    {8192, 1024, 0x77, 1, 300, 20},       // rows, word stores
    {8194, 514, 0x33, 1, 130, 9},         // rows, half stores
    {40000, 0, 0xBEEF, 2, 333, 1},        // 2-byte elements
    {40960, 0, 0xDEADBEEF, 4, 1000, 1},   // 4-byte elements
    {41000, 0, 0x12345678, 4, 10, 1},     // overlapping the last
    {1 << 20, 0, 0x00, 1, 8 << 20, 1},    // large: the grid loops
};

void fillHost(std::vector<uint8_t> &h, const Fill &f) {
  for (size_t r = 0; r < f.height; ++r)
    for (size_t i = 0; i < f.width; ++i)
      for (unsigned b = 0; b < f.elementSize; ++b)
        h[f.offset + r * f.pitch + i * f.elementSize + b] = uint8_t(f.value >> (8 * b));
}

/// Bytes where `a` and `b` differ (the first printed).
size_t differences(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
                   const char *what) {
  size_t n = 0, first = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && !n++)
      first = i;
  if (n)
    std::printf("  %s: %zu bytes differ, the first at %zu (%02x against %02x)\n", what, n,
                first, a[first], b[first]);
  return n;
}

/// Builds copy(src -> buf), the fills, copy(buf -> out) as one chain; with
/// `replace` the memsets become fill kernels; runs it and returns out.
bool runGraph(CudaDriver &driver, const GraphFills &fills, bool replace, void *src, void *buf,
              void *out, std::vector<uint8_t> &result, int &replaced) {
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t last = nullptr;
  CHECK_CUDA(cudaGraphAddMemcpyNode1D(&last, graph, nullptr, 0, buf, src, kBytes,
                                      cudaMemcpyDeviceToDevice));
  for (const Fill &f : kFills) {
    cudaMemsetParams m{};
    m.dst = static_cast<char *>(buf) + f.offset;
    m.pitch = f.pitch;
    m.value = f.value;
    m.elementSize = f.elementSize;
    m.width = f.width;
    m.height = f.height;
    cudaGraphNode_t node = nullptr;
    CHECK_CUDA(cudaGraphAddMemsetNode(&node, graph, &last, 1, &m));
    last = node;
  }
  cudaGraphNode_t copyOut = nullptr;
  CHECK_CUDA(cudaGraphAddMemcpyNode1D(&copyOut, graph, &last, 1, out, buf, kBytes,
                                      cudaMemcpyDeviceToDevice));
  int kept = 0;
  std::string error;
  GraphFills counter; // not loaded: counts memset nodes
  if (replace && !fills.replaceMemsets(driver, graph, replaced, kept, error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return false;
  }
  int left = 0, none = 0;
  if (!counter.replaceMemsets(driver, graph, none, left, error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return false;
  }
  int expectLeft = replace ? 0 : int(kFills.size());
  if (left != expectLeft || (replace && replaced != int(kFills.size()))) {
    std::printf("FAIL: %d memset nodes left (expected %d), %d replaced\n", left, expectLeft,
                replaced);
    return false;
  }
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphLaunch(exec, nullptr));
  CHECK_CUDA(cudaDeviceSynchronize());
  result.resize(kBytes);
  CHECK_CUDA(cudaMemcpy(result.data(), out, kBytes, cudaMemcpyDeviceToHost));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return true;
}

/// A chain of `pairs` (fill kernel of 4 KiB, memset of 4 KiB) captured from a
/// stream, as memset nodes or replaced; the time per pair in us.
bool timeChain(CudaDriver &driver, const GraphFills &fills, bool replace, void *buf, int pairs,
               double &usPerPair) {
  cudaStream_t st = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  std::string error;
  bool ok = true;
  for (int i = 0; i < pairs && ok; ++i) {
    void *dst = static_cast<char *>(buf) + size_t(i % 64) * 8192;
    uint64_t pitch = 0, count = 1024;
    uint32_t value = uint32_t(i);
    void *params[] = {&dst, &pitch, &count, &value};
    unsigned grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
    ok = driver.launch(fills.kernel(4), grid, block, 0, st, params, error) &&
         cudaMemsetAsync(static_cast<char *>(dst) + 4096, i & 0xFF, 4096, st) == cudaSuccess;
  }
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamEndCapture(st, &graph));
  if (!ok) {
    std::printf("FAIL: capturing the chain: %s\n", error.c_str());
    return false;
  }
  int replaced = 0, kept = 0;
  if (replace && !fills.replaceMemsets(driver, graph, replaced, kept, error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return false;
  }
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  CHECK_CUDA(cudaGraphLaunch(exec, st)); // upload, warm-up
  float best = 1e30f;
  for (int rep = 0; rep < 10; ++rep) {
    CHECK_CUDA(cudaEventRecord(a, st));
    CHECK_CUDA(cudaGraphLaunch(exec, st));
    CHECK_CUDA(cudaEventRecord(b, st));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    best = ms < best ? ms : best;
  }
  usPerPair = best * 1000.0 / pairs;
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(st);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  bool bench = argc > 1 && std::strcmp(argv[1], "--bench") == 0;
  if (int rc = dmc::test::checkGpuDevice("the graph fill kernels"))
    return rc;
  CudaDriver driver;
  GraphFills fills;
  std::string error;
  if (!driver.open(0, error) || !fills.load(driver, error)) {
    std::printf("FAIL: %s\n", error.c_str());
    return 1;
  }
  std::vector<uint8_t> pattern(kBytes), expected;
  for (size_t i = 0; i < kBytes; ++i)
    pattern[i] = uint8_t(i * 131 + (i >> 9));
  expected = pattern;
  for (const Fill &f : kFills)
    fillHost(expected, f);
  void *src = nullptr, *buf = nullptr, *out = nullptr;
  if (cudaMalloc(&src, kBytes) != cudaSuccess || cudaMalloc(&buf, kBytes) != cudaSuccess ||
      cudaMalloc(&out, kBytes) != cudaSuccess ||
      cudaMemcpy(src, pattern.data(), kBytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    std::printf("FAIL: allocating the buffers\n");
    return 1;
  }
  std::vector<uint8_t> asMemsets, asFills;
  int replaced = 0, none = 0;
  bool ok = runGraph(driver, fills, false, src, buf, out, asMemsets, none) &&
            runGraph(driver, fills, true, src, buf, out, asFills, replaced);
  int failed = !ok;
  if (ok) {
    failed += differences(asMemsets, expected, "memset nodes against the host") != 0;
    failed += differences(asFills, expected, "fill kernels against the host") != 0;
    std::printf("%d memset nodes as fill kernels: %s\n", replaced,
                failed ? "results differ" : "every byte as the host's reference");
    // Planted: one byte of a fill region wrong in the reference.
    std::vector<uint8_t> planted = expected;
    planted[kFills[6].offset + 17] ^= 0x40;
    bool caught = differences(asFills, planted, "planted wrong byte (must differ)") == 1;
    std::printf("planted wrong byte: %s\n", caught ? "caught" : "MISSED");
    failed += !caught;
  }
  if (!failed && bench) {
    double withMemsets = 0, withFills = 0;
    if (!timeChain(driver, fills, false, buf, 200, withMemsets) ||
        !timeChain(driver, fills, true, buf, 200, withFills))
      failed = 1;
    else
      std::printf("bench: 200 x (kernel, memset of 4 KiB) in a CUDA graph: %.2f us a pair with "
                  "memset nodes, %.2f us with fill kernels\n",
                  withMemsets, withFills);
  }
  fills.unload(driver);
  cudaFree(src);
  cudaFree(buf);
  cudaFree(out);
  std::printf("%s\n", failed ? "FAILED" : "PASSED");
  return failed ? 1 : 0;
}
