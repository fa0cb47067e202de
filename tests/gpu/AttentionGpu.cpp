//===- AttentionGpu.cpp - Attention kernels compiled, loaded and launched -===//

#include "tests/gpu/AttentionGpu.h"

#include "codegen/nvrtc/NvrtcCompiler.h"

#include <algorithm>
#include <thread>

namespace dmc::attention_test {

using dmcgen::AttentionKernelKind;

std::string archFor(int major, int minor) {
  if (major == 9 && minor == 0)
    return "sm_90a";
  if (major == 8)
    return minor == 9 ? "sm_89" : "sm_80";
  if (major == 10 && minor == 0)
    return "sm_100";
  return "";
}

bool cudaOk(cudaError_t e, const char *what, std::string &error) {
  if (e == cudaSuccess)
    return true;
  error = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return false;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_)
    cudaFree(ptr_);
}

bool DeviceBuffer::allocate(size_t bytes, std::string &error) {
  bytes = std::max<size_t>(bytes, 16);
  return cudaOk(cudaMalloc(&ptr_, bytes), "cudaMalloc", error) &&
         cudaOk(cudaMemset(ptr_, 0xFF, bytes), "cudaMemset", error);
}

bool DeviceBuffer::upload(const void *host, size_t bytes, std::string &error) {
  return cudaOk(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice), "upload", error);
}

bool DeviceBuffer::download(void *host, size_t bytes, std::string &error) const {
  return cudaOk(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost), "download", error);
}

bool buildKernels(dmrt::CudaDriver &driver, const dmcgen::AttentionProblem &p,
                  const std::vector<AttentionKernelKind> &kinds,
                  const std::vector<dmcgen::AttentionTiles> &tiles, const std::string &arch,
                  std::vector<LoadedKernel> &out, std::string &error) {
  if (std::string e = dmcgen::validate(p); !e.empty()) {
    error = "invalid problem: " + e;
    return false;
  }
  std::vector<dmcgen::CompileJob> jobs;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const dmcgen::TileLimits limits{dmcgen::kMaxSharedBytesSm90, arch == "sm_90a"};
    if (std::string e = dmcgen::checkTiles(p, tiles[i], kinds[i], limits); !e.empty()) {
      error = std::string(dmcgen::kernelKindName(kinds[i])) + " tiles: " + e;
      return false;
    }
    const std::string entry = "attention_" + std::to_string(i);
    jobs.push_back({entry, dmcgen::emitAttentionSource(p, tiles[i], kinds[i], entry)});
  }
  dmcgen::CompileOptions options;
  options.arch = arch;
  std::vector<std::string> errors;
  std::vector<dmcgen::CompiledKernel> cubins = dmcgen::compileAll(
      jobs, options, std::max(1u, std::thread::hardware_concurrency()), errors);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!errors[i].empty()) {
      error = errors[i];
      return false;
    }
    LoadedKernel k;
    k.kind = kinds[i];
    k.tiles = tiles[i];
    k.geometry = dmcgen::launchGeometry(p, tiles[i], kinds[i]);
    if (driver.loadModule(cubins[i].cubin, k.module, error) != CUDA_SUCCESS)
      return false;
    out.push_back(k);
    if (driver.getFunction(k.module, jobs[i].name, out.back().function, error) != CUDA_SUCCESS)
      return false;
    if (k.geometry.sharedBytes > 48 * 1024 &&
        driver.setMaxDynamicShared(out.back().function, (int)k.geometry.sharedBytes, error) !=
            CUDA_SUCCESS)
      return false;
  }
  return true;
}

void unloadKernels(dmrt::CudaDriver &driver, std::vector<LoadedKernel> &kernels) {
  for (LoadedKernel &k : kernels)
    if (k.module)
      driver.unloadModule(k.module);
  kernels.clear();
}

bool launchKernel(dmrt::CudaDriver &driver, const LoadedKernel &k,
                  const std::vector<void *> &pointers, unsigned long long seed,
                  cudaStream_t stream, std::string &error) {
  std::vector<void *> values = pointers;
  std::vector<void *> params;
  for (void *&v : values)
    params.push_back(&v);
  params.push_back(&seed);
  return driver.launch(k.function, k.geometry.grid, k.geometry.block, k.geometry.sharedBytes,
                       (CUstream)stream, params.data(), error);
}

} // namespace dmc::attention_test
